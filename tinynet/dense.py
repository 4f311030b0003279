"""The NumPy backend's words for the training step of :mod:`tinynet.step`: a dense layer's
array operations, forward and backward side by side, for one network or many, and the loss.

Shapes (B = batch size)::

    X  (B, n_in)     W  (n_out, n_in)     b  (n_out,)     Z, A  (B, n_out)

    forward:   Z = X Wᵀ + b                                                pre_activation
               A = φ(Z), with φ'(Z) for backward                                activate
    backward:  dZ = dL/dA ⊙ φ'(Z)          (B, n_out)                 backward_activation
               dW = dZᵀ X,   db = Σ_b dZ    (n_out, n_in), (n_out,)    backward_parameters
               dX = dZ W                    (B, n_in)                  backward_input
    the loss:  ℓ and dL/dŷ (or dL/dz through the output sigmoid or softmax)          loss

:class:`tinynet.step.Dense` calls them in that order (its ``ops`` is this module), and
:func:`tinynet.step.train_step` calls :func:`loss`. :func:`forward` is a forward pass that
keeps nothing for a backward one (Z and A, for predictions).

Every array may carry a leading members axis, (S, B, n_in), (S, n_out, n_in), (S, n_out), for
S networks of one shape computed at once: :class:`tinynet.layers.Layer` calls these functions
without it, the NumPy training loop (:mod:`tinynet.reference`) with it.

The products are sums of products in a fixed order, one term after the other from the first
(as the compiled kernels sum them), while the sum has at most :data:`ORDERED_MAX` terms and
the product at most :data:`ORDERED_MAX_WORK` multiply-adds per network: then
a member of a stack is computed bit for bit as the same network alone, whatever the memory
order, so a NumPy ensemble member equals its single fit. Longer sums go to ``np.matmul``
(BLAS, with ``np.einsum`` for a stack of one-sample batches, where matmul would make a tiny
BLAS call per member), which rounds in an order of its own: a member then agrees with its
single fit to rounding.
"""

from __future__ import annotations

import numpy as np

from .activations import Activation, evaluate
from .losses import Loss

__all__ = ["ORDERED_MAX", "ORDERED_MAX_WORK", "pre_activation", "activate", "forward",
           "backward_activation", "backward_parameters",
           "backward_input", "loss"]


ORDERED_MAX = 16
"""The most terms a product's sums have for them to be summed in order, term by term (see the
module's docstring). Each term is one NumPy call over the whole batch (and every member), so
the ordered sum costs ``ORDERED_MAX`` calls at most; beyond, one matmul call is cheaper."""

ORDERED_MAX_WORK = 128
"""Nor may a product have more multiply-adds per network than this (one sample through an
8 x 16 layer): a bigger product is one BLAS call's job, whatever its sums' length (summed in
order, 8 x 8 layers on batches of 64 took 3.6 times as long in
``benchmarks/bench_jit_vs_numpy.py``'s table (a), and 2 x 2 layers 1.6 times)."""


def _ordered(terms: int, outputs: int) -> bool:
    """Whether a product of ``outputs`` sums of ``terms`` terms each (per network) is summed
    in order: decided by one network's shapes, so the same with or without a members axis."""
    return terms <= ORDERED_MAX and terms * outputs <= ORDERED_MAX_WORK


def _one_sample_stack(batch: np.ndarray) -> bool:
    """True for a batch of one sample for each of many networks: (S, 1, ·) with S > 1."""
    return batch.ndim == 3 and batch.shape[1] == 1 and batch.shape[0] > 1


def _sum_of_products(x: np.ndarray, w: np.ndarray | None, axis: int) -> np.ndarray:
    """Σ_k x_k w_k along ``axis`` (negative) of the broadcast product x·w (of x alone if ``w``
    is None), added one term after the other from k = 0. For one network (x of 3 dimensions),
    all the terms in one call and their running sum (``np.add.accumulate``, which adds in
    order by definition); for a stack (members first, stored members fastest), term by term,
    each term one call over every member, which is faster there. Both add the same numbers in
    the same order: the same bits."""
    after = (slice(None),) * (-axis - 1)
    if x.ndim == 3:
        return np.add.accumulate(x if w is None else x * w, axis=axis)[(Ellipsis, -1, *after)]
    total = None
    for k in range(max(x.shape[axis], 1 if w is None else w.shape[axis])):
        at = (Ellipsis, k, *after)
        term = x[at] if w is None else x[at] * w[at]
        total = term if total is None else total + term
    return total


