"""What a study's networks learn, and when a seed counts as a success: a :class:`Task`.

The default is XOR's four points, solved when every output is on the right side of 0.5. Any
generator of :mod:`tinynet.data` can stand in for it, with a success criterion that fits a
noisy classification problem (training accuracy of at least ``accuracy``) and a held-out set
drawn by the same generator from a second seed::

    >>> task = Task("circles", n=128, accuracy=0.95)
    >>> X, y = task.training_data()
    >>> X_held_out, y_held_out = task.held_out_data()
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

from .. import data
from ..validation import check_accuracy, check_choice, check_float, check_int, check_seed

__all__ = ["Task", "XOR", "DRAWN_ACCURACY"]

DRAWN_ACCURACY = 0.95
"""The default success criterion on drawn (noisy) samples: 95 % training accuracy. Noise can
put a sample on the other class's side, where no classifier is right; XOR's four points are
all learnable, so there it is 1."""


@dataclass(frozen=True)
class Task:
    """A data set of :data:`tinynet.data.DATASETS`, drawn with ``n`` samples, ``noise`` and
    ``seed`` (None: the generator's default; XOR without ``n`` is its four points), and the
    training accuracy a seed must reach to count as a success (1.0: every sample on the right
    side of 0.5; None, kept as given like ``n`` and ``noise``: :attr:`criterion` is then 1.0
    on XOR's four points and :data:`DRAWN_ACCURACY` on drawn samples).

    The held-out set is a second draw with ``held_out_seed``; the four-point XOR has none (a
    second draw is the same four points).
    """

    data: str = "xor"
    n: int | None = None
    noise: float | None = None
    seed: int = 0
    held_out_seed: int = 1
    accuracy: float | None = None

    def __post_init__(self) -> None:
        check_choice("data", self.data, data.DATASETS, kind="data set")
        if self.n is not None:
            check_int("n", self.n, minimum=2)
        if self.noise is not None:
            check_float("noise", self.noise, minimum=0.0, inclusive=True)
        check_seed("seed", self.seed)
        check_seed("held_out_seed", self.held_out_seed)
        if self.held_out_seed == self.seed and self.has_held_out:
            raise ValueError(f"held_out_seed must differ from seed ({self.seed}), or the "
                             f"held-out set is the training set; got {self.held_out_seed!r}")
        if self.accuracy is not None:
            check_accuracy("accuracy", self.accuracy)
        _ = self._training  # drawn now: the generator's own checks (noise without n for XOR)

    @property
    def four_points(self) -> bool:
        """Whether this is XOR's four points, the notes' task."""
        return self.data == "xor" and self.n is None

    @property
    def has_held_out(self) -> bool:
        """Whether there is a held-out set: every task but XOR's four points."""
        return not self.four_points

    def _draw(self, seed: int) -> tuple[np.ndarray, np.ndarray]:
        given = {name: value for name, value in (("n", self.n), ("noise", self.noise))
                 if value is not None}
        return data.DATASETS[self.data](**given, seed=seed)  # XOR's four points ignore seed

    @cached_property
    def _training(self) -> tuple[np.ndarray, np.ndarray]:
        return self._draw(self.seed)

    @cached_property
    def _held_out(self) -> tuple[np.ndarray, np.ndarray] | None:
        return self._draw(self.held_out_seed) if self.has_held_out else None

    @property
    def criterion(self) -> float:
        """The training accuracy a seed must reach: ``accuracy``, or its default for the task."""
        if self.accuracy is not None:
            return self.accuracy
        return DRAWN_ACCURACY if self.has_held_out else 1.0

    @property
    def name(self) -> str:
        """The data set's name in text: ``"XOR"`` or the generator's name."""
        return "XOR" if self.data == "xor" else self.data

    @property
    def samples(self) -> int:
        """How many samples the training set has."""
        return len(self._training[0])

    def training_data(self) -> tuple[np.ndarray, np.ndarray]:
        """X (n, 2) and y (n, 1), drawn with ``seed`` (once; each call returns a copy)."""
        X, y = self._training
        return X.copy(), y.copy()

    def held_out_data(self) -> tuple[np.ndarray, np.ndarray] | None:
        """X (n, 2) and y (n, 1), drawn with ``held_out_seed`` (once; each call returns a
        copy); None for the four-point XOR."""
        return None if self._held_out is None else tuple(a.copy() for a in self._held_out)

    def describe(self) -> str:
        """The data set in a few words, such as ``"circles (128 samples, seed 0)"``, and the
        success criterion when it is not every sample right."""
        name = self.name
        if self.has_held_out:
            noise = "" if self.noise is None else f", noise {self.noise:g}"
            name += f" ({self.samples} samples{noise}, seed {self.seed})"
        if self.criterion < 1.0:
            name += f", success: accuracy >= {self.criterion:.0%}"
        return name


XOR = Task()
"""XOR's four points, solved when all four outputs are right."""
