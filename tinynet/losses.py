"""Mean squared error: its value and its gradient, side by side.

For predictions ``Y_hat`` and targets ``Y`` of shape ``(B, n_out)``::

    L = (1/B) Σ_b Σ_k (Y_hat[b,k] - Y[b,k])²          (summed over outputs, averaged over the batch)
    dL/dY_hat = (2/B) (Y_hat - Y)

For one sample with one output this is the notes' ``L = (y_hat - y)²`` and
``dL/dy_hat = 2 (y_hat - y)``. Averaging over the batch keeps a minibatch step the same size as
a per-sample step; summing over outputs keeps each output's gradient independent of how many
outputs there are. (PyTorch's ``MSELoss`` also divides by ``n_out``; with one output, as in XOR,
the two agree.)

Both functions also take a leading members axis, ``(S, B, n_out)``, for S networks trained
side by side (:mod:`tinynet.reference`): then ``mse`` gives one loss per network, shape (S,).
"""

from __future__ import annotations

import numpy as np

from .validation import ShapeError

__all__ = ["mse", "mse_gradient"]


def _check_same_shape(y_hat: np.ndarray, y: np.ndarray) -> None:
    if y_hat.shape != y.shape:  # (4, 1) against (4,) would broadcast to (4, 4)
        raise ShapeError(f"y_hat and y must have the same shape, got {y_hat.shape} and {y.shape}")


def mse(y_hat: np.ndarray, y: np.ndarray) -> float | np.ndarray:
    """L = (1/B) Σ (y_hat - y)² for arrays (B, n_out): a float; for (S, B, n_out): shape (S,)."""
    _check_same_shape(y_hat, y)
    diff = y_hat - y
    total = np.sum(diff * diff, axis=(-2, -1)) / y.shape[-2]
    return float(total) if np.ndim(total) == 0 else total


def mse_gradient(y_hat: np.ndarray, y: np.ndarray) -> np.ndarray:
    """dL/dy_hat = (2/B) (y_hat - y), the shape of ``y_hat``: (B, n_out) or (S, B, n_out)."""
    _check_same_shape(y_hat, y)
    return (2.0 / y.shape[-2]) * (y_hat - y)
