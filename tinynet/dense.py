"""The maths of a dense layer, forward and backward side by side, for one network or many.

Shapes (B = batch size)::

    X  (B, n_in)     W  (n_out, n_in)     b  (n_out,)     Z, A  (B, n_out)

    forward:   Z = X Wᵀ + b,   A = φ(Z)                                         forward
    backward:  dZ = dL/dA ⊙ φ'(Z)          (B, n_out)                 backward_activation
               dW = dZᵀ X,   db = Σ_b dZ    (n_out, n_in), (n_out,)    backward_parameters
               dX = dZ W                    (B, n_in)                  backward_input

:func:`backward` is the three steps in a row. They are separate functions too, so that a
training loop can update W between the second and the third (``update="during_backward"``
in :func:`tinynet.fit`: the gradient passed back is then computed with the new W). A training
loop needs φ'(Z) after every forward pass: :func:`forward_with_derivative` returns it with A,
the two computed together (:meth:`~tinynet.activations.Activation.forward_and_derivative`),
and backward_activation takes it.

Every array may carry a leading members axis, (S, B, n_in), (S, n_out, n_in), (S, n_out), for
S networks of one shape computed at once: :class:`tinynet.layers.Layer` calls these functions
without it, the NumPy training loop (:mod:`tinynet.reference`) with it.

The products are ``np.matmul``, except for a stack of one-sample batches (per-sample SGD of
many networks), where ``np.einsum`` is faster: matmul makes a tiny BLAS call per member there,
einsum one loop, which runs over the members when they are the fastest axis in memory, as
:mod:`tinynet.reference` stores them for per-sample SGD (``benchmarks/bench_dense_formulation.py``,
members fastest: einsum 1.4–5× faster than matmul for one layer at 100 members, 1–1.3× for
2 → 2, and 2–7× at 1,000; for the whole SGD step of a 2-2-2-1 network a tie at 100 members
and 1.5–1.7× faster at 1,000; matmul is faster with no members axis, and 2–3× faster with
batches of 4 stored members slowest).
"""

from __future__ import annotations

import numpy as np

from .activations import Activation

__all__ = ["pre_activation", "forward", "forward_with_derivative", "backward",
           "backward_activation", "backward_parameters", "backward_input"]


def _one_sample_stack(batch: np.ndarray) -> bool:
    """True for a batch of one sample for each of many networks: (S, 1, ·) with S > 1."""
    return batch.ndim == 3 and batch.shape[1] == 1 and batch.shape[0] > 1


def pre_activation(X: np.ndarray, W: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Return Z = X Wᵀ + b, (B, n_out)."""
    if _one_sample_stack(X):
        Z = np.einsum("sbi,sji->sbj", X, W)
    else:
        Z = X @ W.swapaxes(-1, -2)
    Z += b[..., None, :]
    return Z


def forward(X: np.ndarray, W: np.ndarray, b: np.ndarray,
            activation: Activation) -> tuple[np.ndarray, np.ndarray]:
    """Return ``(Z, A)``: the pre-activation Z = X Wᵀ + b and the output A = φ(Z)."""
    Z = pre_activation(X, W, b)
    return Z, activation.forward(Z)


def forward_with_derivative(X: np.ndarray, W: np.ndarray, b: np.ndarray,
                            activation: Activation) -> tuple[np.ndarray, np.ndarray]:
    """Return ``(A, φ'(Z))``: the output and what the backward pass needs of Z, computed
    together by the activation's definition
    (:meth:`~tinynet.activations.Activation.forward_and_derivative`) as it returns them: a
    constant derivative (the identity's 1.0) stays a number, which ``backward_activation``
    broadcasts, and the identity's A is Z itself, which no caller changes in place."""
    return activation.forward_and_derivative(pre_activation(X, W, b))


def backward_activation(dA: np.ndarray, derivative: np.ndarray) -> np.ndarray:
    """Return dL/dZ = dA ⊙ φ'(Z), given ``derivative`` = φ'(Z)."""
    return dA * derivative


def backward_parameters(dZ: np.ndarray, X: np.ndarray, dW: np.ndarray, db: np.ndarray) -> None:
    """Write dW = dZᵀ X (n_out, n_in) and db = Σ_b dZ (n_out,) into ``dW`` and ``db``."""
    dZ.sum(axis=-2, out=db)
    if _one_sample_stack(X):
        np.einsum("sbj,sbi->sji", dZ, X, out=dW)
    else:
        np.matmul(dZ.swapaxes(-1, -2), X, out=dW)


def backward_input(dZ: np.ndarray, W: np.ndarray) -> np.ndarray:
    """Return dL/dX = dZ W, (B, n_in): the gradient passed back to the layer before."""
    if _one_sample_stack(dZ):
        return np.einsum("sbj,sji->sbi", dZ, W)
    return dZ @ W


def backward(dA: np.ndarray, X: np.ndarray, W: np.ndarray, Z: np.ndarray, activation: Activation,
             dW: np.ndarray, db: np.ndarray, input_gradient: bool = True) -> np.ndarray | None:
    """Given dL/dA, write dW = dZᵀ X and db = Σ_b dZ (with dZ = dA ⊙ φ'(Z)) into ``dW`` and
    ``db``; return dL/dX = dZ W, or None when ``input_gradient`` is False (the first layer)."""
    dZ = backward_activation(dA, activation.derivative(Z))
    backward_parameters(dZ, X, dW, db)
    return backward_input(dZ, W) if input_gradient else None
