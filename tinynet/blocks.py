"""The NumPy backend's words for a residual block and its LayerNorm (:class:`tinynet.step.
Residual`, :class:`tinynet.step.Norm`): the skip's sum, the gradient of the branch's scale,
and LayerNorm's forward and backward, side by side.

Shapes (B = batch size, n the block's width; every array may carry a leading members axis,
as :mod:`tinynet.dense`'s)::

    X, F, Y, dY   (B, n)      γ, β   (n,)      α   (1,)      x̂ (B, n),  1/√(σ² + ε)  (B, 1)

    the skip:     S = s·X + α·F                                              skip_sum
                  dα = Σ_rows Σ_units dS ⊙ F                           scale_gradient
                  dF = α·dS                                                    scaled
    LayerNorm:    μ = Σ_j x_j / n,   σ² = Σ_j (x_j − μ)² / n  (biased, as PyTorch's)
                  x̂ = (x − μ) / √(σ² + ε)                                   normalize
                  Y = γ ⊙ x̂ + β                                           scale_shift
                  dγ = Σ_rows dY ⊙ x̂,   dβ = Σ_rows dY                  norm_gradients
                  dx̂ = dY ⊙ γ
                  dX = (dx̂ − Σ_j dx̂_j / n − x̂ ⊙ Σ_j dx̂_j x̂_j / n) / √(σ² + ε)
                                                                    normalize_backward

Every sum is added in order, one term after the other (:func:`tinynet.maths.unit_sum` over a
row's units, ``np.add.accumulate`` over the rows), so that a member of a stack is computed
bit for bit as the same network alone, in any memory order.
"""

from __future__ import annotations

import numpy as np

from .maths import sqrt, unit_sum

__all__ = ["skip_sum", "scale_gradient", "scaled", "normalize", "scale_shift",
           "norm_gradients", "normalize_backward"]


def _per_network(value: np.ndarray | float) -> np.ndarray | float:
    """A per-network scalar, (…, 1), shaped to broadcast over a batch (…, B, n)."""
    return value[..., None, :] if isinstance(value, np.ndarray) else value


def skip_sum(skip: float, X: np.ndarray, scale: np.ndarray | float,
             F: np.ndarray) -> np.ndarray:
    """Return S = s·X + α·F, (B, n): the skip ``X`` scaled by ``skip`` and the branch ``F``
    by ``scale`` (a constant, or α (1,) per network)."""
    return skip * X + _per_network(scale) * F


def scale_gradient(dS: np.ndarray, F: np.ndarray, dscale: np.ndarray) -> None:
    """Write dα = Σ_rows Σ_units dS ⊙ F into ``dscale`` (1,): every row's units summed in
    order, then the rows in order."""
    rows = unit_sum(dS * F)[..., 0]                                   # (…, B)
    dscale[..., 0] = np.add.accumulate(rows, axis=-1)[..., -1]


def scaled(scale: np.ndarray | float, dS: np.ndarray) -> np.ndarray:
    """Return α·dS, the gradient that reaches the branch's output."""
    return _per_network(scale) * dS


def normalize(X: np.ndarray, eps: float) -> tuple[np.ndarray, np.ndarray]:
    """Return ``(x̂, 1/√(σ² + ε))``: each row's units less their mean, over their standard
    deviation (the biased variance, as ``torch.nn.LayerNorm``), (B, n) and (B, 1)."""
    n = X.shape[-1]
    centred = X - unit_sum(X) / n
    inverse_std = 1.0 / sqrt(unit_sum(centred * centred) / n + eps)
    return centred * inverse_std, inverse_std


def scale_shift(normalized: np.ndarray, gain: np.ndarray, bias: np.ndarray) -> np.ndarray:
    """Return Y = γ ⊙ x̂ + β, (B, n)."""
    return normalized * gain[..., None, :] + bias[..., None, :]


def norm_gradients(dY: np.ndarray, normalized: np.ndarray, dgain: np.ndarray,
                   dbias: np.ndarray) -> None:
    """Write dγ = Σ_rows dY ⊙ x̂ and dβ = Σ_rows dY, (n,), into ``dgain`` and ``dbias``, the
    rows added in order."""
    dgain[...] = np.add.accumulate(dY * normalized, axis=-2)[..., -1, :]
    dbias[...] = np.add.accumulate(dY, axis=-2)[..., -1, :]


def normalize_backward(dY: np.ndarray, gain: np.ndarray, normalized: np.ndarray,
                       inverse_std: np.ndarray) -> np.ndarray:
    """Return dL/dX, (B, n), from dL/dY through Y = γ ⊙ x̂ + β and x̂'s normalization."""
    n = dY.shape[-1]
    d_normalized = dY * gain[..., None, :]
    return (d_normalized - unit_sum(d_normalized) / n
            - normalized * (unit_sum(d_normalized * normalized) / n)) * inverse_std
