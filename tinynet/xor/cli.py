"""How often does a tiny network learn XOR (or another task)? Success rates over many seeds,
per initializer.

    python -m tinynet.xor --init he_leaky --shuffle
    python -m tinynet.xor --init normal,he_leaky,xavier_normal --seeds 1000 --plot rates.png
    python -m tinynet.xor --preset notes          # the notes' four runs, side by side
    python -m tinynet.xor --preset widths         # where initialization starts to matter
    python -m tinynet.xor --seeds 4000 --seed-ranges 0,777000,10000000   # do seed ranges agree?
    python -m tinynet.xor --init normal --gallery gallery.png --curves curves.png
    python -m tinynet.xor --seeds 1000 --gallery g.png --gallery-seeds 100   # a 10 x 10 grid
    python -m tinynet.xor --init normal --save-failed failed/   # the failed seeds' networks
    python -m tinynet.xor --preset depth          # where initialization decides (circles)
    python -m tinynet.xor --data moons --samples 200 --accuracy 0.95 --hidden 16,16 \\
        --activation relu --batch-size 32 --lr 0.1 --epochs 300 --init normal,he_normal --shuffle
    python -m tinynet.xor --preset notes --seeds 100000 --workers 2     # a local Dask cluster
    python -m tinynet.xor --preset notes --seeds 100000 --scheduler tcp://host:8786

Defaults are the notes' 99mlp: two hidden LeakyReLU(0.01) layers of width 2, a sigmoid output,
MSE, per-sample SGD at lr 0.01 for 20,000 epochs, zero initial biases, 100 seeds, on XOR's four
points. A seed succeeds when, after training, all four XOR outputs are on the right side of
0.5; on another data set, when its training accuracy reaches --accuracy. A preset with a setup
of its own (depth) starts from that setup instead, and the options given change it. The
table goes to stdout, progress to stderr.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import importlib
import os
import sys
from collections.abc import Callable
from dataclasses import asdict, replace
from pathlib import Path

from .. import data, init
from ..activations import ACTIVATIONS
from ..files import batch, write_whole
from ..losses import LOSSES
from ..optimizers import OPTIMIZERS, Adam, Momentum
from ..results import UPDATES
from ..text import reader_gone
from .arms import DEFAULT_SETUP, Arm, Setup
from .blocks import BLOCK_SEEDS, BlockError, check_block_seeds
from .failed import check_folder, save_failed
from .interrupts import exit_status, stop_signals_as_interrupt, stopped_message
from .outputs import check_output_names, check_outputs, shape_path
from .presets import PRESETS, get_preset
from .ranges import SeedRanges, run_seed_ranges
from .sweep import run_sweep
from .task import Task

__all__ = ["main", "command", "parse_args", "split_specs", "add_progress_flag", "show_progress"]

DEFAULT_INIT = "he_leaky"
"""The initializer of the single arm run without --init."""

GALLERY_SEEDS = 10
"""How many seeds of each arm --gallery draws without --gallery-seeds."""

GC_THRESHOLD = 10_000
"""How many new container objects start a collection of Python's cyclic garbage collector's
youngest generation while the command runs (Python's own default is 700); see :func:`command`."""


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


class _Every(list):
    """``--init all``: every distinct registered initializer once (:func:`tinynet.init.distinct`);
    ``aliases`` maps each to its other names, which are not run again."""

    def __init__(self) -> None:
        self.aliases = init.distinct()
        super().__init__(self.aliases)

    def note(self) -> str:
        """One line for stderr: how many run, and which names are the same initializer."""
        same = [f"{', '.join(others)} = {name}" for name, others in self.aliases.items() if others]
        return (f"--init all: {len(self)} initializers, each once; not run again under their "
                f"other names: {'; '.join(same)}")


def _initializer_specs(text: str) -> list[str]:
    """argparse type for --init: comma-separated initializer specs, or ``all`` (each distinct
    registered initializer once). The names themselves are checked by :class:`Arm`."""
    specs = _Every() if text == "all" else split_specs(text)
    if not specs:
        raise argparse.ArgumentTypeError("expected at least one initializer name")
    return specs


def _seed_count(text: str) -> int:
    """argparse type for --gallery-seeds: a whole number of seeds, at least 1 (at most the
    study's seeds, checked once the setup is known, in :func:`_design`)."""
    try:
        count = int(text)
    except ValueError:
        count = None
    if count is None or count < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number of seeds, at least 1, got "
                                         f"{text!r}")
    return count


