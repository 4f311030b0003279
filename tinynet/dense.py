"""The maths of a dense layer, forward and backward side by side, for one network or many.

Shapes (B = batch size)::

    X  (B, n_in)     W  (n_out, n_in)     b  (n_out,)     Z, A  (B, n_out)

    forward:   Z = X Wᵀ + b,   A = φ(Z)
    backward:  dZ = dL/dA ⊙ φ'(Z)          (B, n_out)                 backward_activation
               dW = dZᵀ X,   db = Σ_b dZ    (n_out, n_in), (n_out,)    backward_parameters
               dX = dZ W                    (B, n_in)                  backward_input

:func:`backward` is the three steps in a row. They are separate functions too, so that a
training loop can update W between the second and the third (``update="during_backward"``
in :func:`tinynet.fit`: the gradient passed back is then computed with the new W).

Every array may carry a leading members axis, (S, B, n_in), (S, n_out, n_in), (S, n_out), for
S networks of one shape computed at once: :class:`tinynet.layers.Layer` calls these functions
without it, the NumPy training loop (:mod:`tinynet.reference`) with it.

The products are ``np.matmul``, except for a stack of one-sample batches (per-sample SGD of
many networks), where ``np.einsum`` is faster: matmul makes a tiny BLAS call per member there
(``benchmarks/bench_dense_formulation.py``: einsum about 1.5× faster for the whole SGD step
at 1,000 members, a tie at 100; matmul faster with no members axis, and 2–3× faster with
batches of 4).
"""

from __future__ import annotations

import numpy as np

from .activations import Activation

__all__ = ["forward", "backward", "backward_activation", "backward_parameters",
           "backward_input"]


def _one_sample_stack(batch: np.ndarray) -> bool:
    """True for a batch of one sample for each of many networks: (S, 1, ·) with S > 1."""
    return batch.ndim == 3 and batch.shape[1] == 1 and batch.shape[0] > 1


def forward(X: np.ndarray, W: np.ndarray, b: np.ndarray,
            activation: Activation) -> tuple[np.ndarray, np.ndarray]:
    """Return ``(Z, A)``: the pre-activation Z = X Wᵀ + b and the output A = φ(Z)."""
    if _one_sample_stack(X):
        Z = np.einsum("sbi,sji->sbj", X, W)
    else:
        Z = X @ W.swapaxes(-1, -2)
    Z += b[..., None, :]
    return Z, activation.forward(Z)


def backward_activation(dA: np.ndarray, Z: np.ndarray, activation: Activation) -> np.ndarray:
    """Return dL/dZ = dA ⊙ φ'(Z), shaped as Z."""
    return dA * activation.derivative(Z)


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
    dZ = backward_activation(dA, Z, activation)
    backward_parameters(dZ, X, dW, db)
    return backward_input(dZ, W) if input_gradient else None
