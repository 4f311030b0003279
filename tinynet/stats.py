"""Statistics for success rates: Wilson intervals, Fisher's exact test, Holm's correction, and
how many seeds a difference needs.

A success rate from n independent seeds is a binomial proportion. At n = 100 its 95 % interval
is about ±10 points wide, so two initializers 5 points apart are usually indistinguishable.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from .errors import check_float, check_int

__all__ = ["Z_95", "wilson_interval", "fisher_exact_p", "holm", "seeds_needed"]

Z_95 = 1.959963984540054
"""The standard normal quantile for a two-sided 95 % interval."""


def _probability(name: str, value: object, strict: bool) -> float:
    """``value`` if it lies in [0, 1], or in (0, 1) when ``strict``."""
    value = check_float(name, value, minimum=0.0, inclusive=not strict)
    if value > 1 or (strict and value == 1):
        bounds = "strictly between 0 and 1" if strict else "from 0 to 1"
        raise ValueError(f"{name} must be a probability {bounds}, got {value!r}")
    return value


def _check_counts(successes: int, n: int, suffix: str = "") -> tuple[int, int]:
    n = check_int(f"n{suffix}", n, minimum=1)
    successes = check_int(f"successes{suffix}", successes, minimum=0)
    if successes > n:
        raise ValueError(f"successes{suffix} must be at most n{suffix} ({n}), got {successes}")
    return successes, n


def wilson_interval(successes: int, n: int, z: float = Z_95) -> tuple[float, float]:
    """Wilson score interval for a proportion (Wilson 1927).

    With p = k/n: centre (p + z²/2n) / (1 + z²/n), half-width
    z·sqrt(p(1−p)/n + z²/4n²) / (1 + z²/n). Unlike p ± z·sqrt(p(1−p)/n) it stays inside
    [0, 1] and keeps its coverage near 0 and 1.
    """
    successes, n = _check_counts(successes, n)
    p = successes / n
    denominator = 1.0 + z * z / n
    centre = (p + z * z / (2 * n)) / denominator
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denominator
    low = 0.0 if successes == 0 else max(0.0, centre - half)   # exact ends, not 1 - 1e-16
    high = 1.0 if successes == n else min(1.0, centre + half)
    return low, high


def fisher_exact_p(successes_a: int, n_a: int, successes_b: int, n_b: int) -> float:
    """Two-sided p-value of Fisher's exact test that two success rates are equal."""
    successes_a, n_a = _check_counts(successes_a, n_a, "_a")
    successes_b, n_b = _check_counts(successes_b, n_b, "_b")
    from scipy.stats import fisher_exact  # imported here: SciPy's stats take 0.4 s to load
    table = [[successes_a, n_a - successes_a], [successes_b, n_b - successes_b]]
    return float(fisher_exact(table, alternative="two-sided").pvalue)


def holm(p_values: Sequence[float]) -> list[float]:
    """Holm's step-down adjustment: p-values that control the family-wise error rate.

    The i-th smallest of m p-values is multiplied by (m − i), then made non-decreasing.
    """
    order = sorted(range(len(p_values)), key=lambda i: p_values[i])
    adjusted, running = [0.0] * len(p_values), 0.0
    for rank, index in enumerate(order):
        running = max(running, min(1.0, (len(p_values) - rank) * p_values[index]))
        adjusted[index] = running
    return adjusted


def seeds_needed(rate_a: float, rate_b: float, alpha: float = 0.05,
                 power: float = 0.8) -> float:
    """Seeds per arm for a two-sided test at level ``alpha`` to detect rate_a ≠ rate_b with
    probability ``power`` (normal approximation to the two-proportion test):

        n = (z_(1−α/2) sqrt(2 p̄ q̄) + z_power sqrt(p_a q_a + p_b q_b))² / (p_a − p_b)²

    ``inf`` when the rates are equal.
    """
    rate_a = _probability("rate_a", rate_a, strict=False)
    rate_b = _probability("rate_b", rate_b, strict=False)
    alpha = _probability("alpha", alpha, strict=True)
    power = _probability("power", power, strict=True)
    if rate_a == rate_b:
        return math.inf
    from statistics import NormalDist
    z_alpha = NormalDist().inv_cdf(1 - alpha / 2)
    z_power = NormalDist().inv_cdf(power)
    mean = (rate_a + rate_b) / 2
    spread = (z_alpha * math.sqrt(2 * mean * (1 - mean))
              + z_power * math.sqrt(rate_a * (1 - rate_a) + rate_b * (1 - rate_b)))
    return spread ** 2 / (rate_a - rate_b) ** 2
