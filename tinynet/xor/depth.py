"""The depth study: where initialization decides.

On XOR's 2-2-2-1 every fan_in is 2 and every initializer gives about the same odds. Stack
hidden layers of width 16 instead: at initialisation each layer multiplies the second moment of
the signal by fan_in · Var(w) · E[φ(z)²] / E[z²] (ReLU: 8 for N(0, 1), 0.0008 for
N(0, 0.01²), 1 for He, 1/2 for LeCun), and which initializers still train changes with depth
(the committed run is in docs/depth.md, "Where initialization decides").
:func:`run_depth_study` trains every initializer of :func:`depth_arms` at every depth of
:data:`DEPTHS` on the setup's task (default :data:`DEPTH_SETUP`: circles, minibatch SGD) and
puts beside each success rate the second moment that :func:`tinynet.diagnostics.propagate`
predicts for the last hidden layer at initialisation::

    >>> study = run_depth_study(depths=(1, 4, 16), seeds=20)
    >>> print(study.table())
    >>> tinynet.xor.figures.depth(study, "depth.png")

A :class:`DepthStudy` holds numbers only (its sweep of studies, with the trained networks, is
kept in memory as ``sweep``), so that it can be written to JSON and read back whole.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field, fields, replace

from .. import diagnostics
from ..activations import ACTIVATIONS
from ..text import table
from ..validation import check_choice, check_int, check_instance, check_sequence
from .arms import Arm, Setup, build_network, setup_dict, spec_name
from .report import finite_or_none
from .sweep import Sweep, run_sweep
from .task import Task

__all__ = ["DEPTHS", "WIDTH", "DEPTH_SETUP", "QUICK_DEPTHS", "QUICK_SETUP", "depth_arms",
           "DepthStudy", "run_depth_study", "last_hidden_moment"]

DEPTHS = (1, 2, 4, 8, 16, 32)
"""Hidden layers per network in the depth study."""

WIDTH = 16
"""Units per hidden layer in the depth study."""

DEPTH_SETUP = Setup(task=Task("circles", n=128, accuracy=0.95), hidden=(WIDTH,),
                    activation="relu", lr=0.1, epochs=300, batch_size=32, seeds=1024)
"""The depth study's defaults: two concentric circles (128 samples, noise 0.05; success:
training accuracy >= 95 %), ReLU hidden layers of 16 and a sigmoid output, minibatch SGD on the
MSE loss (batches of 32, lr 0.1, 300 epochs: 1,200 steps), 1,024 seeds per cell: enough that
the 95 % interval of a rate near 50 % is about ±3 points, so that neighbouring cells can be told
apart. 1,024, not 1,000: the compiled ensemble trains blocks of 64 SIMD lanes, so 1,000 seeds
take as long as 1,024."""

QUICK_DEPTHS = (1, 8)
"""The depths of the quick setting."""

QUICK_SETUP = replace(DEPTH_SETUP, seeds=64, epochs=150, lr=0.2)
"""The quick setting (with :data:`QUICK_DEPTHS`), for tests and a class: half the steps at
twice the learning rate, one block of 64 seeds; about 15 s on 2 cores."""


def depth_arms(activation: str = "relu") -> list[Arm]:
    """The initializers the depth study compares, every layer drawn by the same one and the
    samples shuffled every epoch: N(0, 1), N(0, 0.01²), LeCun, Xavier, He (He-leaky for
    ``leaky_relu``) and orthogonal."""
    check_choice("activation", activation, ACTIVATIONS)
    he = "he_leaky" if activation == "leaky_relu" else "he_normal"
    return [Arm("normal", shuffle=True, label="N(0,1)"),
            Arm("normal(std=0.01)", shuffle=True, label="N(0,0.01²)"),
            Arm("lecun_normal", shuffle=True, label="LeCun"),
            Arm("xavier_normal", shuffle=True, label="Xavier"),
            Arm(he, shuffle=True, label="He-leaky" if he == "he_leaky" else "He"),
            Arm("orthogonal", shuffle=True, label="orthogonal")]


def last_hidden_moment(setup: Setup, arm: Arm) -> tuple[float, float]:
    """E[a²] of the last hidden layer at initialisation on the task's training inputs, as
    :func:`tinynet.diagnostics.propagate` predicts it from the input's second moment and the
    initializers' variances alone, and as measured on the network of the setup's first seed:
    (predicted, measured). inf where the signal overflows."""
    _check_hidden(setup)
    X, _ = setup.task.training_data()
    report = diagnostics.propagate(build_network(setup, arm, setup.first_seed), X)
    last_hidden = report.layers[-2]
    return last_hidden.a.predicted, last_hidden.a.measured


def _check_hidden(setup: Setup) -> None:
    if not setup.hidden:
        raise ValueError("setup.hidden must give at least one hidden layer, whose width the "
                         "depth study uses, such as (16,); got ()")


@dataclass
class DepthStudy:
    """Success rates against depth, per initializer, with the second moments beside them.

    Indexed ``[arm][depth]``: ``successes`` out of ``n`` seeds, their Wilson 95 % ``intervals``,
    the last hidden layer's predicted and measured E[a²] at initialisation (``moments``,
    ``measured``), and the median held-out accuracy of the successful seeds (None where no
    seed succeeded). ``setup`` is the setup of depth 1 (hidden layers (``width``,)).
    ``sweep``, the studies themselves with their trained networks, is kept in memory only.
    """

    setup: Setup
    depths: list[int]
    arms: list[str]
    n: int
    successes: list[list[int]]
    intervals: list[list[tuple[float, float]]]
    moments: list[list[float]]
    measured: list[list[float]]
    held_out: list[list[float | None]]
    sweep: Sweep | None = field(default=None, repr=False, compare=False)

    @property
    def width(self) -> int:
        """Units per hidden layer."""
        return self.setup.hidden[0]

    def rates(self, arm: str) -> list[float]:
        """The success rate of ``arm`` (its name) at every depth."""
        return [k / self.n for k in self.successes[self._index(arm)]]

    def _index(self, arm: str) -> int:
        if arm not in self.arms:
            raise ValueError(f"arm must be one of this study's arms, {self.arms}; got {arm!r}")
        return self.arms.index(arm)

    def table(self) -> str:
        """Depth x initializer: 'rate [low, high]' (95 %), then the predicted E[a²] of the last
        hidden layer at initialisation, as a depth x initializer matrix of its own."""
        rates = [["depth", *self.arms]]
        moments = [["depth", *self.arms]]
        for d, depth in enumerate(self.depths):
            rates.append([str(depth), *(
                f"{self.successes[a][d] / self.n:.0%} [{self.intervals[a][d][0]:.0%}, "
                f"{self.intervals[a][d][1]:.0%}]" for a in range(len(self.arms)))])
            moments.append([str(depth), *(f"{self.moments[a][d]:.3g}"
                                          for a in range(len(self.arms)))])
        return (f"success rate over {self.n} seeds [95 % interval]:\n{table(rates)}\n\n"
                f"predicted E[a²] of the last hidden layer at initialisation (the input's "
                f"E[x²] is {self.input_moment:.3g}):\n{table(moments)}")

    @property
    def input_moment(self) -> float:
        """E[x²] of the task's training inputs."""
        X, _ = self.setup.task.training_data()
        return float((X * X).mean())

    def report(self) -> str:
        """The setup line and :meth:`table`."""
        head = self.setup.describe(shape=f"2-{self.width}x(L hidden)-1")
        return f"{head}, depths L = {', '.join(map(str, self.depths))}\n\n{self.table()}"

    def to_dict(self) -> dict:
        """Everything but ``sweep``, as JSON-ready Python objects (inf as None)."""
        return finite_or_none({f.name: getattr(self, f.name) for f in fields(self)
                               if f.name != "sweep"} | {"setup": setup_dict(self.setup)})

    def to_json(self) -> str:
        """:meth:`to_dict` as JSON text."""
        return json.dumps(self.to_dict(), indent=2)

    @classmethod
    def from_dict(cls, values: dict) -> "DepthStudy":
        """The study that :meth:`to_dict` wrote as ``values`` (None moments read as inf)."""
        values = dict(values)
        values["setup"] = Setup.from_dict(values["setup"])
        values["intervals"] = [[tuple(pair) for pair in row] for row in values["intervals"]]
        for name in ("moments", "measured"):
            values[name] = [[float("inf") if v is None else v for v in row]
                            for row in values[name]]
        return cls(**values)

    def __repr__(self) -> str:
        return (f"DepthStudy(width {self.width}, depths {self.depths}, {self.n} seeds, "
                f"arms: {', '.join(self.arms)})")


