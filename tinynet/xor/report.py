"""A study's results and how they are read: arms compared pairwise (:class:`Comparison`,
:func:`compare`), and the study as a table, a report, JSON and CSV (:class:`Study`)."""

from __future__ import annotations

import csv
import io
import itertools
import json
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass, field, fields

import numpy as np

from .. import stats
from ..accuracy import rank_test, summarise
from ..text import table
from ..validation import check_int, summarised
from ..network import Network
from ..packing import unpack
from .arms import Setup, arm_dict, build_network, setup_dict
from .outcome import FAILURES, MEMORY_ONLY, ArmResult, encode_solved

__all__ = ["Comparison", "compare", "Study", "CSV_COLUMNS", "write_csv", "finite_or_none"]


LISTED_COMPARISONS = 12
"""The most comparisons a report lists one by one; past them it summarises
(:meth:`Study.report`), and the JSON keeps them all."""


@dataclass
class Comparison:
    """Two arms' rates compared by Fisher's exact test (``p_holm``: Holm-adjusted over the
    study's comparisons; ``seeds_needed``: per arm, to detect a gap this size)."""

    a: str
    b: str
    rate_a: float
    rate_b: float
    p: float
    p_holm: float
    seeds_needed: float

    def verdict(self, n: int) -> str:
        """A sentence on what the difference means at ``n`` seeds per arm."""
        gap = f"{self.a} {self.rate_a:.0%} vs {self.b} {self.rate_b:.0%}"
        tested = f"p = {self.p:.3g}, Holm {self.p_holm:.3g}"
        if self.p_holm < 0.05:
            return f"{gap}: significant at the 5 % level ({tested})"
        if not np.isfinite(self.seeds_needed):
            return f"{gap}: no difference at all ({tested})"
        return (f"{gap}: no significant difference at n = {n} ({tested}); a gap this size "
                f"needs about {self.seeds_needed:,.0f} seeds per arm to detect (80 % power, "
                "with the same correction for multiple comparisons)")


@dataclass
class RankedComparison(Comparison):
    """Two arms of a task with a test set compared on both outcomes: Fisher's exact test on
    the fractions that learn (``p``) and the Mann–Whitney rank test on the test accuracies
    (``rank_p``), each Holm-adjusted over every test of the study (``p_holm``,
    ``rank_p_holm``); ``median_a``, ``median_b`` the median test accuracies."""

    rank_p: float = 1.0
    rank_p_holm: float = 1.0
    median_a: float = float("nan")
    median_b: float = float("nan")

    def verdict(self, n: int) -> str:
        """A sentence on what the two tests found at the 5 % level, after Holm."""
        gap = (f"{self.a} learned {self.rate_a:.0%}, median test accuracy "
               f"{self.median_a:.1%} vs {self.b} {self.rate_b:.0%}, {self.median_b:.1%}")
        found = [what for what, p in (("the fraction that learns", self.p_holm),
                                      ("test accuracy", self.rank_p_holm)) if p < 0.05]
        tested = (f"Fisher p = {self.p:.3g}, Holm {self.p_holm:.3g}; Mann-Whitney p = "
                  f"{self.rank_p:.3g}, Holm {self.rank_p_holm:.3g}")
        if found:
            return f"{gap}: they differ in {' and '.join(found)} ({tested})"
        return f"{gap}: no significant difference at n = {n} ({tested})"


def compare(results: list[ArmResult], against: int | None = None) -> list[Comparison]:
    """Fisher exact tests between every pair of arms, Holm-adjusted over the pairs; or, with
    ``against`` (an index into ``results``), of every other arm against that one (a
    baseline), Holm-adjusted over those tests alone. Arms of a task with a test set
    (:meth:`ArmResult.from_test`) are compared on their test accuracies too
    (:class:`RankedComparison`)."""
    if against is None:
        pairs = list(itertools.combinations(results, 2))
    else:
        against = check_int("against (the index of the baseline arm)", against, minimum=0,
                            maximum=len(results) - 1)
        pairs = [(results[against], r) for i, r in enumerate(results) if i != against]
    if results and results[0].test_accuracy is not None:
        return _ranked(pairs)
    p_values = [stats.fisher_exact_p(a.successes, a.n, b.successes, b.n) for a, b in pairs]
    # Seeds needed at the level the family of comparisons is held to (Bonferroni's α/m, which
    # Holm's first step uses), so that the advice agrees with the Holm-adjusted verdict.
    alpha = 0.05 / max(1, len(pairs))
    return [Comparison(a.arm.name, b.arm.name, a.rate, b.rate, p, p_holm,
                       stats.seeds_needed(a.rate, b.rate, alpha=alpha))
            for (a, b), p, p_holm in zip(pairs, p_values, stats.holm(p_values))]


