"""The bar for the compiled residual kernels: a residual network's training written by hand as
a plain Numba loop, as someone who knows Numba would write it for one family of networks: a
ReLU layer in, L pre-norm blocks ``x + F(LN(x))`` whose branch F is ``m`` ReLU layers, a
sigmoid output, MSE, SGD after the backward pass, batches in data order.

:func:`train`: each member's whole run in one compiled call, the members spread over the cores
in a ``prange`` (as tinynet's ``fit_stream_members``, each member its own single fit: a
residual step is a chain of small products and row statistics, with nothing to share between
members in SIMD lanes but the loop structure). Scalar loops over rows and units, every buffer
allocated once per member, the bias, activation and its slope in the product's loop. No
tinynet code runs in it; the parameters are laid out as ``tinynet.packing.pack`` lays them out
(the layers' rows in ``table``, each norm's γ in ``gains``, β after it), so that
``benchmarks/bench_residual.py`` checks that it trains what ``tinynet.fit_packed(...,
shuffle=False)`` trains before it times anything.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit, prange

from tinynet.compiled.scalars import vector_exp

__all__ = ["train"]


@njit(cache=True, error_model="numpy", inline="always")
def _dense_relu(theta, table, k, X, Z, A, D, rows, relu):
    """Z = X Wᵀ + b and A = ReLU(Z) for layer row k; or, ``relu`` False, A = σ(Z) and its
    slope D, written as tinynet's Sigmoid writes them, on tinynet's exp."""
    n_in, n_out, w, b = table[k, 0], table[k, 1], table[k, 2], table[k, 3]
    for r in range(rows):
        for j in range(n_out):                    # the units side by side (SIMD), each sum
            Z[r, j] = X[r, 0] * theta[w + j * n_in]   # still added first input to last
        for i in range(1, n_in):
            x = X[r, i]
            for j in range(n_out):
                Z[r, j] += x * theta[w + j * n_in + i]
        for j in range(n_out):
            z = Z[r, j] + theta[b + j]
            Z[r, j] = z
            if relu:
                A[r, j] = z if z > 0.0 else 0.0
            else:                                     # the sigmoid, and its slope in D
                e = vector_exp(-abs(z))
                d = 1.0 + e
                A[r, j] = (1.0 if z >= 0.0 else e) / d
                D[r, j] = e / (d * d)


@njit(cache=True, error_model="numpy", inline="always")
def _dense_back(theta, grad, table, k, X, dZ, dX, rows, input_gradient):
    """dW = dZᵀ X, db = Σ dZ into grad; dX = dZ W if ``input_gradient``. The innermost loops
    run along W's rows (contiguous); each sum still adds its terms first to last."""
    n_in, n_out, w, b = table[k, 0], table[k, 1], table[k, 2], table[k, 3]
    for j in range(n_out):
        for i in range(n_in):
            grad[w + j * n_in + i] = dZ[0, j] * X[0, i]
        grad[b + j] = dZ[0, j]
    for r in range(1, rows):
        for j in range(n_out):
            for i in range(n_in):
                grad[w + j * n_in + i] += dZ[r, j] * X[r, i]
            grad[b + j] += dZ[r, j]
    if input_gradient:
        for r in range(rows):
            for i in range(n_in):
                dX[r, i] = dZ[r, 0] * theta[w + i]
            for j in range(1, n_out):
                for i in range(n_in):
                    dX[r, i] += dZ[r, j] * theta[w + j * n_in + i]


