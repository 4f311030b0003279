"""Running a study: every arm trains the setup's network on the setup's task from each of its
seeds, all seeds of an arm in one ensemble call, and the arms are then compared."""

from __future__ import annotations

import functools
import os
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import replace

import numpy as np

from .. import reference
from ..losses import check_output, get_loss
from ..network import Network
from ..optimizers import get_optimizer
from ..schedules import run_steps
from ..validation import MAX_EPOCHS, check_callable, check_instance, check_int, check_memory, \
    check_sequence
from .arms import (DEFAULT_SETUP, Arm, Setup, activation_of, arm_parameters, build_network,
                   network_sizes)
from .blocks import run_blocks, train
from .outcome import THRESHOLD, ArmResult, wrong_outputs
from .report import Study, compare

__all__ = ["ArmProgress", "run_study", "plan", "check_arms", "bytes_per_seed", "fixed_bytes",
           "check_study_memory",
           "HELD_OUT_CHUNK"]


HELD_OUT_CHUNK = 64 * 2**20
"""Bytes the held-out accuracies may use at once: the members are evaluated in chunks of
about this much (:func:`_accuracies`), however many seeds the study has."""

LAYER_ARRAYS = 6
"""How many arrays of (members, samples, width) one layer's forward pass holds at its peak
(its input, Z, φ(Z) and φ'(Z), and the comparisons and choices of an activation's
definition), counted for the held-out chunks and the playground's forward passes."""


def bytes_per_seed(setup: Setup, arms: int = 1, record_every: int | None = None,
                   state: int = 0) -> int:
    """About how much memory a study of ``arms`` arms on ``setup`` needs per seed, in bytes.

    Each arm keeps, per seed, its trained parameters (8 · P bytes for P parameters), its
    outputs on the N training samples (8 · N), four numbers of results (32), with
    ``record_every`` its loss every ``record_every`` epochs (8 each), and with held-out data
    its accuracy there (8): :func:`kept_per_seed`. While an arm trains, its initial parameters
    and the compiled kernels' copy of them add 16 · P, and an optimizer with ``state`` values
    per parameter (momentum 1, Adam 3) 16 · state · P more: :func:`training_per_seed`. For
    99mlp's 2-2-2-1 (P = 15) on XOR's four points with SGD: 184 + 240 = 424 bytes a seed for
    one arm. What does not grow with the seeds is :func:`fixed_bytes`.
    """
    return arms * kept_per_seed(setup, record_every) + training_per_seed(setup, state)


