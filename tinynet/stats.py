"""Statistics for success rates: Wilson intervals, Fisher's exact test, Holm's correction, and
how many seeds a difference needs.

A success rate from n independent seeds is a binomial proportion. At n = 100 its 95 % interval
is about ±10 points wide, so two initializers 5 points apart are usually indistinguishable.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from fractions import Fraction

from .validation import check_counts, check_not_masked, check_probability

__all__ = ["wilson_interval", "fisher_exact_p", "equal_proportions_p", "holm", "seeds_needed",
           "median_interval"]


def wilson_interval(successes: int, n: int,
                    confidence_level: float = 0.95) -> tuple[float, float]:
    """Wilson score interval for a proportion (Wilson 1927), two-sided at ``confidence_level``.

    With p = k/n, q = 1 − p and z = Φ⁻¹((1 + confidence_level)/2) the normal quantile:

        centre = (2np + z²) / (2(n + z²)),   half-width = z sqrt(4npq + z²) / (2(n + z²))

    the same as centre (p + z²/2n) / (1 + z²/n), half-width z·sqrt(p(1−p)/n + z²/4n²) /
    (1 + z²/n). Unlike p ± z·sqrt(p(1−p)/n) it stays inside [0, 1] and keeps its coverage
    near 0 and 1. Computed by this formula in the form and order SciPy's ``binomtest(k,
    n).proportion_ci(method="wilson")`` uses (Newcombe 1998), and equal to it to 1e-12 (tested:
    z from the standard library differs from SciPy's in the last bits); like
    SciPy it gives exactly 0 at k = 0 and exactly 1 at k = n. Written out so that the default
    study does not load SciPy's stats (0.5-1 s).
    """
    successes, n = check_counts(successes, n)
    confidence_level = check_probability("confidence_level", confidence_level, strict=True)
    upper_tail = 0.5 + 0.5 * confidence_level
    if upper_tail == 1.0:  # rounds to 1: the quantile is infinite
        raise ValueError(f"confidence_level must be a probability below 1 by more than "
                         f"rounding (1 − 2^-52 at most), got {confidence_level!r}")
    z = _normal_quantile(upper_tail)
    p = successes / n
    denominator = 2 * (n + z ** 2)
    centre = (2 * n * p + z ** 2) / denominator
    half_width = z / denominator * math.sqrt(4 * n * p * (1 - p) + z ** 2)
    low = 0.0 if successes == 0 else centre - half_width
    high = 1.0 if successes == n else centre + half_width
    return float(low), float(high)


def _normal_quantile(probability: float) -> float:
    """The standard normal distribution's quantile Φ⁻¹(probability) (the standard library's;
    within a few ulp of SciPy's ``ndtri``)."""
    from statistics import NormalDist
    return NormalDist().inv_cdf(probability)


def fisher_exact_p(successes_a: int, n_a: int, successes_b: int, n_b: int) -> float:
    """Two-sided p-value of Fisher's exact test that two success rates are equal."""
    successes_a, n_a = check_counts(successes_a, n_a, "_a")
    successes_b, n_b = check_counts(successes_b, n_b, "_b")
    from scipy.stats import fisher_exact  # imported here: SciPy's stats take 0.5-1 s to load
    table = [[successes_a, n_a - successes_a], [successes_b, n_b - successes_b]]
    return float(fisher_exact(table, alternative="two-sided").pvalue)


def equal_proportions_p(successes: Sequence[int], n: Sequence[int]) -> float:
    """p-value of Pearson's chi-squared test that k >= 2 success rates are equal (the test of
    equal proportions, R's ``prop.test`` without continuity correction): the k x 2 table of
    successes and failures against independence, k − 1 degrees of freedom. 1.0 when every
    group has the same rate, including all successes or all failures."""
    check_not_masked("successes", successes)
    check_not_masked("n", n)
    if len(successes) != len(n) or len(n) < 2:
        raise ValueError(f"successes and n must list the same number (at least 2) of groups, "
                         f"got {len(successes)} and {len(n)}")
    counts = [check_counts(k, m, f"[{i}]") for i, (k, m) in enumerate(zip(successes, n))]
    if len({k / m for k, m in counts}) == 1:
        return 1.0
    from scipy.stats import chi2_contingency  # imported here: SciPy's stats take 0.5-1 s to load
    table = [[k, m - k] for k, m in counts]
    return float(chi2_contingency(table, correction=False).pvalue)


def holm(p_values: Sequence[float]) -> list[float]:
    """Holm's step-down adjustment: p-values that control the family-wise error rate.

    The i-th smallest of m p-values is multiplied by (m − i), then made non-decreasing.
    Hand-written: SciPy's ``false_discovery_control`` does Benjamini–Hochberg/Yekutieli, not
    Holm, and statsmodels' ``multipletests`` would be a heavy new dependency for six lines.
    """
    check_not_masked("p_values", p_values)
    p_values = [check_probability(f"p_values[{i}]", p) for i, p in enumerate(p_values)]
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

    ``inf`` when the rates are equal. Hand-written: SciPy has no closed-form sample size for
    two proportions (``scipy.stats.power`` only simulates the power at a given n).
    """
    rate_a = check_probability("rate_a", rate_a, strict=False)
    rate_b = check_probability("rate_b", rate_b, strict=False)
    alpha = check_probability("alpha", alpha, strict=True)
    power = check_probability("power", power, strict=True)
    if rate_a == rate_b:
        return math.inf
    z_alpha = _normal_quantile(1 - alpha / 2)
    z_power = _normal_quantile(power)
    mean = (rate_a + rate_b) / 2
    spread = (z_alpha * math.sqrt(2 * mean * (1 - mean))
              + z_power * math.sqrt(rate_a * (1 - rate_a) + rate_b * (1 - rate_b)))
    return spread ** 2 / (rate_a - rate_b) ** 2


def median_interval(values: Sequence[float],
                    confidence_level: float = 0.95) -> tuple[float, float]:
    """A distribution-free interval for the median of the population ``values`` were drawn
    from (at least 6 of them for 95 %): the order statistics x_(k) and x_(n−k+1), k the
    largest with P(Binomial(n, ½) <= k − 1) <= (1 − confidence_level) / 2, so that it covers
    the median at least ``confidence_level`` of the time whatever the distribution (the sign
    test's interval; Conover, *Practical Nonparametric Statistics*, §3.2)."""
    ordered = sorted(float(v) for v in check_not_masked("values", values))
    n = len(ordered)
    confidence_level = check_probability("confidence_level", confidence_level, strict=True)
    tail = Fraction((1.0 - confidence_level) / 2.0) * 2 ** n  # in counts of the 2^n outcomes
    k, below = 0, 0  # below: 2^n · P(Binomial(n, 1/2) <= k - 1), exact in integers
    while k < n and below + math.comb(n, k) <= tail:
        k, below = k + 1, below + math.comb(n, k)
    if k == 0:
        raise ValueError(f"values must hold enough numbers for a {confidence_level:.0%} "
                         f"interval of the median (6 for 95 %), got {n}")
    return ordered[k - 1], ordered[n - k]
