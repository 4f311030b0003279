"""A sweep: the same arms studied on several setups (usually shapes), read as a matrix of
success rates, one row per setup and one column per arm::

    >>> setups = [Setup(hidden=(width,), seeds=100) for width in (2, 4, 8)]
    >>> print(run_sweep([Arm("normal"), Arm("he_leaky")], setups).table())
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass

from ..text import table
from ..validation import check_sequence
from .arms import Arm, Setup
from .bench import check_arms, check_study_memory, run_study
from .report import Study, write_csv

__all__ = ["Sweep", "run_sweep"]


@dataclass
class Sweep:
    """Studies of the same arms, one per setup; rows are named by the setup's shape."""

    studies: list[Study]

    def __post_init__(self) -> None:
        self.studies = check_sequence("studies", self.studies, Study, "tinynet.xor Study")
        for index, study in enumerate(self.studies):
            if _arm_names(study) != self.arm_names:
                raise ValueError(f"studies[{index}] has the arms {_arm_names(study)}, but "
                                 f"studies[0] has {self.arm_names}: a sweep's studies share "
                                 "their arms")

    @property
    def arm_names(self) -> list[str]:
        """The arms' names, as every study has them."""
        return _arm_names(self.studies[0])

    def table(self) -> str:
        """Rates as a shape x arm matrix: 'rate [low, high]' (the 95 % interval)."""
        rows = [["shape", *self.arm_names]]
        for study in self.studies:
            rows.append([study.setup.shape,
                         *(f"{r.rate:.0%} [{r.interval[0]:.0%}, {r.interval[1]:.0%}]"
                           for r in study.results)])
        return table(rows)

    def to_dict(self) -> dict:
        """Every study's :meth:`Study.to_dict`, under ``"studies"``."""
        return {"studies": [study.to_dict() for study in self.studies]}

    def to_json(self) -> str:
        """:meth:`to_dict` as JSON text."""
        return json.dumps(self.to_dict(), indent=2)

    def to_csv(self) -> str:
        """Every study's rows (:meth:`Study.csv_rows`) under one header: a row per setup and
        arm."""
        return write_csv(row for study in self.studies for row in study.csv_rows())

    def __repr__(self) -> str:
        shapes = ", ".join(study.setup.shape for study in self.studies)
        return f"Sweep(shapes: {shapes}; arms: {', '.join(self.arm_names)})"


def _arm_names(study: Study) -> list[str]:
    return [r.arm.name for r in study.results]


def run_sweep(arms: Sequence[Arm], setups: Sequence[Setup],
              progress: bool = False, record_every: int | None = None,
              executor: object | None = None, block_seeds: int | None = None,
              against: int | None = None) -> Sweep:
    """:func:`~tinynet.xor.run_study` of ``arms`` on each of ``setups``, in order (on
    ``executor`` in blocks of ``block_seeds``, if given; with ``against``, each arm compared
    with that one; with ``progress=True``, each study's progress on stderr; quiet by
    default)."""
    setups = check_sequence("setups", setups, Setup, "tinynet.xor Setup")
    arms = check_sequence("arms", arms, Arm, "tinynet.xor Arm")
    if len({setup.hidden for setup in setups}) > 1:
        for arm in arms:
            if arm.hidden is not None:
                raise ValueError(f"arm {arm.name!r} gives its own hidden layers {arm.hidden}, "
                                 "but the sweep's setups differ in theirs; a sweep over shapes "
                                 "needs arms without hidden=")
    check_arms(setups, arms)                        # nothing trains that a later one refuses
    check_study_memory(setups, arms, record_every)  # every study is kept
    studies = []
    for setup in setups:  # a loop, not a list comprehension: no frame of its own (Python 3.11)
        studies.append(run_study(arms, setup, progress, record_every, executor, block_seeds,
                                 against))
    return Sweep(studies)
