"""The XOR command's arguments: ``--import`` first, then the parser made from what is
registered, then the checks that need no setup (:func:`parse_args`).

Settings not given are None: a preset may set them, and the rest come from the setup the run
starts from; values are checked when the library's objects are made from them
(:mod:`~tinynet.xor.design`).
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from .. import data, init
from ..activations import ACTIVATIONS
from ..losses import LOSSES
from ..optimizers import OPTIMIZERS
from ..results import UPDATES
from ..schedules import DECAYS
from .argtypes import add_progress_flag, data_source, initializer_specs, integers, \
    seed_count
from .arms import DEFAULT_SETUP
from .blocks import BLOCK_SEEDS, check_block_seeds
from .hyperparameters import add_flags
from .imports import import_user_modules
from .outputs import check_outputs
from .presets import PRESETS

__all__ = ["USAGE", "DEFAULT_INIT", "GALLERY_SEEDS", "parse_args"]

USAGE = """\
How often does a tiny network learn XOR (or another task)? Success rates over many seeds,
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
    python -m tinynet.xor --optimizer adam --adam-eps 1e-6      # a hyperparameter of a class
    python -m tinynet.xor --import mydefs.py --optimizer rmsprop --rmsprop-rho 0.95  # your own
    python -m tinynet.xor --preset notes --seeds 100000 --workers 2     # a local Dask cluster
    python -m tinynet.xor --preset notes --seeds 100000 --scheduler tcp://host:8786

Defaults are the notes' 99mlp: two hidden LeakyReLU(0.01) layers of width 2, a sigmoid output,
MSE, per-sample SGD at lr 0.01 for 20,000 epochs, zero initial biases, 100 seeds, on XOR's four
points. A seed succeeds when, after training, all four XOR outputs are on the right side of
0.5; on another data set, when its training accuracy reaches --accuracy. A preset with a setup
of its own (depth) starts from that setup instead, and the options given change it. The
table goes to stdout, progress to stderr.

