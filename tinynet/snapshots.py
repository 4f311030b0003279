"""Snapshots of training: the parameters of every member as they stand after chosen epochs,
recorded by the same backend and kernels as one run, bit for bit.

:func:`fit_snapshots` is :func:`tinynet.fit_packed` cut after each epoch of ``at``: it runs
the parts one after the other on the same parameters, optimizer state and record, as
``evaluate_every`` does (every backend continues from an epoch, and the sample orders and the
learning rate's schedule depend on the epoch and step alone: :meth:`tinynet.results.Settings.
chunks`), and copies the parameters after each part. The last snapshot of a run is therefore
what :func:`tinynet.fit_packed` (and, on the numba backend below BLAS's sizes,
:func:`tinynet.fit`) leaves, bit for bit.

    >>> like = tinynet.mlp([2, 8, 1], init="he_normal", seed=3)
    >>> theta = tinynet.packing.draw(like, [3])
    >>> shots = fit_snapshots(like, theta, X, y, seeds=[3], at=[0, 10, 100, 2000],
    ...                       epochs=2000, lr=0.03, shuffle=False)
    >>> shots.theta.shape        # (snapshots, members, parameters)
    (4, 1, 33)
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import NamedTuple

import numpy as np

from .losses import Loss
from .network import Network
from .optimizers import Optimizer, get_optimizer
from .packing import size
from .results import EnsembleResult
from .training import EnsembleRun
from .validation import check_instance, check_int, check_packed

__all__ = ["Snapshots", "fit_snapshots"]


class Snapshots(NamedTuple):
    """What :func:`fit_snapshots` records: ``epochs`` (T,), the epochs done at each snapshot
    (0: as initialised); ``theta`` (T, S, P), every member's packed parameters then; and the
    whole run's :class:`~tinynet.results.EnsembleResult` (its loss curve, outcome, outputs)."""

    epochs: np.ndarray
    theta: np.ndarray
    result: EnsembleResult


def _checked_epochs(at: object, epochs: int) -> np.ndarray:
    """``at`` as increasing distinct ints from 0 to ``epochs``; raise naming ``at``."""
    if isinstance(at, np.ndarray) and at.ndim == 1:
        at = at.tolist()  # NumPy's integers as Python's, checked below like any
    if isinstance(at, (str, bytes)) or not isinstance(at, Sequence) or len(at) == 0:
        raise TypeError(f"at must be a non-empty sequence of epochs from 0 to {epochs:,}, got "
                        f"{at!r}")
    values = [check_int(f"at[{index}]", value, minimum=0, maximum=epochs)
              for index, value in enumerate(at)]
    for index in range(1, len(values)):
        if values[index] <= values[index - 1]:
            raise ValueError(f"at must increase, got at[{index - 1}]={values[index - 1]} then "
                             f"at[{index}]={values[index]}")
    return np.array(values, dtype=np.int64)


def fit_snapshots(like: Network, theta: np.ndarray, X: object, y: object, *,
                  seeds: Sequence[int], at: Sequence[int], epochs: int, lr: float,
                  batch_size: int = 1, shuffle: bool = True, backend: str = "numba",
                  threshold: float = 0.5, record_every: int | None = None,
                  update: str = "after_backward", loss: str | Loss = "mse",
                  optimizer: str | Optimizer = "sgd", warmup: int = 0,
                  decay: str = "constant",
                  progress: Callable[[int], None] | None = None) -> Snapshots:
    """Train the members whose packed parameters are the rows of ``theta`` (S, P) in place as
    :func:`tinynet.fit_packed` does with the same arguments (every optimizer's state starting
    from 0), and return their parameters after each epoch of ``at`` (increasing, from 0, the
    parameters as given, to ``epochs``; the run goes on to ``epochs`` either way).

    ``progress(epochs_done)``, if given, is called after each chunk of training (about a
    second: the backend's ``CHUNK_WORK``); an exception it raises stops the run and
    propagates. Memory: T · S · P · 8 bytes for T snapshots, besides
    :func:`tinynet.fit_packed`'s. A member that diverges keeps the parameters it diverged with
    in the later snapshots."""
    check_instance("like", like, Network, "a tinynet Network")
    theta = check_packed("theta", theta, size(like))
    optimizer = get_optimizer(optimizer)
    run = EnsembleRun.checked(like, len(theta), X, y, epochs, lr, batch_size, shuffle, seeds,
                              backend, threshold, record_every, update, progress, loss, optimizer,
                              None, None, warmup, decay)
    cuts = _checked_epochs(at, run.settings.epochs)
    state = np.zeros((len(theta), len(optimizer.state), size(like)))
    shots = np.empty((len(cuts), *theta.shape))
    ends = sorted({*cuts.tolist(), run.settings.epochs} - {0})
    if cuts[0] == 0:
        shots[0] = theta
    start, predictions = 0, None
    with np.errstate(all="ignore"):
        for end in ends:
            part = run.settings._replace(first_epoch=start, epochs=end - start)
            told = None if progress is None else \
                (lambda done, ran=start: progress(ran + done))
            predictions = run.backend.fit_packed(theta, state, like, run.loss, optimizer, run.X,
                                                 run.y, run.seeds, part, run.record, told)
            shots[cuts == end] = theta
            start = end
    return Snapshots(cuts, shots, run.result(predictions))
