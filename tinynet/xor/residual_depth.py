"""The residual depth study: what makes a deep stack learn, and how much initialization still
matters once it does.

Plain stacks of ReLU layers stop learning with depth for every initializer but He
(:mod:`tinynet.xor.depth`). Here the same layers are grouped into residual blocks of two
(:func:`tinynet.xor.arms.network_sizes`): x + F(x) (He et al. 2016), pre-norm x + F(LN(x))
(Xiong et al. 2020), post-norm LN(x + F(x)) (the original Transformer's), ReZero's x + α·F(x)
with α trained from 0 (Bachlechner et al. 2020) and Fixup (Zhang et al. 2019), beside the plain
stack, at 2 to 128 layers of 16 after the first, with He's and Xavier's initializers and, for
the normalized blocks, with and without a learning-rate warmup. Every arm of a depth trains on
the same seeds, so that two arms' rates are compared by Fisher's exact test
(:meth:`ResidualDepthStudy.comparisons`, Holm over the family a sentence belongs to)::

    >>> study = run_residual_depth_study(depths=(4, 16), seeds={4: 64, 16: 64})  # minutes
    >>> print(study.table())

The task is two interleaved spirals (:data:`RESIDUAL_DEPTH_SETUP`): two-dimensional, so a run
of a thousand seeds takes minutes at small depths, and one that needs depth in the study's
2,000 steps: a plain He stack of three hidden layers of 16 (2 layers after the first) learns it
from few seeds, one of five from most (the study's first two columns), so the deep stacks are
asked to learn something depth is for, not only to survive.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields, replace

from .. import stats
from ..text import table
from ..validation import check_instance, check_int, check_sequence
from .arms import Arm, Setup, arm_dict, setup_dict
from .report import Comparison
from .sweep import Sweep, run_sweep
from .task import Task

__all__ = ["RESIDUAL_DEPTHS", "RESIDUAL_DEPTH_SETUP", "RESIDUAL_SEEDS", "WARMUP",
           "residual_depth_arms", "ResidualDepthStudy", "run_residual_depth_study"]

RESIDUAL_DEPTHS = (2, 4, 8, 16, 32, 64, 128)
"""Layers of 16 after the first: a plain stack's hidden layers less one, a residual stack's
blocks of two."""

RESIDUAL_DEPTH_SETUP = Setup(task=Task("spirals", n=200, accuracy=0.95), hidden=(16,),
                             activation="relu", lr=0.1, epochs=200, batch_size=20, seeds=1000)
"""Two interleaved spirals (200 samples, noise 0.05; success: training accuracy >= 95 %),
ReLU layers of 16 and a sigmoid output, minibatch SGD on the MSE loss (batches of 20, lr 0.1,
200 epochs: 2,000 steps), shuffled."""

RESIDUAL_SEEDS = {2: 1000, 4: 1000, 8: 1000, 16: 1000, 32: 200, 64: 200, 128: 200}
"""Seeds per arm at each depth: 1,000 up to 16 layers, where a depth's twelve arms took 4 to
23 minutes on 2 cores; 200 from 32 layers on, where at 1,000 seeds they would take about 40
minutes, 1.5 hours and 3 hours (each cell's seconds are in the study's JSON)."""

WARMUP = 400
"""The warmup arms' linear warmup, in steps (a fifth of the run), then the constant rate."""


def residual_depth_arms() -> list[Arm]:
    """The study's arms: the plain stack, x + F(x), pre-norm and post-norm, each from He's and
    Xavier's initializers; ReZero from He's; Fixup from its own; pre-norm and post-norm from
    He's with :data:`WARMUP` steps of warmup. Every layer is drawn by the arm's initializer but
    Fixup's (its branch layers by ``fixup(...)``, the last of each and the output layer at 0:
    :func:`tinynet.mlp`), and the samples are shuffled."""
    arms = []
    for kind, norm in ((None, None), ("standard", None), ("standard", "pre"),
                       ("standard", "post")):
        for init, label in (("he_normal", "He"), ("xavier_normal", "Xavier")):
            name = {None: "plain", "pre": "pre-norm", "post": "post-norm"}.get(norm) \
                if kind is None or norm else "x + F(x)"
            blocks = {} if kind is None else dict(residual=kind, norm=norm, branch=2)
            arms.append(Arm(init, shuffle=True, label=f"{name}, {label}", **blocks))
    arms += [Arm("he_normal", shuffle=True, residual="rezero", branch=2, label="ReZero, He"),
             Arm("he_normal", shuffle=True, residual="fixup", branch=2, label="Fixup")]
    for norm in ("pre", "post"):
        arms.append(Arm("he_normal", shuffle=True, residual="standard", norm=norm, branch=2,
                        warmup=WARMUP, label=f"{norm}-norm, He, warmup"))
    return arms


