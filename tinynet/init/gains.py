"""Gains: the std multiplier g an activation needs, so that Var(w) = g² / fan.

A layer keeps the second moment E[a²] of its signal when ``fan · Var(w) · E[φ(z)²]/E[z²] = 1``.
For z symmetric about 0, ReLU keeps half of E[z²] (g² = 2) and LeakyReLU(α) keeps (1 + α²)/2
(g² = 2 / (1 + α²)). Identity, linear and sigmoid use g = 1, tanh g = 5/3 and selu g = 3/4:
PyTorch's conventions (``torch.nn.init.calculate_gain``), not derived values.

:func:`second_moment_gain` computes g = 1 / sqrt(E[φ(z)²]) for z ~ N(0, 1) instead of looking it
up, so it works for any activation: relu 1.41421, tanh 1.59254, sigmoid 1.84623 (sigmoid is far
from its conventional 1, because its outputs are not centred).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable

import numpy as np

from ..activations import Activation, get_activation
from ..validation import UnknownNameError, check_float

__all__ = ["calculate_gain", "squared_gain", "unknown_nonlinearity", "NONLINEARITIES",
           "second_moment_gain", "gaussian_mean", "BEND"]

_LINEAR = ("linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
           "conv_transpose3d")
_FIXED_GAINS = {"identity": 1.0, **dict.fromkeys(_LINEAR, 1.0), "sigmoid": 1.0,
                "tanh": 5.0 / 3.0, "relu": math.sqrt(2.0), "selu": 3.0 / 4.0}
_SQUARED = {"relu": 2.0}  # g² where g² is exact and g is not: keeps he_normal's draws as before

NONLINEARITIES = tuple(sorted([*_FIXED_GAINS, "leaky_relu"]))
"""The names :func:`calculate_gain` knows: PyTorch's (linear, conv1d ... conv_transpose3d,
sigmoid, tanh, relu, leaky_relu, selu) and tinynet's identity."""

DEFAULT_NEGATIVE_SLOPE = 0.01
"""leaky_relu's slope when none is given, as in PyTorch and :class:`LeakyReLU`."""


def unknown_nonlinearity(kind: str, name: object, hint: str = "") -> UnknownNameError:
    """The error for a nonlinearity :func:`calculate_gain` does not know; ``"Relu"`` is offered
    ``relu`` (spelling alone would offer ``selu``)."""
    folded = name.lower() if isinstance(name, str) else None
    return UnknownNameError(kind, name, NONLINEARITIES, hint,
                            suggestion=folded if folded in NONLINEARITIES else None)


def _nonlinearity(nonlinearity: object, param: object) -> tuple[str, float | None]:
    """``(name, slope)``: the name calculate_gain looks up and, for leaky_relu, its checked
    negative slope."""
    if isinstance(nonlinearity, Activation):
        if param is not None:
            raise ValueError(f"param must be None when nonlinearity is an Activation "
                             f"({nonlinearity!r} brings its own alpha), got {param!r}")
        name, slope = nonlinearity.name, float(nonlinearity.alpha)
    elif not isinstance(nonlinearity, str):
        raise unknown_nonlinearity("activation", nonlinearity)
    else:
        name, slope = nonlinearity, None
        if name == "leaky_relu":
            slope = DEFAULT_NEGATIVE_SLOPE if param is None else \
                check_float("param", param, minimum=0.0, inclusive=True)
        elif param is not None and name in _FIXED_GAINS:
            raise ValueError(f"param must be None for nonlinearity {name!r}: only leaky_relu "
                             f"takes one, its negative slope (PyTorch ignores it), got {param!r}")
    if name != "leaky_relu" and name not in _FIXED_GAINS:
        raise unknown_nonlinearity("activation", name,
                                   "second_moment_gain computes a gain for any activation")
    return name, slope


def calculate_gain(nonlinearity: str | Activation, param: float | None = None) -> float:
    """Return the gain g for ``nonlinearity``: Var(w) = g² / fan. As PyTorch's
    ``torch.nn.init.calculate_gain(nonlinearity, param=None)``:

    ===============================================================  ======================
    linear, identity, sigmoid, conv1d/2d/3d, conv_transpose1d/2d/3d  1
    tanh                                                             5/3
    relu                                                             sqrt(2)
    leaky_relu                                                       sqrt(2 / (1 + param²))
    selu                                                             3/4
    ===============================================================  ======================

    ``param`` is leaky_relu's negative slope (default 0.01, as PyTorch's and the activation's;
    a finite number >= 0). Other names take none: PyTorch ignores a ``param`` there, tinynet
    refuses it. A tinynet :class:`Activation` may stand for its name; a :class:`LeakyReLU`
    brings its own alpha, so ``param`` must then be None.
    """
    name, slope = _nonlinearity(nonlinearity, param)
    if name == "leaky_relu":
        return math.sqrt(2.0 / (1.0 + slope * slope))
    return _FIXED_GAINS[name]


def squared_gain(nonlinearity: str | Activation, param: float | None = None) -> float:
    """g² for :func:`calculate_gain`'s ``g``, computed without the square root where g² is a
    simple number: 2 for relu, 2 / (1 + param²) for leaky_relu (so He's scale is exactly 2)."""
    name, slope = _nonlinearity(nonlinearity, param)
    if name == "leaky_relu":
        return 2.0 / (1.0 + slope * slope)
    return _SQUARED.get(name, _FIXED_GAINS[name] ** 2)


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
