"""The XOR bench: how often does a network learn XOR, per initializer, over many seeds?

A *study* trains, for each *arm* (an initializer, the output layer's initializer, shuffling on
or off), the same network shape from ``seeds`` different seeds on the fast ensemble path, and
reports per arm the success rate with its Wilson 95 % interval, when the successful seeds
solved XOR, how the others failed, and pairwise Fisher exact tests between the arms::

    >>> study = run_study([Arm("normal"), Arm("he_leaky", shuffle=True)], XorSetup(seeds=100))
    >>> print(study.report())

Success, as in the notes: after training, all four XOR samples are on the right side of 0.5.
"""

from __future__ import annotations

import csv
import io
import itertools
import json
import sys
import time
from dataclasses import asdict, dataclass, field

import numpy as np

from . import data, init, stats
from .ensemble import EnsembleResult, fit_ensemble
from .errors import check_float, check_int, check_seed
from .network import mlp
from .training import check_backend

__all__ = ["Arm", "XorSetup", "ArmResult", "Comparison", "Study", "run_study", "NOTES_ARMS",
           "FAILURES"]

FAILURES = {
    "one_wrong": ("1 wrong", "typically three outputs near 2/3, a plateau at loss 1/6"),
    "two_wrong": ("2 wrong", "typically every output near 0.5, a plateau at loss 1/4"),
    "three_or_four_wrong": ("3+ wrong", "three or four samples on the wrong side"),
    "diverged": ("diverged", "the loss or a weight became NaN or infinite"),
}
"""How an unsolved seed failed, judged on its final predictions: (column label, meaning)."""


@dataclass(frozen=True)
class Arm:
    """One configuration of a study: the hidden layers' initializer, the output layer's
    initializer (None: the same), and whether every epoch shuffles the samples."""

    init: str
    output_init: str | None = None
    shuffle: bool = False
    label: str = ""
    reported_rate: float | None = None  # the rate the notes reported for this arm, if any

    @property
    def name(self) -> str:
        """``label``, or a name made from the settings."""
        if self.label:
            return self.label
        name = self.init if self.output_init is None else f"{self.init} / out {self.output_init}"
        return name + (", shuffled" if self.shuffle else "")


NOTES_ARMS = [
    Arm("normal", label="N(0,1)", reported_rate=0.46),
    Arm("he_normal", label="He, every layer", reported_rate=0.45),
    Arm("he_leaky", "xavier_normal", label="He-leaky hidden, Xavier output", reported_rate=0.44),
    Arm("he_leaky", "xavier_normal", shuffle=True,
        label="He-leaky hidden, Xavier output, shuffled", reported_rate=0.55),
    Arm("normal", shuffle=True, label="N(0,1), shuffled (not in the notes)"),
]
"""The notes' four runs, in order, and one they did not make. Each run kept the code of the
one before: the shuffled run still had He-leaky hidden layers and a Xavier output."""


@dataclass(frozen=True)
class XorSetup:
    """What every arm of a study shares. Defaults: 99mlp as the notes describe it, with the
    shape that fits their reported rates best (two hidden LeakyReLU layers of 2)."""

    hidden: tuple[int, ...] = (2, 2)
    activation: str = "leaky_relu"
    alpha: float = 0.01
    output: str = "sigmoid"
    lr: float = 0.01
    epochs: int = 20_000
    seeds: int = 100
    first_seed: int = 0
    backend: str = "numba"

    def __post_init__(self) -> None:
        hidden = tuple(self.hidden)
        for i, width in enumerate(hidden):
            check_int(f"hidden[{i}]", width, minimum=1)
        object.__setattr__(self, "hidden", hidden)
        check_float("lr", self.lr, minimum=0.0, inclusive=False)
        check_float("alpha", self.alpha, minimum=0.0, inclusive=True)
        check_int("epochs", self.epochs, minimum=1)
        check_int("seeds", self.seeds, minimum=1)
        check_seed("first_seed", self.first_seed)
        check_seed("last seed (first_seed + seeds - 1)", self.first_seed + self.seeds - 1)
        check_backend(self.backend)

    @property
    def sizes(self) -> list[int]:
        """Layer sizes, XOR's 2 inputs first and its 1 output last."""
        return [2, *self.hidden, 1]

    def describe(self) -> str:
        """One line: shape, activations, lr, epochs, seeds, backend."""
        alpha = f" alpha={self.alpha:g}" if self.activation == "leaky_relu" else ""
        return (f"XOR, {'-'.join(map(str, self.sizes))} ({self.activation}{alpha} hidden, "
                f"{self.output} output), lr {self.lr:g}, {self.epochs:,} epochs, "
                f"{self.seeds} seeds ({self.first_seed}-{self.first_seed + self.seeds - 1}), "
                f"backend {self.backend}")


