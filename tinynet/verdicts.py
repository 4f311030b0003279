"""An epoch's verdicts on a run besides its loss, one definition each: whether an output
fell on the wrong side of the threshold (:func:`wrong_side`), and whether the run diverged
(:func:`diverged` of the summed :func:`finite_mark`); and where its loss goes in the run's
history, if it is kept there (:func:`history_slot`).

The NumPy backend runs these functions on arrays (:func:`tinynet.reference.train`); every
compiled kernel calls the same functions compiled by numba for scalars
(:mod:`tinynet.compiled.verdicts`). The module imports nothing, so that the kernels' cache
key (:func:`tinynet.compiled.sources.fingerprint`) needs only this file.
"""

from __future__ import annotations

from typing import Any

__all__ = ["wrong_side", "finite_mark", "diverged", "history_slot"]


def wrong_side(y_hat: Any, y: Any, threshold: Any) -> Any:
    """Whether an output ŷ and its target y fall on opposite sides of ``threshold``, so that
    the output classifies its sample wrongly: (ŷ > t) ≠ (y > t). Element-wise on arrays; an
    epoch's last wrong epoch is the last one in which some output of some step was."""
    return (y_hat > threshold) != (y > threshold)


def finite_mark(value: Any) -> Any:
    """``value · 0``: 0 for a finite value, NaN for NaN or ±inf. Added up over a run's loss
    and parameters, the marks are 0 exactly when every one of them is finite
    (:func:`diverged`): a sum with no branch, which compiles to vector code."""
    return value * 0.0


def diverged(marks: Any) -> Any:
    """Whether a run has diverged, its loss or a parameter NaN or ±inf, given ``marks``, the
    sum of their :func:`finite_mark`: marks ≠ 0. Divergence ends a run's training; its
    parameters are kept as they were at the end of that epoch."""
    return marks != 0.0


def history_slot(epoch: int, every: int) -> int:
    """Where epoch ``epoch``'s loss goes in a history kept every ``every`` epochs (0: none):
    (epoch + 1) / every − 1 for epochs every − 1, 2·every − 1, ...; −1 for the others."""
    if every > 0 and (epoch + 1) % every == 0:
        return (epoch + 1) // every - 1
    return -1
