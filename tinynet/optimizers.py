"""Optimizers: how a parameter moves, given its gradient; each defined once, with its state.

An optimizer is one method, ``update(p, g, lr, *state)``: a parameter p, its gradient g = dL/dp,
the learning rate and the optimizer's state for that parameter (one value per name in
``state``) in; the new parameter and the new state out, element by element. It is written in
the words of :mod:`tinynet.maths`, so the NumPy backend calls it on whole arrays and the
compiled backend writes the same lines into its kernels (:mod:`tinynet.compiled.render`)::

    def update(self, p, g, lr, velocity):        # Momentum
        velocity_next = self.momentum * velocity + g
        return p - lr * velocity_next, velocity_next

Every state value starts at 0. The state lives beside the parameters, in the packed layout of
:mod:`tinynet.packing`: ``state`` (k, P) for a network, slot i holding ``state[i]`` of every
parameter. A network keeps it in ``net.optimizer_state`` (:class:`State`) between runs, so a
second ``fit`` continues where the first stopped, ``save``/``load`` keep it, and a Ctrl-C
puts it back with the parameters. Training with another optimizer (or other
hyperparameters) starts from a fresh state.

The three built in follow PyTorch's ``torch.optim`` (without weight decay), so that a run here
and a run there from the same weights and sample order agree to rounding:

* ``sgd``: p ← p − lr g, the notes' optimizer and the default (no state).
* ``momentum``: ``SGD(momentum=μ)``, dampening 0, not Nesterov: v ← μ v + g, p ← p − lr v
  (v starts at 0, so the first step is PyTorch's v = g exactly).
* ``adam``: ``Adam(betas=(β1, β2), eps=ε)``, with bias correction, t the step count::

      m ← β1 m + (1 − β1) g,   v ← β2 v + (1 − β2) g²,   t ← t + 1
      p ← p − lr / (1 − β1^t) · m / (√v / √(1 − β2^t) + ε)
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields
from typing import ClassVar

import numpy as np

from .init.registry import from_spec
from .maths import sqrt
from .validation import DefinitionError, check_fields

__all__ = ["Optimizer", "SGD", "Momentum", "Adam", "OPTIMIZERS", "get_optimizer",
           "State"]


@dataclass(frozen=True, repr=False)
class Optimizer:
    """Base class: ``update(p, g, lr, *state)`` = ``(new p, *new state)``, element-wise, with
    one state value per name in ``state`` (each starting at 0).

    Your own optimizer: a subclass with a ``name``, its ``state`` names and ``update``,
    decorated ``@dataclass(frozen=True)`` with its numeric hyperparameters as fields, written
    with :mod:`tinynet.maths` and arithmetic (then both backends build it from that one
    method). A hyperparameter must be a finite number. ``update`` returns the new p and every
    state value: :meth:`step` refuses fewer (a state never returned would stay 0);
    ``tinynet.check`` checks it, and ``tinynet.optimizers.register``
    (:mod:`tinynet.registering`) makes it available by name.
    """

    name: ClassVar[str] = ""
    state: ClassVar[tuple[str, ...]] = ()
    ranges: ClassVar[dict[str, tuple[float, float]]] = {}
    """Where each hyperparameter may lie, [low, high) (PyTorch's checks)."""

    def update(self, p, g, lr, *state):
        """``(new p, *new state)``: the definition, element-wise (see the class)."""
        raise NotImplementedError

    def __post_init__(self) -> None:
        check_fields(self)
        for field in fields(self):
            value = getattr(self, field.name)
            low, high = self.ranges.get(field.name, (-math.inf, math.inf))
            if not low <= value < high:
                raise ValueError(f"{type(self).__name__}'s {field.name} must be in [{low:g}, "
                                 f"{high:g}), got {value!r}")

    def hyperparameters(self) -> np.ndarray:
        """The numeric fields, in order, as float64 (what the compiled kernels read at run
        time: one kernel serves every value)."""
        return np.array([float(getattr(self, field.name)) for field in fields(self)])

    def step(self, theta: np.ndarray, grad: np.ndarray, state: list[np.ndarray],
             lr: float) -> None:
        """Update ``theta`` and its ``state`` (one array per state name, each the shape of
        ``theta``) in place, from ``grad``: the definition on whole arrays."""
        new = self.update(theta, grad, lr, *state)
        new = new if isinstance(new, tuple) else (new,)
        if len(new) != 1 + len(state):
            expected = "the new p" + (f", then {', '.join(self.state)}" if state else "")
            raise DefinitionError(
                f"optimizer {type(self).__qualname__}'s update must return {1 + len(state)} "
                f"value(s) ({expected}), got {len(new)}: a state it does not return would "
                "stay 0")
        theta[...] = new[0]
        for slot, value in zip(state, new[1:]):
            slot[...] = value

    def __repr__(self) -> str:
        values = ", ".join(f"{field.name}={getattr(self, field.name)!r}" for field in fields(self))
        return f"{self.name}({values})" if values else self.name


@dataclass(frozen=True, repr=False)
class SGD(Optimizer):
    """Plain stochastic gradient descent, the notes' optimizer: p ← p − lr g."""

    name = "sgd"

    def update(self, p, g, lr):
        return p - lr * g


@dataclass(frozen=True, repr=False)
class Momentum(Optimizer):
    """SGD with momentum μ, PyTorch's ``SGD(momentum=μ)`` (dampening 0, not Nesterov):
    v ← μ v + g, p ← p − lr v."""

    name = "momentum"
    state = ("velocity",)
    ranges = {"momentum": (0.0, math.inf)}
    momentum: float = 0.9

    def update(self, p, g, lr, velocity):
        velocity_next = self.momentum * velocity + g
        return p - lr * velocity_next, velocity_next


@dataclass(frozen=True, repr=False)
class Adam(Optimizer):
    """Adam, PyTorch's ``Adam(betas=(beta1, beta2), eps=eps)`` with its defaults: moments m
    and v of the gradient, bias-corrected by the step count t."""

    name = "adam"
    state = ("m", "v", "t")
    ranges = {"beta1": (0.0, 1.0), "beta2": (0.0, 1.0), "eps": (0.0, math.inf)}
    beta1: float = 0.9
    beta2: float = 0.999
    eps: float = 1e-8

    def update(self, p, g, lr, m, v, t):
        t_next = t + 1.0
        m_next = self.beta1 * m + (1.0 - self.beta1) * g
        v_next = self.beta2 * v + (1.0 - self.beta2) * g * g
        step_size = lr / (1.0 - self.beta1 ** t_next)
        denominator = sqrt(v_next) / sqrt(1.0 - self.beta2 ** t_next) + self.eps
        return p - step_size * (m_next / denominator), m_next, v_next, t_next


OPTIMIZERS: dict[str, type[Optimizer]] = {cls.name: cls for cls in (SGD, Momentum, Adam)}
"""Every optimizer by name: the built-in ones and those ``tinynet.optimizers.register``
added (:mod:`tinynet.registering`)."""


def get_optimizer(optimizer: str | Optimizer) -> Optimizer:
    """The optimizer a spec names: a name of :data:`OPTIMIZERS` (``"adam"``, its default
    hyperparameters) or a name with hyperparameters, as the optimizer's ``repr`` writes it
    (``"momentum(momentum=0.95)"``, ``"adam(beta1=0.8, eps=1e-6)"``); an :class:`Optimizer` is
    returned as it is."""
    if isinstance(optimizer, Optimizer):
        return optimizer
    return from_spec(optimizer, "optimizer", OPTIMIZERS, "adam(beta1=0.8)", "hyperparameter")


@dataclass
class State:
    """An optimizer's state for one network: ``values`` (k, P), slot i holding
    ``optimizer.state[i]`` of every parameter in :func:`tinynet.packing.pack` order."""

    optimizer: Optimizer
    values: np.ndarray

    def __repr__(self) -> str:
        return (f"State({self.optimizer!r}: {', '.join(self.optimizer.state)} of "
                f"{self.values.shape[1]} parameters)")


def initial_state(optimizer: Optimizer, parameters: int) -> np.ndarray:
    """A fresh state: zeros (k, P)."""
    return np.zeros((len(optimizer.state), parameters))


def state_of(net: object, optimizer: Optimizer, parameters: int) -> np.ndarray:
    """A copy of the state ``net`` keeps for ``optimizer`` (:class:`State`), or a fresh one if
    it keeps none for it (another optimizer or other hyperparameters trained it last)."""
    kept = getattr(net, "optimizer_state", None)
    if kept is not None and kept.optimizer == optimizer and \
            kept.values.shape == (len(optimizer.state), parameters):
        return kept.values.copy()
    return initial_state(optimizer, parameters)


def keep_state(net: object, optimizer: Optimizer, values: np.ndarray) -> None:
    """Give ``net`` the state ``values`` (k, P) of ``optimizer`` (none for a stateless one)."""
    net.optimizer_state = State(optimizer, values.copy()) if optimizer.state else None