def _quartiles(values: np.ndarray) -> list[float] | None:
    return None if len(values) == 0 else [float(q) for q in np.percentile(values, [25, 50, 75])]


@dataclass
class ArmResult:
    """An arm's outcome over the study's seeds."""

    arm: Arm
    n: int
    successes: int
    interval: tuple[float, float]
    solved_epoch_quartiles: list[float] | None
    final_loss_quartiles: list[float] | None
    diverged: int
    failures: dict[str, int]
    init_stds: list[float | None]
    seconds: float

    @property
    def rate(self) -> float:
        """successes / n."""
        return self.successes / self.n

    @classmethod
    def from_ensemble(cls, arm: Arm, result: EnsembleResult, y: np.ndarray,
                      init_stds: list[float | None], seconds: float) -> "ArmResult":
        """Summarise an ensemble's per-seed outcomes."""
        wrong = np.sum((result.predictions > 0.5) != (y > 0.5), axis=(1, 2))
        failed = ~result.solved & ~result.diverged
        failures = {"one_wrong": int(np.sum(failed & (wrong == 1))),
                    "two_wrong": int(np.sum(failed & (wrong == 2))),
                    "three_or_four_wrong": int(np.sum(failed & (wrong >= 3))),
                    "diverged": int(result.diverged.sum())}
        successes = int(result.solved.sum())
        finite = np.isfinite(result.final_loss)
        return cls(arm=arm, n=result.members, successes=successes,
                   interval=stats.wilson_interval(successes, result.members),
                   solved_epoch_quartiles=_quartiles(result.solved_epoch[result.solved]),
                   final_loss_quartiles=_quartiles(result.final_loss[finite]),
                   diverged=failures["diverged"], failures=failures, init_stds=init_stds,
                   seconds=seconds)


@dataclass
class Comparison:
    """Two arms' rates compared by Fisher's exact test (``p_holm``: Holm-adjusted over the
    study's comparisons)."""

    a: str
    b: str
    rate_a: float
    rate_b: float
    p: float
    p_holm: float
    seeds_needed: float

    def verdict(self, n: int) -> str:
        """A sentence on what the difference means."""
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
class Study:
    """The results of :func:`run_study`: per arm, and pairwise."""

    setup: XorSetup
    results: list[ArmResult]
    comparisons: list[Comparison] = field(default_factory=list)

    def table(self) -> str:
        """A fixed-width table, one row per arm."""
        header = ["arm", "solved", "rate", "95% CI", "notes", "solved by epoch (q1 / med / q3)",
                  "failures 1/2/3+ wrong, diverged", "init std by layer"]
        rows = [header]
        for r in self.results:
            epochs = ("-" if r.solved_epoch_quartiles is None else
                      " / ".join(f"{q:,.0f}" for q in r.solved_epoch_quartiles))
            f = r.failures
            rows.append([
                r.arm.name, f"{r.successes}/{r.n}", f"{r.rate:.1%}",
                f"[{r.interval[0]:.1%}, {r.interval[1]:.1%}]",
                "" if r.arm.reported_rate is None else f"{r.arm.reported_rate:.0%}",
                epochs,
                f"{f['one_wrong']}/{f['two_wrong']}/{f['three_or_four_wrong']}, {f['diverged']}",
                ", ".join("?" if s is None else f"{s:.3g}" for s in r.init_stds)])
        if all(r.arm.reported_rate is None for r in self.results):
            rows = [row[:4] + row[5:] for row in rows]
        widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
        return "\n".join("  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip()
                         for row in rows)

    def report(self) -> str:
        """The setup line, the table, and the pairwise verdicts."""
        lines = [self.setup.describe(), "", self.table(), "",
                 "failures: " + "; ".join(f"{label}: {text}"
                                          for label, text in FAILURES.values())]
        if len(self.results) == 1:
            lines += ["", f"At n = {self.setup.seeds} the 95 % interval is the measure of "
                          "precision; to compare initializers, name several and read the "
                          "pairwise tests."]
        if self.comparisons:
            lines += ["", "Pairwise (Fisher exact, two-sided; Holm-adjusted over "
                          f"{len(self.comparisons)} comparisons):"]
            lines += [f"  {c.verdict(self.setup.seeds)}" for c in self.comparisons]
        return "\n".join(lines)

    def to_dict(self) -> dict:
        """Everything, as JSON-ready Python objects."""
        def clean(value):
            if isinstance(value, float) and not np.isfinite(value):
                return None
            if isinstance(value, dict):
                return {k: clean(v) for k, v in value.items()}
            if isinstance(value, (list, tuple)):
                return [clean(v) for v in value]
            return value
        results = [{**asdict(r), "arm": {**asdict(r.arm), "name": r.arm.name}, "rate": r.rate}
                   for r in self.results]
        return clean({"setup": asdict(self.setup), "results": results,
                      "comparisons": [asdict(c) for c in self.comparisons]})

    def to_json(self) -> str:
        """:meth:`to_dict` as JSON text."""
        return json.dumps(self.to_dict(), indent=2)

    def to_csv(self) -> str:
        """One row per arm: name, settings, counts, rate and interval, quartiles."""
        out = io.StringIO()
        writer = csv.writer(out)
        writer.writerow(["arm", "init", "output_init", "shuffle", "hidden", "seeds", "successes",
                         "rate", "ci_low", "ci_high", "reported_rate", "solved_epoch_median",
                         "one_wrong", "two_wrong", "three_or_four_wrong", "diverged"])
        for r in self.results:
            median = None if r.solved_epoch_quartiles is None else r.solved_epoch_quartiles[1]
            writer.writerow([r.arm.name, r.arm.init, r.arm.output_init or "", r.arm.shuffle,
                             "-".join(map(str, self.setup.hidden)), r.n, r.successes,
                             f"{r.rate:.4f}", f"{r.interval[0]:.4f}", f"{r.interval[1]:.4f}",
                             "" if r.arm.reported_rate is None else r.arm.reported_rate,
                             "" if median is None else median, *r.failures.values()])
        return out.getvalue()