def add_progress_flag(parser: argparse.ArgumentParser) -> None:
    """``--progress/--no-progress`` on ``parser``: whether to report training progress on
    stderr; not given, None, which :func:`show_progress` reads as "on a terminal only"."""
    parser.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                        help="report each arm's progress on stderr (default: on a terminal "
                             "only)")


def show_progress(flag: bool | None) -> bool:
    """The command line's rule for progress: as ``--progress`` or ``--no-progress`` says
    (``flag`` True or False), else (None) only when stderr is a terminal. The library itself
    prints nothing unless asked (:func:`~tinynet.xor.run_study`)."""
    return sys.stderr.isatty() if flag is None else flag


def _integers(example: str):
    """argparse type: comma-separated integers (checked where they are used)."""
    def parse(text: str) -> tuple[int, ...]:
        try:
            return tuple(int(value) for value in text.split(","))
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected integers such as {example}, got "
                                             f"{text!r}") from None
    return parse


_HYPERPARAMETERS = {"momentum": ("momentum",), "adam": ("beta1", "beta2", "eps")}
"""Each optimizer's hyperparameter flags (``--momentum``; ``--beta1``, ``--beta2``, ``--eps``)."""


def _optimizer(parser: argparse.ArgumentParser, args: argparse.Namespace) -> str | None:
    """The optimizer spec ``--optimizer`` and its hyperparameter flags give (None: no
    ``--optimizer``); a hyperparameter flag of another optimizer, or a value out of range, is
    an error."""
    for name, flags in _HYPERPARAMETERS.items():
        for flag in flags:
            if getattr(args, flag) is not None and args.optimizer != name:
                parser.error(f"--{flag} is {name}'s; give --optimizer {name}, not "
                             f"{args.optimizer or 'sgd (the default)'}")
    if args.optimizer is None:
        return None
    values = {flag: getattr(args, flag) for flag in _HYPERPARAMETERS.get(args.optimizer, ())
              if getattr(args, flag) is not None}
    try:
        return repr(OPTIMIZERS[args.optimizer](**values))
    except ValueError as error:
        parser.error(str(error))


class _Parser(argparse.ArgumentParser):
    """argparse, with errors on one line: the message, and where to look."""

    def error(self, message: str):
        self.exit(2, f"{self.prog}: error: {message} (see --help)\n")


def _import_modules(argv: list[str] | None, prog: str | None) -> None:
    """Import every --import MODULE, so that initializers it registers can be named."""
    pre = _Parser(prog=prog, add_help=False)
    pre.add_argument("--import", dest="modules", action="append", default=[])
    modules = pre.parse_known_args(argv)[0].modules
    if modules and os.getcwd() not in sys.path and "" not in sys.path:
        sys.path.insert(0, os.getcwd())  # as `python -m` would: a module beside the user
    for module in modules:
        try:
            importlib.import_module(module)
        except Exception as error:  # noqa: BLE001  (whatever the module raises, one line)
            pre.error(f"--import {module}: {type(error).__name__}: {error}")


