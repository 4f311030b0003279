"""Zero-mean distributions to draw weights from, each parameterised by its standard deviation s.

Giving every distribution the same parameter, the std it realises, is what lets an
initializer choose a variance first and a distribution second.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

__all__ = ["DISTRIBUTIONS", "sample"]


def _normal(rng: np.random.Generator, shape: tuple[int, int], std: float) -> np.ndarray:
    """N(0, s²)."""
    return rng.normal(0.0, std, size=shape)


def _uniform(rng: np.random.Generator, shape: tuple[int, int], std: float) -> np.ndarray:
    """U[-L, L] with L = sqrt(3)·s, since Var(U[-L, L]) = L²/3."""
    bound = math.sqrt(3.0) * std
    return rng.uniform(-bound, bound, size=shape)


DISTRIBUTIONS: dict[str, Callable[[np.random.Generator, tuple[int, int], float], np.ndarray]] = {
    "normal": _normal,
    "uniform": _uniform,
}


def sample(distribution: str, rng: np.random.Generator, shape: tuple[int, int],
           std: float) -> np.ndarray:
    """Draw a float64 array of ``shape`` from ``distribution`` with mean 0 and std ``std``."""
    return np.ascontiguousarray(DISTRIBUTIONS[distribution](rng, shape, std), dtype=np.float64)
