"""Compiled kernels (Numba) for one network: dense forward and backward, the SGD step, and a
whole training run in one call.

They compute exactly what :mod:`tinynet.layers` and :mod:`tinynet.training` compute, in the same
order of operations, so that the two backends agree to rounding: a dot product is summed from
the first input to the last, the bias is added after it, and the MSE gradient is
``(2/B)(ŷ − y)``. Underneath they are plain Python: with ``NUMBA_DISABLE_JIT=1`` they run (slowly)
and can be stepped through in a debugger.

Every kernel is compiled with ``error_model="numpy"``: a division by zero gives inf or NaN, as
in NumPy, instead of raising, and without that check in the way, loops of divisions vectorise.

Parameters travel as one flat float64 vector ``theta`` = [W0, b0, W1, b1, ...] (each W row-major
of shape (n_out, n_in)), described by ``layout``, an int64 array with one row per layer:
``(n_in, n_out, offset of W, offset of b)``. Activations travel as ``codes`` (see
:attr:`tinynet.activations.Activation.code`) and ``alphas``.
"""

from __future__ import annotations

import math

import numba
import numpy as np
from numba import njit

from . import shuffle

__all__ = ["vector_exp", "IDENTITY", "SIGMOID", "TANH", "RELU", "LEAKY_RELU", "sigmoid",
           "sigmoid_derivative", "tanh_derivative", "relu", "relu_derivative", "leaky_relu",
           "leaky_relu_derivative", "activate", "activate_derivative", "activate_into",
           "backpropagate_activation", "matmul_into", "dense_forward", "dense_backward",
           "sgd_update", "epoch_order_into", "fit_network", "forward_network", "BLAS_MIN_WORK"]

IDENTITY, SIGMOID, TANH, RELU, LEAKY_RELU = 0, 1, 2, 3, 4

BLAS_MIN_WORK = 32_768
"""Matrix products with at least this many multiply-adds go to BLAS (``np.dot``); smaller ones
are loops, which win there because a BLAS call costs about a microsecond before it starts."""


# --- exp(x), written so that a loop of them vectorises ---------------------------------------

_LN2_HI = 6.93147180369123816490e-01  # ln 2 split in two (fdlibm): k · _LN2_HI is exact
_LN2_LO = 1.90821492927058770002e-10
_INV_LN2 = 1.44269504088896338700e+00
_EXP_TAYLOR = np.array([1.0 / math.factorial(i) for i in range(14)])
with np.errstate(over="ignore"):
    _TWO_POW = np.ldexp(1.0, np.arange(-1075, 1025))  # _TWO_POW[k + 1075] = 2**k; 2**1024 = inf


@njit(cache=True, error_model="numpy")
def vector_exp(x: float) -> float:
    """e^x within 1 ulp of ``np.exp`` for x <= 709 (inf above 709.78, NaN stays NaN).

    e^x = 2^k · e^r with k = round(x / ln 2) and |r| <= ln(2)/2; e^r by its Taylor series to
    degree 13 (truncation error < 1e-17), 2^k from a table. Unlike ``math.exp``, which is a
    call into the C library, this is plain arithmetic and a table lookup, so the compiler can
    run a loop of them on a whole SIMD register at once. Sigmoid only needs x = −|z| <= 0.
    """
    clamped = x if x > -745.2 else -745.2  # below that e^x rounds to 0; NaN lands here too
    clamped = clamped if clamped < 709.8 else 709.8  # above that it is inf
    k = math.floor(clamped * _INV_LN2 + 0.5)
    r = (clamped - k * _LN2_HI) - k * _LN2_LO
    p = _EXP_TAYLOR[13]
    for i in range(12, -1, -1):
        p = p * r + _EXP_TAYLOR[i]
    result = p * _TWO_POW[int(k) + 1075]
    return result if x == x else x


# --- activations: forward and derivative side by side (scalars) ---------------------------