@njit(cache=True, error_model="numpy")
def _train_member(theta, table, gains, X, Y, epochs, lr, batch, eps):
    """One network trained in place: table (layers, 4) its dense rows (n_in, n_out, W's and b's
    offsets), gains (L,) where each block's γ starts; the branch's length is
    (layers − 2) / L."""
    n, layers, blocks = X.shape[0], table.shape[0], gains.shape[0]
    width, m = table[0, 1], (table.shape[0] - 2) // gains.shape[0]
    grad = np.zeros(theta.shape[0])
    Z = np.zeros((layers, batch, width))
    A = np.zeros((layers, batch, width))
    stream = np.zeros((blocks + 1, batch, width))
    H = np.zeros((blocks, batch, width))
    xhat = np.zeros((blocks, batch, width))
    inv = np.zeros((blocks, batch))
    dS, d1, d2 = np.zeros((batch, width)), np.zeros((batch, width)), np.zeros((batch, width))
    for _ in range(epochs):
        for start in range(0, n, batch):
            rows = min(batch, n - start)
            x = X[start:start + rows]
            _dense_relu(theta, table, 0, x, Z[0], A[0], dS, rows, True)        # the layer in
            stream[0, :rows] = A[0, :rows]
            for k in range(blocks):                                         # the blocks
                g = gains[k]
                for r in range(rows):                                       # LN
                    mean = stream[k, r, 0]
                    for j in range(1, width):
                        mean += stream[k, r, j]
                    mean /= width
                    var = 0.0
                    for j in range(width):
                        c = stream[k, r, j] - mean
                        xhat[k, r, j] = c
                        var += c * c
                    inv[k, r] = 1.0 / math.sqrt(var / width + eps)
                    for j in range(width):
                        xhat[k, r, j] *= inv[k, r]
                        H[k, r, j] = xhat[k, r, j] * theta[g + j] + theta[g + width + j]
                row = 1 + k * m
                _dense_relu(theta, table, row, H[k], Z[row], A[row], dS, rows, True)
                for i in range(1, m):
                    _dense_relu(theta, table, row + i, A[row + i - 1], Z[row + i],
                                A[row + i], dS, rows, True)
                for r in range(rows):
                    for j in range(width):
                        stream[k + 1, r, j] = stream[k, r, j] + A[row + m - 1, r, j]
            last = layers - 1                                               # the output
            _dense_relu(theta, table, last, stream[blocks], Z[last], A[last], d2, rows, False)
            for r in range(rows):                                           # MSE, sigmoid
                d1[r, 0] = ((2.0 / rows) * (A[last, r, 0] - Y[start + r, 0])) * d2[r, 0]
            _dense_back(theta, grad, table, last, stream[blocks], d1, dS, rows, True)
            for k in range(blocks - 1, -1, -1):                             # dS: the stream's
                row = 1 + k * m
                for i in range(m - 1, -1, -1):
                    source = dS if i == m - 1 else d1
                    for r in range(rows):
                        for j in range(width):
                            d2[r, j] = source[r, j] if Z[row + i, r, j] > 0.0 else 0.0
                    before = H[k] if i == 0 else A[row + i - 1]
                    _dense_back(theta, grad, table, row + i, before, d2, d1, rows, True)
                g = gains[k]                                                # LN's backward
                for j in range(width):
                    dg = d1[0, j] * xhat[k, 0, j]
                    db = d1[0, j]
                    for r in range(1, rows):
                        dg += d1[r, j] * xhat[k, r, j]
                        db += d1[r, j]
                    grad[g + j] = dg
                    grad[g + width + j] = db
                for r in range(rows):
                    total = d1[r, 0] * theta[g]
                    along = total * xhat[k, r, 0]
                    for j in range(1, width):
                        d = d1[r, j] * theta[g + j]
                        total += d
                        along += d * xhat[k, r, j]
                    total /= width
                    along /= width
                    for j in range(width):
                        dS[r, j] += (d1[r, j] * theta[g + j] - total
                                     - xhat[k, r, j] * along) * inv[k, r]
            for r in range(rows):                                           # the layer in
                for j in range(width):
                    d2[r, j] = dS[r, j] if Z[0, r, j] > 0.0 else 0.0
            _dense_back(theta, grad, table, 0, x, d2, d1, rows, False)
            for p in range(theta.shape[0]):                                 # SGD
                theta[p] -= lr * grad[p]


@njit(cache=True, error_model="numpy", parallel=True)
def train(theta, table, gains, X, Y, epochs, lr, batch, eps):
    """Every member (theta (S, P), a row each) trained in place, spread over the cores."""
    for s in prange(theta.shape[0]):
        _train_member(theta[s], table, gains, X, Y, epochs, lr, batch, eps)
