"""Fans: how many inputs and outputs a weight touches, and the averages of the two.

A dense layer's weight has shape ``(n_out, n_in)``, as in ``torch.nn.Linear``: each output sums
``fan_in = n_in`` terms going forward, and each input receives ``fan_out = n_out`` terms going
backward. Forward stability wants Var(w) = 1/fan_in, backward stability 1/fan_out. When the two
differ, an initializer uses Var(w) = gain² / fan with ``fan`` some average of m = fan_in and
n = fan_out. From smallest to largest (equal when m = n)::

    harmonic 2mn/(m+n) <= geometric sqrt(mn) <= arithmetic (m+n)/2
                       <= RMS sqrt((m²+n²)/2) <= contraharmonic (m²+n²)/(m+n)

Xavier/Glorot uses the arithmetic mean. The geometric mean keeps a round trip m→n→m exact
(forward and backward): the product of the two layers' gains m·t and n·t is 1 for t = 1/sqrt(mn).
The fan-averaging note asks for the t that makes both m·t and n·t as close to 1 as possible,
minimising (m·t − 1)² + (n·t − 1)², which gives t = (m+n)/(m²+n²): fan = (m²+n²)/(m+n). The note
calls this a kind of quadratic average; it is the contraharmonic mean (not the RMS).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

from ..validation import ShapeError, UnknownNameError

__all__ = ["FanRule", "FAN_MODES", "fans", "fan"]


def fans(shape: tuple[int, ...]) -> tuple[int, int]:
    """Return ``(fan_in, fan_out)`` of a weight of shape ``(n_out, n_in)``."""
    if len(shape) != 2:
        raise ShapeError(f"shape must be (n_out, n_in), got {shape!r}")
    n_out, n_in = shape
    return int(n_in), int(n_out)


@dataclass(frozen=True)
class FanRule:
    """A fan mode: its name, its formula in words, and the function ``(fan_in, fan_out) -> fan``."""

    name: str
    formula: str
    of: Callable[[int, int], float]


FAN_MODES: dict[str, FanRule] = {rule.name: rule for rule in [
    FanRule("fan_in", "fan_in", lambda m, n: float(m)),
    FanRule("fan_out", "fan_out", lambda m, n: float(n)),
    FanRule("fan_avg", "(fan_in + fan_out)/2", lambda m, n: (m + n) / 2.0),
    FanRule("fan_geo_avg", "sqrt(fan_in·fan_out)", lambda m, n: math.sqrt(m * n)),
    FanRule("fan_contraharmonic", "(fan_in² + fan_out²)/(fan_in + fan_out)",
            lambda m, n: (m * m + n * n) / (m + n)),
]}


def fan(mode: str, shape: tuple[int, ...]) -> float:
    """Return the fan that ``mode`` (a key of :data:`FAN_MODES`) uses for ``shape``."""
    if mode not in FAN_MODES:
        raise UnknownNameError("fan mode", mode, FAN_MODES)
    return FAN_MODES[mode].of(*fans(shape))