@njit(cache=True, error_model="numpy")
def sigmoid(z: float) -> float:
    """1 / (1 + e^(−z)) as 1/(1 + e) or e/(1 + e), e = exp(−|z|) <= 1: never overflows.

    Written with one division of a chosen numerator, so that a loop of them has no branch.
    """
    e = vector_exp(-abs(z))
    return (1.0 if z >= 0 else e) / (1.0 + e)


@njit(cache=True, error_model="numpy")
def sigmoid_derivative(z: float) -> float:
    """σ'(z) = e / (1 + e)², e = exp(−|z|)."""
    e = vector_exp(-abs(z))
    return e / ((1.0 + e) * (1.0 + e))


@njit(cache=True, error_model="numpy")
def tanh_derivative(z: float) -> float:
    """tanh'(z) = 1 − tanh(z)²."""
    t = math.tanh(z)
    return 1.0 - t * t


@njit(cache=True, error_model="numpy")
def relu(z: float) -> float:
    """z if z > 0 else 0 (also for z = −inf or NaN, as NumPy's ``where(z > 0, z, 0)``)."""
    return z if z > 0 else 0.0


@njit(cache=True, error_model="numpy")
def relu_derivative(z: float) -> float:
    """1 if z > 0 else 0 (so the derivative at 0 is 0)."""
    return 1.0 if z > 0 else 0.0


@njit(cache=True, error_model="numpy")
def leaky_relu(z: float, alpha: float) -> float:
    """z if z > 0 else α z."""
    return z if z > 0 else alpha * z


@njit(cache=True, error_model="numpy")
def leaky_relu_derivative(z: float, alpha: float) -> float:
    """1 if z > 0 else α (so the derivative at 0 is α)."""
    return 1.0 if z > 0 else alpha


@njit(cache=True, error_model="numpy")
def activate(code: int, alpha: float, z: float) -> float:
    """φ(z) for the activation ``code`` (as :mod:`tinynet.activations`)."""
    if code == SIGMOID:
        return sigmoid(z)
    if code == TANH:
        return math.tanh(z)
    if code == RELU:
        return relu(z)
    if code == LEAKY_RELU:
        return leaky_relu(z, alpha)
    return z


@njit(cache=True, error_model="numpy")
def activate_derivative(code: int, alpha: float, z: float) -> float:
    """φ'(z); relu'(0) = 0 and leaky_relu'(0) = alpha, as in :mod:`tinynet.activations`."""
    if code == SIGMOID:
        return sigmoid_derivative(z)
    if code == TANH:
        return tanh_derivative(z)
    if code == RELU:
        return relu_derivative(z)
    if code == LEAKY_RELU:
        return leaky_relu_derivative(z, alpha)
    return 1.0


@njit(cache=True, error_model="numpy")
def activate_into(code, alpha, Z, A):
    """A = φ(Z) element-wise, one loop per activation so that each loop vectorises."""
    batch, width = Z.shape
    if code == SIGMOID:
        for r in range(batch):
            for j in range(width):
                A[r, j] = sigmoid(Z[r, j])
    elif code == LEAKY_RELU:
        for r in range(batch):
            for j in range(width):
                A[r, j] = leaky_relu(Z[r, j], alpha)
    elif code == RELU:
        for r in range(batch):
            for j in range(width):
                A[r, j] = relu(Z[r, j])
    else:
        for r in range(batch):
            for j in range(width):
                A[r, j] = activate(code, alpha, Z[r, j])


@njit(cache=True, error_model="numpy")
def backpropagate_activation(code, alpha, Z, dA, dZ):
    """dZ = dA ⊙ φ'(Z) element-wise, one loop per activation so that each loop vectorises."""
    batch, width = Z.shape
    if code == SIGMOID:
        for r in range(batch):
            for j in range(width):
                dZ[r, j] = dA[r, j] * sigmoid_derivative(Z[r, j])
    elif code == LEAKY_RELU:
        for r in range(batch):
            for j in range(width):
                dZ[r, j] = dA[r, j] * leaky_relu_derivative(Z[r, j], alpha)
    elif code == RELU:
        for r in range(batch):
            for j in range(width):
                dZ[r, j] = dA[r, j] * relu_derivative(Z[r, j])
    else:
        for r in range(batch):
            for j in range(width):
                dZ[r, j] = dA[r, j] * activate_derivative(code, alpha, Z[r, j])