def parse_args(argv: list[str] | None = None,
               prog: str | None = None) -> tuple[argparse.ArgumentParser, argparse.Namespace]:
    """Import the --import modules, then parse ``argv`` (default: the command line).

    Settings not given are None: a preset may set them, and the rest come from the setup the
    run starts from; values are checked when the library's objects are made from them, in
    :func:`main`.
    """
    _import_modules(argv, prog)
    summary, details = __doc__.split("\n\n", 1)
    parser = _Parser(prog=prog, description=summary, epilog=details,
                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--init", type=_initializer_specs, default=None, metavar="NAME[,NAME...]",
                        help="initializers to compare (every layer, unless --output-init), "
                             "comma-separated, with parameters if needed (normal(std=0.5)), or "
                             f"'all' (each distinct initializer once, aliases named; default "
                             f"{DEFAULT_INIT}). Registered: "
                             + ", ".join(init.available()))
    parser.add_argument("--output-init", default=None, metavar="NAME",
                        help="initializer of the output layer (default: the same as --init)")
    parser.add_argument("--shuffle", action=argparse.BooleanOptionalAction, default=None,
                        help="visit the samples in a fresh random order every epoch "
                             "(default: no, in data order, as 99mlp did at first)")
    parser.add_argument("--seeds", type=int, default=None,
                        help=f"seeds per initializer ({DEFAULT_SETUP.seeds})")
    parser.add_argument("--first-seed", type=int, default=None,
                        help=f"first seed ({DEFAULT_SETUP.first_seed})")
    parser.add_argument("--seed-ranges", type=_integers("0,777000,10000000"), default=None,
                        metavar="FIRST,FIRST[,...]",
                        help="instead of one range of seeds, run every arm from --seeds seeds "
                             "starting at each of these first seeds (disjoint ranges) and test "
                             "whether the ranges' rates agree (chi-squared test of equal "
                             "proportions)")
    parser.add_argument("--epochs", type=int, default=None,
                        help=f"epochs ({DEFAULT_SETUP.epochs})")
    parser.add_argument("--lr", type=float, default=None,
                        help=f"SGD learning rate ({DEFAULT_SETUP.lr:g})")
    parser.add_argument("--bias-init", default=None, metavar="NAME",
                        help="draw the biases with this initializer, as the weights of an input "
                             "that is always 1 (default: zero biases, as in the notes)")
    parser.add_argument("--update", default=None, choices=UPDATES,
                        help="when each layer's weights change: after the whole backward pass "
                             "(after_backward, the default) or as soon as its gradient is known, "
                             "before the gradient goes further back (during_backward)")
    parser.add_argument("--loss", default=None, choices=sorted(LOSSES),
                        help="the loss: mse, the notes' mean squared error (the default), or "
                             "bce, binary cross-entropy (a sigmoid output; its gradient "
                             "through the sigmoid is ŷ − y)")
    parser.add_argument("--optimizer", default=None, choices=sorted(OPTIMIZERS),
                        help="the optimizer: sgd, the notes' plain SGD (the default), momentum "
                             "(PyTorch's SGD with momentum: --momentum) or adam (PyTorch's "
                             "Adam: --beta1, --beta2, --eps)")
    parser.add_argument("--momentum", type=float, default=None, metavar="MU",
                        help=f"momentum's μ ({Momentum.momentum:g}); needs --optimizer momentum")
    parser.add_argument("--beta1", type=float, default=None,
                        help=f"Adam's β1 ({Adam.beta1:g}); needs --optimizer adam")
    parser.add_argument("--beta2", type=float, default=None,
                        help=f"Adam's β2 ({Adam.beta2:g}); needs --optimizer adam")
    parser.add_argument("--eps", type=float, default=None,
                        help=f"Adam's ε ({Adam.eps:g}); needs --optimizer adam")
    parser.add_argument("--hidden", type=_integers("2,2"), default=None,
                        help="hidden layer widths, comma-separated "
                             f"({','.join(map(str, DEFAULT_SETUP.hidden))})")
    parser.add_argument("--activation", default=None,
                        help=f"hidden activation, one of {', '.join(sorted(ACTIVATIONS))} "
                             f"({DEFAULT_SETUP.activation})")
    parser.add_argument("--alpha", type=float, default=None,
                        help=f"LeakyReLU slope ({DEFAULT_SETUP.alpha:g})")
    parser.add_argument("--backend", default=None,
                        help="numba (compiled, default) or numpy (the reference; slow)")
    parser.add_argument("--batch-size", type=int, default=None,
                        help=f"samples per SGD step ({DEFAULT_SETUP.batch_size})")
    parser.add_argument("--data", default=None, metavar="NAME",
                        help=f"the data set to learn, one of {', '.join(data.DATASETS)} "
                             "(xor: its four points unless --samples)")
    parser.add_argument("--samples", type=int, default=None, metavar="N",
                        help="samples to draw from the data set (its generator's default)")
    parser.add_argument("--noise", type=float, default=None,
                        help="noise of the data set's samples (its generator's default)")
    parser.add_argument("--accuracy", type=float, default=None,
                        help="training accuracy a seed must reach to succeed (default: 1, every "
                             "sample on the right side of 0.5, on XOR's four points; 0.95 on "
                             "drawn samples)")
    parser.add_argument("--preset", default=None, metavar="NAME",
                        help="; ".join(f"{preset.name}: {preset.summary}"
                                       for preset in PRESETS.values()))
    parser.add_argument("--json", type=Path, metavar="PATH",
                        help="write the results as JSON ('-': to stdout, the report to stderr)")
    parser.add_argument("--csv", type=Path, metavar="PATH",
                        help="write one row per arm as CSV ('-': to stdout, the report to "
                             "stderr)")
    parser.add_argument("--plot", type=Path, metavar="PATH",
                        help="write a bar chart of the rates with 95 %% intervals (PNG); with "
                             "--preset fixes, each arm against the baseline")
    parser.add_argument("--gallery", type=Path, metavar="PNG",
                        help=f"write the decision boundaries of each arm's first "
                             f"{GALLERY_SEEDS} trained seeds (or --gallery-seeds), framed by "
                             "outcome, about sqrt(N) panels a row (a file per shape when there "
                             "are several)")
    parser.add_argument("--gallery-seeds", type=_seed_count, default=None, metavar="N",
                        help=f"how many of each arm's first seeds --gallery draws (default "
                             f"{GALLERY_SEEDS}, or all the study's seeds if fewer; at most the "
                             "study's seeds)")
    parser.add_argument("--curves", type=Path, metavar="PNG",
                        help="write each arm's loss curves of its first 100 seeds, with the "
                             "plateaus marked (keeps 200 losses per seed while training)")
    parser.add_argument("--save-failed", type=Path, metavar="DIR",
                        help="write every seed that did not succeed into DIR: its network "
                             "as initialised and as trained (.npz, read with tinynet.load) "
                             "and its outcome and loss history, 200 losses (.json)")
    add_progress_flag(parser)
    parser.add_argument("--workers", type=int, default=None, metavar="N",
                        help="train on a local Dask cluster of N single-threaded worker "
                             "processes, started for this run and closed after it")
    parser.add_argument("--scheduler", default=None, metavar="ADDRESS",
                        help="train on the Dask cluster whose scheduler is at ADDRESS, such as "
                             "tcp://host:8786 (its workers need the same tinynet code; "
                             "--import modules are sent to them)")
    parser.add_argument("--block-seeds", type=int, default=None, metavar="N",
                        help="with --workers or --scheduler: seeds per task, a multiple of 64 "
                             f"(default: two tasks per worker thread, at most {BLOCK_SEEDS})")
    parser.add_argument("--import", dest="modules", action="append", default=[],
                        metavar="MODULE", help="import MODULE first, e.g. one that registers "
                                               "your own initializer; repeatable")
    args = parser.parse_args(argv)
    check_outputs(parser, args)
    for name in ("plot", "gallery", "curves"):
        if str(getattr(args, name)) == "-":
            parser.error(f"--{name} writes a PNG file; '-' (stdout) is for --json and --csv")
    if args.gallery_seeds is not None and args.gallery is None:
        parser.error(f"--gallery-seeds {args.gallery_seeds} says how many seeds --gallery "
                     "draws; give --gallery PNG too")
    if str(args.json) == "-" and str(args.csv) == "-":
        parser.error("--json - and --csv - cannot both write to stdout; give one a file")
    if args.workers is not None and args.scheduler is not None:
        parser.error("--workers starts a cluster of its own; it cannot be combined with "
                     "--scheduler, which names one")
    cores = os.cpu_count() or 1
    if args.workers is not None and not 1 <= args.workers <= cores:
        parser.error(f"--workers must be from 1 to {cores} (this machine's cores: a worker "
                     f"trains on one), got {args.workers}")
    if args.block_seeds is not None:
        if args.workers is None and args.scheduler is None:
            parser.error("--block-seeds cuts the seeds into tasks for a cluster; give --workers "
                         "or --scheduler")
        try:
            check_block_seeds(args.block_seeds, "--block-seeds")
        except ValueError as error:
            parser.error(str(error))
    return parser, args


