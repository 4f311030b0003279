"""What a training run is told and what it reports: the same for every backend, and for one
network or many.

Every backend (:mod:`tinynet.reference`, :mod:`tinynet.compiled`) is given a :class:`Settings`
and writes one :class:`Record`: arrays with a leading members axis, length 1 for a single
fit. Users see a record as a :class:`History` (one network) or an :class:`EnsembleResult`
(many), and ``fit_ensemble([net], ..., record_every=k)[0]`` equals
``net.fit(..., record_every=k)`` field for field.

Per run:

* ``loss``: the loss every ``record_every`` epochs, epoch ``e``'s at index
  :func:`tinynet.verdicts.history_slot` (e, record_every) (epochs record_every − 1,
  2·record_every − 1, ...). An
  epoch's loss is the mean over samples of Σ_k (ŷ_k − y_k)², each prediction taken when
  training visited the sample (before its update), as Keras reports it.
* ``final_loss``: the loss of the last epoch that ran.
* ``diverged_epoch``: the epoch in which the loss or a parameter stopped being finite (−1:
  never). Training of that network stops there (in an ensemble, it ends with the parameters
  it had then); it is an outcome, not an error.
* ``last_wrong_epoch``: the last epoch in which training saw an output on the other side of
  ``threshold`` from its target (ŷ > threshold where y <= threshold, or the reverse; −1: never),
  for targets that are classes.
* ``evaluation``: with ``evaluate_every`` or a test set, the losses and accuracies on the
  training and test sets every k epochs (:class:`tinynet.evaluation.Evaluation`); else None.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Iterator
from dataclasses import dataclass, fields
from typing import NamedTuple

import numpy as np

from .evaluation import Evaluation

__all__ = ["UPDATES", "Settings", "run_in_chunks", "Record", "History", "EnsembleResult"]

UPDATES = ("after_backward", "during_backward")
"""When SGD updates a layer's W and b (``update`` in :func:`tinynet.fit`): after the whole
backward pass, every layer from the gradients of the old weights (the default); or during it,
each layer as soon as its dW and db are known, so that the gradient it passes back,
dX = dZ W, is computed with its new W."""


class Settings(NamedTuple):
    """What a backend is told: run epochs ``first_epoch`` to ``first_epoch + epochs − 1``.

    ``update_during_backward``: False for ``update="after_backward"`` (θ ← θ − lr ∇θ once the
    backward pass is done), True for ``"during_backward"`` (each layer's W, b ← W − lr dW,
    b − lr db before its dX = dZ W is computed); see :data:`UPDATES`. ``warmup`` and
    ``cosine_steps``: the learning rate's schedule, :func:`tinynet.schedules.learning_rate`.
    """

    first_epoch: int
    epochs: int
    lr: float
    batch_size: int
    shuffle: bool
    threshold: float
    record_every: int  # 0: record no loss history
    update_during_backward: bool
    warmup: int = 0        # steps of linear warmup (tinynet.schedules)
    cosine_steps: int = 0  # steps of cosine decay after it; 0: a constant rate

    def chunks(self, *every: int) -> Iterator["Settings"]:
        """These settings cut after every multiple of each of ``every`` epochs (counted from
        ``first_epoch``) and at the end, in order: with one period, runs of at most that
        many epochs. Run one after the other on the same parameters and record, they are the
        whole run, bit for bit: every backend continues from ``first_epoch`` (sample orders
        depend on the epoch, not on what ran before)."""
        start = 0
        for end in heapq.merge(*(range(period, self.epochs, period) for period in every),
                               [self.epochs]):
            if end > start:  # a multiple of two periods comes once
                yield self._replace(first_epoch=self.first_epoch + start, epochs=end - start)
                start = end


def run_in_chunks(settings: Settings, work_per_epoch: int, chunk_work: int,
                  train: Callable[[Settings], None], record: "Record",
                  progress: Callable[[int], None] | None) -> None:
    """Run ``settings`` as ``train(part)`` over :meth:`Settings.chunks` of about
    ``chunk_work`` work each (``work_per_epoch`` per epoch), calling ``progress(epochs_done)``
    after each if given, and stopping once every member of ``record`` has diverged: the
    ensemble loop both backends share."""
    for part in settings.chunks(max(1, chunk_work // work_per_epoch)):
        train(part)
        if progress is not None:
            progress(part.first_epoch + part.epochs - settings.first_epoch)
        if np.all(record.diverged_epoch >= 0):
            break


class Record(NamedTuple):
    """What a backend writes, one row per network: ``loss`` (S, records) and ``final_loss``,
    ``diverged_epoch``, ``last_wrong_epoch`` (S,). A new record holds NaN and −1."""

    loss: np.ndarray
    final_loss: np.ndarray
    diverged_epoch: np.ndarray
    last_wrong_epoch: np.ndarray

    @classmethod
    def empty(cls, members: int, epochs: int, record_every: int) -> "Record":
        """A record for ``members`` runs of ``epochs`` epochs, before training: room for the
        loss of every ``record_every``-th epoch (0: none)."""
        records = epochs // record_every if record_every else 0
        return cls(np.full((members, records), np.nan), np.full(members, np.nan),
                   np.full(members, -1, dtype=np.int64), np.full(members, -1, dtype=np.int64))


@dataclass(frozen=True, eq=False)
class History:
    """One network's training run (see the module's docstring for each field).

    ``epochs`` is how many epochs ran: all of them, or up to and including the one it
    diverged in. ``loss`` holds the losses recorded in those epochs.
    """

    loss: np.ndarray
    final_loss: float
    diverged_epoch: int
    last_wrong_epoch: int
    epochs: int
    record_every: int
    threshold: float
    evaluation: "Evaluation | None" = None

    @property
    def diverged(self) -> bool:
        """True if the loss or a parameter stopped being finite."""
        return self.diverged_epoch >= 0

    def __repr__(self) -> str:
        return (f"History(epochs={self.epochs}, final_loss={self.final_loss:.6g}, "
                f"diverged={self.diverged})")


@dataclass(frozen=True, eq=False)
class EnsembleResult:
    """Many networks' training runs: each field of :class:`History` as an array indexed by
    member, ``epochs`` the number asked for, and ``predictions`` (S, N, n_out), the trained
    members' outputs on the training inputs. ``result[k]`` is member k's :class:`History`.
    """

    loss: np.ndarray
    final_loss: np.ndarray
    diverged_epoch: np.ndarray
    last_wrong_epoch: np.ndarray
    predictions: np.ndarray
    epochs: int
    record_every: int
    threshold: float
    evaluation: "Evaluation | None" = None

    @property
    def diverged(self) -> np.ndarray:
        """True for members whose loss or parameters stopped being finite."""
        return self.diverged_epoch >= 0

    @property
    def members(self) -> int:
        """Number of networks trained."""
        return len(self.final_loss)

    def __len__(self) -> int:
        return self.members

    def __getitem__(self, member: int) -> History:
        """Member ``member``'s run as a :class:`History`, as its own ``fit`` would report it."""
        return history(Record(self.loss, self.final_loss, self.diverged_epoch,
                              self.last_wrong_epoch), member, self.epochs, self.record_every,
                       self.threshold,
                       None if self.evaluation is None else self.evaluation.member(member))

    @classmethod
    def concatenate(cls, parts: "list[EnsembleResult]") -> "EnsembleResult":
        """The members of ``parts`` in order, as one result: every per-member array joined
        along its first axis (S₁ + S₂ + ... members). The runs must share ``epochs``,
        ``record_every`` and ``threshold``."""
        if not parts:
            raise ValueError("parts must hold at least one EnsembleResult, got none")
        first = parts[0]
        settings = {f.name for f in fields(cls) if f.name != "evaluation" and
                    not isinstance(getattr(first, f.name), np.ndarray)}
        evaluated = [part.evaluation is not None for part in parts]
        if any(evaluated) and not all(evaluated):
            raise ValueError(f"parts[{evaluated.index(not evaluated[0])}] was "
                             f"{'not ' * evaluated[0]}evaluated during training, parts[0] "
                             f"was{' not' * (not evaluated[0])}")
        for index, part in enumerate(parts):
            if any(getattr(part, name) != getattr(first, name) for name in settings):
                raise ValueError(f"parts[{index}] ran with "
                                 f"{ {name: getattr(part, name) for name in sorted(settings)} }, "
                                 f"parts[0] with "
                                 f"{ {name: getattr(first, name) for name in sorted(settings)} }")
        evaluation = (Evaluation.concatenate([part.evaluation for part in parts])
                      if all(evaluated) else None)
        return cls(**{f.name: np.concatenate([getattr(part, f.name) for part in parts])
                      if f.name not in settings else getattr(first, f.name)
                      for f in fields(cls) if f.name != "evaluation"}, evaluation=evaluation)

    def __repr__(self) -> str:
        return (f"EnsembleResult(members={self.members}, epochs={self.epochs}, "
                f"diverged={int(self.diverged.sum())})")


def history(record: Record, member: int, epochs: int, record_every: int,
            threshold: float, evaluation: Evaluation | None = None) -> History:
    """Row ``member`` of ``record`` as a :class:`History` of a run of ``epochs`` epochs, with
    its ``evaluation`` (one member's) if it was evaluated."""
    diverged = int(record.diverged_epoch[member])
    ran = epochs if diverged < 0 else diverged + 1
    kept = 0 if record_every == 0 else ran // record_every
    return History(loss=record.loss[member, :kept].copy(),
                   final_loss=float(record.final_loss[member]), diverged_epoch=diverged,
                   last_wrong_epoch=int(record.last_wrong_epoch[member]), epochs=ran,
                   record_every=record_every, threshold=threshold, evaluation=evaluation)