# --- matrix products ----------------------------------------------------------------------

@njit(cache=True, error_model="numpy", inline="always")
def matmul_into(a, b, out):
    """out = a b for a (m, k) and b (k, n), either of which may be a transposed view.

    Big products (at least :data:`BLAS_MIN_WORK` multiply-adds) go to BLAS; small ones are
    loops that sum from k = 0 upwards, the order the lanes kernel uses too. Inlined into its
    callers, so that the small loops of a per-sample step pay no call.
    """
    m, inner = a.shape
    n = b.shape[1]
    if m * inner * n >= BLAS_MIN_WORK:
        out[:, :] = np.dot(a, b)
        return
    for r in range(m):
        for c in range(n):
            acc = 0.0
            for k in range(inner):
                acc += a[r, k] * b[k, c]
            out[r, c] = acc


# --- a dense layer: forward and backward side by side ---------------------------------------

@njit(cache=True, error_model="numpy")
def dense_forward(X, W, b, code, alpha, Z, A):
    """Z = X Wᵀ + b and A = φ(Z), written into Z and A (B, n_out). X is (B, n_in)."""
    matmul_into(X, W.T, Z)
    for r in range(Z.shape[0]):
        for j in range(Z.shape[1]):
            Z[r, j] += b[j]
    activate_into(code, alpha, Z, A)


@njit(cache=True, error_model="numpy")
def dense_backward(dA, X, W, Z, code, alpha, dZ, dW, db, dX, need_dX):
    """From dL/dA (B, n_out): dZ = dA ⊙ φ'(Z), dW = dZᵀ X, db = Σ_rows dZ, dX = dZ W.

    Writes dZ, dW (n_out, n_in), db (n_out,) and, if ``need_dX``, dX (B, n_in).
    """
    backpropagate_activation(code, alpha, Z, dA, dZ)
    matmul_into(dZ.T, X, dW)
    for j in range(dZ.shape[1]):
        db[j] = dZ[0, j]
    for r in range(1, dZ.shape[0]):
        for j in range(dZ.shape[1]):
            db[j] += dZ[r, j]
    if need_dX:
        matmul_into(dZ, W, dX)


@njit(cache=True, error_model="numpy")
def sgd_update(theta, grad, lr):
    """θ ← θ − lr · ∇θ, in place."""
    for k in range(theta.size):
        theta[k] -= lr * grad[k]


# --- shuffling ----------------------------------------------------------------------------

if numba.config.DISABLE_JIT:
    def splitmix64(x):
        """:func:`tinynet.shuffle.splitmix64` as plain Python: NumPy would warn about the uint64
        wrap-around that the hash is built on, so it is silenced here."""
        with np.errstate(over="ignore"):
            return shuffle.splitmix64(x)
else:
    splitmix64 = njit(cache=True, error_model="numpy")(shuffle.splitmix64)  # the NumPy path's


@njit(cache=True, error_model="numpy")
def epoch_order_into(seed, epoch, keys, order):
    """Write :func:`tinynet.shuffle.epoch_order` (seed, epoch, n = len(order)) into ``order``."""
    base = splitmix64(splitmix64(np.uint64(seed)) + np.uint64(epoch))
    for i in range(keys.size):
        keys[i] = splitmix64(base + np.uint64(i))
    order[:] = np.argsort(keys, kind="mergesort")


# --- whole networks -----------------------------------------------------------------------

