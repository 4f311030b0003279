"""Activation functions: each one's value and derivative, defined once, side by side.

An activation maps the pre-activation ``z = x Wᵀ + b`` to ``a = φ(z)`` element-wise, and
backward needs ``φ'(z)``. Each activation here is one method, ``forward_and_derivative(z)``,
that returns both, written in the words of :mod:`tinynet.maths`::

    >>> from tinynet.activations import get_activation
    >>> act = get_activation("leaky_relu", alpha=0.01)
    >>> act.forward(np.array([-2.0, 0.0, 3.0]))
    array([-0.02,  0.  ,  3.  ])
    >>> act.derivative(np.array([-2.0, 0.0, 3.0]))
    array([0.01, 0.01, 1.  ])

That method is the activation's only definition: the NumPy backend calls it, and the compiled
backend writes the same lines into its kernels (:mod:`tinynet.compiled.render`). Adding an
activation is one class here (or in your own code) with a ``name`` and that method;
``tinynet.check`` holds it to finite differences, and ``tinynet.activations.register``
(:mod:`tinynet.registering`) makes it available by name.

Softmax is the one activation over a layer's units rather than element-wise
(:class:`Softmax`, its definition ``forward_over_units`` written with the reductions
:func:`tinynet.maths.unit_max` and :func:`~tinynet.maths.unit_sum`). Its Jacobian is not
diagonal, so it has no φ'(z): it is an output layer's activation, trained with
:class:`tinynet.losses.CrossEntropy`, which gives dL/dz = (p − y) / B through it.

Conventions at the kink ``z = 0`` (where the derivative does not exist): ``relu'(0) = 0`` and
``leaky_relu'(0) = alpha`` (the left derivative, as in PyTorch).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from .maths import exp, tanh, unit_max, unit_sum, where
from .validation import DefinitionError, UnknownNameError, check_fields, check_float

__all__ = ["Activation", "Identity", "Sigmoid", "Tanh", "ReLU", "LeakyReLU", "Softmax", "BUILT_IN",
           "ACTIVATIONS", "get_activation", "evaluate"]


@dataclass(frozen=True, repr=False)
class Activation:
    """Base class: ``forward_and_derivative(z) = (φ(z), φ'(z))``, element-wise, and from it
    ``forward(z)`` and ``derivative(z)``.

    ``alpha`` is the negative slope, 0 for every activation but LeakyReLU; ``bounds`` the
    interval φ's values lie in (a loss such as binary cross-entropy needs outputs in [0, 1]).
    Activations are values: two are equal when they are the same function
    (``LeakyReLU(0.01) == LeakyReLU(0.01)``).

    Your own activation: a subclass with a ``name`` and ``forward_and_derivative``,
    decorated ``@dataclass(frozen=True)`` with its numeric parameters as fields (so that
    equality sees them, and the compiled kernels read them as ``self.<field>``), each a
    finite real number (refused when the activation is made, otherwise). Written with
    :mod:`tinynet.maths` and arithmetic it trains on both backends; a subclass that defines
    ``forward`` and ``derivative`` with NumPy instead trains on the NumPy backend only, and
    the compiled one refuses it by name.
    """

    name: ClassVar[str] = ""
    alpha: ClassVar[float] = 0.0
    bounds: ClassVar[tuple[float, float]] = (-math.inf, math.inf)
    over_units: ClassVar[bool] = False
    """Whether φ is defined over a layer's units (``forward_over_units``: :class:`Softmax`),
    not element-wise."""

    def __init_subclass__(cls, **kwargs: object) -> None:
        """Each class has one definition: ``forward_and_derivative``, from which ``forward``
        and ``derivative`` follow; or (NumPy only) ``forward`` and ``derivative``, from which
        ``forward_and_derivative`` follows. Whichever a class defines replaces what it
        inherits, so that training and ``forward`` never compute two different functions.
        An activation over a layer's units (:class:`Softmax`) defines ``forward_over_units``
        alone, from which ``forward`` follows; it has no derivative."""
        super().__init_subclass__(**kwargs)
        if "forward_over_units" in vars(cls) or cls.over_units:  # over a layer's units
            more = sorted({"forward_and_derivative", "forward", "derivative"} & set(vars(cls)))
            if more:
                raise TypeError(f"activation class {cls.__name__} defines "
                                f"{', '.join(more)} and is over a layer's units "
                                "(forward_over_units): it defines forward_over_units(self, "
                                "z) alone")
            cls.over_units = True
            cls.forward = Activation._forward_over_units
            cls.forward_and_derivative = cls.derivative = Activation._no_derivative
            return
        own = {name for name in ("forward_and_derivative", "forward", "derivative")
               if name in vars(cls) and vars(cls)[name] is not vars(Activation)[name]}
        if "forward_and_derivative" in own and own != {"forward_and_derivative"}:
            raise TypeError(f"activation class {cls.__name__} defines {', '.join(sorted(own))}: "
                            "define forward_and_derivative(self, z), or (for the NumPy backend "
                            "only) both forward and derivative, not both")
        if own == {"forward_and_derivative"}:
            cls.forward, cls.derivative = Activation.forward, Activation.derivative
        elif own:  # NumPy's forward and derivative (a subclass may replace one of its parent's)
            cls.forward_and_derivative = Activation.forward_and_derivative
        defined = cls.forward_and_derivative is not Activation.forward_and_derivative
        pair = [getattr(cls, name) is not getattr(Activation, name)
                for name in ("forward", "derivative")]
        if defined and any(pair):  # two definitions, from two bases
            raise TypeError(f"activation class {cls.__name__} inherits forward_and_derivative "
                            "and forward or derivative from different bases: define one of "
                            "them in the class")
        if not defined and not all(pair) and cls.name:  # a named class must be usable
            raise TypeError(f"activation class {cls.__name__} defines "
                            f"{', '.join(sorted(own)) or 'nothing'}: define "
                            "forward_and_derivative(self, z), or (for the NumPy backend only) "
                            "both forward and derivative")

    def __post_init__(self) -> None:
        """Every parameter (dataclass field) must be a finite real number
        (:func:`~tinynet.validation.check_fields`): a subclass that checks more calls this
        first."""
        check_fields(self)

    def forward_and_derivative(self, z: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(φ(z), φ'(z))``: the definition. (For a subclass that defines ``forward`` and
        ``derivative`` instead, the two of them.)"""
        return self.forward(z), self.derivative(z)

    def forward(self, z: np.ndarray) -> np.ndarray:
        """φ(z), element-wise: float64, the shape of z."""
        z = np.asarray(z, dtype=np.float64)
        return _as_array(type(self).forward_and_derivative(self, z)[0], z)

    def derivative(self, z: np.ndarray) -> np.ndarray:
        """φ'(z), element-wise: float64, the shape of z."""
        z = np.asarray(z, dtype=np.float64)
        return _as_array(type(self).forward_and_derivative(self, z)[1], z)

    def _forward_over_units(self, z: np.ndarray) -> np.ndarray:
        """φ over the last axis of z (a layer's units), float64, the shape of z."""
        z = np.asarray(z, dtype=np.float64)
        return _as_array(type(self).forward_over_units(self, z), z)

    def _no_derivative(self, z: np.ndarray) -> None:
        """An activation over units has no element-wise derivative: refused in one line."""
        raise ValueError(f"activation {self!r} is defined over a layer's units: its Jacobian "
                         "is not diagonal, so it has no element-wise derivative; train it as "
                         "the output layer with loss='cross_entropy', which gives dL/dz")

    def __repr__(self) -> str:
        return self.name


def _as_array(value: object, z: np.ndarray) -> np.ndarray:
    """``value`` as a float64 array of z's shape that is not z itself (a definition's
    results are new arrays, but for the identity's z and a constant derivative)."""
    if type(value) is np.ndarray and value.dtype == np.float64 and value.shape == z.shape:
        return value.copy() if value is z else value  # the common case, in one test
    value = np.asarray(value, dtype=np.float64)
    if value.shape != z.shape:
        return np.full(z.shape, value)
    return value.copy() if value is z else value


@dataclass(frozen=True, repr=False)
class Identity(Activation):
    """φ(z) = z,  φ'(z) = 1."""

    name = "identity"

    def forward_and_derivative(self, z):
        return z, 1.0


@dataclass(frozen=True, repr=False)
class Sigmoid(Activation):
    """φ(z) = 1 / (1 + e^(-z)),  φ'(z) = φ(z) (1 - φ(z)) = e / (1 + e)² with e = exp(-|z|).

    Overflow-safe: with ``e = exp(-|z|) <= 1`` it is ``1 / (1 + e)`` for z >= 0 and
    ``e / (1 + e)`` for z < 0, so no exponential ever overflows; sigmoid(±1e4) is exactly 1 and 0.
    The derivative in the form ``e / (1 + e)²`` keeps full relative precision in the tails,
    where ``s (1 - s)`` would round 1 - s to 0.
    """

    name = "sigmoid"
    bounds = (0.0, 1.0)

    def forward_and_derivative(self, z):
        e = exp(-abs(z))
        d = 1.0 + e
        return where(z >= 0, 1.0, e) / d, e / (d * d)


@dataclass(frozen=True, repr=False)
class Tanh(Activation):
    """φ(z) = tanh(z),  φ'(z) = 1 - tanh(z)²."""

    name = "tanh"
    bounds = (-1.0, 1.0)

    def forward_and_derivative(self, z):
        t = tanh(z)
        return t, 1.0 - t * t


@dataclass(frozen=True, repr=False)
class ReLU(Activation):
    """φ(z) = max(z, 0),  φ'(z) = 1 if z > 0 else 0 (so relu'(0) = 0)."""

    name = "relu"
    bounds = (0.0, math.inf)

    def forward_and_derivative(self, z):
        return where(z > 0, z, 0.0), where(z > 0, 1.0, 0.0)


@dataclass(frozen=True, repr=False)
class LeakyReLU(Activation):
    """φ(z) = z if z > 0 else α z,  φ'(z) = 1 if z > 0 else α (so leaky_relu'(0) = α).

    ``alpha`` is the slope for negative inputs: 0.01 by default, as in 99mlp and PyTorch.
    ``alpha = 0`` is ReLU. φ(z) is chosen between z and α z, not computed as z φ'(z) (the
    same numbers: z · 1 is z), so that a compiled kernel multiplies while it compares: a
    single fit's steps are one chain of dependent operations, and z φ'(z) put a multiply
    after the comparison into it for every hidden unit.
    """

    name = "leaky_relu"
    alpha: float = 0.01

    def __post_init__(self) -> None:
        super().__post_init__()
        object.__setattr__(self, "alpha", check_float(f"{type(self).__name__}'s alpha",
                                                      self.alpha, minimum=0.0, inclusive=True))

    def forward_and_derivative(self, z):
        positive = z > 0
        return where(positive, z, self.alpha * z), where(positive, 1.0, self.alpha)

    def __repr__(self) -> str:
        return f"leaky_relu(alpha={self.alpha:g})"


@dataclass(frozen=True, repr=False)
class Softmax(Activation):
    """p_k = e^(z_k − m) / Σ_j e^(z_j − m) over a layer's units, with m = max_j z_j: the
    probabilities of the classes, each in [0, 1] (a z far below the row's largest underflows
    to 0), summing to 1 in every row (to rounding).

    Subtracting the row's largest z changes nothing exactly (the factor e^(−m) cancels) and
    keeps every exp at most 1, so no z overflows it (PyTorch's ``softmax`` does the same).
    Defined over the units, it has no element-wise φ': it is the output layer of a network
    trained with :class:`tinynet.losses.CrossEntropy`, whose gradient through it is
    dL/dz = (p − y) / B. A softmax over one unit is 1 whatever z, and is refused.
    """

    name = "softmax"
    bounds = (0.0, 1.0)

    def forward_over_units(self, z):
        e = exp(z - unit_max(z))
        return e / unit_sum(e)


BUILT_IN: tuple[type[Activation], ...] = (Identity, Sigmoid, Tanh, ReLU, LeakyReLU, Softmax)
"""The built-in activation classes, in a fixed order: every network made of them shares one
compiled kit (:mod:`tinynet.compiled.kit`), compiled once per machine and loss."""

ACTIVATIONS: dict[str, type[Activation]] = {cls.name: cls for cls in BUILT_IN}
"""Every activation by name: the built-in ones and those ``tinynet.activations.register``
added (:mod:`tinynet.registering`)."""


def evaluate(activation: Activation, z: np.ndarray) -> tuple[object, object]:
    """``(φ(z), φ'(z))`` from ``activation.forward_and_derivative(z)``, as it returns them (a
    constant derivative stays a number), after checking that it returned a pair, each
    broadcastable to ``z.shape``: a definition that returns φ alone would otherwise be
    unpacked along its first axis, which for a 2-member ensemble (2, B, n) is a pair too,
    and train on φ of one member as φ' of the other. Raises
    :class:`tinynet.definitions.DefinitionError` naming the class and what it returned."""
    if activation.over_units:  # no φ': the loss gives dL/dz (tinynet.losses.CrossEntropy)
        return activation.forward(z), None
    pair = activation.forward_and_derivative(z)
    if type(pair) is tuple and len(pair) == 2 and _fits(pair[0], z.shape) and \
            _fits(pair[1], z.shape):
        return pair
    raise DefinitionError(f"activation {type(activation).__qualname__}'s "
                          f"forward_and_derivative must return (φ(z), φ'(z)), two values each "
                          f"broadcastable to z's shape {z.shape}, got {_described(pair)}")


def _fits(value: object, shape: tuple[int, ...]) -> bool:
    """Whether ``value`` broadcasts to exactly ``shape``: each of its axes, from the last, is
    1 or that of ``shape`` (written out: ``np.broadcast_shapes`` costs 10 µs a call, a sixth
    of a small network's step)."""
    if type(value) is float:
        return True
    own = value.shape if type(value) is np.ndarray else np.shape(value)
    return own == shape or len(own) <= len(shape) and \
        all(mine in (1, theirs) for mine, theirs in zip(own[::-1], shape[::-1]))


def _described(result: object) -> str:
    """What a method returned, in a few words: ``1 value, an array of shape (2, 4, 3)``."""
    values = result if type(result) is tuple else (result,)
    shapes = ", ".join(f"shape {np.shape(value)}" for value in values[:4])
    return f"{len(values)} value{'s' * (len(values) != 1)} ({shapes})"


def get_activation(activation: str | Activation, alpha: float = 0.01) -> Activation:
    """Return the activation named ``activation`` (``alpha`` is used by leaky_relu only;
    any other, registered ones included, is made with its defaults).

    An :class:`Activation` instance is returned as it is (it carries its own alpha).
    """
    check_float("alpha", alpha, minimum=0.0, inclusive=True)
    if isinstance(activation, Activation):
        return activation
    if not isinstance(activation, str) or activation not in ACTIVATIONS:
        raise UnknownNameError("activation", activation, ACTIVATIONS)
    cls = ACTIVATIONS[activation]
    return LeakyReLU(alpha) if cls is LeakyReLU else cls()