--import MODULE (a module name or a .py file) runs your module first: the initializers,
activations, losses and optimizers it registers are then names for --init, --activation,
--loss and --optimizer, and each of their hyperparameters gets a flag --<class>-<field>.
"""
"""What ``--help`` prints: the summary, examples, and what the defaults are."""

DEFAULT_INIT = "he_leaky"
"""The initializer of the single arm run without --init."""

GALLERY_SEEDS = 10
"""How many seeds of each arm --gallery draws without --gallery-seeds."""


class _Parser(argparse.ArgumentParser):
    """argparse, with errors on one line: the message, and where to look."""

    def error(self, message: str):
        self.exit(2, f"{self.prog}: error: {message} (see --help)\n")


def _import_first(argv: list[str] | None, prog: str | None) -> list[str]:
    """Import every ``--import`` module before the parser is made (its choices and flags
    come from the registries the modules add to); return their module names. A module that
    cannot be imported: one line, exit 2."""
    pre = _Parser(prog=prog, add_help=False)
    pre.add_argument("--import", dest="imports", action="append", default=[])
    try:
        return import_user_modules(pre.parse_known_args(argv)[0].imports)
    except ValueError as error:
        pre.error(str(error))


def _study_flags(parser: argparse.ArgumentParser) -> None:
    """What is trained, how, and on what: the flags that make the arms and the setup."""
    add = parser.add_argument
    add("--init", type=initializer_specs, default=None, metavar="NAME[,NAME...]",
        help="initializers to compare (every layer, unless --output-init), comma-separated, "
             "with parameters if needed (normal(std=0.5)), or 'all' (each distinct "
             f"initializer once, aliases named; default {DEFAULT_INIT}). Registered: "
             + ", ".join(init.available()))
    add("--output-init", default=None, metavar="NAME",
        help="initializer of the output layer (default: the same as --init)")
    add("--shuffle", action=argparse.BooleanOptionalAction, default=None,
        help="visit the samples in a fresh random order every epoch (default: no, in data "
             "order, as 99mlp did at first)")
    add("--seeds", type=int, default=None, help=f"seeds per initializer ({DEFAULT_SETUP.seeds})")
    add("--first-seed", type=int, default=None, help=f"first seed ({DEFAULT_SETUP.first_seed})")
    add("--seed-ranges", type=integers("0,777000,10000000"), default=None,
        metavar="FIRST,FIRST[,...]",
        help="instead of one range of seeds, run every arm from --seeds seeds starting at each "
             "of these first seeds (disjoint ranges) and test whether the ranges' rates agree "
             "(chi-squared test of equal proportions)")
    add("--epochs", type=int, default=None, help=f"epochs ({DEFAULT_SETUP.epochs})")
    add("--lr", type=float, default=None, help=f"SGD learning rate ({DEFAULT_SETUP.lr:g})")
    add("--bias-init", default=None, metavar="NAME",
        help="draw the biases with this initializer, as the weights of an input that is always "
             "1 (default: zero biases, as in the notes)")
    add("--update", default=None, choices=UPDATES,
        help="when each layer's weights change: after the whole backward pass (after_backward, "
             "the default) or as soon as its gradient is known, before the gradient goes "
             "further back (during_backward)")
    add("--loss", default=None, choices=sorted(LOSSES),
        help="the loss (default mse, the notes' mean squared error; bce: binary cross-entropy, "
             "its gradient through a sigmoid output ŷ − y); its parameters: --<loss>-<field>")
    add("--optimizer", default=None, choices=sorted(OPTIMIZERS),
        help="the optimizer (default sgd, the notes' plain SGD; momentum and adam as "
             "PyTorch's); its hyperparameters: --<optimizer>-<field>")
    add("--hidden", type=integers("2,2"), default=None,
        help=f"hidden layer widths, comma-separated ({','.join(map(str, DEFAULT_SETUP.hidden))})")
    add("--activation", default=None,
        help=f"hidden activation, one of {', '.join(sorted(ACTIVATIONS))} "
             f"({DEFAULT_SETUP.activation}); its parameters: --<activation>-<field>")
    add("--backend", default=None, help="numba (compiled, default) or numpy (the reference; slow)")
    add("--batch-size", type=int, default=None,
        help=f"samples per SGD step ({DEFAULT_SETUP.batch_size})")
    add("--warmup", type=int, default=None, metavar="STEPS",
        help="raise the learning rate linearly over the first STEPS steps, from lr/STEPS to lr "
             "(default 0: no warmup)")
    add("--decay", default=None, choices=DECAYS,
        help="the learning rate after the warmup: constant (the default) or cosine, falling "
             "along a half cosine towards 0 by the last step")
    add("--data", default=None, metavar="NAME|FILE", type=data_source,
        help=f"the data set to learn, one of {', '.join([*data.DATASETS, *data.CLASSIFICATION])}"
             " (xor: its four points unless --samples; digits and mnist1d: their fixed test "
             "split, a softmax output with cross-entropy, and by default one hidden ReLU layer "
             "of 100, minibatches of 32 at lr 0.1, shuffled, 10 epochs, init he_normal; a seed "
             "learns when its test accuracy is above --accuracy, default twice chance); or your "
             "own data as digits are learned, from a .npz file (arrays X, y, X_test, y_test) or "
             "a .csv file (a header row; feature columns, label, and split: train or test)")
    add("--samples", type=int, default=None, metavar="N",
        help="samples to draw from the data set (its generator's default)")
    add("--noise", type=float, default=None,
        help="noise of the data set's samples (its generator's default)")
    add("--accuracy", type=float, default=None,
        help="training accuracy a seed must reach to succeed (default: 1, every sample on the "
             "right side of 0.5, on XOR's four points; 0.95 on drawn samples)")
    add("--preset", default=None, metavar="NAME",
        help="; ".join(f"{preset.name}: {preset.summary}" for preset in PRESETS.values()))


def _run_flags(parser: argparse.ArgumentParser) -> None:
    """Where the results go and where the training runs."""
    add = parser.add_argument
    add("--json", type=Path, metavar="PATH",
        help="write the results as JSON ('-': to stdout, the report to stderr)")
    add("--csv", type=Path, metavar="PATH",
        help="write one row per arm as CSV ('-': to stdout, the report to stderr)")
    add("--plot", type=Path, metavar="PATH",
        help="write a bar chart of the rates with 95 %% intervals (PNG); with --preset fixes, "
             "each arm against the baseline")
    add("--gallery", type=Path, metavar="PNG",
        help=f"write the decision boundaries of each arm's first {GALLERY_SEEDS} trained seeds "
             "(or --gallery-seeds), framed by outcome, about sqrt(N) panels a row (a file per "
             "shape when there are several)")
    add("--gallery-seeds", type=seed_count, default=None, metavar="N",
        help=f"how many of each arm's first seeds --gallery draws (default {GALLERY_SEEDS}, or "
             "all the study's seeds if fewer; at most the study's seeds)")
    add("--curves", type=Path, metavar="PNG",
        help="write each arm's loss curves of its first 100 seeds, with the plateaus marked "
             "(keeps 200 losses per seed while training); on digits or mnist1d, each arm's "
             "test accuracy and loss over epochs, median and quartiles over all its seeds "
             "(evaluated every --evaluate-every epochs, default epochs / 50)")
    add("--evaluate-every", type=int, default=None, metavar="K",
        help="on digits or mnist1d, evaluate every seed's training and test loss and accuracy "
             "every K epochs (kept in --json's arms, in memory in the study)")
    add("--save-failed", type=Path, metavar="DIR",
        help="write every seed that did not succeed into DIR: its network as initialised and "
             "as trained (.npz, read with tinynet.load) and its outcome and loss history, 200 "
             "losses (.json)")
    add_progress_flag(parser)
    add("--workers", type=int, default=None, metavar="N",
        help="train on a local Dask cluster of N single-threaded worker processes, started for "
             "this run and closed after it")
    add("--scheduler", default=None, metavar="ADDRESS",
        help="train on the Dask cluster whose scheduler is at ADDRESS, such as tcp://host:8786 "
             "(its workers need the same tinynet code; --import modules are sent to them)")
    add("--block-seeds", type=int, default=None, metavar="N",
        help="with --workers or --scheduler: seeds per task, a multiple of 64 (default: two "
             f"tasks per worker thread, at most {BLOCK_SEEDS})")
    add("--import", dest="imports", action="append", default=[], metavar="MODULE",
        help="import MODULE first (a module name, or a .py file's path): one that registers "
             "your own initializers, activations, losses or optimizers; repeatable")


def parse_args(argv: list[str] | None = None,
               prog: str | None = None) -> tuple[argparse.ArgumentParser, argparse.Namespace]:
    """Import the --import modules, then parse ``argv`` (default: the command line) with a
    parser made from what is registered then (its choices and hyperparameter flags); the
    modules' names are ``args.modules``, the hyperparameter flags ``args.hyperparameters``
    (:mod:`~tinynet.xor.hyperparameters`)."""
    modules = _import_first(argv, prog)
    summary, details = USAGE.split("\n\n", 1)
    parser = _Parser(prog=prog, description=summary, epilog=details,
                     formatter_class=argparse.RawDescriptionHelpFormatter)
    _study_flags(parser)
    _run_flags(parser)
    made = add_flags(parser)
    args = parser.parse_args(argv)
    args.modules, args.hyperparameters = modules, made
    check_outputs(parser, args)
    for name in ("plot", "gallery", "curves"):
        if str(getattr(args, name)) == "-":
            parser.error(f"--{name} writes a PNG file; '-' (stdout) is for --json and --csv")
    if args.gallery_seeds is not None and args.gallery is None:
        parser.error(f"--gallery-seeds {args.gallery_seeds} says how many seeds --gallery "
                     "draws; give --gallery PNG too")
    if str(args.json) == "-" and str(args.csv) == "-":
        parser.error("--json - and --csv - cannot both write to stdout; give one a file")
    _check_cluster(parser, args)
    return parser, args


def _check_cluster(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """--workers, --scheduler and --block-seeds, checked together."""
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
