"""tinynet.stats beyond the known values (those are with the XOR harness tests): the Wilson
interval is the textbook formula and equals SciPy's, the power formula delivers its power, and
SciPy's stats stay out of ``import tinynet`` and of the default study."""

import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from scipy.stats import binom, binomtest, norm

from helpers import checkout_environment
from tinynet import stats


def wilson_by_hand(k, n, confidence_level):
    """The closed form in wilson_interval's docstring."""
    z = norm.ppf(0.5 + confidence_level / 2)
    p = k / n
    denominator = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denominator
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denominator
    return centre - half, centre + half


@pytest.mark.parametrize("confidence_level", [0.8, 0.95, 0.99])
def test_wilson_interval_is_the_closed_form(confidence_level):
    for n in [1, 2, 3, 10, 37, 100, 1000]:
        for k in sorted({0, 1, n // 3, n // 2, n - 1, n}):
            low, high = stats.wilson_interval(k, n, confidence_level)
            assert type(low) is float and type(high) is float
            by_hand = wilson_by_hand(k, n, confidence_level)
            assert (low, high) == pytest.approx(by_hand, abs=1e-14)
            assert 0.0 <= low <= k / n <= high <= 1.0


def test_wilson_ends_are_exact_for_every_n():
    for n in range(1, 300):
        assert stats.wilson_interval(0, n)[0] == 0.0
        assert stats.wilson_interval(n, n)[1] == 1.0


def test_wilson_interval_widens_with_the_confidence_level():
    widths = [np.subtract(*stats.wilson_interval(30, 100, c)[::-1]) for c in [0.5, 0.9, 0.99]]
    assert widths[0] < widths[1] < widths[2]


@pytest.mark.parametrize("level", [0.0, 1.0, 95, -0.1, 1.96])
def test_wilson_refuses_a_confidence_level_outside_zero_one(level):
    with pytest.raises(ValueError, match="confidence_level must be a probability strictly between 0 and 1"):
        stats.wilson_interval(3, 10, level)


def test_holm_against_its_definition():
    # Adjusted p of the i-th smallest = max over j <= i of min(1, (m - j) p_(j)).
    rng = np.random.default_rng(0)
    for m in [1, 2, 5, 12]:
        p = list(rng.uniform(0, 0.2, size=m))
        order = np.argsort(p)
        expected = np.empty(m)
        for rank, index in enumerate(order):
            expected[index] = max(min(1.0, (m - j) * p[order[j]]) for j in range(rank + 1))
        assert stats.holm(p) == pytest.approx(list(expected), rel=1e-15)


@pytest.mark.parametrize("rate_a,rate_b,alpha,power", [
    (0.5, 0.6, 0.05, 0.8), (0.4, 0.47, 0.05 / 6, 0.8), (0.1, 0.3, 0.05, 0.9)])
def test_seeds_needed_gives_the_power_it_promises(rate_a, rate_b, alpha, power):
    # The exact power of the pooled two-proportion z-test at n = ceil(seeds_needed), summed
    # over every pair of binomial outcomes (no sampling): 0.796, 0.800 and 0.911 here. The
    # formula is a normal approximation; 0.015 bounds its error at these rates.
    n = math.ceil(stats.seeds_needed(rate_a, rate_b, alpha=alpha, power=power))
    k = np.arange(n + 1)
    ka, kb = np.meshgrid(k, k, indexing="ij")
    pooled = (ka + kb) / (2 * n)
    standard_error = np.sqrt(2 * pooled * (1 - pooled) / n)
    difference = np.abs(ka - kb) / n
    reject = difference > norm.isf(alpha / 2) * standard_error
    reject &= standard_error > 0  # 0/0 when both arms all fail or all succeed: no rejection
    probability = np.outer(binom(n, rate_a).pmf(k), binom(n, rate_b).pmf(k))
    assert probability[reject].sum() == pytest.approx(power, abs=0.015)


WILSON_LEVELS = [1e-9, 0.01, 0.5, 0.8, 0.95, 0.99, 0.999, 1 - 1e-9]


def wilson_cases():
    """(k, n) with k = 0, k = n and n = 1 among them, small n exhaustively, large n sampled."""
    cases = [(k, n) for n in range(1, 21) for k in range(n + 1)]
    rng = np.random.default_rng(27)
    for n in [97, 100, 1000, 10_000, 123_457, 10**6, 10**9]:
        cases += [(k, n) for k in {0, 1, 2, n // 2, n - 2, n - 1, n}]
        cases += [(int(k), n) for k in rng.integers(0, n + 1, size=8)]
    return cases


@pytest.mark.parametrize("confidence_level", WILSON_LEVELS)
def test_wilson_interval_equals_scipys(confidence_level):
    for k, n in wilson_cases():
        expected = binomtest(k, n).proportion_ci(confidence_level=confidence_level,
                                                 method="wilson")
        low, high = stats.wilson_interval(k, n, confidence_level)
        assert abs(low - expected.low) <= 1e-12 and abs(high - expected.high) <= 1e-12, (k, n)
        assert (low == 0.0) == (expected.low == 0.0) and (high == 1.0) == (expected.high == 1.0)


def test_neither_tinynet_nor_the_default_study_loads_scipy_stats():
    # The warm default CLI job is held to 1 s, and SciPy's stats take 0.5-1 s to load: the
    # Wilson interval is computed by its formula; only a Fisher or chi-squared test loads them.
    code = "\n".join([
        "import sys, tinynet, tinynet.stats",
        "assert 'scipy.stats' not in sys.modules, 'import tinynet'",
        "tinynet.stats.wilson_interval(3, 10)",
        "tinynet.stats.seeds_needed(0.4, 0.5); tinynet.stats.holm([0.01, 0.2])",
        "assert 'scipy.stats' not in sys.modules, 'wilson_interval'",
        "from tinynet.xor.cli import main",
        "main(['--init', 'he_leaky', '--shuffle', '--hidden', '2', '--seeds', '8',",
        "      '--epochs', '50'])",
        "assert 'scipy.stats' not in sys.modules, 'the default CLI job'",
        "tinynet.stats.fisher_exact_p(3, 10, 5, 10)",
        "assert 'scipy.stats' in sys.modules, 'fisher_exact_p'"])
    root = str(Path(__file__).resolve().parents[1])
    done = subprocess.run([sys.executable, "-c", code], cwd=root, env=checkout_environment(),
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "he_leaky, shuffled" in done.stdout


# --- known values ---------------------------------------------------------------------------

@pytest.mark.parametrize("k,n,low,high", [
    (45, 100, 0.35615, 0.54755),   # statsmodels proportion_confint(45, 100, method="wilson")
    (0, 10, 0.0, 0.27753),
    (10, 10, 0.72247, 1.0),
    (1, 2, 0.09453, 0.90547),
])
def test_wilson_interval(k, n, low, high):
    lo, hi = stats.wilson_interval(k, n)
    assert lo == pytest.approx(low, abs=5e-6) and hi == pytest.approx(high, abs=5e-6)


def test_wilson_half_width_at_n_100_is_about_ten_points():
    lo, hi = stats.wilson_interval(50, 100)
    assert 0.09 < (hi - lo) / 2 < 0.10


def test_fisher_exact_known_values():
    assert stats.fisher_exact_p(3, 4, 1, 4) == pytest.approx(0.48571, abs=1e-5)  # Fisher's tea
    assert stats.fisher_exact_p(46, 100, 55, 100) == pytest.approx(0.25783, abs=1e-5)
    assert stats.fisher_exact_p(10, 10, 0, 10) == pytest.approx(1.0825e-05, rel=1e-3)
    assert stats.fisher_exact_p(7, 20, 7, 20) == 1.0


def test_holm_and_seeds_needed():
    assert stats.holm([0.01, 0.04, 0.03]) == pytest.approx([0.03, 0.06, 0.06])
    assert stats.holm([0.5]) == [0.5]
    # (1.96 sqrt(2 .55 .45) + 0.8416 sqrt(.25 + .24))² / 0.1² = 387.3
    assert stats.seeds_needed(0.5, 0.6) == pytest.approx(387.3, abs=0.2)
    assert stats.seeds_needed(0.4, 0.4) == float("inf")


def test_equal_proportions_is_pearsons_chi_squared_by_hand():
    successes, n = [40, 52, 47], [100, 100, 120]
    pooled = sum(successes) / sum(n)
    chi2 = sum((k - m * pooled) ** 2 / (m * pooled) + ((m - k) - m * (1 - pooled)) ** 2
               / (m * (1 - pooled)) for k, m in zip(successes, n))
    from scipy.stats import chi2 as distribution
    assert stats.equal_proportions_p(successes, n) == pytest.approx(
        distribution.sf(chi2, df=2), rel=1e-12)
    # two groups: the square of the two-proportion z test, with no continuity correction
    z = (0.40 - 0.52) / math.sqrt(0.46 * 0.54 * (2 / 100))
    assert stats.equal_proportions_p([40, 52], [100, 100]) == pytest.approx(
        math.erfc(abs(z) / math.sqrt(2)), rel=1e-12)


def test_equal_proportions_edge_cases_and_errors():
    assert stats.equal_proportions_p([10, 10], [10, 10]) == 1.0   # all successes
    assert stats.equal_proportions_p([0, 0, 0], [5, 9, 4]) == 1.0
    assert stats.equal_proportions_p([3, 6], [10, 20]) == 1.0     # equal rates
    with pytest.raises(ValueError, match="at least 2"):
        stats.equal_proportions_p([3], [10])
    with pytest.raises(ValueError, match=r"successes\[1\] must be at most n\[1\]"):
        stats.equal_proportions_p([3, 11], [10, 10])


def test_a_confidence_level_that_rounds_to_one_is_refused_by_name():
    """1 − 2^-53, the largest float below 1, puts the quantile at 0.5 + 0.5 · level = 1 after
    rounding (an infinite z); 1 − 2^-52 still has a finite one."""
    with pytest.raises(ValueError, match=r"confidence_level must be a probability below 1 "
                                         r"by more than rounding.*0\.9999999999999999"):
        stats.wilson_interval(5, 10, np.nextafter(1.0, 0.0))
    low, high = stats.wilson_interval(5, 10, 1.0 - 2.0 ** -52)
    assert 0.0 < low < 0.5 < high < 1.0
