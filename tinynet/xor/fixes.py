"""What fixes 99mlp: the notes' network against one change at a time, each at its best
learning rate.

The baseline is the notes' network as the notes describe it (2-2-2-1, N(0,1) weights, zero
biases, MSE, per-sample SGD at lr 0.01 for 20,000 epochs, the samples in data order). Each of
:data:`CHANGES` changes one thing: the loss, the optimizer, the learning rate, the width, the
initializer or the order of the samples. A change that brings its own step size (a loss, an
optimizer, or the learning rate itself) is *tuned*: it runs at the learning rate of
:data:`LEARNING_RATES` under which it solves most seeds (:func:`run_lr_sweep`,
:func:`best_lr`), so that it is not judged at a step size chosen for plain SGD (the pick is
a draw too: neighbouring rates often solve about as many seeds). The others keep the
baseline's 0.01. Then the best change and the best change that can go with it are tried
together (:func:`best_pair`, :func:`combine`), tuned again.

    >>> sweep = run_lr_sweep(change("adam"), Setup(seeds=1000))
    >>> lr = best_lr(change("adam"), sweep)
    >>> study = run_study([BASELINE, change("adam").arm(lr)], Setup(seeds=10_000), against=0)

``examples/fixes.py`` runs the whole design (every sweep at 1,000 seeds a point, every arm at
10,000 seeds) and docs/fixes.md quotes it; :data:`CHOSEN_LRS` and :data:`CHOSEN_PAIR` hold what
its committed run chose, so that ``--preset fixes`` (:func:`fixes_arms`) trains that design
at any number of seeds, and a test keeps them equal to the committed run.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from ..validation import check_choice
from .arms import DEFAULT_SETUP, Arm, Setup
from .bench import run_study
from .report import Study

__all__ = ["LEARNING_RATES", "BASELINE", "Change", "CHANGES", "change", "combine", "run_lr_sweep",
           "best_lr", "most_solved", "best_pair", "fixes_arms", "CHOSEN_LRS", "CHOSEN_PAIR"]

LEARNING_RATES = (0.001, 0.003, 0.01, 0.03, 0.1, 0.3)
"""The learning rates a tuned change is tried at."""

BASELINE = Arm("normal", label="the notes' network")
"""The notes' first run on the default setup: N(0,1) weights, MSE, SGD at the setup's lr."""


@dataclass(frozen=True)
class Change:
    """One thing changed in the baseline: ``settings`` are the :class:`Arm` fields it sets.
    ``tuned``: it runs at its best learning rate, among ``rates`` (default: all of
    :data:`LEARNING_RATES`), not the baseline's."""

    name: str
    label: str
    settings: Mapping[str, object] = field(default_factory=dict)
    tuned: bool = False
    rates: tuple[float, ...] = LEARNING_RATES

    def arm(self, lr: float | None = None) -> Arm:
        """The baseline with this change, at learning rate ``lr`` (None: the setup's; a tuned
        change needs one)."""
        if self.tuned and lr is None:
            raise ValueError(f"change {self.name!r} runs at its own learning rate; give lr")
        if not self.tuned and lr is not None:
            raise ValueError(f"change {self.name!r} keeps the baseline's learning rate; "
                             f"expected lr=None, got {lr!r}")
        suffix = "" if lr is None else f", lr {lr:g}"
        return Arm(**{"init": BASELINE.init, **self.settings}, lr=lr,
                   label=self.label + suffix)

    @property
    def owns(self) -> frozenset[str]:
        """What it decides: its settings, and the learning rate if it is only that."""
        return frozenset(self.settings) | ({"lr"} if self.tuned and not self.settings else
                                           frozenset())

    def __repr__(self) -> str:
        return f"Change({self.name!r}: {self.label})"


CHANGES = (
    Change("bce", "binary cross-entropy", {"loss": "bce"}, tuned=True),
    Change("momentum", "momentum 0.9", {"optimizer": "momentum(momentum=0.9)"}, tuned=True),
    Change("adam", "Adam", {"optimizer": "adam"}, tuned=True),
    Change("lr", "a larger learning rate", tuned=True,
           rates=tuple(lr for lr in LEARNING_RATES if lr > DEFAULT_SETUP.lr)),
    Change("wider", "2-3-3-1", {"hidden": (3, 3)}),
    Change("he_xavier", "He-leaky hidden, Xavier output",
           {"init": "he_leaky", "output_init": "xavier_normal"}),
    Change("shuffle", "shuffled epochs", {"shuffle": True}),
)
"""The changes tried one at a time, in the order docs/fixes.md lists them."""


