"""Named designs of studies, the CLI's ``--preset``: which arms, on which shapes.

* ``notes``: the notes' four runs side by side (:data:`NOTES_ARMS`), and the one they did not
  make, on the setup's shape.
* ``candidates``: N(0,1) as in the notes' first run, and the implementation details that
  could have given the notes higher rates than tinynet's (:data:`CANDIDATE_ARMS`).
* ``widths``: shapes :data:`WIDTHS` x initializers :data:`WIDTH_INITS`, to see where
  initialization starts to matter.
* ``fixes``: what fixes 99mlp: the notes' network against one change at a time (a loss, an
  optimizer, a learning rate, a width, an initializer, shuffling) and the best two together,
  each tuned change at its best learning rate (:mod:`tinynet.xor.fixes`); every arm is
  compared with the notes' network.
* ``depth``: the depth study (:mod:`tinynet.xor.depth`) on its own setup, circles learned by
  1 to 32 hidden layers of 16, per initializer (``examples/depth.py`` adds the second moments
  and the figure).

    >>> sweep = get_preset("widths").run(Setup(seeds=1000))
    >>> print(sweep.table())
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

from ..validation import check_choice
from .arms import DEFAULT_SETUP, Arm, Setup, spec_name
from .depth import DEPTH_SETUP, DEPTHS, WIDTH, depth_arms
from .fixes import fixes_arms
from .sweep import Sweep, run_sweep

__all__ = ["NOTES_ARMS", "CANDIDATE_ARMS", "WIDTHS", "WIDTH_INITS", "Preset", "PRESETS",
           "get_preset"]

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

CANDIDATE_ARMS = [
    Arm("normal"),
    Arm("normal", update="during_backward"),
    Arm("normal", bias_init="normal"),
    Arm("normal", bias_init="normal", update="during_backward"),
]
"""The notes' first run (N(0,1) weights, zero biases, every layer updated after the backward
pass) and what a hand-written loop might have done differently: update each layer as soon as
its gradient is known, passing back the gradient through the updated weights
(``update="during_backward"``); draw the biases like the weights (``bias_init="normal"``); or
both."""

WIDTHS = [(2,), (3,), (4,), (8,), (16,), (2, 2)]
"""The hidden layers of the ``widths`` preset: 2-k-1 for k = 2 ... 16, and the notes' 2-2-2-1."""

WIDTH_INITS = ["normal", "he_leaky", "xavier_normal", "lecun_normal"]
"""The initializers of the ``widths`` preset, every layer drawn by the same one."""