def _ranked(pairs: list[tuple[ArmResult, ArmResult]]) -> list[Comparison]:
    """:class:`RankedComparison` of each pair, Holm over both tests of every pair."""
    found = []
    for a, b in pairs:
        xa, xb = np.asarray(a.test_accuracy), np.asarray(b.test_accuracy)
        found.append((a, b, stats.fisher_exact_p(a.successes, a.n, b.successes, b.n),
                      rank_test(xa, xb), float(np.median(xa)), float(np.median(xb))))
    adjusted = stats.holm([p for *_, fisher, rank, _, _ in found for p in (fisher, rank)])
    alpha = 0.05 / max(1, 2 * len(pairs))
    return [RankedComparison(a.arm.name, b.arm.name, a.rate, b.rate, fisher,
                             adjusted[2 * k], stats.seeds_needed(a.rate, b.rate, alpha=alpha),
                             rank, adjusted[2 * k + 1], median_a, median_b)
            for k, (a, b, fisher, rank, median_a, median_b) in enumerate(found)]


CSV_COLUMNS = ["arm", "init", "output_init", "shuffle", "bias_init", "update", "loss",
               "optimizer", "lr", "hidden", "seeds", "first_seed", "successes", "rate",
               "ci_low", "ci_high", "reported_rate", "solved_epoch_median", "one_wrong",
               "two_wrong", "three_or_more_wrong", "diverged", "data", "accuracy",
               "held_out_median", "residual", "norm", "branch", "warmup"]
"""The columns of :meth:`Study.to_csv`, one row per arm (``hidden``: the dense layers' widths,
which an arm of residual blocks groups into blocks of ``branch`` after the first)."""


def write_csv(rows: Iterable[list]) -> str:
    """CSV text: the header :data:`CSV_COLUMNS`, then ``rows``."""
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(CSV_COLUMNS)
    writer.writerows(rows)
    return out.getvalue()


