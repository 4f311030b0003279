"""Fans: how many inputs and outputs a weight touches, and the averages of the two.

A dense layer's weight has shape ``(n_out, n_in)``, as in ``torch.nn.Linear``: each output sums
``fan_in = n_in`` terms going forward, and each input receives ``fan_out = n_out`` terms going
backward. Forward stability wants Var(w) = 1/fan_in, backward stability 1/fan_out; when they
differ an initializer picks an average ``fan`` and uses Var(w) = 1/fan.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from ..errors import ShapeError, UnknownNameError

__all__ = ["fans", "FAN_MODES", "fan"]


def fans(shape: tuple[int, ...]) -> tuple[int, int]:
    """Return ``(fan_in, fan_out)`` of a weight of shape ``(n_out, n_in)``."""
    if len(shape) != 2:
        raise ShapeError(f"shape must be (n_out, n_in), got {shape!r}")
    n_out, n_in = shape
    return int(n_in), int(n_out)


FAN_MODES: dict[str, Callable[[int, int], float]] = {
    # m = fan_in, n = fan_out
    "fan_in": lambda m, n: float(m),
    "fan_out": lambda m, n: float(n),
    "fan_avg": lambda m, n: (m + n) / 2.0,  # arithmetic mean: Xavier/Glorot
}


def fan(mode: str, shape: tuple[int, ...]) -> float:
    """Return the fan that ``mode`` (a key of :data:`FAN_MODES`) uses for ``shape``."""
    if mode not in FAN_MODES:
        raise UnknownNameError("fan mode", mode, FAN_MODES)
    return FAN_MODES[mode](*fans(shape))
