"""Do seed ranges agree? The same arms trained from disjoint ranges of seeds, and per arm a
test of equal proportions across the ranges.

A rate measured on seeds 0–999 is one draw; if it is a fair one, other ranges of seeds give
rates that differ from it by sampling error only. :func:`run_seed_ranges` checks exactly that::

    >>> check = run_seed_ranges([Arm("normal")], Setup(seeds=4000), [0, 777_000, 10**7])
    >>> print(check.report())

The test is Pearson's chi-squared test of equal proportions
(:func:`tinynet.stats.equal_proportions_p`); a small p says the ranges differ by more than
chance, which for a deterministic trainer would point at a bug, not at luck.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace

from .. import stats
from ..text import table
from ..validation import check_instance, check_seed, check_sequence
from .arms import DEFAULT_SETUP, Arm, Setup
from .report import Study, write_csv
from .sweep import run_sweep

__all__ = ["SeedRanges", "run_seed_ranges", "LEVEL"]

LEVEL = 0.05
"""The significance level at which the report calls the ranges different."""


@dataclass
class SeedRanges:
    """Studies of the same arms and setup, one per seed range (in the order given)."""

    studies: list[Study]

    def __post_init__(self) -> None:
        self.studies = check_sequence("studies", self.studies, Study, "tinynet.xor Study")
        if len(self.studies) < 2:
            raise ValueError(f"studies must hold at least 2 seed ranges, got {len(self.studies)}")

    @property
    def arm_names(self) -> list[str]:
        """The arms' names, as every range has them."""
        return [r.arm.name for r in self.studies[0].results]

    def p_values(self) -> list[float]:
        """Per arm, the p-value of the test that every range has the same success rate."""
        return [stats.equal_proportions_p([study.results[a].successes for study in self.studies],
                                          [study.results[a].n for study in self.studies])
                for a in range(len(self.arm_names))]

    def table(self) -> str:
        """One row per arm and range: seeds, solved, rate, 95 % interval."""
        rows = [["arm", "seeds", "solved", "rate", "95% CI"]]
        for a, name in enumerate(self.arm_names):
            for study in self.studies:
                r, first = study.results[a], study.setup.first_seed
                rows.append([name, f"{first:,}-{first + study.setup.seeds - 1:,}",
                             f"{r.successes:,}/{r.n:,}", f"{r.rate:.1%}",
                             f"[{r.interval[0]:.1%}, {r.interval[1]:.1%}]"])
                name = ""
        return table(rows)

    def report(self) -> str:
        """The setup, the table, and per arm the test's verdict."""
        setup = self.studies[0].setup
        lines = [f"{setup.describe(seeds=False, shape=self.studies[0].shape)}; "
                 f"{len(self.studies)} seed ranges of "
                 f"{setup.seeds:,} seeds", "", self.table(), "",
                 f"Test of equal proportions across the ranges (Pearson chi-squared, "
                 f"{len(self.studies) - 1} df):"]
        for name, p in zip(self.arm_names, self.p_values()):
            verdict = ("the ranges differ" if p < LEVEL else "the ranges agree")
            lines.append(f"  {name}: p = {p:.3g}: {verdict} at the {LEVEL:.0%} level")
        return "\n".join(lines)

    def to_dict(self) -> dict:
        """The ranges' studies (:meth:`Study.to_dict`) and the per-arm p-values."""
        return {"studies": [study.to_dict() for study in self.studies],
                "equal_proportions": [{"arm": name, "p": p}
                                      for name, p in zip(self.arm_names, self.p_values())]}

    def to_json(self) -> str:
        """:meth:`to_dict` as JSON text."""
        return json.dumps(self.to_dict(), indent=2)

    def to_csv(self) -> str:
        """Every range's rows (:meth:`Study.csv_rows`) under one header."""
        return write_csv(row for study in self.studies for row in study.csv_rows())

    def __repr__(self) -> str:
        firsts = ", ".join(f"{study.setup.first_seed:,}" for study in self.studies)
        return (f"SeedRanges({self.studies[0].setup.seeds:,} seeds from each of {firsts}; "
                f"arms: {', '.join(self.arm_names)})")


def run_seed_ranges(arms: Sequence[Arm], setup: Setup = DEFAULT_SETUP,
                    first_seeds: Sequence[int] = (0, 777_000, 10_000_000),
                    progress: bool = False, executor: object | None = None,
                    block_seeds: int | None = None) -> SeedRanges:
    """Run ``arms`` on ``setup`` from ``setup.seeds`` seeds starting at each of
    ``first_seeds`` (``setup.first_seed`` is not used). The ranges must not overlap.
    ``progress`` (off by default: nothing printed), ``executor`` and ``block_seeds`` are as
    for :func:`~tinynet.xor.run_study`."""
    check_instance("setup", setup, Setup, "a tinynet.xor Setup")
    if isinstance(first_seeds, (str, bytes)) or not isinstance(first_seeds, Iterable):
        raise TypeError(f"first_seeds must be a sequence of seeds, got {first_seeds!r}")
    firsts = [check_seed(f"first_seeds[{i}]", first) for i, first in enumerate(first_seeds)]
    if len(firsts) < 2:
        raise ValueError(f"first_seeds must hold at least 2 seeds, got {firsts}")
    ordered = sorted(firsts)
    for low, high in zip(ordered, ordered[1:]):
        if high - low < setup.seeds:
            raise ValueError(f"first_seeds {low} and {high} give overlapping ranges of "
                             f"{setup.seeds} seeds; expected first seeds at least "
                             f"{setup.seeds} apart")
    setups = [replace(setup, first_seed=first) for first in firsts]  # each checks its last seed
    return SeedRanges(run_sweep(arms, setups, progress, executor=executor,
                                block_seeds=block_seeds).studies)
