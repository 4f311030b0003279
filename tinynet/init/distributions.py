"""Zero-mean distributions to draw weights from, each parameterised by the std s it realises.

Giving every distribution the same parameter is what lets an initializer choose a variance
first and a distribution second.

Truncated normal. Drawing from N(0, σ²) and redrawing every value outside [−2σ, 2σ] leaves a
distribution whose variance is γσ², not σ². For a cut at ±c standard deviations, with φ and Φ
the standard normal density and distribution function,

    γ(c) = E[z² | |z| <= c] = 1 − 2c·φ(c) / (2Φ(c) − 1)

(integrate z²φ(z) by parts: ∫ z²φ = [−zφ] + ∫ φ). For c = 2, γ = 0.7737413035499232. So to
realise std s, draw with σ = s / sqrt(γ) = 1.1368472343385565·s and cut at ±2σ. (TensorFlow's
``truncated_normal(stddev=s)`` realises 0.8796·s; PyTorch's ``trunc_normal_(std=s)`` cuts at the
absolute bounds a = −2, b = 2, whatever s is.)
"""

from __future__ import annotations

import math
import numpy as np

from ..validation import UnknownNameError

__all__ = ["TRUNCATION", "TRUNCATED_VARIANCE_FACTOR", "truncated_variance_factor",
           "Distribution", "Normal", "Uniform", "TruncatedNormal", "DISTRIBUTIONS",
           "get_distribution"]

TRUNCATION = 2.0
"""Truncated normals are cut at ±2 σ."""


def truncated_variance_factor(c: float) -> float:
    """γ(c) = Var(z | |z| <= c) for z ~ N(0, 1): 1 − 2c·φ(c) / (2Φ(c) − 1).

    Equal to ``scipy.stats.truncnorm(-c, c).var()`` (tested); written out so that importing
    tinynet does not load SciPy's stats (0.5-1 s).
    """
    density = math.exp(-0.5 * c * c) / math.sqrt(2.0 * math.pi)
    return 1.0 - 2.0 * c * density / math.erf(c / math.sqrt(2.0))


TRUNCATED_VARIANCE_FACTOR = 0.7737413035499232
"""γ(2): the variance a ±2σ truncated N(0, σ²) keeps, as a fraction of σ²."""


class Distribution:
    """A zero-mean distribution, parameterised by the std it realises."""

    name: str = ""

    def parameters(self, std: float) -> dict[str, float]:
        """The numbers the sampler is called with to realise ``std``."""
        raise NotImplementedError

    def sample(self, rng: np.random.Generator, shape: tuple[int, int], std: float) -> np.ndarray:
        """A float64 array of ``shape`` with mean 0 and std ``std``."""
        raise NotImplementedError

    def __repr__(self) -> str:
        return self.name


class Normal(Distribution):
    """N(0, s²)."""

    name = "normal"

    def parameters(self, std: float) -> dict[str, float]:
        return {"sigma": std}

    def sample(self, rng: np.random.Generator, shape: tuple[int, int], std: float) -> np.ndarray:
        return rng.normal(0.0, std, size=shape)


class Uniform(Distribution):
    """U[−L, L] with L = sqrt(3)·s, since Var(U[−L, L]) = L²/3."""

    name = "uniform"

    def parameters(self, std: float) -> dict[str, float]:
        return {"bound": math.sqrt(3.0) * std}

    def sample(self, rng: np.random.Generator, shape: tuple[int, int], std: float) -> np.ndarray:
        bound = self.parameters(std)["bound"]
        return rng.uniform(-bound, bound, size=shape)


class TruncatedNormal(Distribution):
    """N(0, σ²) redrawn outside ±2σ, with σ = s / sqrt(γ) so that the variance is s²."""

    name = "truncated_normal"

    def parameters(self, std: float) -> dict[str, float]:
        sigma = std / math.sqrt(TRUNCATED_VARIANCE_FACTOR)
        return {"sigma": sigma, "cut": TRUNCATION * sigma}

    def sample(self, rng: np.random.Generator, shape: tuple[int, int], std: float) -> np.ndarray:
        p = self.parameters(std)
        values = rng.normal(0.0, p["sigma"], size=shape)
        outside = np.abs(values) > p["cut"]
        while outside.any():  # redraw, don't clip: clipping would pile mass on the cut
            values[outside] = rng.normal(0.0, p["sigma"], size=int(outside.sum()))
            outside = np.abs(values) > p["cut"]
        return values


DISTRIBUTIONS: dict[str, Distribution] = {
    d.name: d for d in (Normal(), Uniform(), TruncatedNormal())}


def get_distribution(name: str) -> Distribution:
    """The distribution called ``name``: normal, uniform or truncated_normal."""
    if name not in DISTRIBUTIONS:
        raise UnknownNameError("distribution", name, DISTRIBUTIONS)
    return DISTRIBUTIONS[name]