@njit(cache=True, error_model="numpy")
def _weights(theta, layout, layer):
    n_in, n_out, w_at, b_at = layout[layer, 0], layout[layer, 1], layout[layer, 2], layout[layer, 3]
    return theta[w_at:w_at + n_out * n_in].reshape(n_out, n_in), theta[b_at:b_at + n_out]


@njit(cache=True, error_model="numpy")
def _rows(buffer, rows, width):
    return buffer[:rows * width].reshape(rows, width)


@njit(cache=True, error_model="numpy")
def forward_network(theta, layout, codes, alphas, X, Zs, As):
    """Forward X (B, n_in) through every layer, keeping each layer's Z and A in the scratch
    rows Zs[layer] and As[layer] (each at least B · its width long); return the output, a
    view into As."""
    batch = X.shape[0]
    inputs = X
    for layer in range(layout.shape[0]):
        W, b = _weights(theta, layout, layer)
        n_out = layout[layer, 1]
        A = _rows(As[layer], batch, n_out)
        dense_forward(inputs, W, b, codes[layer], alphas[layer], _rows(Zs[layer], batch, n_out), A)
        inputs = A
    return inputs


@njit(cache=True, error_model="numpy")
def fit_network(theta, layout, codes, alphas, X, Y, first_epoch, lr, batch_size, shuffle, seed,
                losses):
    """Train in place by SGD on the MSE loss, as :func:`tinynet.training.fit` does.

    Runs epochs ``first_epoch, first_epoch + 1, ...``, one per entry of ``losses``, which
    receives each epoch's loss. Returns the number of epochs run: fewer than ``len(losses)``
    when the loss or a parameter became NaN or infinite (divergence).
    """
    epochs = losses.size
    n, n_in = X.shape
    n_out = Y.shape[1]
    layers = layout.shape[0]
    width = max(n_in, layout[:, 1].max())
    grad = np.zeros_like(theta)
    Zs = np.empty((layers, batch_size * width))
    As = np.empty((layers, batch_size * width))
    dZ = np.empty(batch_size * width)
    dA = np.empty(batch_size * width)
    dX = np.empty(batch_size * width)
    Xb = np.empty((batch_size, n_in))
    Yb = np.empty((batch_size, n_out))
    keys = np.empty(n, dtype=np.uint64)
    order = np.arange(n)
    for run in range(epochs):
        if shuffle:
            epoch_order_into(seed, first_epoch + run, keys, order)
        total = 0.0
        for start in range(0, n, batch_size):
            rows = min(batch_size, n - start)
            for r in range(rows):
                Xb[r, :] = X[order[start + r]]
                Yb[r, :] = Y[order[start + r]]
            x, y = Xb[:rows], Yb[:rows]
            outputs = forward_network(theta, layout, codes, alphas, x, Zs, As)
            # loss and dL/dŷ = (2/B)(ŷ − y)
            delta = _rows(dA, rows, n_out)
            batch_loss = 0.0
            for r in range(rows):
                for k in range(n_out):
                    diff = outputs[r, k] - y[r, k]
                    batch_loss += diff * diff
                    delta[r, k] = (2.0 / rows) * diff
            total += batch_loss
            # backward
            for layer in range(layers - 1, -1, -1):
                W, b = _weights(theta, layout, layer)
                dW, db = _weights(grad, layout, layer)
                width_in, width_out = layout[layer, 0], layout[layer, 1]
                prev = x if layer == 0 else _rows(As[layer - 1], rows, width_in)
                dense_backward(delta, prev, W, _rows(Zs[layer], rows, width_out), codes[layer],
                               alphas[layer], _rows(dZ, rows, width_out), dW, db,
                               _rows(dX, rows, width_in), layer > 0)
                if layer > 0:
                    delta = _rows(dA, rows, width_in)
                    delta[:, :] = _rows(dX, rows, width_in)
            sgd_update(theta, grad, lr)
        losses[run] = total / n
        if not math.isfinite(losses[run]) or not np.all(np.isfinite(theta)):
            return run + 1
    return epochs