def _design(parser: argparse.ArgumentParser,
            args: argparse.Namespace) -> tuple[list[Arm], list[Setup]]:
    """The arms and setups to run, made (and so checked) from the arguments."""
    preset = None if args.preset is None else get_preset(args.preset)
    if preset is not None:
        for name in preset.sets:
            if getattr(args, name) is not None:
                parser.error(f"--{name.replace('_', '-')} cannot be combined with --preset "
                             f"{preset.name}, which sets it")
    if args.seed_ranges is not None and args.first_seed is not None:
        parser.error("--first-seed cannot be combined with --seed-ranges, which lists the "
                     "first seed of every range")
    for name in ("plot", "gallery", "curves", "save_failed"):
        if args.seed_ranges is not None and getattr(args, name) is not None:
            parser.error(f"--{name.replace('_', '-')} cannot be combined with --seed-ranges; "
                         "with --seed-ranges, use --json or --csv")
    optimizer = _optimizer(parser, args)
    base = DEFAULT_SETUP if preset is None else preset.base
    task = {name: value for name, value in (("data", args.data), ("n", args.samples),
                                            ("noise", args.noise), ("accuracy", args.accuracy))
            if value is not None}
    if task.get("data", base.task.data) != base.task.data:
        # another data set: its own defaults, not the base's
        task = {"n": None, "noise": None, "accuracy": None, **task}
    task = Task(**{**asdict(base.task), **task})
    if args.batch_size is None and base.batch_size > task.samples:
        parser.error(f"the batch size {base.batch_size} of "
                     f"{'--preset ' + preset.name if preset else '99mlp'} is more than the "
                     f"{task.samples} samples of the data; give --batch-size")
    setup = replace(base, task=task, **{
        name: value for name in ("hidden", "activation", "alpha", "lr", "epochs", "seeds",
                                 "first_seed", "backend", "batch_size")
        if (value := getattr(args, name)) is not None})
    if preset is not None:
        arms, setups = preset.design(setup, args.shuffle, args.bias_init, args.update,
                                     args.loss, optimizer)
    else:
        arms = [Arm(spec, args.output_init, bool(args.shuffle), bias_init=args.bias_init,
                    update=args.update or "after_backward", loss=args.loss or "mse",
                    optimizer=optimizer or "sgd")
                for spec in args.init or [DEFAULT_INIT]]
        setups = [setup]
    if (args.workers is not None or args.scheduler is not None) and \
            any(setup.backend != "numba" for setup in setups):
        parser.error("--workers and --scheduler train on the numba backend (bit for bit as in "
                     "process); --backend numpy runs in this process only")
    if args.seed_ranges is not None and len(setups) > 1:
        parser.error(f"--seed-ranges needs one shape, but --preset {args.preset} has "
                     f"{len(setups)}")
    seeds = setups[0].seeds  # every setup of a preset has the same seeds
    if args.gallery_seeds is not None and args.gallery_seeds > seeds:
        parser.error(f"--gallery-seeds {args.gallery_seeds}: more than the study's {seeds} "
                     f"seeds; expected a number from 1 to {seeds}")
    return arms, setups