def pre_activation(X: np.ndarray, W: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Return Z = X Wᵀ + b, (B, n_out): Z[r, j] = Σ_i X[r, i] W[j, i] + b[j]."""
    n_in = X.shape[-1]
    if _ordered(n_in, X.shape[-2] * W.shape[-2]):
        Z = _sum_of_products(X[..., :, None, :], W[..., None, :, :], axis=-1)
    elif _one_sample_stack(X):
        Z = np.einsum("sbi,sji->sbj", X, W)
    else:
        Z = X @ W.swapaxes(-1, -2)
    Z += b[..., None, :]
    return Z


def activate(activation: Activation, Z: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Return ``(A, φ'(Z))``: the output and what the backward pass needs of Z, computed
    together by the activation's definition
    (:meth:`~tinynet.activations.Activation.forward_and_derivative`) as it returns them: a
    constant derivative (the identity's 1.0) stays a number, which :func:`backward_activation`
    broadcasts, and the identity's A is Z itself, which no caller changes in place. Anything
    but such a pair is refused (:func:`~tinynet.activations.evaluate`): φ alone, on a
    2-member ensemble's Z, would unpack along the members axis."""
    return evaluate(activation, Z)


def forward(X: np.ndarray, W: np.ndarray, b: np.ndarray,
            activation: Activation) -> tuple[np.ndarray, np.ndarray]:
    """Return ``(Z, A)``: the pre-activation Z = X Wᵀ + b and the output A = φ(Z)."""
    Z = pre_activation(X, W, b)
    return Z, activation.forward(Z)


def backward_activation(dA: np.ndarray, derivative: np.ndarray) -> np.ndarray:
    """Return dL/dZ = dA ⊙ φ'(Z), given ``derivative`` = φ'(Z)."""
    return dA * derivative


def backward_parameters(dZ: np.ndarray, X: np.ndarray, dW: np.ndarray, db: np.ndarray) -> None:
    """Write dW = dZᵀ X (n_out, n_in) and db = Σ_b dZ (n_out,) into ``dW`` and ``db``: sums
    over the batch's rows, dW[j, i] = Σ_r dZ[r, j] X[r, i]."""
    rows = dZ.shape[-2]
    if rows == 1:                                  # one sample: a sum of one term
        db[...] = dZ[..., 0, :]
        np.multiply(dZ[..., 0, :, None], X[..., 0, None, :], out=dW)
        return
    if _ordered(rows, dW.shape[-2] * dW.shape[-1]):
        db[...] = _sum_of_products(dZ[..., :, :, None], None, axis=-3)[..., 0]
        dW[...] = _sum_of_products(dZ[..., :, :, None], X[..., :, None, :], axis=-3)
        return
    dZ.sum(axis=-2, out=db)
    if _one_sample_stack(X):
        np.einsum("sbj,sbi->sji", dZ, X, out=dW)
    else:
        np.matmul(dZ.swapaxes(-1, -2), X, out=dW)


def backward_input(dZ: np.ndarray, W: np.ndarray) -> np.ndarray:
    """Return dL/dX = dZ W, (B, n_in): the gradient passed back to the layer before,
    dX[r, i] = Σ_j dZ[r, j] W[j, i]."""
    n_out = dZ.shape[-1]
    if _ordered(n_out, dZ.shape[-2] * W.shape[-1]):
        return _sum_of_products(dZ[..., :, :, None], W[..., None, :, :], axis=-2)
    if _one_sample_stack(dZ):
        return np.einsum("sbj,sji->sbi", dZ, W)
    return dZ @ W


def loss(loss: Loss, through: str | None, y_hat: np.ndarray,
         y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(ℓ, gradient)``: the loss's terms, one per output, and dL/dŷ, from its definition
    (:meth:`~tinynet.losses.Loss.value_and_gradient`, B the batch's rows); with ``through``
    (``"gradient_through_sigmoid"`` or ``"gradient_through_softmax"``:
    :meth:`~tinynet.losses.Loss.through_output`), the gradient is dL/dz of the output layer
    instead, by that method."""
    batch = y.shape[-2]
    terms, gradient = loss.value_and_gradient(y_hat, y, batch)
    if through:
        gradient = getattr(loss, through)(y_hat, y, batch)
    return terms, gradient
