"""Gains: the std multiplier g an activation needs, so that Var(w) = g² / fan.

A layer keeps the second moment E[a²] of its signal when ``fan · Var(w) · E[φ(z)²]/E[z²] = 1``.
For z symmetric about 0, ReLU keeps half of E[z²] (g² = 2) and LeakyReLU(α) keeps (1 + α²)/2
(g² = 2 / (1 + α²)). Identity and sigmoid use g = 1 and tanh g = 5/3: PyTorch's conventions
(``torch.nn.init.calculate_gain``), not derived values.

:func:`second_moment_gain` computes g = 1 / sqrt(E[φ(z)²]) for z ~ N(0, 1) instead of looking it
up, so it works for any activation: relu 1.41421, tanh 1.59254, sigmoid 1.84623 (sigmoid is far
from its linear-regime 1, because its outputs are not centred).
"""

from __future__ import annotations

import functools
import math

import numpy as np

from ..activations import Activation, LeakyReLU, get_activation
from ..errors import UnknownNameError

__all__ = ["calculate_gain", "second_moment_gain", "gaussian_mean"]

_FIXED_GAINS = {"identity": 1.0, "sigmoid": 1.0, "tanh": 5.0 / 3.0, "relu": math.sqrt(2.0)}


def calculate_gain(activation: str | Activation, alpha: float = 0.01) -> float:
    """Return the gain g for ``activation``: Var(w) = g² / fan.

    ==========  =========================
    identity    1
    sigmoid     1
    tanh        5/3
    relu        sqrt(2)
    leaky_relu  sqrt(2 / (1 + alpha²))
    ==========  =========================

    ``alpha`` is used for ``"leaky_relu"`` given by name (default 0.01, the same as the
    activation's); a :class:`LeakyReLU` instance brings its own alpha.
    """
    activation = get_activation(activation, alpha)
    if isinstance(activation, LeakyReLU):
        return math.sqrt(2.0 / (1.0 + activation.alpha ** 2))
    if activation.name not in _FIXED_GAINS:
        raise UnknownNameError("activation for calculate_gain", activation.name,
                               [*_FIXED_GAINS, "leaky_relu"],
                               "second_moment_gain computes a gain for any activation")
    return _FIXED_GAINS[activation.name]


@functools.lru_cache(maxsize=8)
def _hermite_nodes(points: int) -> tuple[np.ndarray, np.ndarray]:
    return np.polynomial.hermite_e.hermegauss(points)  # weight function exp(-z²/2)


def gaussian_mean(function, variance: float, points: int = 200) -> float:
    """E[f(z)] for z ~ N(0, variance), by Gauss–Hermite quadrature with ``points`` nodes.

    The nodes are symmetric about 0, so for ReLU-like f the positive half is exactly half of
    the sum: E[relu(z)²] comes out as variance/2 to rounding.
    """
    nodes, weights = _hermite_nodes(points)
    values = function(math.sqrt(variance) * nodes)
    return float(np.sum(weights * values) / math.sqrt(2.0 * math.pi))


def second_moment_gain(activation: str | Activation, alpha: float = 0.01,
                       points: int = 200) -> float:
    """g = 1 / sqrt(E[φ(z)²]) for z ~ N(0, 1), by Gauss–Hermite quadrature with ``points`` nodes."""
    activation = get_activation(activation, alpha)
    second_moment = gaussian_mean(lambda z: activation.forward(z) ** 2, 1.0, points)
    return float(1.0 / math.sqrt(second_moment))
