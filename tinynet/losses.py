"""Losses: each one's value and gradient, defined once, side by side.

For predictions ``Y_hat`` and targets ``Y`` of shape ``(B, n_out)`` a loss here is summed over
the outputs and averaged over the batch::

    L = (1/B) Σ_b Σ_k ℓ(Y_hat[b,k], Y[b,k])            dL/dY_hat[b,k] = (1/B) ℓ'(Y_hat[b,k], Y[b,k])

Each loss is one method, ``value_and_gradient(y_hat, y, batch)``, giving one output's term ℓ
of the loss and its term of dL/dŷ (with the 1/B of the average), written in the words of
:mod:`tinynet.maths`. The NumPy backend calls it on whole arrays; the compiled backend writes
the same lines into its kernels (:mod:`tinynet.compiled.render`). Adding a loss is one class
here (or in your own code); ``tinynet.check`` holds it to finite differences, and
``tinynet.losses.register`` (:mod:`tinynet.registering`) makes it available by name.

A loss may also give its gradient through a sigmoid output, dL/dz for ŷ = σ(z), as
``gradient_through_sigmoid(y_hat, y, batch)``: binary cross-entropy's is ŷ − y over B, which
never divides by ŷ (1 − ŷ). Every backend then uses it on a network whose output layer is a
:class:`~tinynet.activations.Sigmoid`, in place of dL/dŷ times σ'(z).

Cross-entropy, on a :class:`~tinynet.activations.Softmax` output, gives its gradient through
the softmax in the same way, ``gradient_through_softmax(y_hat, y, batch)``: p − y over B for
probabilities p and targets y whose rows sum to 1 (one-hot rows of class labels).

The mean squared error is the notes' loss: for one sample with one output ``L = (y_hat - y)²``
and ``dL/dy_hat = 2 (y_hat - y)``. Averaging over the batch keeps a minibatch step the same
size as a per-sample step; summing over outputs keeps each output's gradient independent of
how many outputs there are. (PyTorch's ``MSELoss`` also divides by ``n_out``; with one output,
as in XOR, the two agree.)

Every function also takes a leading members axis, ``(S, B, n_out)``, for S networks trained
side by side (:mod:`tinynet.reference`): then the loss is one per network, shape (S,).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields
from typing import ClassVar

import numpy as np

from .activations import Activation, Sigmoid, Softmax
from .init.registry import from_spec
from .maths import log, where
from .validation import ShapeError, UnknownNameError, check_fields

__all__ = ["Loss", "MSE", "BCE", "Huber", "CrossEntropy", "THROUGH", "LOSSES", "check_output",
           "get_loss", "mse", "mse_gradient"]


@dataclass(frozen=True, repr=False)
class Loss:
    """Base class: ``value_and_gradient(y_hat, y, batch)`` = (ℓ, ℓ' / B) for one output of
    one sample in a batch of ``batch``, element-wise; from it :meth:`value` and
    :meth:`gradient` of whole batches. The term ℓ must not depend on ``batch`` (an epoch's
    loss is the mean of its samples' terms, whatever the batches).

    Your own loss: a subclass with a ``name`` and ``value_and_gradient``, decorated
    ``@dataclass(frozen=True)`` with its numeric parameters as fields (each a finite real
    number, refused when the loss is made, otherwise), written with
    :mod:`tinynet.maths` and arithmetic (then both backends build it from that one method).
    ``bounds`` is the interval predictions and targets must lie in.
    """

    name: ClassVar[str] = ""
    bounds: ClassVar[tuple[float, float]] = (-math.inf, math.inf)

    def __post_init__(self) -> None:
        """Every parameter (dataclass field) must be a finite real number
        (:func:`~tinynet.validation.check_fields`)."""
        check_fields(self)

    def value_and_gradient(self, y_hat: np.ndarray, y: np.ndarray,
                           batch: int) -> tuple[np.ndarray, np.ndarray]:
        """``(term, gradient)``: the definition, element-wise (see the class)."""
        raise NotImplementedError

    def value(self, y_hat: np.ndarray, y: np.ndarray) -> float | np.ndarray:
        """L = (1/B) Σ terms, for arrays (B, n_out): a float; for (S, B, n_out): shape (S,)."""
        _check_same_shape(y_hat, y)
        terms, _ = self.value_and_gradient(y_hat, y, y.shape[-2])
        total = np.sum(np.broadcast_to(terms, y.shape), axis=(-2, -1)) / y.shape[-2]
        return float(total) if np.ndim(total) == 0 else total

    def gradient(self, y_hat: np.ndarray, y: np.ndarray) -> np.ndarray:
        """dL/dŷ, the shape of ``y_hat``: (B, n_out) or (S, B, n_out)."""
        _check_same_shape(y_hat, y)
        return self.value_and_gradient(y_hat, y, y.shape[-2])[1]

    def through_output(self, output: Activation) -> str | None:
        """The name of the method that gives dL/dz of an output layer with activation
        ``output`` directly, or None: ``"gradient_through_sigmoid"`` when the loss has one
        (:meth:`through`) and the layer is a :class:`~tinynet.activations.Sigmoid` itself (a
        subclass may compute something else); ``"gradient_through_softmax"`` likewise for a
        :class:`~tinynet.activations.Softmax`. Every backend asks this, and only this."""
        method = THROUGH.get(type(output))
        return method if method is not None and self.through(method) else None

    def through(self, method: str) -> bool:
        """Whether this loss gives its gradient through an output by ``method``
        (``gradient_through_sigmoid``; see the module's docstring): only when the class that
        defines its ``value_and_gradient`` defines that too, so that a subclass with a loss
        of its own never trains on its parent's gradient."""
        owner = next(klass for klass in type(self).__mro__
                     if "value_and_gradient" in vars(klass))
        return method in vars(owner)

    def through_sigmoid(self) -> bool:
        """Whether this loss gives its gradient through a sigmoid output (:meth:`through`)."""
        return self.through("gradient_through_sigmoid")

    def __repr__(self) -> str:
        values = ", ".join(f"{field.name}={getattr(self, field.name)!r}" for field in fields(self))
        return f"{self.name}({values})" if values else self.name


@dataclass(frozen=True, repr=False)
class MSE(Loss):
    """Mean squared error: ℓ = (ŷ − y)², dL/dŷ = (2/B)(ŷ − y)."""

    name = "mse"

    def value_and_gradient(self, y_hat, y, batch):
        diff = y_hat - y
        return diff * diff, (2.0 / batch) * diff


@dataclass(frozen=True, repr=False)
class BCE(Loss):
    """Binary cross-entropy, PyTorch's ``BCELoss``: for predictions ŷ in [0, 1] and targets y
    in [0, 1], ℓ = −[y log ŷ + (1 − y) log(1 − ŷ)], each log at least −100 (so that ŷ = 0 or 1
    gives a finite loss, as in PyTorch), and dL/dŷ = (ŷ − y) / (ŷ (1 − ŷ) B).

    Through a sigmoid output ŷ = σ(z), dL/dz = dL/dŷ · ŷ (1 − ŷ) = (ŷ − y) / B: the gradient
    every backend uses there, stable where ŷ (1 − ŷ) rounds to 0.
    """

    name = "bce"
    bounds = (0.0, 1.0)

    def value_and_gradient(self, y_hat, y, batch):
        log_p = log(y_hat)
        log_q = log(1.0 - y_hat)
        term = -(y * where(log_p > -100.0, log_p, -100.0)
                 + (1.0 - y) * where(log_q > -100.0, log_q, -100.0))
        return term, (y_hat - y) / (y_hat * (1.0 - y_hat) * batch)

    def gradient_through_sigmoid(self, y_hat, y, batch):
        return (y_hat - y) / batch


@dataclass(frozen=True, repr=False)
class Huber(Loss):
    """The Huber loss, PyTorch's ``HuberLoss(delta=δ)``: quadratic near the target and linear
    beyond δ, so that a far-off prediction pulls no harder than δ. With d = ŷ − y,
    ℓ = ½ d² if |d| < δ, else δ (|d| − ½ δ); dL/dŷ = d / B if |d| < δ, else ±δ / B
    (the sign of d). δ > 0."""

    name = "huber"
    delta: float = 1.0

    def __post_init__(self) -> None:
        super().__post_init__()
        if not self.delta > 0:
            raise ValueError(f"huber's delta must be positive, got {self.delta!r}")

    def value_and_gradient(self, y_hat, y, batch):
        diff = y_hat - y
        size = abs(diff)
        inside = size < self.delta
        term = where(inside, 0.5 * diff * diff, self.delta * (size - 0.5 * self.delta))
        slope = where(inside, diff, where(diff > 0.0, self.delta, -self.delta))
        return term, slope / batch


@dataclass(frozen=True, repr=False)
class CrossEntropy(Loss):
    """Cross-entropy of a softmax output, PyTorch's ``CrossEntropyLoss`` (which takes z and
    applies the softmax itself): for probabilities p and targets y whose rows sum to 1 (one
    class label's one-hot row, or probabilities), ℓ = −y log p per output, the log at least
    −100 (p below e^−100 ≈ 4e-44 rounds far from PyTorch's log-softmax, and p = 0 would give
    an infinite loss), and dL/dp = −y / (p B).

    Through the softmax, dL/dz_k = Σ_j dL/dp_j · p_j (δ_jk − p_k) = (p_k − y_k) / B, given
    Σ_j y_j = 1: the gradient every backend uses, with no division by p. Cross-entropy
    trains a :class:`~tinynet.activations.Softmax` output only (a sigmoid output's is
    :class:`BCE`).
    """

    name = "cross_entropy"
    bounds = (0.0, 1.0)

    def value_and_gradient(self, y_hat, y, batch):
        log_p = log(y_hat)
        return -y * where(log_p > -100.0, log_p, -100.0), -y / (y_hat * batch)

    def gradient_through_softmax(self, y_hat, y, batch):
        return (y_hat - y) / batch


THROUGH: dict[type[Activation], str] = {Sigmoid: "gradient_through_sigmoid",
                                        Softmax: "gradient_through_softmax"}
"""The output layers a loss may give its gradient through, and the method that gives it."""

LOSSES: dict[str, type[Loss]] = {cls.name: cls for cls in (MSE, BCE, Huber, CrossEntropy)}
"""Every loss by name: the built-in ones and those ``tinynet.losses.register`` added
(:mod:`tinynet.registering`)."""


def get_loss(loss: str | Loss) -> Loss:
    """The loss a spec names: a name of :data:`LOSSES` (``"huber"``, its default parameters)
    or a name with parameters, as the loss's ``repr`` writes it (``"huber(delta=0.5)"``); a
    :class:`Loss` is returned as it is."""
    if isinstance(loss, Loss):
        return loss
    if not isinstance(loss, str):
        raise UnknownNameError("loss", loss, LOSSES)
    return from_spec(loss, "loss", LOSSES, "huber(delta=0.5)")


def check_output(loss: Loss, output: Activation) -> None:
    """Raise ValueError, in one line, unless ``loss`` trains an output layer of activation
    ``output``: a softmax (an activation over a layer's units) trains only with a loss that
    gives its gradient through it, cross-entropy; and cross-entropy trains only a softmax.
    An activation over units that is not tinynet's :class:`~tinynet.activations.Softmax`
    itself (a subclass, or one of your own) is refused: p − y is that softmax's gradient, and
    no backend would know another's."""
    if output.over_units and type(output) not in THROUGH:
        raise ValueError(f"output activation {output!r} ({type(output).__name__}) is over a "
                         "layer's units but is not tinynet's Softmax: a loss's gradient through "
                         "it (cross-entropy's p - y) is Softmax's alone, so nothing can train "
                         "or compile it; use output='softmax'")
    if output.over_units and loss.through_output(output) is None:
        raise ValueError(f"a {output!r} output trains with loss='cross_entropy' only (its "
                         "Jacobian is not diagonal; cross-entropy gives dL/dz = p - y through "
                         f"it), got loss {loss.name!r}")
    if loss.through("gradient_through_softmax") and not output.over_units:
        raise ValueError(f"loss {loss.name!r} needs a softmax output layer (it gives dL/dz "
                         f"through the softmax), but the output layer's activation is "
                         f"{output!r}: use output='softmax', or loss='bce' for a sigmoid output")


def _check_same_shape(y_hat: np.ndarray, y: np.ndarray) -> None:
    if y_hat.shape != y.shape:  # (4, 1) against (4,) would broadcast to (4, 4)
        raise ShapeError(f"y_hat and y must have the same shape, got {y_hat.shape} and {y.shape}")


def mse(y_hat: np.ndarray, y: np.ndarray) -> float | np.ndarray:
    """L = (1/B) Σ (y_hat - y)² for arrays (B, n_out): a float; for (S, B, n_out): shape (S,)."""
    return MSE().value(y_hat, y)


def mse_gradient(y_hat: np.ndarray, y: np.ndarray) -> np.ndarray:
    """dL/dy_hat = (2/B) (y_hat - y), the shape of ``y_hat``: (B, n_out) or (S, B, n_out)."""
    return MSE().gradient(y_hat, y)
