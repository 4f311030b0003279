"""Mean squared error: its value and its gradient, side by side.

For predictions ``Y_hat`` and targets ``Y`` of shape ``(B, n_out)``::

    L = (1/B) Σ_b Σ_k (Y_hat[b,k] - Y[b,k])²          (summed over outputs, averaged over the batch)
    dL/dY_hat = (2/B) (Y_hat - Y)

For one sample with one output this is the notes' ``L = (y_hat - y)²`` and
``dL/dy_hat = 2 (y_hat - y)``. Averaging over the batch keeps a minibatch step the same size as
a per-sample step; summing over outputs keeps each output's gradient independent of how many
outputs there are. (PyTorch's ``MSELoss`` also divides by ``n_out``; with one output, as in XOR,
the two agree.)
"""

from __future__ import annotations

import numpy as np

from .errors import ShapeError

__all__ = ["mse", "mse_gradient"]


def _check_same_shape(y_hat: np.ndarray, y: np.ndarray) -> None:
    if y_hat.shape != y.shape:  # (4, 1) against (4,) would broadcast to (4, 4)
        raise ShapeError(f"y_hat and y must have the same shape, got {y_hat.shape} and {y.shape}")


def mse(y_hat: np.ndarray, y: np.ndarray) -> float:
    """L = (1/B) Σ (y_hat - y)²  for arrays of shape (B, n_out)."""
    _check_same_shape(y_hat, y)
    diff = y_hat - y
    return float(np.sum(diff * diff) / y.shape[0])


def mse_gradient(y_hat: np.ndarray, y: np.ndarray) -> np.ndarray:
    """dL/dy_hat = (2/B) (y_hat - y), shape (B, n_out)."""
    _check_same_shape(y_hat, y)
    return (2.0 / y.shape[0]) * (y_hat - y)