@dataclass(frozen=True)
class Preset:
    """A named design: ``arms``, each trained on every shape of ``shapes`` (none: on the shape
    of the setup it is given). ``sets`` names the settings the preset chooses itself (of
    init, output_init, shuffle, bias_init, update, loss, optimizer, lr and hidden), which
    neither the CLI's flags nor the setup given may change; the rest come from the setup.
    ``setup`` is the preset's own (None: 99mlp's, :data:`DEFAULT_SETUP`), used when none is
    given.
    ``arms_for``, if given, makes the arms from the setup's hidden activation instead (``arms``
    are then those of the preset's own setup). ``against``, if given, is the index of the arm
    every other is compared with (otherwise every pair is)."""

    name: str
    summary: str
    arms: tuple[Arm, ...]
    sets: tuple[str, ...]
    shapes: tuple[tuple[int, ...], ...] = ()
    setup: Setup | None = None
    arms_for: Callable[[str], list[Arm]] | None = None
    against: int | None = None

    @property
    def base(self) -> Setup:
        """The setup the preset runs on unless given another: its own, or 99mlp's."""
        return DEFAULT_SETUP if self.setup is None else self.setup

    def design(self, setup: Setup | None = None, shuffle: bool | None = None,
               bias_init: str | None = None, update: str | None = None,
               loss: str | None = None,
               optimizer: str | None = None) -> tuple[list[Arm], list[Setup]]:
        """The arms and the setups (one per shape, otherwise as ``setup``, by default
        :attr:`base`) to run.

        ``shuffle``, ``bias_init``, ``update``, ``loss`` and ``optimizer``, when not None, set
        that setting of every arm (checked as :class:`Arm` checks it); None keeps the
        preset's. A preset that
        sets one itself, per arm, refuses a choice of it.
        """
        chosen = {name: value for name, value in
                  (("shuffle", shuffle), ("bias_init", bias_init), ("update", update),
                   ("loss", loss), ("optimizer", optimizer)) if value is not None}
        for name, value in chosen.items():
            if name in self.sets:
                raise ValueError(f"{name} cannot be chosen for preset {self.name!r}, which sets "
                                 f"it per arm; expected None, got {value!r}")
        setup = self.base if setup is None else setup
        for name in ("lr", "hidden"):
            if name in self.sets and getattr(setup, name) != getattr(self.base, name):
                raise ValueError(f"{name} cannot be chosen for preset {self.name!r}, which sets "
                                 f"it itself; expected the preset's "
                                 f"{getattr(self.base, name)!r}, got {getattr(setup, name)!r}")
        arms = self.arms if self.arms_for is None else \
            self.arms_for(spec_name(setup.activation))
        arms = [replace(arm, **chosen) for arm in arms]
        setups = [replace(setup, hidden=shape) for shape in self.shapes] or [setup]
        return arms, setups

    def run(self, setup: Setup | None = None, shuffle: bool | None = None,
            bias_init: str | None = None, update: str | None = None,
            progress: bool = False, executor: object | None = None,
            block_seeds: int | None = None, loss: str | None = None,
            optimizer: str | None = None) -> Sweep:
        """Run the :meth:`design`: a sweep of one study per setup (on ``executor`` in blocks
        of ``block_seeds``, if given; with ``progress=True``, progress on stderr, else nothing
        printed: :func:`~tinynet.xor.run_study`)."""
        return run_sweep(*self.design(setup, shuffle, bias_init, update, loss, optimizer),
                         progress, executor=executor, block_seeds=block_seeds,
                         against=self.against)

    def __repr__(self) -> str:
        return f"Preset({self.name!r}: {self.summary})"


PRESETS = {preset.name: preset for preset in [
    Preset("notes", "the notes' four runs (and N(0,1) shuffled) side by side",
           tuple(NOTES_ARMS), sets=("init", "output_init", "shuffle", "bias_init", "update")),
    Preset("candidates", "N(0,1), and with each layer updated during backward, biases drawn "
                         "N(0,1), or both",
           tuple(CANDIDATE_ARMS), sets=("init", "output_init", "bias_init", "update")),
    Preset("widths", f"shapes {', '.join(Setup(hidden=shape).shape for shape in WIDTHS)}"
                     f" x {', '.join(WIDTH_INITS)}",
           tuple(Arm(name) for name in WIDTH_INITS), shapes=tuple(WIDTHS),
           sets=("init", "output_init", "hidden")),
    Preset("fixes", "the notes' network against binary cross-entropy, momentum, Adam, a larger "
                    "lr, 2-3-3-1, He-leaky + Xavier, shuffling, and the best two together",
           tuple(fixes_arms()), sets=("init", "output_init", "shuffle", "loss", "optimizer", "lr",
                                      "hidden"), against=0),
    Preset("depth", f"circles learned by 1 to {DEPTHS[-1]} hidden layers of {WIDTH} x N(0,1), "
                    "N(0,0.01²), LeCun, Xavier, He, orthogonal (its own setup: see "
                    "tinynet.xor.depth)",
           tuple(depth_arms(DEPTH_SETUP.activation)),
           shapes=tuple((WIDTH,) * depth for depth in DEPTHS),
           sets=("init", "output_init", "hidden", "shuffle"), setup=DEPTH_SETUP,
           arms_for=depth_arms),
]}
"""Every preset, by name."""


def get_preset(name: str) -> Preset:
    """The preset called ``name`` (one of :data:`PRESETS`)."""
    return PRESETS[check_choice("preset", name, PRESETS)]
