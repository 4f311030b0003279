"""Test accuracy over many seeds: what a set of trained networks scores on held-out data, each
arm summarised with intervals, and arms compared by tests fit for the outcome.

On a task with a test set the outcome of one seed is a number, its test accuracy, and an
initializer's outcome is the distribution of that number over seeds. :func:`summarise` gives,
for one arm of n seeds:

* the fraction of seeds that *learn*: test accuracy above ``threshold`` (by default twice
  chance, 2 / classes, or halfway from chance to 1 where that is lower: 0.75 for two
  classes, whose twice chance is 1), with its Wilson 95 % interval
  (:func:`tinynet.stats.wilson_interval`);
* the median test accuracy and its quartiles;
* the mean test accuracy with a 95 % t-interval, mean ± t(0.975, n − 1) · s / √n.

:func:`compare` tests two arms on the same question each answers: Fisher's exact test on the
fractions that learn, and the Mann–Whitney rank test (two-sided) on the accuracies
themselves, which needs no assumption of normality (accuracies over seeds are often
bimodal: some seeds stall at chance). Over a family of comparisons, Holm's adjustment
(:func:`tinynet.stats.holm`) keeps the chance of any false claim at 5 %.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from .network import Network
from .stats import fisher_exact_p, holm, wilson_interval
from .text import table
from .training import predict_classes
from .validation import check_int, check_probability

__all__ = ["held_out_accuracies", "Summary", "summarise", "learning_threshold", "Comparison",
           "compare", "rank_test", "compare_all", "report"]


def held_out_accuracies(networks: Sequence[Network], X_test: np.ndarray, y_test: np.ndarray,
                    backend: str = "numba") -> np.ndarray:
    """Each network's accuracy on the test set: the fraction of ``y_test`` (m,) labels its
    :func:`~tinynet.predict_classes` gets right, shape (len(networks),)."""
    return np.array([np.mean(predict_classes(net, X_test, backend) == y_test)
                     for net in networks])


@dataclass(frozen=True)
class Summary:
    """One arm's test accuracies over its seeds (see the module's docstring): ``learned`` of
    ``n`` seeds above ``threshold``, its interval; the quartiles; the mean, its interval;
    ``seconds`` of training."""

    name: str
    n: int
    threshold: float
    learned: int
    learned_interval: tuple[float, float]
    quartiles: tuple[float, float, float]
    mean: float
    mean_interval: tuple[float, float]
    seconds: float

    def __repr__(self) -> str:
        low, high = self.learned_interval
        q1, median, q3 = self.quartiles
        return (f"{self.name}: {self.learned}/{self.n} learned (> {self.threshold:.0%}), "
                f"{self.learned / self.n:.1%} [{low:.1%}, {high:.1%}]; median "
                f"{median:.1%} [{q1:.1%}, {q3:.1%}], mean {self.mean:.1%} "
                f"[{self.mean_interval[0]:.1%}, {self.mean_interval[1]:.1%}]")


def summarise(name: str, accuracies: np.ndarray, classes: int, seconds: float = math.nan,
              threshold: float | None = None) -> Summary:
    """The :class:`Summary` of ``accuracies`` (one per seed, at least two) on a task of
    ``classes`` classes (at least 2); ``threshold`` defaults to :func:`learning_threshold`."""
    accuracies = np.asarray(accuracies, dtype=np.float64)
    if accuracies.ndim != 1 or len(accuracies) < 2:
        raise ValueError(f"accuracies must be one per seed, at least two, got shape "
                         f"{accuracies.shape}")
    threshold = learning_threshold(classes) if threshold is None else \
        check_probability("threshold", threshold)
    from scipy.stats import t  # a second's import: only when an arm is summarised
    n = len(accuracies)
    learned = int(np.sum(accuracies > threshold))
    mean = float(np.mean(accuracies))
    half = float(t.ppf(0.975, n - 1)) * float(np.std(accuracies, ddof=1)) / math.sqrt(n)
    q1, median, q3 = (float(q) for q in np.quantile(accuracies, [0.25, 0.5, 0.75]))
    return Summary(name, n, threshold, learned, wilson_interval(learned, n), (q1, median, q3),
                   mean, (mean - half, mean + half), seconds)


def learning_threshold(classes: int) -> float:
    """The test accuracy a seed must exceed to count as learning a task of ``classes``
    classes (at least 2): twice chance, 2 / classes, or halfway from chance to 1 where that
    is lower, (1 + 1/classes) / 2 (two classes: 0.75; from three on, twice chance)."""
    classes = check_int("classes", classes, minimum=2)
    return min(2.0 / classes, (1.0 + 1.0 / classes) / 2.0)


@dataclass(frozen=True)
class Comparison:
    """Two arms compared: Fisher's p on the fractions that learn, Mann–Whitney's p on the
    accuracies, and (in a family, :func:`compare_all`) each Holm-adjusted."""

    a: str
    b: str
    fisher_p: float
    rank_p: float
    fisher_adjusted: float = math.nan
    rank_adjusted: float = math.nan


def compare(a: Summary, accuracies_a: np.ndarray, b: Summary,
            accuracies_b: np.ndarray) -> Comparison:
    """Arm ``a`` against arm ``b`` (:class:`Comparison`), unadjusted."""
    return Comparison(a.name, b.name, fisher_exact_p(a.learned, a.n, b.learned, b.n),
                      rank_test(accuracies_a, accuracies_b))


def rank_test(accuracies_a: np.ndarray, accuracies_b: np.ndarray) -> float:
    """The two-sided Mann–Whitney p-value of two arms' accuracies (1 when every value is the
    same: no evidence either way)."""
    from scipy.stats import mannwhitneyu  # a second's import: only when arms are compared
    values = np.concatenate([accuracies_a, accuracies_b])
    if np.all(values == values[0]):
        return 1.0
    return float(mannwhitneyu(accuracies_a, accuracies_b, alternative="two-sided").pvalue)


def compare_all(summaries: Sequence[Summary],
                accuracies: Sequence[np.ndarray]) -> list[Comparison]:
    """Every pair of arms compared, both tests Holm-adjusted over the family (every pair,
    both tests: 2 · k(k − 1)/2 p-values)."""
    pairs = [compare(summaries[i], accuracies[i], summaries[j], accuracies[j])
             for i in range(len(summaries)) for j in range(i + 1, len(summaries))]
    adjusted = holm([p for pair in pairs for p in (pair.fisher_p, pair.rank_p)])
    return [Comparison(pair.a, pair.b, pair.fisher_p, pair.rank_p, adjusted[2 * k],
                       adjusted[2 * k + 1]) for k, pair in enumerate(pairs)]


def report(summaries: Sequence[Summary], comparisons: Sequence[Comparison] = ()) -> str:
    """The arms as a table, then each comparison as a sentence that says what its adjusted
    tests found (at the 5 % level)."""
    rows = [("arm", "seeds", "learned (95 % CI)", "median test acc. [quartiles]",
             "mean (95 % CI)", "seconds")]
    for s in summaries:
        q1, median, q3 = s.quartiles
        rows.append((s.name, str(s.n),
                     f"{s.learned / s.n:.1%} [{s.learned_interval[0]:.1%}, "
                     f"{s.learned_interval[1]:.1%}]",
                     f"{median:.1%} [{q1:.1%}, {q3:.1%}]",
                     f"{s.mean:.1%} [{s.mean_interval[0]:.1%}, {s.mean_interval[1]:.1%}]",
                     f"{s.seconds:.1f}"))
    thresholds = sorted({s.threshold for s in summaries})
    lines = [table(rows), "learned: test accuracy above "
             + " or ".join(f"{threshold:.0%}" for threshold in thresholds)]
    for c in comparisons:
        found = [what for what, p in (("the fraction that learns", c.fisher_adjusted),
                                      ("the accuracies", c.rank_adjusted)) if p < 0.05]
        lines.append(f"{c.a} against {c.b}: " + (
            f"they differ in {' and '.join(found)}" if found else "no difference shown")
            + f" (Holm-adjusted p: Fisher {c.fisher_adjusted:.3g}, Mann-Whitney "
              f"{c.rank_adjusted:.3g})")
    return "\n".join(lines)