def main(argv: list[str] | None = None, prog: str | None = None) -> None:
    """Run the command with arguments ``argv`` (default: the command line); ``prog`` names it
    in usage and errors (default: the script's file name).

    Bad arguments exit with status 2 and one line on stderr; a reader of stdout that goes away
    (``| head``) ends the run quietly with status 1; Ctrl-C ends it with status 130 and one
    line saying which files were written (each file is written whole or not at all); SIGTERM
    (``kill``, a batch system's time limit) and SIGHUP (a closed terminal) the same way, with
    status 143 and 129 (:mod:`~tinynet.xor.interrupts`).
    """
    parser, args = parse_args(argv, prog)
    try:
        arms, setups = _design(parser, args)
    except (ValueError, TypeError) as error:
        parser.error(str(error))
    check_output_names(parser, args, [setup.shape for setup in setups])
    if args.save_failed is not None:
        try:
            check_folder(args.save_failed, [setup.shape for setup in setups],
                         [arm.name for arm in arms], setups[0].seed_range)
        except (ValueError, OSError) as error:
            parser.error(f"--save-failed {args.save_failed}: {error}")
    if isinstance(args.init, _Every):
        print(args.init.note(), file=sys.stderr)
    written: list[Path] = []
    try:
        with _executor(parser, args) as executor, stop_signals_as_interrupt():
            _run(args, arms, setups, written, executor)
    except KeyboardInterrupt as stop:
        print(stopped_message(stop, written), file=sys.stderr)
        sys.exit(exit_status(stop))
    except BrokenPipeError:  # the reader went away (| head): stop quietly, as Unix tools do
        reader_gone()
    except BlockError as error:  # a task failed on the cluster: not a bad argument
        parser.exit(1, f"{parser.prog}: error: {error}\n")
    except (ValueError, TypeError, OSError) as error:
        parser.error(f"{type(error).__name__}: {error}")


def _executor(parser: argparse.ArgumentParser,
              args: argparse.Namespace) -> contextlib.AbstractContextManager[object | None]:
    """The Dask client to train on (:func:`tinynet.xor.cluster.cluster`), or None to train in
    this process: without --workers and --scheduler the cluster code is not even imported."""
    if args.workers is None and args.scheduler is None:
        return contextlib.nullcontext()
    from .cluster import cluster

    return cluster(parser, args)


