"""What a study's networks learn, and when a seed counts as a success: a :class:`Task`.

The default is XOR's four points, solved when every output is on the right side of 0.5. Any
generator of :mod:`tinynet.data` can stand in for it, with a success criterion that fits a
noisy classification problem (training accuracy of at least ``accuracy``) and a held-out set
drawn by the same generator from a second seed::

    >>> task = Task("circles", n=128, accuracy=0.95)
    >>> X, y = task.training_data()
    >>> X_held_out, y_held_out = task.held_out_data()

A data set of many classes with a fixed test split (:data:`tinynet.data.CLASSIFICATION`:
``"digits"``, ``"mnist1d"``) is learned by a softmax output with cross-entropy; there a seed
*learns* when its test accuracy is above ``accuracy`` (default: twice chance,
:func:`tinynet.accuracy.learning_threshold`), and its outcome is that accuracy::

    >>> Task("digits").criterion     # 10 classes: twice chance
    0.2
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

from .. import data
from ..accuracy import learning_threshold
from ..validation import check_accuracy, check_choice, check_float, check_int, check_seed, \
    describe_value

__all__ = ["Task", "OwnData", "XOR", "DRAWN_ACCURACY"]

DRAWN_ACCURACY = 0.95
"""The default success criterion on drawn (noisy) samples: 95 % training accuracy. Noise can
put a sample on the other class's side, where no classifier is right; XOR's four points are
all learnable, so there it is 1."""


class OwnData:
    """Your own arrays as a task's data: a :class:`tinynet.data.Split` checked by
    :func:`tinynet.data.labelled_split`, equal to another of the same arrays (compared by a
    SHA-256 of their bytes), printed by its sizes and the start of that hash."""

    def __init__(self, split: data.Split) -> None:
        self.split = split
        digest = hashlib.sha256()
        for array in split[:4]:
            digest.update(np.ascontiguousarray(array).tobytes())
        self.digest = digest.hexdigest()

    def __eq__(self, other: object) -> bool:
        return isinstance(other, OwnData) and other.digest == self.digest

    def __hash__(self) -> int:
        return hash(self.digest)

    def __repr__(self) -> str:
        s = self.split
        named = "" if s.name == "your data" else f"{s.name}: "
        return (f"OwnData({named}{len(s.X):,} training / {len(s.X_test):,} test samples, "
                f"{s.X.shape[1]} inputs, {s.classes} classes, sha256 {self.digest[:12]})")


@dataclass(frozen=True)
class Task:
    """A data set of :data:`tinynet.data.DATASETS`, drawn with ``n`` samples, ``noise`` and
    ``seed`` (None: the generator's default; XOR without ``n`` is its four points), and the
    training accuracy a seed must reach to count as a success (1.0: every sample on the right
    side of 0.5; None, kept as given like ``n`` and ``noise``: :attr:`criterion` is then 1.0
    on XOR's four points and :data:`DRAWN_ACCURACY` on drawn samples).

    The held-out set is a second draw with ``held_out_seed``; the four-point XOR has none (a
    second draw is the same four points). A data set of :data:`tinynet.data.CLASSIFICATION`
    has its own fixed split: its training and test samples, class labels as targets, and no
    ``n``, ``noise``, ``seed`` or ``held_out_seed`` of its own to give.

    Your own data: ``Task(data=(X, y), test=(X_test, y_test))``, integer class labels, learned
    as a data set of many classes is (every class in both parts:
    :func:`tinynet.data.labelled_split`), or a file's (:meth:`from_file`) or any
    :class:`tinynet.data.Split` as ``data``; ``data`` is then kept as an :class:`OwnData`.
    """

    data: str | OwnData = "xor"
    n: int | None = None
    noise: float | None = None
    seed: int = 0
    held_out_seed: int = 1
    accuracy: float | None = None
    test: tuple | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        if isinstance(self.data, data.Split):  # checked as arrays are, whoever made it
            split = self.data
            object.__setattr__(self, "data", OwnData(data.labelled_split(
                *split[:4], name=split.name)._replace(source=split.source)))
        elif isinstance(self.data, tuple):
            if not isinstance(self.test, tuple) or len(self.test) != 2 or len(self.data) != 2:
                raise TypeError("your own data is data=(X, y) with test=(X_test, y_test), "
                                f"got data as a tuple of {len(self.data)} and test="
                                f"{type(self.test).__name__}")
            object.__setattr__(self, "data", OwnData(data.labelled_split(*self.data,
                                                                         *self.test)))
            object.__setattr__(self, "test", None)  # in data now, checked
        elif self.test is not None:
            raise ValueError(f"test=(X_test, y_test) goes with your own data=(X, y); data set "
                             f"{self.data!r} has its own")
        if not isinstance(self.data, (str, OwnData)):
            raise TypeError(f"data must be a data set's name such as 'moons', your own "
                            f"data=(X, y) with test=(X_test, y_test), or a "
                            f"tinynet.data.Split; got {describe_value(self.data)}")
        if not isinstance(self.data, OwnData):
            check_choice("data", self.data, {**data.DATASETS, **data.CLASSIFICATION},
                         kind="data set")
        if self.classification:
            for name, default in (("n", None), ("noise", None), ("seed", 0),
                                  ("held_out_seed", 1)):
                if getattr(self, name) != default:
                    raise ValueError(f"{name} is not a setting of data set {self.name!r}, "
                                     f"which has a fixed training and test split; got "
                                     f"{name}={getattr(self, name)!r}, leave it out")
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

    @classmethod
    def from_file(cls, path: str | os.PathLike, accuracy: float | None = None) -> Task:
        """Your own data from a ``.npz`` or ``.csv`` file (:func:`tinynet.data.read_split`
        says what it holds), learned as a data set of many classes is; ``accuracy`` as
        :class:`Task`'s."""
        return cls(data=data.read_split(path), accuracy=accuracy)

    @property
    def classification(self) -> bool:
        """Whether this is a data set of many classes with a fixed test split
        (:data:`tinynet.data.CLASSIFICATION`), learned by a softmax output."""
        return isinstance(self.data, OwnData) or self.data in data.CLASSIFICATION

    @cached_property
    def _split(self) -> data.Split:
        if isinstance(self.data, OwnData):
            return self.data.split
        return data.CLASSIFICATION[self.data]()

    @property
    def classes(self) -> int:
        """How many classes the task has (2 for the 2-D sets)."""
        return self._split.classes if self.classification else 2

    @property
    def inputs(self) -> int:
        """How many inputs a sample has: 2 for the 2-D sets."""
        return self._split.X.shape[1] if self.classification else 2

    @property
    def outputs(self) -> int:
        """How many outputs the network has: one per class for a data set of many classes
        (a softmax), else 1 (a sigmoid's probability of class 1)."""
        return self.classes if self.classification else 1

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
        if self.classification:
            return self._split.X, self._split.y
        return self._draw(self.seed)

    @cached_property
    def _held_out(self) -> tuple[np.ndarray, np.ndarray] | None:
        if self.classification:
            return self._split.X_test, self._split.y_test
        return self._draw(self.held_out_seed) if self.has_held_out else None

    @property
    def criterion(self) -> float:
        """The accuracy a seed must reach: ``accuracy``, or its default for the task (the
        training accuracy on the 2-D sets; the test accuracy a seed must exceed to learn a
        data set of many classes)."""
        if self.accuracy is not None:
            return self.accuracy
        if self.classification:
            return learning_threshold(self.classes)
        return DRAWN_ACCURACY if self.has_held_out else 1.0

    @property
    def name(self) -> str:
        """The data set's name in text: ``"XOR"`` or the generator's name."""
        if isinstance(self.data, OwnData):
            return self.data.split.name
        return "XOR" if self.data == "xor" else self.data

    @property
    def samples(self) -> int:
        """How many samples the training set has."""
        return len(self._training[0])

    def training_data(self) -> tuple[np.ndarray, np.ndarray]:
        """X (n, 2) and y (n, 1), drawn with ``seed`` (once; each call returns a copy); for a
        data set of many classes, X (n, inputs) and its class labels (n,)."""
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
        if self.classification:
            return (f"{name} ({self.samples:,} training / {len(self._held_out[0]):,} test "
                    f"samples, {self.classes} classes), learned: test accuracy > "
                    f"{self.criterion:.0%}")
        if self.has_held_out:
            noise = "" if self.noise is None else f", noise {self.noise:g}"
            name += f" ({self.samples} samples{noise}, seed {self.seed})"
        if self.criterion < 1.0:
            name += f", success: accuracy >= {self.criterion:.0%}"
        return name


XOR = Task()
"""XOR's four points, solved when all four outputs are right."""
