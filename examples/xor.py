"""How often does a tiny network learn XOR? Success rates over many seeds, per initializer.

    python examples/xor.py --init he_leaky --shuffle
    python examples/xor.py --init normal,he_leaky,xavier_normal --seeds 1000 --plot rates.png
    python examples/xor.py --preset notes          # the notes' four runs, side by side
    python examples/xor.py --preset widths         # where initialization starts to matter

Defaults are the notes' 99mlp: two hidden LeakyReLU(0.01) layers of width 2, a sigmoid output,
MSE, per-sample SGD at lr 0.01 for 20,000 epochs, zero initial biases, 100 seeds. A seed
succeeds when, after training, all four XOR outputs are on the right side of 0.5. The table
goes to stdout, progress to stderr.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import sys
from pathlib import Path

import tinynet
from tinynet.experiments import NOTES_ARMS, Arm, Study, XorSetup, run_study

WIDTHS = [(2,), (3,), (4,), (8,), (16,), (2, 2)]
WIDTH_INITS = ["normal", "he_leaky", "xavier_normal", "lecun_normal"]


def split_specs(text: str) -> list[str]:
    """Split "a,b(x=1, y=2),c" on the commas outside parentheses."""
    specs, depth, current = [], 0, ""
    for char in text:
        depth += {"(": 1, ")": -1}.get(char, 0)
        if char == "," and depth == 0:
            specs.append(current.strip())
            current = ""
        else:
            current += char
    return [spec for spec in specs + [current.strip()] if spec]


def initializers(text: str) -> list[str]:
    """argparse type for --init: registered names (with parameters), comma-separated, or all."""
    specs = tinynet.init.available() if text == "all" else split_specs(text)
    if not specs:
        raise argparse.ArgumentTypeError("expected at least one initializer name")
    for spec in specs:
        initializer(spec)
    return specs


def initializer(spec: str) -> str:
    """argparse type for --output-init: one registered name, optionally with parameters."""
    try:
        tinynet.init.get(spec)
    except (ValueError, TypeError) as error:
        raise argparse.ArgumentTypeError(str(error)) from None
    return spec


def widths(text: str) -> tuple[int, ...]:
    """argparse type for --hidden: comma-separated positive widths."""
    try:
        values = tuple(int(width) for width in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected widths such as 2,2, got {text!r}") from None
    if any(width < 1 for width in values):
        raise argparse.ArgumentTypeError(f"widths must be at least 1, got {text!r}")
    return values


class Parser(argparse.ArgumentParser):
    """argparse, with errors on one line: the message, and where to look."""

    def error(self, message: str):
        self.exit(2, f"{self.prog}: error: {message} (see --help)\n")


def parse_args(argv: list[str] | None = None) -> tuple[argparse.ArgumentParser, argparse.Namespace]:
    # --import runs first, so that initializers a module registers can be named by --init.
    pre = Parser(prog="xor.py", add_help=False)
    pre.add_argument("--import", dest="modules", action="append", default=[])
    for module in pre.parse_known_args(argv)[0].modules:
        try:
            importlib.import_module(module)
        except Exception as error:  # noqa: BLE001  (whatever the module raises, one line)
            pre.error(f"--import {module}: {type(error).__name__}: {error}")

    parser = Parser(prog="xor.py",
        description=__doc__.split("\n\n")[0], epilog=__doc__.split("\n\n", 1)[1],
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--init", type=initializers, default=None, metavar="NAME[,NAME...]",
                        help="initializers to compare (every layer, unless --output-init), "
                             "comma-separated, with parameters if needed (normal(std=0.5)), or "
                             "'all' (default he_leaky). Registered: "
                             + ", ".join(tinynet.init.available()))
    parser.add_argument("--output-init", type=initializer, default=None, metavar="NAME",
                        help="initializer of the output layer (default: the same as --init)")
    parser.add_argument("--shuffle", action=argparse.BooleanOptionalAction, default=None,
                        help="visit the samples in a fresh random order every epoch "
                             "(default: no, in data order, as 99mlp did at first)")
    parser.add_argument("--seeds", type=int, default=100, help="seeds per initializer (100)")
    parser.add_argument("--first-seed", type=int, default=0, help="first seed (0)")
    parser.add_argument("--epochs", type=int, default=20_000, help="epochs (20000)")
    parser.add_argument("--lr", type=float, default=0.01, help="SGD learning rate (0.01)")
    parser.add_argument("--hidden", type=widths, default=None,
                        help="hidden layer widths, comma-separated (2,2)")
    parser.add_argument("--activation", default="leaky_relu",
                        choices=sorted(tinynet.activations.ACTIVATIONS),
                        help="hidden activation (leaky_relu)")
    parser.add_argument("--alpha", type=float, default=0.01, help="LeakyReLU slope (0.01)")
    parser.add_argument("--backend", default="numba", choices=["numba", "numpy"],
                        help="numba (compiled, default) or numpy (the reference; slow)")
    parser.add_argument("--preset", choices=["notes", "widths"], default=None,
                        help="notes: the notes' four runs (and N(0,1) shuffled) side by side; "
                             "widths: shapes 2-2-1 ... 2-16-1 and 2-2-2-1 x "
                             + ", ".join(WIDTH_INITS))
    parser.add_argument("--json", type=Path, metavar="PATH", help="write the results as JSON")
    parser.add_argument("--csv", type=Path, metavar="PATH", help="write one row per arm as CSV")
    parser.add_argument("--plot", type=Path, metavar="PATH",
                        help="write a bar chart of the rates with 95 %% intervals (PNG)")
    parser.add_argument("--import", dest="modules", action="append", default=[],
                        metavar="MODULE", help="import MODULE first, e.g. one that registers "
                                               "your own initializer; repeatable")
    args = parser.parse_args(argv)
    fixed_by_preset = {"notes": ["init", "output_init", "shuffle"],
                       "widths": ["init", "output_init", "hidden"]}.get(args.preset, [])
    for name in fixed_by_preset:
        if getattr(args, name) is not None:
            parser.error(f"--{name.replace('_', '-')} cannot be combined with --preset "
                         f"{args.preset}, which sets it")
    args.init = args.init or ["he_leaky"]
    args.shuffle = bool(args.shuffle)
    args.hidden = args.hidden or (2, 2)
    for name in ("json", "csv", "plot"):  # fail now, not after the training
        path = getattr(args, name)
        if path is not None and not os.access(path.parent.resolve(), os.W_OK):
            parser.error(f"--{name} {path}: cannot write into {path.parent.resolve()}")
    return parser, args


def main(argv: list[str] | None = None) -> None:
    parser, args = parse_args(argv)
    try:
        setup = XorSetup(hidden=args.hidden, activation=args.activation, alpha=args.alpha,
                         lr=args.lr, epochs=args.epochs, seeds=args.seeds,
                         first_seed=args.first_seed, backend=args.backend)
    except (ValueError, TypeError) as error:
        parser.error(str(error))

    if args.preset == "widths":
        setups = [XorSetup(**{**vars(setup), "hidden": hidden}) for hidden in WIDTHS]
        arms = [Arm(name, shuffle=args.shuffle) for name in WIDTH_INITS]
    else:
        setups = [setup]
        arms = (NOTES_ARMS if args.preset == "notes" else
                [Arm(name, args.output_init, args.shuffle) for name in args.init])
    try:
        studies = [run_study(arms, each) for each in setups]
        for study in studies:
            print(study.report(), end="\n\n")
        if len(studies) > 1:
            print(sweep_table(studies))
        if args.json:
            args.json.write_text(json.dumps([s.to_dict() for s in studies] if len(studies) > 1
                                            else studies[0].to_dict(), indent=2))
        if args.csv:
            args.csv.write_text("".join(s.to_csv() if i == 0 else s.to_csv().split("\n", 1)[1]
                                        for i, s in enumerate(studies)))
        if args.plot:
            tinynet.plots.rates(studies, args.plot)
    except BrokenPipeError:  # the reader went away (| head): stop quietly, as Unix tools do
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        sys.exit(1)
    except (ValueError, TypeError, OSError) as error:
        parser.error(f"{type(error).__name__}: {error}")


def sweep_table(studies: list[Study]) -> str:
    """Rates as a shape x initializer matrix: 'rate [low, high]'."""
    names = [r.arm.name for r in studies[0].results]
    rows = [["shape"] + names]
    for study in studies:
        rows.append(["-".join(map(str, study.setup.sizes))] +
                    [f"{r.rate:.0%} [{r.interval[0]:.0%}, {r.interval[1]:.0%}]"
                     for r in study.results])
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return "\n".join("  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip() for row in rows)


if __name__ == "__main__":
    main()