@dataclass
class ResidualDepthStudy:
    """Success rates against depth, per arm: ``successes[arm][depth]`` out of ``n[depth]``
    seeds, their Wilson 95 % ``intervals``, and each cell's training ``seconds``. ``setup`` is
    the study's at depth 0 (hidden ``(width,)``); ``arms`` the arms' :func:`~tinynet.xor.
    arms.arm_dict`. ``sweep``, the studies with their trained networks, is kept in memory
    only."""

    setup: Setup
    depths: list[int]
    arms: list[dict]
    n: list[int]
    successes: list[list[int]]
    intervals: list[list[tuple[float, float]]]
    seconds: list[list[float]]
    sweep: Sweep | None = field(default=None, repr=False, compare=False)

    @property
    def names(self) -> list[str]:
        """The arms' names."""
        return [arm["name"] for arm in self.arms]

    def cell(self, arm: str, depth: int) -> tuple[int, int]:
        """``(successes, n)`` of ``arm`` (its name) at ``depth``."""
        a, d = self._index(arm), self._depth(depth)
        return self.successes[a][d], self.n[d]

    def _index(self, arm: str) -> int:
        if arm not in self.names:
            raise ValueError(f"arm must be one of this study's arms, {self.names}; got {arm!r}")
        return self.names.index(arm)

    def _depth(self, depth: int) -> int:
        if depth not in self.depths:
            raise ValueError(f"depth must be one of this study's, {self.depths}; got {depth!r}")
        return self.depths.index(depth)

    def comparisons(self, depth: int, pairs: Sequence[tuple[str, str]]) -> list[Comparison]:
        """The ``pairs`` of arms (names) at ``depth``, each by Fisher's exact test, Holm over
        the pairs given (the family a sentence speaks for)."""
        cells = [(self.cell(a, depth), self.cell(b, depth)) for a, b in pairs]
        p = [stats.fisher_exact_p(ka, n, kb, n) for (ka, n), (kb, _) in cells]
        return [Comparison(a, b, ka / n, kb / n, p_one, p_holm,
                           stats.seeds_needed(ka / n, kb / n, alpha=0.05 / len(pairs)))
                for (a, b), ((ka, n), (kb, _)), p_one, p_holm
                in zip(pairs, cells, p, stats.holm(p))]

    def all_pairs(self, depth: int) -> list[Comparison]:
        """Every pair of arms at ``depth``, Holm over all of them."""
        return self.comparisons(depth, list(itertools.combinations(self.names, 2)))

    def table(self) -> str:
        """Depth x arm: 'rate [low, high]' (95 %)."""
        rows = [["arm", *(f"{d} ({n:,})" for d, n in zip(self.depths, self.n))]]
        for a, name in enumerate(self.names):
            rows.append([name, *(f"{k / n:.0%} [{low:.0%}, {high:.0%}]" for k, n, (low, high)
                                 in zip(self.successes[a], self.n, self.intervals[a]))])
        return f"success rate over the seeds [95 % interval], by layers (seeds):\n{table(rows)}"

    def to_dict(self) -> dict:
        """Everything but ``sweep``, as JSON-ready Python objects."""
        return {f.name: getattr(self, f.name) for f in fields(self) if f.name != "sweep"} | {
            "setup": setup_dict(self.setup)}

    def to_json(self) -> str:
        """:meth:`to_dict` as JSON text."""
        return json.dumps(self.to_dict(), indent=2)

    @classmethod
    def from_dict(cls, values: dict) -> "ResidualDepthStudy":
        """The study that :meth:`to_dict` wrote as ``values``."""
        values = dict(values)
        values["setup"] = Setup.from_dict(values["setup"])
        values["intervals"] = [[tuple(pair) for pair in row] for row in values["intervals"]]
        return cls(**values)

    def __repr__(self) -> str:
        return (f"ResidualDepthStudy(depths {self.depths}, seeds {self.n}, "
                f"{len(self.arms)} arms)")


def run_residual_depth_study(setup: Setup = RESIDUAL_DEPTH_SETUP,
                             depths: Sequence[int] = RESIDUAL_DEPTHS,
                             arms: Sequence[Arm] | None = None,
                             seeds: Mapping[int, int] | None = None, progress: bool = False,
                             executor: object | None = None,
                             block_seeds: int | None = None) -> ResidualDepthStudy:
    """Train ``arms`` (default :func:`residual_depth_arms`) at every one of ``depths`` (layers
    of ``setup.hidden[0]`` after the first), ``seeds[depth]`` seeds each (default
    :data:`RESIDUAL_SEEDS`, else the setup's), on the compiled ensemble path (one study per
    depth: :func:`~tinynet.xor.sweep.run_sweep`); ``progress``, ``executor`` and
    ``block_seeds`` as for :func:`~tinynet.xor.run_study` (on a Dask cluster, bit for bit the
    same)."""
    check_instance("setup", setup, Setup, "a tinynet.xor Setup")
    depths = [check_int(f"depths[{i}]", depth, minimum=1) for i, depth in
              enumerate(check_sequence("depths", depths, int, "whole numbers of layers"))]
    arms = residual_depth_arms() if arms is None else \
        check_sequence("arms", arms, Arm, "tinynet.xor Arm")
    for arm in arms:
        if arm.hidden is not None:
            raise ValueError(f"arm {arm.name!r} gives its own hidden layers; the study sets "
                             "them at every depth (expected hidden=None)")
    seeds = RESIDUAL_SEEDS if seeds is None else seeds
    width = setup.hidden[0]
    setups = [replace(setup, hidden=(width,) * (depth + 1),
                      seeds=check_int(f"seeds[{depth}]", seeds.get(depth, setup.seeds),
                                      minimum=1)) for depth in depths]
    sweep = run_sweep(arms, setups, progress, executor=executor, block_seeds=block_seeds)
    results = [[study.results[a] for study in sweep.studies] for a in range(len(arms))]
    return ResidualDepthStudy(
        setup=replace(setup, hidden=(width,)), depths=depths,
        arms=[arm_dict(arm) for arm in arms], n=[s.seeds for s in setups],
        successes=[[r.successes for r in row] for row in results],
        intervals=[[tuple(r.interval) for r in row] for row in results],
        seconds=[[r.seconds for r in row] for row in results], sweep=sweep)
