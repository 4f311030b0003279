"""Gains: the std multiplier g an activation needs, so that Var(w) = g² / fan.

A layer keeps the second moment E[a²] of its signal when ``fan · Var(w) · E[φ(z)²]/E[z²] = 1``.
For z symmetric about 0, ReLU keeps half of E[z²] (g² = 2) and LeakyReLU(α) keeps (1 + α²)/2
(g² = 2 / (1 + α²)). Identity and sigmoid use g = 1 (Glorot's linear-regime assumption),
tanh g = 5/3 (PyTorch's value).
"""

from __future__ import annotations

import math

from ..activations import Activation, LeakyReLU, get_activation

__all__ = ["calculate_gain"]

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

    ``alpha`` is used for ``"leaky_relu"`` given by name; a :class:`LeakyReLU` instance brings
    its own alpha.
    """
    activation = get_activation(activation, alpha)
    if isinstance(activation, LeakyReLU):
        return math.sqrt(2.0 / (1.0 + activation.alpha ** 2))
    return _FIXED_GAINS[activation.name]