def run_depth_study(setup: Setup = DEPTH_SETUP, depths: Sequence[int] = DEPTHS,
                    arms: Sequence[Arm] | None = None, seeds: int | None = None,
                    progress: bool = False, executor: object | None = None,
                    block_seeds: int | None = None) -> DepthStudy:
    """Train ``arms`` (default :func:`depth_arms` of the setup's activation) on networks of
    ``depths`` hidden layers as wide as ``setup.hidden[0]``, ``seeds`` seeds each (default:
    the setup's), and measure each cell's success rate and second moments.

    The studies run on the compiled ensemble path, one per depth (:func:`run_sweep`);
    ``progress`` (off by default: nothing printed), ``executor`` and ``block_seeds`` are as
    for :func:`~tinynet.xor.run_study`.
    """
    check_instance("setup", setup, Setup, "a tinynet.xor Setup")
    _check_hidden(setup)
    if seeds is not None:
        setup = replace(setup, seeds=seeds)
    depths = [check_int(f"depths[{i}]", depth, minimum=1) for i, depth in
              enumerate(check_sequence("depths", depths, int, "whole numbers of hidden layers"))]
    arms = depth_arms(spec_name(setup.activation)) if arms is None else \
        check_sequence("arms", arms, Arm, "tinynet.xor Arm")
    for arm in arms:  # the study's depth and learning rate are the setup's, per cell
        if arm.residual is not None:
            raise ValueError(f"arm {arm.name!r} has residual blocks, whose second moments "
                             "tinynet.diagnostics.propagate does not predict; the residual "
                             "depth study takes them: tinynet.xor.run_residual_depth_study")
        for name in ("hidden", "lr"):
            if getattr(arm, name) is not None:
                raise ValueError(f"arm {arm.name!r} gives its own {name}; the depth study sets "
                                 f"it for every arm (expected {name}=None)")
    base = replace(setup, hidden=(setup.hidden[0],))
    setups = [replace(base, hidden=(base.hidden[0],) * depth) for depth in depths]
    sweep = run_sweep(arms, setups, progress, executor=executor, block_seeds=block_seeds)
    moments = [[last_hidden_moment(s, arm) for s in setups] for arm in arms]
    results = [[study.results[a] for study in sweep.studies] for a in range(len(arms))]
    return DepthStudy(
        setup=base, depths=depths, arms=[arm.name for arm in arms], n=setup.seeds,
        successes=[[r.successes for r in row] for row in results],
        intervals=[[r.interval for r in row] for row in results],
        moments=[[m[0] for m in row] for row in moments],
        measured=[[m[1] for m in row] for row in moments],
        held_out=[[None if r.held_out_quartiles is None else r.held_out_quartiles[1]
                   for r in row] for row in results],
        sweep=sweep)
