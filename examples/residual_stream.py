"""The residual stream at initialization, measured over seeds beside its prediction.

    python examples/residual_stream.py --readme docs/residual.md   # measure, commit, render
    python examples/residual_stream.py --render --readme docs/residual.md  # from the JSON
    python examples/residual_stream.py              # measure into ./residual_stream/, print

For six kinds of block (He's ``x + F(x)``, pre-norm, post-norm, ReZero, Fixup, DeepNet), each
a stack of 64 blocks of width 16 (two ReLU layers a branch, Fixup's last linear; He's weights
but Fixup's and DeepNet's own; between a first layer 2 → 16 and a sigmoid output), 200 seeds,
a batch of 256 points drawn from N(0, I): the second moment of the stream entering each block
and the gradient reaching it
(:func:`tinynet.diagnostics.stream`), beside :func:`tinynet.diagnostics.predicted_stream`.
Writes the JSON (with the machine, its load and the seconds): with ``--commit`` or ``--readme``
the committed ``examples/results/residual_stream.json``, otherwise
``./residual_stream/residual_stream.json``; and, with ``--readme``, the page's section
between ``<!-- stream start -->`` and ``<!-- stream end -->``, rendered from the JSON alone;
``tests/test_readme.py`` renders the committed JSON again and fails if the page differs.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

import tinynet
from tinynet.diagnostics import stream
from tinynet.files import put_between, write_whole
from xor_studies import timed  # examples/, beside this script

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "examples" / "results" / "residual_stream.json"
MARKERS = ("<!-- stream start -->\n", "<!-- stream end -->")
BLOCKS, WIDTH, SEEDS, SAMPLES = 64, 16, 200, 256
KINDS = {"x + F(x)": dict(residual=True), "pre-norm": dict(residual=True, norm="pre"),
         "post-norm": dict(residual=True, norm="post"), "ReZero": dict(residual="rezero"),
         "Fixup": dict(residual="fixup"), "DeepNet": dict(residual="deepnet", norm="post")}
"""The blocks measured, by the name the page gives them: :func:`tinynet.mlp`'s arguments."""
SHOWN = (0, 1, 2, 4, 8, 16, 32, 64)
"""The stream positions the page's tables show (the JSON keeps every one)."""


def measure() -> dict:
    """Every kind's stream, as JSON."""
    X = np.random.default_rng(0).normal(size=(SAMPLES, 2))
    kinds = {}
    for name, arguments in KINDS.items():
        networks = [tinynet.mlp([2, *[WIDTH] * (BLOCKS + 1), 1], activation="relu",
                                init="he_normal", branch=2, seed=seed, **arguments)
                    for seed in range(SEEDS)]
        report = stream(networks, X)
        kinds[name] = {"formula": report.formula, "mlp": arguments,
                       "x": [[p.x.measured, p.x_error, p.x.predicted] for p in report.positions],
                       "grad": [[p.grad.measured, p.grad_error, p.grad.predicted]
                                for p in report.positions]}
    return {"blocks": BLOCKS, "width": WIDTH, "seeds": SEEDS, "samples": SAMPLES,
            "kinds": kinds}


def _cell(measured: float, error: float, predicted: float) -> str:
    return f"{measured:.3g} ± {error:.2g} ({predicted:.3g})"


def render(data: dict) -> str:
    """The page's section: two tables, the stream's second moment and its gradient at the
    positions :data:`SHOWN`, measured ± a standard error (predicted)."""
    names = list(data["kinds"])
    header = "| block | " + " | ".join(f"{name}: {data['kinds'][name]['formula']}"
                                      for name in names) + " |\n"
    rule = "| --- " * (len(names) + 1) + "|\n"
    run = data["run"]
    text = (f"{data['blocks']} blocks of width {data['width']} (two ReLU layers a branch, "
            f"Fixup's last linear), {data['seeds']} seeds, one batch of {data['samples']} points "
            "from N(0, I); each cell the mean over the seeds ± its standard error, the "
            "prediction in brackets "
            f"(`python examples/residual_stream.py --readme docs/residual.md`, "
            f"{run['seconds']:.0f} s on {run['cores']} cores at a 1-minute load of "
            f"{run['load_average_1min']:.1f}).\n\n")
    for quantity, title in (("x", "E[x²], the stream's second moment entering each block"),
                            ("grad", "E[(dL/dx)²], the gradient reaching it, from N(0, 1) given "
                                     "to the stream after the last block")):
        text += f"**{title}**\n\n" + header + rule
        for position in SHOWN:
            text += f"| {position} | " + " | ".join(
                _cell(*data["kinds"][name][quantity][position]) for name in names) + " |\n"
        text += "\n"
    kinds = data["kinds"]
    growth = [f"{name} {kinds[name]['grad'][1][0] / kinds[name]['grad'][-1][0]:.3g} "
              f"({kinds[name]['grad'][1][2] / kinds[name]['grad'][-1][2]:.3g} predicted)"
              for name in names]
    return text + ("The gradient reaching the second block over the one given after the last: "
                   + ", ".join(growth) + ". (The first block's depends on the batch: its "
                   "rows are the first layer's outputs, see `tinynet.diagnostics`.)\n\n")


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    summary, details = __doc__.split("\n\n", 1)
    parser = argparse.ArgumentParser(description=summary, epilog=details,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--render", action="store_true",
                        help="render the page from the committed JSON alone")
    parser.add_argument("--readme", type=Path, help="the page whose section to rewrite")
    parser.add_argument("--commit", action="store_true",
                        help="write the committed JSON (--readme does too)")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    if args.render:
        data = json.loads(RESULTS.read_text())
    else:
        data, run = timed(measure)
        data["run"] = run
        path = RESULTS if args.commit or args.readme else \
            Path("residual_stream") / RESULTS.name
        path.parent.mkdir(parents=True, exist_ok=True)
        write_whole(path, lambda partial: partial.write_text(json.dumps(data, indent=1) + "\n"))
        print(f"wrote {path} ({run['seconds']:.0f} s)")
    if args.readme is not None:
        put_between(args.readme, *MARKERS, render(data))
        print(f"rewrote {args.readme}'s stream section")
    else:
        print(render(data))


if __name__ == "__main__":
    main()
