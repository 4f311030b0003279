"""Running a study: every arm trains the setup's network on the setup's task from each of its
seeds, all seeds of an arm in one ensemble call, and the arms are then compared."""

from __future__ import annotations

import sys
import time
from collections.abc import Sequence

import numpy as np

from .. import reference
from ..network import Network
from ..packing import layout
from ..results import EnsembleResult
from ..validation import MAX_EPOCHS, check_instance, check_int, check_memory, check_sequence
from .arms import DEFAULT_SETUP, Arm, Setup, build_network
from .blocks import run_blocks, train
from .outcome import THRESHOLD, ArmResult, wrong_outputs
from .report import Study, compare

__all__ = ["ArmProgress", "run_study", "bytes_per_seed", "check_study_memory"]


def bytes_per_seed(setup: Setup, arms: int = 1, record_every: int | None = None) -> int:
    """About how much memory a study of ``arms`` arms on ``setup`` needs per seed, in bytes.

    Each arm keeps, per seed, its trained parameters (8 · P bytes for P parameters), its
    outputs on the N training samples (8 · N), four numbers of results (32) and, with
    ``record_every``, its loss every ``record_every`` epochs (8 each). While an arm trains,
    its initial parameters and the compiled kernels' copy of them add 16 · P, and outputs on
    held-out samples, if the task has them, 16 · N_held · the widest layer. For 99mlp's 2-2-2-1
    (P = 15) on XOR's four points: 184 + 240 = 424 bytes a seed for one arm.
    """
    parameters = setup.parameters
    kept = 8 * parameters + 8 * setup.task.samples + 32
    if record_every:
        kept += 8 * (setup.epochs // record_every)
    held_out = setup.task.held_out_data()
    training = 16 * parameters + (0 if held_out is None else
                                  16 * len(held_out[0]) * max(setup.sizes))
    return arms * kept + training


def check_study_memory(setups: Sequence[Setup], arms: int,
                       record_every: int | None = None) -> None:
    """Raise :class:`~tinynet.validation.TooLargeError` before training if studies of
    ``arms`` arms on each of ``setups``, all kept (a sweep's), would need more memory than the
    machine has (:func:`bytes_per_seed`)."""
    needed = [setup.seeds * bytes_per_seed(setup, arms, record_every) for setup in setups]
    what = (f"{arms} arm{'s' * (arms > 1)} of {setups[0].seeds:,} seeds of {setups[0].shape} "
            f"({bytes_per_seed(setups[0], arms, record_every):,} bytes a seed)"
            if len(setups) == 1 else f"{len(setups)} studies of {arms} arm{'s' * (arms > 1)}")
    check_memory(what, sum(needed),
                 "use fewer seeds, or run them in ranges of first seeds and add up the counts")


class ArmProgress:
    """Progress of one arm's training on stderr: epochs done, the rate in sample-steps per
    second and the time left, at most once a second. On a terminal the line is rewritten in
    place; elsewhere (a log file) a new line every ``every`` seconds."""

    def __init__(self, label: str, epochs: int, steps_per_epoch: int, every: float = 10.0):
        self.label, self.epochs, self.steps_per_epoch = label, epochs, steps_per_epoch
        self.live = sys.stderr.isatty()
        self.every = 1.0 if self.live else every
        self.started = self.shown = time.perf_counter()
        self._print(f"{self.label}: 0 of {self.epochs:,} epochs")

    def __call__(self, done: int) -> None:
        now = time.perf_counter()
        if now - self.shown < self.every or done >= self.epochs:
            return
        self.shown = now
        rate = done * self.steps_per_epoch / (now - self.started)
        left = (self.epochs - done) * self.steps_per_epoch / rate
        self._print(f"{self.label}: {done / self.epochs:.0%} of {self.epochs:,} epochs, "
                    f"{rate / 1e6:,.1f} M sample-steps/s, {left:,.0f} s left")

    def close(self) -> None:
        """Clear the line on a terminal (the arm's result line follows)."""
        if self.live:
            print("\r\033[K", end="", file=sys.stderr, flush=True)

    def _print(self, text: str) -> None:
        if self.live:
            print(f"\r\033[K{text}", end="", file=sys.stderr, flush=True)
        else:
            print(text, file=sys.stderr, flush=True)


def run_study(arms: Sequence[Arm], setup: Setup = DEFAULT_SETUP,
              progress: bool | None = None, record_every: int | None = None,
              executor: object | None = None, block_seeds: int | None = None) -> Study:
    """Train every arm on ``setup.seeds`` seeds on the setup's task and compare the arms.

    By default in this process, on every core. With ``executor`` (a ``dask.distributed.Client``
    or a ``concurrent.futures`` process pool) the seeds go out in blocks of ``block_seeds``
    (default: :func:`~tinynet.xor.blocks.block_size`) and the study is bit for bit the same
    (:mod:`tinynet.xor.blocks`); each arm's ``seconds`` is then the workers' time summed over
    its blocks.

    ``progress=True`` reports on stderr how far each arm's training has got
    (:class:`ArmProgress`) and a line per arm when it is done; ``None`` (the default) does the
    first on a terminal only and the second once the study has run for more than a second;
    ``False`` prints nothing; with an executor, progress is how many blocks are done.
    ``record_every=k`` keeps every seed's loss every k epochs
    (``study.result(arm).ensemble.loss``: 8 bytes per seed and record; off by default). The
    trained parameters are kept either way (``study.network(arm, seed)``).
    """
    arms = check_sequence("arms", arms, Arm, "tinynet.xor Arm")
    check_instance("setup", setup, Setup, "a tinynet.xor Setup")
    names = [arm.name for arm in arms]
    if len(set(names)) < len(names):
        raise ValueError(f"arms must have different names (give one a label=...), got "
                         f"{names}")
    if executor is None and block_seeds is not None:
        raise ValueError(f"block_seeds cuts the seeds into tasks for an executor; without one "
                         f"it has no use, got block_seeds={block_seeds} and executor=None")
    if record_every is not None:  # checked here, before any work goes out
        check_int("record_every", record_every, minimum=1, maximum=MAX_EPOCHS)
    check_study_memory([setup], len(arms), record_every)
    y = setup.task.training_data()[1]  # the targets the outcomes are judged on
    held_out = setup.task.held_out_data()
    started = time.perf_counter()
    live = sys.stderr.isatty() if progress is None else progress  # training progress shown
    remote = None if executor is None else run_blocks(list(arms), setup, executor, block_seeds,
                                                      record_every, live)
    results = []
    for index, arm in enumerate(arms):
        label = f"[{index + 1}/{len(arms)}] {arm.name}"
        if remote is not None:
            outcome, trained, seconds = remote[index]
        else:
            outcome, trained, seconds = _train_here(arm, setup, record_every, label, live)
        like = build_network(setup, arm, setup.first_seed)
        results.append(ArmResult.from_ensemble(
            arm, outcome, y, [layer.init_std() for layer in like.layers], seconds,
            trained=trained, accuracy=setup.task.criterion,
            held_out=None if held_out is None else _accuracies(like, trained, *held_out)))
        if progress or (progress is None and time.perf_counter() - started > 1.0):
            print(f"{label}: {results[-1].successes}/{setup.seeds} solved ({seconds:.1f} s)",
                  file=sys.stderr)
    return Study(setup, results, compare(results))


def _train_here(arm: Arm, setup: Setup, record_every: int | None, label: str,
                live: bool) -> tuple[EnsembleResult, np.ndarray, float]:
    """:func:`~tinynet.xor.blocks.train` in this process, with :class:`ArmProgress` if
    ``live``."""
    reporter = ArmProgress(label, setup.epochs, setup.seeds * setup.task.samples) if live \
        else None
    started = time.perf_counter()
    try:
        outcome, trained = train(arm, setup, record_every, reporter)
    finally:
        if reporter is not None:
            reporter.close()
    return outcome, trained, time.perf_counter() - started


def _accuracies(like: Network, trained: np.ndarray, X: np.ndarray,
                y: np.ndarray) -> np.ndarray:
    """The accuracy on X (N, 2), y (N, 1) of each network of ``trained`` (S, P, packed
    parameters of networks like ``like``): the fraction of outputs on the same side of the
    threshold as their targets (:func:`wrong_outputs`: NaN outputs count as wrong)."""
    with np.errstate(all="ignore"):  # a diverged member's outputs overflow to NaN
        outputs = reference.forward_many(trained, layout(like).table,
                                         [layer.activation for layer in like.layers], X)
    return 1.0 - wrong_outputs(outputs, y, THRESHOLD) / y.size
