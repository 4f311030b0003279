"""The XOR bench: how often does a tiny network learn XOR, per initializer, over many seeds?

A *study* trains, for each *arm* (an initializer, the output layer's initializer, shuffling on
or off), the same network shape from ``seeds`` different seeds on the fast ensemble path, and
reports per arm the success rate with its Wilson 95 % interval, when the successful seeds
solved XOR, how the others failed, and pairwise Fisher exact tests between the arms::

    >>> study = run_study([Arm("normal"), Arm("he_leaky", shuffle=True)], Setup(seeds=100))
    >>> print(study.report())

Success, as in the notes: after training, all four XOR outputs are on the right side of 0.5
(:func:`solves`), and the loss and weights stayed finite. A study can learn another data set
of :mod:`tinynet.data` instead (``Setup(task=Task("circles", n=128, accuracy=0.95))``): then
success is a training accuracy of at least ``accuracy``, and each arm also reports its
accuracy on a held-out draw.

A *sweep* runs the same arms on several shapes (:func:`run_sweep`); the *presets* are the
designs the notes call for (:func:`get_preset`); :func:`run_seed_ranges` checks that disjoint
ranges of seeds give the same rate; :func:`run_depth_study` finds where initialization decides
(:mod:`~tinynet.xor.depth`), :func:`run_residual_depth_study` what makes depth 128 learn
(:mod:`~tinynet.xor.residual_depth`: residual blocks, LayerNorm, ReZero, Fixup, warmup);
:mod:`~tinynet.xor.fixes` tries what else could fix 99mlp (a loss, an optimizer, a learning
rate, a width), each change at its best learning rate and
compared with the notes' network (``run_study(arms, setup, against=0)``). Each takes an
``executor`` (a ``concurrent.futures`` executor or a Dask client) to train in blocks of seeds
elsewhere, bit for bit the same (:mod:`~tinynet.xor.blocks`). From a shell:
``python -m tinynet.xor --help``.

Modules: :mod:`~tinynet.xor.task` (what is learned), :mod:`~tinynet.xor.arms` (what a study
compares), :mod:`~tinynet.xor.outcome`
(success and failure), :mod:`~tinynet.xor.report` (comparisons, tables, files),
:mod:`~tinynet.xor.bench` (running a study), :mod:`~tinynet.xor.blocks` (in seed blocks),
:mod:`~tinynet.xor.sweep`, :mod:`~tinynet.xor.presets`, :mod:`~tinynet.xor.ranges`,
:mod:`~tinynet.xor.depth`, :mod:`~tinynet.xor.residual_depth`, :mod:`~tinynet.xor.fixes`,
:mod:`~tinynet.xor.figures` (a
study's figures: galleries, loss curves, rates; imported when used, as matplotlib is) and
:mod:`~tinynet.xor.cli` (the command: its arguments :mod:`~tinynet.xor.arguments` and
:mod:`~tinynet.xor.argtypes`, ``--import`` :mod:`~tinynet.xor.imports`, a flag per
hyperparameter :mod:`~tinynet.xor.hyperparameters`, the study they describe
:mod:`~tinynet.xor.design`, what it writes :mod:`~tinynet.xor.writing`, with
:mod:`~tinynet.xor.cluster`, :mod:`~tinynet.xor.outputs`, :mod:`~tinynet.xor.failed` and
:mod:`~tinynet.xor.interrupts`).
"""

from .arms import DEFAULT_SETUP, Arm, Setup, build_network, classification_setup
from .bench import run_study
from .blocks import BLOCK_SEEDS, BlockError
from .depth import DEPTH_SETUP, DEPTHS, DepthStudy, depth_arms, run_depth_study
from .outcome import (FAILURES, OUTCOMES, THRESHOLD, ArmResult, decode_solved, encode_solved,
                      outcomes, solved_epochs, solves, wrong_outputs)
from .presets import (CANDIDATE_ARMS, NOTES_ARMS, PRESETS, WIDTH_INITS, WIDTHS, Preset,
                      get_preset)
from .ranges import SeedRanges, run_seed_ranges
from .report import Comparison, Study, compare
from .residual_depth import ResidualDepthStudy, residual_depth_arms, run_residual_depth_study
from .sweep import Sweep, run_sweep
from .task import XOR, Task

__all__ = ["Arm", "Setup", "DEFAULT_SETUP", "ArmResult", "Comparison", "Study", "run_study",
           "compare", "NOTES_ARMS", "FAILURES", "THRESHOLD", "solves", "solved_epochs",
           "wrong_outputs", "Sweep", "run_sweep", "Preset", "PRESETS", "get_preset", "WIDTHS",
           "WIDTH_INITS", "CANDIDATE_ARMS", "SeedRanges", "run_seed_ranges", "encode_solved",
           "decode_solved", "OUTCOMES", "outcomes", "build_network", "Task", "XOR",
           "classification_setup",
           "DepthStudy", "run_depth_study", "depth_arms", "DEPTHS", "DEPTH_SETUP",
           "ResidualDepthStudy", "run_residual_depth_study", "residual_depth_arms",
           "BLOCK_SEEDS", "BlockError"]