def command(prog: str | None = None) -> None:
    """:func:`main` as the whole of a process (``python examples/xor.py``, ``python -m
    tinynet.xor``), with Python's cyclic garbage collector told so; results and output are
    the same.

    Loading Numba and the compiled kernels makes some 10^5 long-lived objects. At Python's
    default pace (a collection every 700 new objects) the collector walked them again and
    again, and the interpreter's exit walked them all a few more times: about 0.25 s of the
    warm default job's 1 s. So the youngest generation is collected every
    :data:`GC_THRESHOLD` new objects instead (cyclic garbage is still freed, a little later),
    and once ``main`` has returned (or exited) every object left is frozen
    (:func:`gc.freeze`), which the exit's passes skip; the operating system frees their memory
    as it would anyway. Files are written and closed before that (:func:`main`), and the
    standard streams are flushed at exit all the same. Not in :func:`main` itself, which a
    Python session may call many times."""
    gc.set_threshold(GC_THRESHOLD, *gc.get_threshold()[1:])
    try:
        main(prog=prog)
    finally:
        gc.freeze()


def _run(args: argparse.Namespace, arms: list[Arm], setups: list[Setup],
         written: list[Path], executor: object | None = None) -> None:
    """Train (on ``executor`` if given), report, and write every file asked for, adding each
    to ``written``."""
    blocks = {} if executor is None else {"executor": executor, "block_seeds": args.block_seeds}
    progress = show_progress(args.progress)
    if args.seed_ranges is not None:
        check = run_seed_ranges(arms, setups[0], args.seed_ranges, progress, **blocks)
        _report_seed_ranges(check, args, written)
        return
    record_every = (max(1, setups[0].epochs // 200) if args.curves or args.save_failed
                    else None)
    against = None if args.preset is None else get_preset(args.preset).against
    sweep = run_sweep(arms, setups, progress=progress, record_every=record_every,
                      against=against, **blocks)
    report = sys.stderr if "-" in (str(args.json), str(args.csv)) else sys.stdout
    for study in sweep.studies:
        print(study.report(), end="\n\n", file=report)
    if len(sweep.studies) > 1:
        print(sweep.table(), file=report)
    results = sweep if len(sweep.studies) > 1 else sweep.studies[0]
    if args.json:
        _text(args.json, results.to_json(), written)
    if args.csv:
        _text(args.csv, results.to_csv(), written)
    if args.plot or args.gallery or args.curves:
        from .. import plots  # here: a run that draws nothing does not load the plots
    if args.plot:
        baseline = len(sweep.studies) == 1 and sweep.studies[0].baseline is not None
        _whole(args.plot, lambda path: plots.against_baseline(sweep.studies[0], path)
               if baseline else plots.rates(sweep.studies, path), written)
    gallery_seeds = GALLERY_SEEDS if args.gallery_seeds is None else args.gallery_seeds
    for study in sweep.studies:
        if args.gallery:
            _whole(shape_path(args.gallery, study.setup.shape, len(sweep.studies)),
                   lambda path: plots.seed_gallery(study, seeds=gallery_seeds, path=path),
                   written)
        if args.curves:
            _whole(shape_path(args.curves, study.setup.shape, len(sweep.studies)),
                   lambda path: plots.study_curves(study, path=path), written)
        if args.save_failed:
            with batch():  # three files a failed seed: one scan and one sync a folder
                save_failed(study, args.save_failed, written)


def _whole(path: Path, write: Callable[[Path], object], written: list[Path]) -> None:
    """``path`` written whole by ``write`` (:func:`tinynet.files.write_whole`), then added to
    ``written``."""
    written.append(write_whole(path, write))


def _text(path: Path, text: str, written: list[Path]) -> None:
    """``text`` into the file ``path`` (:func:`_whole`), or to stdout for ``-``."""
    if str(path) == "-":
        sys.stdout.write(text if text.endswith("\n") else text + "\n")
    else:
        _whole(path, lambda partial: partial.write_text(text), written)


def _report_seed_ranges(check: SeedRanges, args: argparse.Namespace,
                        written: list[Path]) -> None:
    """--seed-ranges: print the report, write what was asked."""
    print(check.report(), file=sys.stderr if "-" in (str(args.json), str(args.csv))
          else sys.stdout)
    if args.json:
        _text(args.json, check.to_json(), written)
    if args.csv:
        _text(args.csv, check.to_csv(), written)

