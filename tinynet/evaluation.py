"""Evaluation during training: every k epochs, each network's loss and accuracy on the training
set and on a test set, with its parameters as they stand at the end of that epoch.

A run with ``evaluate_every=k`` (:func:`tinynet.fit`, :func:`tinynet.fit_ensemble`,
:func:`tinynet.fit_packed`) trains in runs of k epochs, one after the other on the same
parameters and record: the same run, bit for bit, as one call (every backend continues from
an epoch, and sample orders depend on the epoch alone: :meth:`tinynet.results.Settings.chunks`).
After each, the backend's own forward pass gives every member's outputs (the compiled kit's
``predict_members``, or NumPy's), and from them::

    loss      = (1/N) Σ_i Σ_k ℓ(ŷ_ik, y_ik)     the training loss's own terms (loss.value)
    accuracy  = (1/N) #{i : class(ŷ_i) = class(y_i)}

where a sample's class is its most probable output (argmax, the first of equals) for a
softmax, or which side of ``threshold`` its single output lies on. The training set's loss
here is the loss of the epoch's last parameters, not the mean over the epoch's steps that
``History.loss`` records. A member that has diverged gets NaN from the epoch it diverged in.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, fields

import numpy as np

from .losses import Loss
from .verdicts import wrong_side

__all__ = ["Evaluation", "EVALUATION_CHUNK", "scores"]

EVALUATION_CHUNK = 64 * 2**20
"""Bytes of outputs an evaluation holds at once: the members are evaluated in chunks of about
this much, however many there are (1,000 members' outputs on MNIST-1D's 4,000 samples would
be 320 MB)."""


@dataclass(frozen=True, eq=False)
class Evaluation:
    """What every evaluation of a run found: ``epochs`` (E,), the number of epochs done at
    each (k, 2k, ..., and the last epoch if k does not divide the run); per member and
    evaluation (S, E): ``train_loss``, ``train_accuracy``, ``test_loss``,
    ``test_accuracy`` (NaN once a member has diverged)."""

    epochs: np.ndarray
    train_loss: np.ndarray
    train_accuracy: np.ndarray
    test_loss: np.ndarray
    test_accuracy: np.ndarray

    @classmethod
    def empty(cls, members: int, epochs: int, every: int) -> "Evaluation":
        """Room for ``members`` runs of ``epochs`` epochs evaluated every ``every``."""
        done = np.minimum(np.arange(every, epochs + every, every), epochs)
        return cls(done, *(np.full((members, len(done)), np.nan) for _ in range(4)))

    @property
    def members(self) -> int:
        """S, the number of networks evaluated."""
        return self.train_loss.shape[0]

    def member(self, member: int) -> "Evaluation":
        """Member ``member``'s evaluations alone, as an Evaluation of one member."""
        return Evaluation(self.epochs.copy(), *(getattr(self, name)[member:member + 1].copy()
                                                for name in _PER_MEMBER))

    @classmethod
    def concatenate(cls, parts: "list[Evaluation]") -> "Evaluation":
        """The members of ``parts`` in order (their ``epochs`` must agree)."""
        for index, part in enumerate(parts):
            if not np.array_equal(part.epochs, parts[0].epochs):
                raise ValueError(f"parts[{index}] was evaluated after epochs "
                                 f"{part.epochs.tolist()}, parts[0] after "
                                 f"{parts[0].epochs.tolist()}")
        return cls(parts[0].epochs.copy(), *(np.concatenate([getattr(part, name)
                                                             for part in parts])
                                             for name in _PER_MEMBER))

    def __repr__(self) -> str:
        return (f"Evaluation(members={self.members}, evaluated after {len(self.epochs)} "
                f"run{'s' * (len(self.epochs) != 1)} of epochs, last at epoch "
                f"{int(self.epochs[-1]) if len(self.epochs) else 0})")


_PER_MEMBER = tuple(f.name for f in fields(Evaluation) if f.name != "epochs")


def scores(outputs: np.ndarray, y: np.ndarray, loss: Loss,
           threshold: float = 0.5) -> tuple[np.ndarray, np.ndarray]:
    """Each member's loss and accuracy, (S,) each, from its ``outputs`` (S, N, n_out) on
    samples whose targets are ``y`` (N, n_out): ``loss.value`` of the outputs, and the fraction
    of samples whose class (see the module's docstring) is the target's. An output that is
    not finite counts as wrong."""
    targets = np.broadcast_to(y, outputs.shape)
    with np.errstate(all="ignore"):
        losses = np.asarray(loss.value(outputs, targets), dtype=np.float64)
    if outputs.shape[-1] == 1:
        right = ~wrong_side(outputs[..., 0], y[:, 0], threshold)
    else:
        right = np.argmax(outputs, axis=-1) == np.argmax(y, axis=-1)
    right &= np.all(np.isfinite(outputs), axis=-1)
    return losses, np.mean(right, axis=-1)


def evaluate_into(evaluation: Evaluation, column: int,
                  predict: Callable[[np.ndarray, np.ndarray], np.ndarray], theta: np.ndarray,
                  diverged: np.ndarray, loss: Loss, train: tuple[np.ndarray, np.ndarray],
                  test: tuple[np.ndarray, np.ndarray], threshold: float) -> None:
    """Write column ``column`` of ``evaluation``: every member's scores on the ``train`` and
    ``test`` sets, (X, y) each, from ``predict(theta_rows, X)`` (the backend's outputs of the
    members whose packed parameters are ``theta_rows``), in chunks of
    :data:`EVALUATION_CHUNK`; NaN where ``diverged``."""
    for (X, y), (losses, accuracies) in ((train, (evaluation.train_loss,
                                                  evaluation.train_accuracy)),
                                         (test, (evaluation.test_loss,
                                                 evaluation.test_accuracy))):
        step = max(1, EVALUATION_CHUNK // (8 * len(X) * y.shape[1]))
        for start in range(0, len(theta), step):
            rows = slice(start, start + step)
            losses[rows, column], accuracies[rows, column] = scores(
                predict(theta[rows], X), y, loss, threshold)
        losses[diverged, column] = accuracies[diverged, column] = np.nan