def change(name: str) -> Change:
    """The change of :data:`CHANGES` called ``name``."""
    by_name = {c.name: c for c in CHANGES}
    return by_name[check_choice("change", name, by_name)]


def combine(a: Change, b: Change) -> Change:
    """Changes ``a`` and ``b`` together, tuned if either is (over the learning rates both
    allow: a larger learning rate stays larger). Two
    changes that decide the same thing (two optimizers; a learning rate and a change tuned
    anyway) cannot be combined."""
    if a.owns & b.owns or (a.tuned and b.tuned and "lr" in a.owns | b.owns):
        raise ValueError(f"changes {a.name!r} and {b.name!r} both decide "
                         f"{', '.join(sorted(a.owns & b.owns) or ['the learning rate'])}; "
                         "they cannot be combined")
    return Change(f"{a.name}+{b.name}", f"{a.label} + {b.label}", {**a.settings, **b.settings},
                  tuned=a.tuned or b.tuned,
                  rates=tuple(lr for lr in a.rates if lr in b.rates))


def run_lr_sweep(tuned: Change, setup: Setup, progress: bool = False) -> Study:
    """``tuned`` at every learning rate of its ``rates``, on ``setup``'s seeds: one arm per
    rate (each compared pairwise, as :func:`~tinynet.xor.run_study` does; with
    ``progress=True``, progress on stderr, else nothing printed)."""
    if not tuned.tuned:
        raise ValueError(f"change {tuned.name!r} keeps the baseline's learning rate; only a "
                         "tuned change is swept")
    return run_study([tuned.arm(lr) for lr in tuned.rates], setup, progress)


def best_lr(tuned: Change, sweep: Study) -> float:
    """The learning rate under which ``tuned`` solved most seeds in ``sweep`` (of
    :func:`run_lr_sweep`; :func:`most_solved`)."""
    rates = [r.arm.lr for r in sweep.results]
    if rates != list(tuned.rates):
        raise ValueError(f"the sweep's learning rates {rates} are not those of change "
                         f"{tuned.name!r}, {list(tuned.rates)}")
    return most_solved(rates, [r.successes for r in sweep.results])


def most_solved(rates: list[float], successes: list[int]) -> float:
    """The rate of ``rates`` with the most ``successes``; a tie goes to the smaller rate."""
    return min(zip(rates, successes), key=lambda pair: (-pair[1], pair[0]))[0]


def best_pair(rates: dict[str, float]) -> tuple[str, str]:
    """The change with the highest success rate in ``rates`` (by change name) and the best of
    those that can be combined with it (:func:`combine`)."""
    ranked = sorted(rates, key=lambda name: -rates[name])
    first = change(ranked[0])
    for name in ranked[1:]:
        try:
            combine(first, change(name))
        except ValueError:
            continue
        return first.name, name
    raise ValueError(f"no change in {ranked} can be combined with {first.name!r}")


CHOSEN_LRS = {"bce": 0.03, "momentum": 0.01, "adam": 0.01, "lr": 0.03, "adam+wider": 0.01}
"""The learning rate each tuned change ran at in the committed run of ``examples/fixes.py``
(the best of its sweep, :func:`best_lr`); ``tests/test_fixes.py`` checks them against it."""

CHOSEN_PAIR = ("adam", "wider")
"""The two changes the committed run tried together (:func:`best_pair`)."""


def fixes_arms(lrs: dict[str, float] | None = None,
               pair: tuple[str, str] | None = None) -> list[Arm]:
    """The design's arms: :data:`BASELINE`, every change of :data:`CHANGES` (the tuned ones
    at ``lrs[name]``), and the ``pair`` together (at ``lrs["a+b"]`` if tuned). Defaults:
    what the committed run chose, :data:`CHOSEN_LRS` and :data:`CHOSEN_PAIR`."""
    lrs = CHOSEN_LRS if lrs is None else lrs
    pair = CHOSEN_PAIR if pair is None else pair
    together = combine(*map(change, pair))
    return [BASELINE, *(c.arm(lrs[c.name] if c.tuned else None)
                        for c in (*CHANGES, together))]
