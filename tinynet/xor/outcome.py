"""What an arm's seeds did: which solved the task and from which epoch, how the others failed,
and the summary of an arm (:class:`ArmResult`).

A seed solves XOR when, after training, every output is on the same side of 0.5 as its target
(and training did not diverge). A task with a lower ``accuracy`` criterion
(:class:`~tinynet.xor.task.Task`) allows that many samples on the wrong side. Training itself
knows nothing of tasks: it reports, per member, the trained predictions and the last epoch in
which it saw an output on the wrong side; the bench turns those into success and the epoch of
success.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .. import stats, verdicts
from ..results import EnsembleResult
from ..validation import ShapeError, check_accuracy, check_float
from .arms import Arm

__all__ = ["THRESHOLD", "FAILURES", "OUTCOMES", "wrong_outputs", "solves", "solved_epochs",
           "allowed_wrong", "outcomes", "ArmResult", "MEMORY_ONLY", "encode_solved",
           "decode_solved"]

THRESHOLD = 0.5
"""An output above it means class 1, at or below it class 0 (so 0.5 itself counts as 0)."""

FAILURES = {
    "one_wrong": ("1 wrong", "one sample on the wrong side (loss 1/6 when three outputs sit "
                             "at 2/3 and the fourth is exact)"),
    "two_wrong": ("2 wrong", "two samples on the wrong side (loss 1/8 when two outputs sit at "
                             "0.5 and two are exact, 1/4 when all four sit at 0.5)"),
    "three_or_more_wrong": ("3+ wrong", "three or more samples on the wrong side"),
    "diverged": ("diverged", "the loss or a weight became NaN or infinite"),
}
"""How an unsolved seed failed, judged on its final predictions: (column label, meaning). The
losses are the MSE those outputs give; which plateau failed seeds reach depends on the shape
(:func:`tinynet.xor.figures.loss_curves` draws them)."""


def wrong_outputs(predictions: np.ndarray, y: np.ndarray,
                  threshold: float = THRESHOLD) -> np.ndarray:
    """Per member (row of ``predictions``, shape (S, N, n_out)), how many outputs are on the
    other side of ``threshold`` from their targets ``y`` (N, n_out), or not finite."""
    predictions, y = np.asarray(predictions), np.asarray(y)
    if predictions.ndim != 3 or predictions.shape[1:] != y.shape:
        raise ShapeError(f"predictions must have shape (members, {', '.join(map(str, y.shape))})"
                         f" to fit y of shape {y.shape}, got {predictions.shape}")
    threshold = check_float("threshold", threshold, minimum=-np.inf, inclusive=False)
    wrong = verdicts.wrong_side(predictions, y, threshold) | ~np.isfinite(predictions)
    return np.sum(wrong, axis=(1, 2))


def allowed_wrong(accuracy: float, outputs: int) -> int:
    """How many of ``outputs`` may be on the wrong side at training accuracy ``accuracy``:
    the largest k with 1 − k / outputs >= accuracy (0 for accuracy 1)."""
    accuracy = check_accuracy("accuracy", accuracy)
    return int(np.floor((1.0 - accuracy) * outputs + 1e-9))


def solves(predictions: np.ndarray, y: np.ndarray, threshold: float = THRESHOLD,
           accuracy: float = 1.0) -> np.ndarray:
    """True for each member whose outputs are on the same side of ``threshold`` as their
    targets (ŷ > threshold exactly where y > threshold) for at least a fraction ``accuracy``
    of them (default: all)."""
    wrong = wrong_outputs(predictions, y, threshold)
    return wrong <= allowed_wrong(accuracy, y.size)


def solved_epochs(result: EnsembleResult, y: np.ndarray) -> np.ndarray:
    """Per member of ``result`` (trained on targets ``y``), the epoch from which it solved the
    task for good: one after the last epoch in which training saw an output on the wrong side
    of ``result.threshold``; −1 for members whose trained outputs are not all on the right
    side, or that diverged."""
    solved = solves(result.predictions, y, result.threshold) & ~result.diverged
    return np.where(solved, result.last_wrong_epoch + 1, -1)


OUTCOMES = ("solved", *FAILURES)
"""What a seed did, one of: ``"solved"`` or a key of :data:`FAILURES`."""


def outcomes(result: EnsembleResult, y: np.ndarray, accuracy: float = 1.0) -> np.ndarray:
    """Per member of ``result`` (trained on targets ``y``), what it did (:data:`OUTCOMES`):
    solved (:func:`solves` at ``accuracy``, without diverging), diverged, or how many outputs
    ended on the wrong side of ``result.threshold`` (one, two, three or more)."""
    wrong = wrong_outputs(result.predictions, y, result.threshold)
    solved = (wrong <= allowed_wrong(accuracy, np.size(y))) & ~result.diverged
    kinds = ["solved", "diverged", "one_wrong", "two_wrong", "three_or_more_wrong"]
    index = np.select([solved, result.diverged, wrong == 1, wrong == 2], range(4), 4)
    return np.array(kinds, dtype=object)[index]  # 8 bytes a seed: five shared strings


def _quartiles(values: np.ndarray) -> list[float] | None:
    return None if len(values) == 0 else [float(q) for q in np.percentile(values, [25, 50, 75])]


@dataclass
class ArmResult:
    """An arm's outcome over the study's seeds: successes out of n with their Wilson 95 %
    interval, quartiles of the epoch of success (None unless success means every sample
    right) and of the final loss, the failures by kind (keys of :data:`FAILURES`), each layer's
    initial weight std, the training time, quartiles of the held-out accuracy of the seeds that
    succeeded (None without a held-out set or a success), and ``solved``, per seed in the
    study's order, whether it solved the task (None if not kept).

    Kept in memory only, not written to files (None when not kept): ``outcomes``, per seed
    what it did (:data:`OUTCOMES`); ``ensemble``, the training run's
    :class:`~tinynet.EnsembleResult` (with per-seed loss histories if the study recorded
    them); ``trained``, the trained parameters, row s the packed parameters of seed s
    (:mod:`tinynet.packing`): 8 bytes per parameter and seed, 1.2 MB for 10,000 seeds of
    2-2-2-1 (15 parameters).
    """

    arm: Arm
    n: int
    successes: int
    interval: tuple[float, float]
    solved_epoch_quartiles: list[float] | None
    final_loss_quartiles: list[float] | None
    diverged: int
    failures: dict[str, int]
    init_stds: list[float | None]
    seconds: float
    held_out_quartiles: list[float] | None = None
    test_accuracy: list[float] | None = field(default=None, repr=False)
    test_loss: list[float] | None = field(default=None, repr=False)
    solved: np.ndarray | None = field(default=None, repr=False)
    outcomes: np.ndarray | None = field(default=None, repr=False)
    ensemble: EnsembleResult | None = field(default=None, repr=False)
    trained: np.ndarray | None = field(default=None, repr=False)

    @property
    def rate(self) -> float:
        """successes / n."""
        return self.successes / self.n

    def successes_in_first(self, seeds: int) -> int:
        """How many of the study's first ``seeds`` seeds solved the task (the notes' n = 100 as
        part of a bigger study)."""
        if self.solved is None:
            raise ValueError("this result did not keep its per-seed outcomes (solved is None)")
        if not 1 <= seeds <= self.n:
            raise ValueError(f"seeds must be between 1 and n = {self.n}, got {seeds!r}")
        return int(self.solved[:seeds].sum())

    @classmethod
    def from_ensemble(cls, arm: Arm, result: EnsembleResult, y: np.ndarray,
                      init_stds: list[float | None], seconds: float,
                      trained: np.ndarray | None = None, accuracy: float = 1.0,
                      held_out: np.ndarray | None = None) -> "ArmResult":
        """Summarise an ensemble's per-seed outcomes on targets ``y``, judged at the threshold
        it was trained with: successes (:func:`outcomes` at training ``accuracy``), the epoch
        of success (:func:`solved_epochs`, when ``accuracy`` is 1), and the failures by how
        many outputs ended on the wrong side. ``trained``: the trained parameters (S, P), kept
        as they are; ``held_out``: each seed's accuracy on a held-out set (S,), or None."""
        kinds = outcomes(result, y, accuracy)
        solved = kinds == "solved"
        failures = {kind: int(np.sum(kinds == kind)) for kind in FAILURES}
        successes = int(solved.sum())
        finite = np.isfinite(result.final_loss)
        return cls(arm=arm, n=result.members, successes=successes,
                   interval=stats.wilson_interval(successes, result.members),
                   solved_epoch_quartiles=(_quartiles(result.last_wrong_epoch[solved] + 1)
                                           if accuracy == 1.0 else None),  # solved_epochs
                   final_loss_quartiles=_quartiles(result.final_loss[finite]),
                   diverged=failures["diverged"], failures=failures, init_stds=init_stds,
                   seconds=seconds,
                   held_out_quartiles=None if held_out is None else _quartiles(held_out[solved]),
                   solved=solved, outcomes=kinds, ensemble=result,
                   trained=trained)

    @classmethod
    def from_test(cls, arm: Arm, result: EnsembleResult, init_stds: list[float | None],
                  seconds: float, criterion: float,
                  trained: np.ndarray | None = None) -> "ArmResult":
        """Summarise an ensemble trained on a task of many classes, evaluated on its test set
        (``result.evaluation``): a seed succeeds (*learns*) when its final test accuracy is
        above ``criterion``; the others failed below it, or diverged. ``test_accuracy`` keeps
        every seed's, a diverged seed's as 0 (its outputs are not numbers: no sample is
        classified right), ``test_loss`` every seed's (NaN for a diverged one),
        ``held_out_quartiles`` the quartiles of the test accuracy of the seeds that learned."""
        diverged = result.diverged
        accuracy = np.where(diverged, 0.0, result.evaluation.test_accuracy[:, -1])
        learned = accuracy > criterion
        successes = int(learned.sum())
        kinds = np.array(["diverged", "below_criterion", "solved"],
                         dtype=object)[np.select([learned, ~diverged], [2, 1], 0)]
        finite = np.isfinite(result.final_loss)
        return cls(arm=arm, n=result.members, successes=successes,
                   interval=stats.wilson_interval(successes, result.members),
                   solved_epoch_quartiles=None,
                   final_loss_quartiles=_quartiles(result.final_loss[finite]),
                   diverged=int(diverged.sum()),
                   failures={**dict.fromkeys(FAILURES), "diverged": int(diverged.sum())},
                   init_stds=init_stds, seconds=seconds,
                   held_out_quartiles=_quartiles(accuracy[learned]),
                   test_accuracy=accuracy.tolist(),
                   test_loss=result.evaluation.test_loss[:, -1].tolist(),
                   solved=learned, outcomes=kinds, ensemble=result, trained=trained)

    def __repr__(self) -> str:
        return (f"ArmResult({self.arm.name!r}: {self.successes}/{self.n} solved, "
                f"{self.rate:.1%} [{self.interval[0]:.1%}, {self.interval[1]:.1%}])")


MEMORY_ONLY = ("outcomes", "ensemble", "trained")
""":class:`ArmResult` fields kept in memory and never written to a file."""


def encode_solved(solved: np.ndarray) -> str:
    """Per-seed outcomes as compact text for JSON: the booleans packed 8 to a byte (first
    seed in the highest bit), in hexadecimal. :func:`decode_solved` reverses it."""
    return np.packbits(np.asarray(solved, dtype=bool)).tobytes().hex()


def decode_solved(text: str, n: int) -> np.ndarray:
    """The ``n`` per-seed booleans that :func:`encode_solved` wrote as ``text``."""
    return np.unpackbits(np.frombuffer(bytes.fromhex(text), dtype=np.uint8), count=n).astype(bool)