def kept_per_seed(setup: Setup, record_every: int | None = None,
                  evaluate_every: int | None = None, arm: Arm | None = None) -> int:
    """What one arm (``arm``, if given: its parameters are :func:`~tinynet.xor.arms.
    arm_parameters`) keeps per seed once trained, in bytes (see :func:`bytes_per_seed`); on a
    task of many classes, its outputs are one per class, and it keeps its test accuracy and
    loss (16) and four scores per evaluation (32 each: :mod:`tinynet.evaluation`)."""
    kept = 8 * arm_parameters(setup, arm) + 8 * setup.task.samples * setup.task.outputs + 32
    if record_every:
        kept += 8 * (setup.epochs // record_every)
    if setup.task.classification:
        kept += 16 + 32 * -(-setup.epochs // (evaluate_every or setup.epochs))
    elif setup.task.has_held_out:
        kept += 8
    return kept


def training_per_seed(setup: Setup, state: int = 0, arm: Arm | None = None) -> int:
    """What the arm being trained needs per seed besides, in bytes (see
    :func:`bytes_per_seed`)."""
    return 16 * arm_parameters(setup, arm) * (1 + state)


def fixed_bytes(setup: Setup, record_every: int | None = None, state: int = 0,
                arm: Arm | None = None) -> int:
    """What a study on ``setup`` needs whatever its seeds, in bytes: each training thread's
    scratch in the compiled kernels (a block of ``LANES`` networks copied in, with the
    optimizer's ``state`` values, the records and outputs, and the activations, derivatives
    and gradients of a batch in every layer: :mod:`tinynet.compiled.lanes`), one per core
    or per block of seeds if there are fewer, and a chunk of the held-out evaluation
    (:data:`HELD_OUT_CHUNK`) if the task has held-out data. Where the members train as
    single fits (:func:`members_alone`), each thread's scratch is one network's instead: its
    gradients, a batch's activations in every layer, its epoch order and its outputs on the
    training samples in every layer; an arm of residual blocks (``arm``), which always trains
    so, the stream's values of a batch and of the training samples at every block too
    (:func:`tinynet.compiled.single.stream_scratch`)."""
    from ..compiled.simd import LANES

    parameters, width, layers = arm_parameters(setup, arm), max(setup.sizes), len(setup.sizes) - 1
    held_out = HELD_OUT_CHUNK if setup.task.has_held_out else 0
    if members_alone(setup, arm):
        samples, batch = setup.task.samples, setup.batch_size
        one = (parameters + (3 * layers + 3) * batch * width
               + batch * (setup.sizes[0] + setup.sizes[-1]) + 2 * samples
               + 2 * layers * samples * width)
        if arm is not None and arm.residual is not None:   # the stream, training and outputs
            one += (4 * layers + 2) * batch * width + (4 * layers + 1) * samples * width
        return 8 * one * min(os.cpu_count() or 1, setup.seeds) + held_out
    records = setup.epochs // record_every if record_every else 0
    block = (parameters * 2 * (1 + state) + records + setup.task.samples
             + (2 * (layers + 1) + 3) * setup.batch_size * width + 2 * width)
    threads = min(os.cpu_count() or 1, -(-setup.seeds // LANES))  # a block a thread at most
    return 8 * LANES * block * threads + held_out


def members_alone(setup: Setup, arm: Arm | None = None) -> bool:
    """Whether the compiled ensembles train ``setup``'s members as single fits: always an arm
    of residual blocks (``arm``), else where a single fit calls BLAS
    (:func:`tinynet.compiled.backend.calls_blas`). Never on the NumPy backend, which then
    loads no Numba."""
    if setup.backend == "numpy":
        return False
    if arm is not None and arm.residual is not None:
        return True
    from .. import compiled  # Numba, after its caches are checked (one line if unwritable)
    return compiled.load().calls_blas(setup.sizes, setup.batch_size)


def check_arms(setups: Sequence[Setup], arms: Sequence[Arm]) -> None:
    """Refuse, before anything trains, an arm that cannot train on one of ``setups``: one
    whose residual blocks do not group the setup's layers (:func:`~tinynet.xor.arms.
    network_sizes`), or whose warmup is longer than its run."""
    for setup in setups:
        for arm in arms:
            network_sizes(setup, arm)
            trained = setup.for_arm(arm)
            steps = run_steps(trained.epochs, trained.task.samples, trained.batch_size)
            if trained.warmup > steps:
                raise ValueError(f"arm {arm.name!r}: warmup must be at most the run's {steps:,} "
                                 f"steps ({trained.epochs:,} epochs of "
                                 f"{steps // trained.epochs:,} batches), got "
                                 f"{trained.warmup:,}: the rate would never reach lr")


def check_study_memory(setups: Sequence[Setup], arms: Sequence[Arm],
                       record_every: int | None = None,
                       evaluate_every: int | None = None) -> int:
    """Raise :class:`~tinynet.validation.TooLargeError` before training if studies of
    ``arms`` on each of ``setups``, all kept (a sweep's), would need more memory than the
    machine has (:func:`bytes_per_seed`, and :func:`fixed_bytes` of the largest); return
    the bytes it counted."""
    state = max(len(get_optimizer(arm.optimizer).state) for arm in arms)
    count = len(arms)
    # Every arm's results are kept; one arm trains at a time (arms may differ in shape).
    per_seed = [sum(kept_per_seed(setup.for_arm(arm), record_every, evaluate_every, arm)
                    for arm in arms)
                + max(training_per_seed(setup.for_arm(arm), state, arm) for arm in arms)
                for setup in setups]
    needed = [setup.seeds * bytes for setup, bytes in zip(setups, per_seed)]
    fixed = max(fixed_bytes(setup.for_arm(arm), record_every, state, arm)
                for setup in setups for arm in arms)
    what = (f"{count} arm{'s' * (count > 1)} of {setups[0].seeds:,} seeds of {setups[0].shape} "
            f"({per_seed[0]:,} bytes a seed, and {fixed:,} for the kernels' scratch)"
            if len(setups) == 1 else f"{len(setups)} studies of {count} arm{'s' * (count > 1)}")
    check_memory(what, sum(needed) + fixed,
                 "use fewer seeds, or run them in ranges of first seeds and add up the counts")
    return sum(needed) + fixed


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
              progress: bool = False, record_every: int | None = None,
              executor: object | None = None, block_seeds: int | None = None,
              against: int | None = None,
              on_chunk: Callable[[int, int], None] | None = None,
              evaluate_every: int | None = None) -> Study:
    """Train every arm on ``setup.seeds`` seeds on the setup's task and compare the arms.

    By default in this process, on every core. With ``executor`` (a ``dask.distributed.Client``
    or a ``concurrent.futures`` process pool) the seeds go out in blocks of ``block_seeds``
    (default: :func:`~tinynet.xor.blocks.block_size`) and the study is bit for bit the same
    (:mod:`tinynet.xor.blocks`); each arm's ``seconds`` is then the workers' time summed over
    its blocks.

    ``progress=True`` reports on stderr how far each arm's training has got
    (:class:`ArmProgress`; with an executor, how many blocks are done) and a line per arm when
    it is done. By default a study prints no progress, however long it runs: a library call in
    a notebook or a script stays quiet, but for one line on stderr the first time a kernel
    compiles on a machine, which says why that call waits
    (:func:`tinynet.compiled.sources.announce_compiling`). The command line asks for progress
    on a terminal (:func:`tinynet.xor.cli.show_progress`).
    ``record_every=k`` keeps every seed's loss every k epochs
    (``study.result(arm).ensemble.loss``: 8 bytes per seed and record; off by default). The
    trained parameters are kept either way (``study.network(arm, seed)``).

    The arms are compared pairwise (Fisher, Holm over the pairs), or with ``against``, the index
    of a baseline arm, each other arm against it (Holm over those: :func:`compare`).

    On a task of many classes (``Task("digits")``, ``Task("mnist1d")``) a seed's outcome is
    its test accuracy after training (:meth:`ArmResult.from_test`): it learns when that is
    above the task's criterion; the arms are compared by Fisher's test on the fractions that
    learn and by the Mann–Whitney rank test on the accuracies, Holm over both.
    ``evaluate_every=k`` evaluates every seed's training and test loss and accuracy every k
    epochs too (``study.result(arm).ensemble.evaluation``: 32 bytes per seed and
    evaluation). With ``progress``, such a study says on stderr what it will need before it
    starts: its memory and, from one epoch of a few seeds, about how long it takes
    (:func:`plan`).

    ``on_chunk(arm_index, epochs_done)``, if given, is called in this process after each chunk
    of an arm's training (chunks of about a second: :data:`tinynet.compiled.backend.CHUNK_WORK`);
    an exception it raises stops the study and propagates (the playground's Stop button). It
    needs the in-process path, so it is refused with an executor.
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
    if on_chunk is not None:
        check_callable("on_chunk", on_chunk, "a function of (arm index, epochs done)")
        if executor is not None:
            raise ValueError("on_chunk is called between chunks of training in this process; "
                             "with an executor the blocks train elsewhere, got both")
    if record_every is not None:  # checked here, before any work goes out
        check_int("record_every", record_every, minimum=1, maximum=MAX_EPOCHS)
    if evaluate_every is not None:
        if not setup.task.classification:
            raise ValueError(f"evaluate_every={evaluate_every!r} evaluates on a test set of "
                             "a task of many classes (Task('digits'), Task('mnist1d')); task "
                             f"{setup.task.name!r} has none")
        check_int("evaluate_every", evaluate_every, minimum=1, maximum=MAX_EPOCHS)
    for arm in arms:  # a softmax trains on cross-entropy alone, and cross-entropy on it alone
        check_output(get_loss(arm.loss), activation_of(setup.output, setup.alpha))
    check_arms([setup], arms)
    needed = check_study_memory([setup], arms, record_every, evaluate_every)
    if against is not None:  # checked before the training, which compare would follow
        against = check_int("against (the index of the baseline arm)", against, minimum=0,
                            maximum=len(arms) - 1)
    if progress and setup.task.classification:
        print(plan(setup, arms, needed, executor is None), file=sys.stderr, flush=True)
    y = setup.task.training_data()[1]  # the targets the outcomes are judged on
    held_out = setup.task.held_out_data()
    remote = None if executor is None else run_blocks(list(arms), setup, executor, block_seeds,
                                                      record_every, progress, evaluate_every)
    results = []
    for index, arm in enumerate(arms):
        label = f"[{index + 1}/{len(arms)}] {arm.name}"
        if remote is not None:
            outcome, trained, seconds = remote[index]
        else:  # in this process, train called from here: no frame between study and training
            reporter = ArmProgress(label, setup.epochs, setup.seeds * setup.task.samples) \
                if progress else None
            listener = _listener(reporter, None if on_chunk is None
                                 else functools.partial(on_chunk, index))
            started = time.perf_counter()
            try:
                outcome, trained = train(arm, setup, record_every, listener, evaluate_every)
            finally:
                if reporter is not None:
                    reporter.close()
            seconds = time.perf_counter() - started
        like = build_network(setup, arm, setup.first_seed)
        stds = [layer.init_std() for layer in like.layers]
        if setup.task.classification:
            results.append(ArmResult.from_test(arm, outcome, stds, seconds,
                                               setup.task.criterion, trained))
        else:
            results.append(ArmResult.from_ensemble(
                arm, outcome, y, stds, seconds, trained=trained,
                accuracy=setup.task.criterion,
                held_out=None if held_out is None else _accuracies(like, trained, *held_out)))
        if progress:
            print(f"{label}: {results[-1].successes}/{setup.seeds} "
                  f"{'learned' if setup.task.classification else 'solved'} ({seconds:.1f} s)",
                  file=sys.stderr)
    return Study(setup, results, compare(results, against),
                 None if against is None else arms[against].name)


PLAN_SEEDS = 16
"""How many seeds :func:`plan` times for one epoch."""


def plan(setup: Setup, arms: Sequence[Arm], needed: int, here: bool = True) -> str:
    """One line, before a study starts: its arms, seeds and network, the memory it needs
    (``needed`` bytes, :func:`check_study_memory`'s count) and about how long it takes in
    this process (``here``), from one epoch of :data:`PLAN_SEEDS` seeds of each arm timed
    after a first, untimed one (which compiles the kernels), scaled by seeds and epochs: an
    estimate (a run of many seeds keeps both cores busy where 16 may not)."""
    seconds = 0.0
    if here:
        for arm in arms:
            few = replace(setup, seeds=min(PLAN_SEEDS, setup.seeds), epochs=1)
            train(arm, few)  # compiles, and warms the caches
            started = time.perf_counter()
            train(arm, few)
            seconds += ((time.perf_counter() - started) * setup.seeds / few.seeds
                        * setup.for_arm(arm).epochs)
    took = f", about {seconds:,.0f} s here (one epoch of {min(PLAN_SEEDS, setup.seeds)} " \
           "seeds timed)" if here else ""
    return (f"{len(arms)} arm{'s' * (len(arms) > 1)} of {setup.seeds:,} seeds of "
            f"{setup.shape} on {setup.task.name}, {setup.epochs:,} epochs: about "
            f"{needed / 2**20:,.0f} MB{took}")


def _listener(*listeners: Callable[[int], None] | None) -> Callable[[int], None] | None:
    """One function of the epochs done that calls each of ``listeners`` not None in turn
    (an arm's :class:`ArmProgress`, the caller's ``on_chunk``), or None if all are."""
    called = [listener for listener in listeners if listener is not None]
    if not called:
        return None

    def progress(done: int) -> None:
        for listener in called:
            listener(done)

    return progress


def _accuracies(like: Network, trained: np.ndarray, X: np.ndarray,
                y: np.ndarray) -> np.ndarray:
    """The accuracy on X (N, 2), y (N, 1) of each network of ``trained`` (S, P, packed
    parameters of networks like ``like``): the fraction of outputs on the same side of the
    threshold as their targets (:func:`wrong_outputs`: NaN outputs count as wrong). In chunks
    of members of about :data:`HELD_OUT_CHUNK`: a chain's forward pass holds one layer's
    arrays at a time, a residual network's (:func:`tinynet.step.forward`, which keeps what
    each layer and block's backward pass would read) every layer's and block's."""
    alive = LAYER_ARRAYS * (len(like.layers) + len(like.residuals) if like.residuals else 1)
    step = max(1, HELD_OUT_CHUNK // (8 * alive * len(X) * max(like.sizes)))
    wrong = []
    for start in range(0, len(trained), step):  # each member alone: chunks change no bit
        with np.errstate(all="ignore"):  # a diverged member's outputs overflow to NaN
            outputs = reference.predict_packed(trained[start:start + step], like, None, None,
                                               X)
        wrong.append(wrong_outputs(outputs, y, THRESHOLD))
    return 1.0 - np.concatenate(wrong) / y.size