def finite_or_none(value: object) -> object:
    """``value`` with every non-finite float, however deeply nested, replaced by None (JSON
    has no NaN or infinity)."""
    if isinstance(value, float) and not np.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: finite_or_none(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [finite_or_none(v) for v in value]
    return value


@dataclass
class Study:
    """The results of :func:`~tinynet.xor.run_study`: per arm, and pairwise."""

    setup: Setup
    results: list[ArmResult]
    comparisons: list[Comparison] = field(default_factory=list)
    baseline: str | None = None
    """The name of the arm every other was compared with (None: every pair was compared)."""

    def table(self) -> str:
        """A fixed-width table, one row per arm (the notes' rates only if any arm has one, the
        epoch of success only if success means every sample right, the held-out accuracy only
        if the task has a held-out set). Failures on XOR's four points by how many outputs are
        wrong; on other tasks, below the criterion or diverged."""
        task = self.setup.task
        if task.classification:
            return self._test_table()

        def quartiles(values: list[float] | None, form: str) -> str:
            return "-" if values is None else " / ".join(format(q, form) for q in values)

        def failures(r: ArmResult) -> str:
            f = r.failures
            if task.four_points:
                return (f"{f['one_wrong']}/{f['two_wrong']}/{f['three_or_more_wrong']}, "
                        f"{f['diverged']}")
            return f"{r.n - r.successes - r.diverged}, {r.diverged}"

        columns = [  # (header, cell, shown)
            ("arm", lambda r: r.arm.name, True),
            ("solved", lambda r: f"{r.successes}/{r.n}", True),
            ("rate", lambda r: f"{r.rate:.1%}", True),
            ("95% CI", lambda r: f"[{r.interval[0]:.1%}, {r.interval[1]:.1%}]", True),
            ("notes", lambda r: "" if r.arm.reported_rate is None else
             f"{r.arm.reported_rate:.0%}",
             any(r.arm.reported_rate is not None for r in self.results)),
            ("solved by epoch (q1 / med / q3)",
             lambda r: quartiles(r.solved_epoch_quartiles, ",.0f"), task.criterion == 1.0),
            ("failures 1/2/3+ wrong, diverged" if task.four_points else
             "failures below criterion, diverged", failures, True),
            ("init std by layer",
             lambda r: ", ".join("?" if s is None else f"{s:.3g}" for s in r.init_stds), True),
            ("held-out acc. of successes (q1 / med / q3)",
             lambda r: quartiles(r.held_out_quartiles, ".1%"), task.has_held_out),
        ]
        shown = [(header, cell) for header, cell, show in columns if show]
        return table([[header for header, _ in shown],
                      *([cell(r) for _, cell in shown] for r in self.results)])

    def _test_table(self) -> str:
        """:meth:`table` on a task with a test set: per arm the seeds that learned, with
        their interval, the test accuracy's median and quartiles and its mean with a 95 %
        t-interval (:func:`tinynet.accuracy.summarise`), the failures, and seconds."""
        rows = [["arm", "learned", "rate", "95% CI", "test acc. median [q1, q3]",
                 "mean (95% CI)", "failures below, diverged", "init std by layer",
                 "seconds"]]
        for r in self.results:
            s = summarise(r.arm.name, r.test_accuracy, self.setup.task.classes, r.seconds,
                          threshold=self.setup.task.criterion)
            q1, median, q3 = s.quartiles
            rows.append([r.arm.name, f"{r.successes}/{r.n}", f"{r.rate:.1%}",
                         f"[{r.interval[0]:.1%}, {r.interval[1]:.1%}]",
                         f"{median:.1%} [{q1:.1%}, {q3:.1%}]",
                         f"{s.mean:.1%} [{s.mean_interval[0]:.1%}, {s.mean_interval[1]:.1%}]",
                         f"{r.n - r.successes - r.diverged}, {r.diverged}",
                         ", ".join("?" if d is None else f"{d:.3g}" for d in r.init_stds),
                         f"{r.seconds:.1f}"])
        return table(rows)

    def report(self) -> str:
        """The setup line, the table, the failure legend, and the pairwise verdicts."""
        task = self.setup.task
        legend = ("; ".join(f"{label}: {text}" for label, text in FAILURES.values())
                  if task.four_points else  # the plateaus are XOR's
                  f"below: test accuracy at most {task.criterion:.0%}; diverged: "
                  f"{FAILURES['diverged'][1]} (its test accuracy counts as 0)"
                  if task.classification else
                  f"below criterion: training accuracy below {task.criterion:.0%}; "
                  f"diverged: {FAILURES['diverged'][1]}")
        lines = [self.setup.describe(shape=self.shape), "", self.table(), "",
                 "failures: " + legend]
        if any(r.arm.lr is not None for r in self.results):
            lines[0] += " (arms named with an lr train at it)"
        if len(self.results) == 1:
            lines += ["", f"At n = {self.setup.seeds} the 95 % interval is the measure of "
                          "precision; to compare initializers, name several and read the "
                          "pairwise tests."]
        if self.comparisons:
            tests = (f"Fisher exact on the fractions that learn, Mann-Whitney on test accuracy, "
                     f"both two-sided; Holm-adjusted over {2 * len(self.comparisons)} tests"
                     if task.classification else "Fisher exact, two-sided; Holm-adjusted "
                     f"over {len(self.comparisons)} comparisons")
            lines += ["", ("Pairwise" if self.baseline is None else
                           f"Against {self.baseline}") + f" ({tests}):"]
            lines += self._verdicts()
        return "\n".join(lines)

    def _verdicts(self) -> list[str]:
        """Every comparison's verdict, or past :data:`LISTED_COMPARISONS` pairs of every arm
        with every other (``--init all``'s hundreds) a summary: the highest and lowest rates,
        how many pairs differ after Holm, and which arms the tests cannot tell from the
        highest. Against a baseline each arm has one verdict, and each is listed."""
        n = self.setup.seeds
        if len(self.comparisons) <= LISTED_COMPARISONS or self.baseline is not None:
            return [f"  {c.verdict(n)}" for c in self.comparisons]  # against one: each arm once
        highest, best = self._extreme_rate("highest", max)
        lowest, _ = self._extreme_rate("lowest", min)
        differ = sum(c.p_holm < 0.05 for c in self.comparisons)
        close = [c.b if c.a == best else c.a for c in self.comparisons
                 if best in (c.a, c.b) and c.p_holm >= 0.05]
        return [highest, lowest,
                f"  {differ} of {len(self.comparisons)} pairs differ at the 5 % level after Holm",
                f"  not told apart from {best} (Holm p >= 0.05): "
                f"{summarised(close, shown=12) if close else 'none'}",
                "  every pair's test is in the JSON (--json)"]

    def _extreme_rate(self, word: str, pick: Callable) -> tuple[str, str]:
        """The line naming the highest (``pick`` max) or lowest (min) rate, its interval and
        the arms that reach it, and the first of those arms' names."""
        rate = pick(r.rate for r in self.results)
        arms = [r.arm.name for r in self.results if r.rate == rate]
        low, high = next(r.interval for r in self.results if r.rate == rate)
        return (f"  {word} rate: {rate:.1%} [{low:.1%}, {high:.1%}], "
                f"{summarised(arms, shown=10)}", arms[0])

    def to_dict(self) -> dict:
        """Everything, as JSON-ready Python objects (non-finite numbers as None); each arm's
        per-seed outcomes as :func:`~tinynet.xor.outcome.encode_solved` text."""
        results = [{**{f.name: getattr(r, f.name) for f in fields(r)
                       if f.name not in MEMORY_ONLY},
                    "arm": arm_dict(r.arm), "rate": r.rate,
                    "solved": None if r.solved is None else encode_solved(r.solved)}
                   for r in self.results]
        return finite_or_none({"setup": setup_dict(self.setup), "results": results,
                                "comparisons": [asdict(c) for c in self.comparisons],
                                "baseline": self.baseline})

    def to_json(self) -> str:
        """:meth:`to_dict` as JSON text."""
        return json.dumps(self.to_dict(), indent=2)

    def csv_rows(self) -> list[list]:
        """One row per arm, in the order of :data:`CSV_COLUMNS`: name, settings, counts, rate
        and interval, median epoch of success, failures, the data set and the accuracy a
        success needs, the median held-out accuracy of the successes, the arm's residual
        blocks (empty for a chain) and its steps of warmup."""
        rows = []
        for r in self.results:
            arm_setup = self.setup.for_arm(r.arm)
            median = None if r.solved_epoch_quartiles is None else r.solved_epoch_quartiles[1]
            rows.append([r.arm.name, r.arm.init, r.arm.output_init or "", r.arm.shuffle,
                         r.arm.bias_init or "", r.arm.update, r.arm.loss, r.arm.optimizer,
                         arm_setup.lr, "-".join(map(str, arm_setup.hidden)), r.n,
                         self.setup.first_seed, r.successes,
                         f"{r.rate:.4f}", f"{r.interval[0]:.4f}", f"{r.interval[1]:.4f}",
                         "" if r.arm.reported_rate is None else r.arm.reported_rate,
                         "" if median is None else median, *r.failures.values(),
                         self.setup.task.name, self.setup.task.criterion,
                         "" if r.held_out_quartiles is None else r.held_out_quartiles[1],
                         r.arm.residual or "", r.arm.norm or "",
                         "" if r.arm.residual is None else r.arm.branch, arm_setup.warmup])
        return rows

    def to_csv(self) -> str:
        """:meth:`csv_rows` as CSV text, with a header."""
        return write_csv(self.csv_rows())

    @property
    def shape(self) -> str:
        """The layer sizes the arms trained, ``"2-2-2-1"``; several joined by ``" / "`` where
        arms give their own hidden layers."""
        shapes = dict.fromkeys(self.setup.for_arm(r.arm).shape for r in self.results)
        return " / ".join(shapes)

    @property
    def seeds(self) -> range:
        """The seeds every arm was trained from, in the order of its per-seed arrays."""
        return self.setup.seed_range

    def result(self, arm: str | int) -> ArmResult:
        """The result of the arm named ``arm`` (its :attr:`Arm.name`), or at index ``arm``."""
        return self.results[self._index(arm)]

    def arm_indices(self, arms: Sequence[str | int] | None = None) -> list[int]:
        """The indices of ``arms`` (names or indices; None: every arm), in the order given."""
        if arms is None:
            return list(range(len(self.results)))
        if isinstance(arms, (str, bytes)) or not isinstance(arms, Sequence) or not arms:
            raise TypeError(f"arms must be a non-empty list of arm names or indices, such as "
                            f"[{self.results[0].arm.name!r}], or None for every arm; got "
                            f"{arms!r}")
        return [self._index(arm) for arm in arms]

    def _index(self, arm: str | int) -> int:
        names = [r.arm.name for r in self.results]
        if isinstance(arm, str):
            if arm in names:
                return names.index(arm)
        elif isinstance(arm, (int, np.integer)) and not isinstance(arm, bool):
            if -len(names) <= arm < len(names):
                return int(arm) % len(names)
        else:
            raise TypeError(f"arm must be an arm's name or index, got {arm!r}")
        raise ValueError(f"arm must be one of this study's arms, {names}, or an index below "
                         f"{len(names)}; got {arm!r}")

    def network(self, arm: str | int, seed: int, trained: bool = True) -> Network:
        """The network of ``arm`` (name or index) from ``seed``: as trained in the study (the
        kept parameters, no training again), or as initialised (``trained=False``)."""
        result = self.result(arm)
        if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) \
                or seed not in self.seeds:
            raise ValueError(f"seed must be one of the study's seeds, {self.seeds.start} to "
                             f"{self.seeds.stop - 1}; got {seed!r}")
        net = build_network(self.setup, result.arm, int(seed))
        if trained:
            if result.trained is None:
                raise ValueError(f"arm {result.arm.name!r} kept no trained parameters (a "
                                 "study read from a file keeps none)")
            unpack(net, result.trained[int(seed) - self.seeds.start])
        return net

    def __repr__(self) -> str:
        return (f"Study({self.setup.shape}, {self.setup.seeds} seeds, "
                f"arms: {', '.join(r.arm.name for r in self.results)})")
