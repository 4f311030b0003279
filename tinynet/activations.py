"""Activation functions: each one's forward value and derivative, side by side.

An activation maps the pre-activation ``z = x Wᵀ + b`` to ``a = φ(z)`` element-wise. Backward
needs ``φ'(z)``, so every activation here has both, written next to each other::

    >>> from tinynet.activations import get_activation
    >>> act = get_activation("leaky_relu", alpha=0.01)
    >>> act.forward(np.array([-2.0, 0.0, 3.0]))
    array([-0.02,  0.  ,  3.  ])
    >>> act.derivative(np.array([-2.0, 0.0, 3.0]))
    array([0.01, 0.01, 1.  ])

A training step needs both at the same z, and ``forward_and_derivative(z)`` gives them at once:
the same values, bit for bit, with the work they share done once (sigmoid's exponential,
tanh's tanh).

Conventions at the kink ``z = 0`` (where the derivative does not exist): ``relu'(0) = 0`` and
``leaky_relu'(0) = alpha`` (the left derivative, as in PyTorch).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from .validation import UnknownNameError, check_float

__all__ = ["Activation", "Identity", "Sigmoid", "Tanh", "ReLU", "LeakyReLU",
           "ACTIVATIONS", "COMPILED", "get_activation", "IDENTITY", "SIGMOID", "TANH", "RELU",
           "LEAKY_RELU"]

IDENTITY, SIGMOID, TANH, RELU, LEAKY_RELU = range(5)
"""The activation codes: how the compiled kernels (:mod:`tinynet.compiled`) name each one."""


@dataclass(frozen=True, repr=False)
class Activation:
    """Base class: ``forward(z) = φ(z)`` and ``derivative(z) = φ'(z)``, both element-wise, and
    ``forward_and_derivative(z) = (φ(z), φ'(z))``.

    ``code`` is the number the compiled kernels know it by; ``alpha`` is the negative slope,
    0 for every activation but LeakyReLU. Activations are values: two are equal when they are
    the same function (``LeakyReLU(0.01) == LeakyReLU(0.01)``).

    Your own activation: a subclass with ``name``, ``forward`` and ``derivative``, decorated
    ``@dataclass(frozen=True)`` with its parameters as fields (so that equality sees them). It
    trains on the NumPy backend; the compiled kernels know the built-in ones only.
    """

    name: ClassVar[str] = ""
    code: ClassVar[int] = -1
    alpha: ClassVar[float] = 0.0

    def forward(self, z: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    def derivative(self, z: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    def forward_and_derivative(self, z: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(forward(z), derivative(z))``; a subclass may compute the two together, to the
        same values."""
        return self.forward(z), self.derivative(z)

    def __repr__(self) -> str:
        return self.name


@dataclass(frozen=True, repr=False)
class Identity(Activation):
    """φ(z) = z,  φ'(z) = 1."""

    name = "identity"
    code = IDENTITY

    def forward(self, z: np.ndarray) -> np.ndarray:
        return np.array(z, dtype=np.float64)

    def derivative(self, z: np.ndarray) -> np.ndarray:
        return np.ones_like(z, dtype=np.float64)


@dataclass(frozen=True, repr=False)
class Sigmoid(Activation):
    """φ(z) = 1 / (1 + e^(-z)),  φ'(z) = φ(z) (1 - φ(z)) = e / (1 + e)² with e = exp(-|z|).

    Overflow-safe: with ``e = exp(-|z|) <= 1`` it is ``1 / (1 + e)`` for z >= 0 and
    ``e / (1 + e)`` for z < 0, so no exponential ever overflows; sigmoid(±1e4) is exactly 1 and 0.
    The derivative in the form ``e / (1 + e)²`` keeps full relative precision in the tails,
    where ``s (1 - s)`` would round 1 - s to 0.
    """

    name = "sigmoid"
    code = SIGMOID

    def forward(self, z: np.ndarray) -> np.ndarray:
        z = np.asarray(z, dtype=np.float64)
        e = np.exp(-np.abs(z))
        return np.where(z >= 0, 1.0, e) / (1.0 + e)

    def derivative(self, z: np.ndarray) -> np.ndarray:
        e = np.exp(-np.abs(np.asarray(z, dtype=np.float64)))
        return e / ((1.0 + e) * (1.0 + e))

    def forward_and_derivative(self, z: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        z = np.asarray(z, dtype=np.float64)
        e = np.exp(-np.abs(z))
        one_plus_e = 1.0 + e
        return np.where(z >= 0, 1.0, e) / one_plus_e, e / (one_plus_e * one_plus_e)


@dataclass(frozen=True, repr=False)
class Tanh(Activation):
    """φ(z) = tanh(z),  φ'(z) = 1 - tanh(z)²."""

    name = "tanh"
    code = TANH

    def forward(self, z: np.ndarray) -> np.ndarray:
        return np.tanh(np.asarray(z, dtype=np.float64))

    def derivative(self, z: np.ndarray) -> np.ndarray:
        t = np.tanh(np.asarray(z, dtype=np.float64))
        return 1.0 - t * t

    def forward_and_derivative(self, z: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        t = np.tanh(np.asarray(z, dtype=np.float64))
        return t, 1.0 - t * t


@dataclass(frozen=True, repr=False)
class ReLU(Activation):
    """φ(z) = max(z, 0),  φ'(z) = 1 if z > 0 else 0 (so relu'(0) = 0)."""

    name = "relu"
    code = RELU

    def forward(self, z: np.ndarray) -> np.ndarray:
        z = np.asarray(z, dtype=np.float64)
        return np.where(z > 0, z, 0.0)

    def derivative(self, z: np.ndarray) -> np.ndarray:
        return np.where(np.asarray(z) > 0, 1.0, 0.0)

    def forward_and_derivative(self, z: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        z = np.asarray(z, dtype=np.float64)
        positive = z > 0
        return np.where(positive, z, 0.0), np.where(positive, 1.0, 0.0)


@dataclass(frozen=True, repr=False)
class LeakyReLU(Activation):
    """φ(z) = z if z > 0 else α z,  φ'(z) = 1 if z > 0 else α (so leaky_relu'(0) = α).

    ``alpha`` is the slope for negative inputs: 0.01 by default, as in 99mlp and PyTorch.
    ``alpha = 0`` is ReLU.
    """

    name = "leaky_relu"
    code = LEAKY_RELU
    alpha: float = 0.01

    def __post_init__(self) -> None:
        object.__setattr__(self, "alpha", check_float("alpha", self.alpha, minimum=0.0,
                                                      inclusive=True))

    def forward(self, z: np.ndarray) -> np.ndarray:
        z = np.asarray(z, dtype=np.float64)
        return np.where(z > 0, z, self.alpha * z)

    def derivative(self, z: np.ndarray) -> np.ndarray:
        return np.where(np.asarray(z) > 0, 1.0, self.alpha)

    def forward_and_derivative(self, z: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """φ(z) = z φ'(z): z times 1, or z times α, which rounds as α z does."""
        z = np.asarray(z, dtype=np.float64)
        slope = np.where(z > 0, 1.0, self.alpha)
        return z * slope, slope

    def __repr__(self) -> str:
        return f"leaky_relu(alpha={self.alpha:g})"


ACTIVATIONS: dict[str, type[Activation]] = {
    cls.name: cls for cls in (Identity, Sigmoid, Tanh, ReLU, LeakyReLU)
}

COMPILED: dict[int, type[Activation]] = {cls.code: cls for cls in ACTIVATIONS.values()}
"""The activations the compiled kernels know, by code: the built-in classes (not their
subclasses, which would inherit a code but may compute something else)."""


def get_activation(activation: str | Activation, alpha: float = 0.01) -> Activation:
    """Return the activation named ``activation`` (``alpha`` is used by leaky_relu only).

    An :class:`Activation` instance is returned as it is (it carries its own alpha).
    """
    check_float("alpha", alpha, minimum=0.0, inclusive=True)
    if isinstance(activation, Activation):
        return activation
    if not isinstance(activation, str) or activation not in ACTIVATIONS:
        raise UnknownNameError("activation", activation, ACTIVATIONS)
    if activation == "leaky_relu":
        return LeakyReLU(alpha)
    return ACTIVATIONS[activation]()
