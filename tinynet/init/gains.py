"""Gains: the std multiplier g an activation needs, so that Var(w) = g² / fan.

A layer keeps the second moment E[a²] of its signal when ``fan · Var(w) · E[φ(z)²]/E[z²] = 1``.
For z symmetric about 0, ReLU keeps half of E[z²] (g² = 2) and LeakyReLU(α) keeps (1 + α²)/2
(g² = 2 / (1 + α²)). Identity and sigmoid use g = 1 and tanh g = 5/3: PyTorch's conventions
(``torch.nn.init.calculate_gain``), not derived values.

:func:`second_moment_gain` computes g = 1 / sqrt(E[φ(z)²]) for z ~ N(0, 1) instead of looking it
up, so it works for any activation: relu 1.41421, tanh 1.59254, sigmoid 1.84623 (sigmoid is far
from its conventional 1, because its outputs are not centred).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable

import numpy as np

from ..activations import Activation, LeakyReLU, get_activation
from ..validation import UnknownNameError

__all__ = ["calculate_gain", "second_moment_gain", "gaussian_mean", "BEND"]

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


BEND = 30.0
"""Beyond |z| = 30 every activation here is flat (sigmoid, tanh) or a polynomial (the rest)."""


def gaussian_mean(function: Callable[[np.ndarray], np.ndarray], variance: float,
                  mean: float = 0.0) -> float:
    """E[f(z)] for z ~ N(mean, variance), by adaptive quadrature (SciPy's ``quad``).

    Two scales matter: the activation's, which bends within |z| < 30 (tanh'(z)² is a peak of
    width 1 whatever the variance), and the Gaussian's, which can be 10⁻³ or 10¹⁰⁰. So the
    line is cut at ±30 and at the mean and mean ± 8 s; pieces inside |z| < 30 are integrated
    in z, the others in u = (z − mean)/s. Every piece is then small on the scale of whatever
    varies in it, so ``quad`` cannot step over a peak. A non-finite variance has no
    prediction (nan); one so large that f overflows gives inf, without warnings.
    """
    from scipy import integrate  # imported here, so that importing tinynet stays quick

    if not math.isfinite(variance) or not math.isfinite(mean):
        return math.nan
    if variance == 0:
        return float(function(np.array([mean]))[0])
    std = math.sqrt(variance)
    root_two_pi = math.sqrt(2.0 * math.pi)

    def in_z(z: float) -> float:
        return float(function(np.array([z]))[0]) * \
            math.exp(-0.5 * ((z - mean) / std) ** 2) / (std * root_two_pi)

    def in_u(u: float) -> float:
        return float(function(np.array([mean + std * u]))[0]) * math.exp(-0.5 * u * u) / root_two_pi

    cuts = sorted({-BEND, BEND, mean, mean - 8 * std, mean + 8 * std})
    parts = [(in_u, -math.inf, (cuts[0] - mean) / std)]
    for a, b in zip(cuts[:-1], cuts[1:]):
        inside = -BEND <= a and b <= BEND
        parts.append((in_z, a, b) if inside else (in_u, (a - mean) / std, (b - mean) / std))
    parts.append((in_u, (cuts[-1] - mean) / std, math.inf))
    with warnings.catch_warnings(), np.errstate(over="ignore", invalid="ignore"):
        warnings.simplefilter("ignore", integrate.IntegrationWarning)
        return float(sum(integrate.quad(f, a, b, limit=200, epsabs=0.0, epsrel=1e-10)[0]
                         for f, a, b in parts if a < b))


def second_moment_gain(activation: str | Activation, alpha: float = 0.01) -> float:
    """g = 1 / sqrt(E[φ(z)²]) for z ~ N(0, 1), by :func:`gaussian_mean`."""
    activation = get_activation(activation, alpha)
    second_moment = gaussian_mean(lambda z: activation.forward(z) ** 2, 1.0)
    return float(1.0 / math.sqrt(second_moment))
