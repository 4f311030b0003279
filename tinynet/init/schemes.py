"""Initializer schemes: the contract every initializer meets, and the families built on it.

An initializer takes a weight shape ``(n_out, n_in)`` (fan_in = n_in, fan_out = n_out), a
``numpy.random.Generator`` and the layer's activation, and returns a float64 array of that
shape. It can also state the variance it targets for a shape without sampling, which is what
the network summary prints as each layer's init std.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from ..activations import Activation, LeakyReLU
from .distributions import DISTRIBUTIONS, sample
from .fans import FAN_MODES, fan
from .gains import calculate_gain
from ..errors import UnknownNameError

__all__ = ["Initializer", "FixedStd", "VarianceScaling", "LeakyHe", "Auto", "Constant",
           "FunctionInitializer"]

Shape = tuple[int, int]


class Initializer:
    """Base class. Subclasses implement :meth:`variance` and :meth:`__call__`."""

    name: str = ""

    def variance(self, shape: Shape, activation: Activation) -> float | None:
        """Target Var(w) for a weight of ``shape`` feeding ``activation`` (None if unknown)."""
        raise NotImplementedError

    def std(self, shape: Shape, activation: Activation) -> float | None:
        """Target std of the weights: sqrt(variance), or None if unknown."""
        variance = self.variance(shape, activation)
        return None if variance is None else math.sqrt(variance)

    def __call__(self, shape: Shape, rng: np.random.Generator,
                 activation: Activation) -> np.ndarray:
        raise NotImplementedError

    def __repr__(self) -> str:
        return self.name


def _check_distribution(distribution: str) -> str:
    if distribution not in DISTRIBUTIONS:
        raise UnknownNameError("distribution", distribution, DISTRIBUTIONS)
    return distribution


class FixedStd(Initializer):
    """w ~ D(0, std²) whatever the shape: ``normal`` is N(0, 1), the learner's ``np.random.randn``."""

    def __init__(self, name: str, std: float, distribution: str = "normal") -> None:
        self.name, self.fixed_std = name, float(std)
        self.distribution = _check_distribution(distribution)

    def variance(self, shape: Shape, activation: Activation) -> float:
        return self.fixed_std ** 2

    def __call__(self, shape: Shape, rng: np.random.Generator,
                 activation: Activation) -> np.ndarray:
        return sample(self.distribution, rng, shape, self.fixed_std)


class VarianceScaling(Initializer):
    """w ~ D(0, scale / fan), with ``fan`` chosen by ``mode`` (see :mod:`tinynet.init.fans`).

    LeCun: scale 1, fan_in.  Glorot/Xavier: scale 1, fan_avg = (fan_in + fan_out)/2.
    He/Kaiming: scale 2, fan_in.
    """

    def __init__(self, name: str, scale: float, mode: str, distribution: str) -> None:
        if mode not in FAN_MODES:
            raise UnknownNameError("fan mode", mode, FAN_MODES)
        self.name, self.scale, self.mode = name, float(scale), mode
        self.distribution = _check_distribution(distribution)

    def variance(self, shape: Shape, activation: Activation) -> float:
        return self.scale / fan(self.mode, shape)

    def __call__(self, shape: Shape, rng: np.random.Generator,
                 activation: Activation) -> np.ndarray:
        return sample(self.distribution, rng, shape, math.sqrt(self.variance(shape, activation)))


class LeakyHe(Initializer):
    """He for LeakyReLU: w ~ D(0, 2 / ((1 + α²) · fan_in)).

    α is the layer's own slope when the layer is a LeakyReLU, and 99mlp's 0.01 otherwise.
    """

    default_alpha = 0.01

    def __init__(self, name: str, distribution: str = "normal") -> None:
        self.name = name
        self.distribution = _check_distribution(distribution)

    def variance(self, shape: Shape, activation: Activation) -> float:
        alpha = activation.alpha if isinstance(activation, LeakyReLU) else self.default_alpha
        return calculate_gain("leaky_relu", alpha) ** 2 / fan("fan_in", shape)

    def __call__(self, shape: Shape, rng: np.random.Generator,
                 activation: Activation) -> np.ndarray:
        return sample(self.distribution, rng, shape, math.sqrt(self.variance(shape, activation)))


class Auto(Initializer):
    """Pick by the layer's activation, as the notes finally did.

    sigmoid, tanh and identity get Xavier (normal); relu gets He (normal); leaky_relu gets
    He-leaky with the layer's alpha.
    """

    def __init__(self, name: str, by_activation: dict[str, Initializer]) -> None:
        self.name, self.by_activation = name, by_activation

    def choice(self, activation: Activation) -> Initializer:
        """The initializer used for a layer with ``activation``."""
        return self.by_activation[activation.name]

    def variance(self, shape: Shape, activation: Activation) -> float | None:
        return self.choice(activation).variance(shape, activation)

    def __call__(self, shape: Shape, rng: np.random.Generator,
                 activation: Activation) -> np.ndarray:
        return self.choice(activation)(shape, rng, activation)


class Constant(Initializer):
    """Every weight equal to ``value`` (``zeros`` is value 0: a network that cannot break symmetry)."""

    def __init__(self, name: str, value: float = 0.0) -> None:
        self.name, self.value = name, float(value)

    def variance(self, shape: Shape, activation: Activation) -> float:
        return 0.0

    def __call__(self, shape: Shape, rng: np.random.Generator,
                 activation: Activation) -> np.ndarray:
        return np.full(shape, self.value, dtype=np.float64)


class FunctionInitializer(Initializer):
    """A user's function ``f(shape, rng) -> array`` used as an initializer (variance unknown)."""

    def __init__(self, name: str, function: Callable[[Shape, np.random.Generator], np.ndarray]) -> None:
        self.name, self.function = name, function

    def variance(self, shape: Shape, activation: Activation) -> None:
        return None

    def __call__(self, shape: Shape, rng: np.random.Generator,
                 activation: Activation) -> np.ndarray:
        return self.function(shape, rng)