def run_study(arms: list[Arm], setup: XorSetup = XorSetup(),
              progress: bool | None = None) -> Study:
    """Train every arm on ``setup.seeds`` seeds and compare the arms.

    ``progress`` prints a line per arm to stderr; by default it does once the study has run
    for more than a second.
    """
    if not arms:
        raise ValueError("arms must hold at least one Arm, got none")
    for index, arm in enumerate(arms):
        if not isinstance(arm, Arm):
            raise TypeError(f"arms[{index}] must be an Arm, got {arm!r}")
        init.get(arm.init)  # an unknown name fails here, before any training
        if arm.output_init is not None:
            init.get(arm.output_init)
    X, y = data.xor()
    seeds = range(setup.first_seed, setup.first_seed + setup.seeds)
    started = time.perf_counter()
    results = []
    for index, arm in enumerate(arms):
        nets = [mlp(setup.sizes, activation=setup.activation, output=setup.output,
                    init=arm.init, output_init=arm.output_init, alpha=setup.alpha, seed=seed)
                for seed in seeds]
        arm_started = time.perf_counter()
        outcome = fit_ensemble(nets, X, y, epochs=setup.epochs, lr=setup.lr,
                               shuffle=arm.shuffle, backend=setup.backend)
        seconds = time.perf_counter() - arm_started
        results.append(ArmResult.from_ensemble(arm, outcome, y,
                                               [layer.init_std() for layer in nets[0].layers],
                                               seconds))
        if progress or (progress is None and time.perf_counter() - started > 1.0):
            print(f"[{index + 1}/{len(arms)}] {arm.name}: {results[-1].successes}/"
                  f"{setup.seeds} solved ({seconds:.1f} s)", file=sys.stderr)
    return Study(setup, results, compare(results))


def compare(results: list[ArmResult]) -> list[Comparison]:
    """Fisher exact tests between every pair of arms, Holm-adjusted."""
    pairs = list(itertools.combinations(results, 2))
    p_values = [stats.fisher_exact_p(a.successes, a.n, b.successes, b.n) for a, b in pairs]
    # Seeds needed at the level the family of comparisons is held to (Bonferroni's α/m, which
    # Holm's first step uses), so that the advice agrees with the Holm-adjusted verdict.
    alpha = 0.05 / max(1, len(pairs))
    return [Comparison(a.arm.name, b.arm.name, a.rate, b.rate, p, p_holm,
                       stats.seeds_needed(a.rate, b.rate, alpha=alpha))
            for (a, b), p, p_holm in zip(pairs, p_values, stats.holm(p_values))]
