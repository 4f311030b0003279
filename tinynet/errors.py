"""Exceptions tinynet raises, and the small checks that raise them.

Every message names the argument, the value it got and what was expected, so a learner can
fix the call without reading tinynet's source.
"""

from __future__ import annotations

import difflib
import math
import numbers
from collections.abc import Iterable

import numpy as np

__all__ = ["ShapeError", "UnknownNameError"]


class ShapeError(ValueError):
    """An array or a layer size does not fit where it is used."""


class UnknownNameError(ValueError):
    """A name (activation, initializer, backend...) that tinynet does not know."""

    def __init__(self, kind: str, name: object, valid: Iterable[str], hint: str = "") -> None:
        valid = sorted(valid)
        close = (difflib.get_close_matches(str(name), valid, n=1) or
                 [v for v in valid if str(name) and v.startswith(str(name))][:1])
        message = f"unknown {kind} {name!r}; expected one of: {', '.join(valid)}"
        if close:
            message += f" (did you mean {close[0]!r}?)"
        if hint:
            message += f". {hint}"
        super().__init__(message)
        self.name = name
        self.valid = valid


def check_int(name: str, value: object, *, minimum: int, maximum: int | None = None) -> int:
    """Return ``value`` as an int if it is an integer in [minimum, maximum]; raise otherwise."""
    expected = f"an integer >= {minimum}" if maximum is None else \
        f"an integer from {minimum} to {maximum}"
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be {expected}, got {value!r} "
                        f"of type {type(value).__name__}")
    if value < minimum or (maximum is not None and value > maximum):
        raise ValueError(f"{name} must be {expected}, got {value!r}")
    return int(value)


MAX_SEED = 2**63 - 1
"""Seeds are 63-bit, so that every backend can hold them in a signed 64-bit integer."""


def check_seed(name: str, value: object) -> int:
    """Return ``value`` if it is a valid seed: an integer from 0 to 2**63 - 1."""
    return check_int(name, value, minimum=0, maximum=MAX_SEED)


def check_float(name: str, value: object, *, minimum: float, inclusive: bool) -> float:
    """Return ``value`` as a finite float above ``minimum`` (or equal, if ``inclusive``)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a real number, got {value!r} of type "
                        f"{type(value).__name__}")
    value = float(value)
    bound = "" if minimum == -math.inf else f" {'>=' if inclusive else '>'} {minimum}"
    if not math.isfinite(value) or value < minimum or (value == minimum and not inclusive):
        raise ValueError(f"{name} must be a finite number{bound}, got {value!r}")
    return value


def as_float_matrix(name: str, value: object, *, columns: int | None = None) -> np.ndarray:
    """Return ``value`` as a C-contiguous float64 array of shape ``(B, columns)``.

    Booleans, integers and floats are converted exactly (integers up to 2**53); complex,
    string and object data are refused rather than truncated. Rows must be finite. The result
    is always a copy, so later changes to the caller's array cannot reach a layer's cache.
    """
    array = np.asarray(value)
    if array.dtype.kind not in "biuf":
        raise TypeError(f"{name} must hold real numbers, got an array of dtype {array.dtype}")
    if array.ndim != 2:
        raise ShapeError(f"{name} must be 2-D with shape (batch, features), got shape "
                         f"{array.shape}")
    if array.shape[0] == 0:
        raise ShapeError(f"{name} must hold at least one sample, got shape {array.shape}")
    if columns is not None and array.shape[1] != columns:
        raise ShapeError(f"{name} must have {columns} columns (the network's "
                         f"{'input' if name == 'X' else 'output'} size), got shape {array.shape}")
    array = np.array(array, dtype=np.float64, order="C", copy=True)
    if not np.all(np.isfinite(array)):
        bad = tuple(int(i) for i in np.argwhere(~np.isfinite(array))[0])
        raise ValueError(f"{name} must be finite, got {array[bad]} at index {bad}")
    return array
