"""The bar for the compiled kernels: the same job written by hand as a plain Numba loop, as
someone who knows Numba would write it for one network family (LeakyReLU hidden layers, alpha
0.01, a sigmoid output, MSE, per-sample SGD, samples in data order).

:func:`train`, the bar for the ensembles: the seeds innermost and contiguous, blocks of seeds
to the cores in a ``prange``, with ``math.exp``. No tinynet code runs in it. It trains what
``tinynet.fit_packed(..., shuffle=False)`` trains, to rounding.

:func:`train_one`, the bar for a single fit: scalar loops over the units of one n_in-H-1
network, with the exp of your choice (:data:`EXPS`): the C library's ``math.exp``, or
tinynet's own :func:`tinynet.compiled.scalars.vector_exp`, the exp tinynet's kernels use (so
that an ensemble member equals its single fit bit for bit), so that the loops are compared on
the same arithmetic and the exp's own cost shows beside. It trains what
``tinynet.fit(net, ..., shuffle=False, backend="numba")`` trains, to rounding (the sigmoid
and its slope are written as one writes them by hand, not as tinynet's definitions are, and
the bias is added first).

``benchmarks/bench_wide.py`` and ``bench_small.py`` check both before they time anything."""

from __future__ import annotations

import math

import numpy as np
from numba import njit, prange

from tinynet.compiled.scalars import vector_exp

__all__ = ["BLOCK", "EXPS", "forward_and_error", "train", "train_one"]

BLOCK = 64
"""Seeds per block: the innermost loops run over them."""


@njit(cache=True, error_model="numpy", inline="always")
def forward_and_error(theta, table, X, Y, t, A, D, delta, back):
    """Sample t through every network of the block (theta (P, lanes)): A[k + 1] each layer's
    output, D[k] its φ'(z), delta[:n_out] MSE's dL/dŷ = 2 (ŷ − y); back is scratch. Shared by
    the SGD loop here and the Adam loop of handwritten_adam.py."""
    lanes = theta.shape[1]
    layers = table.shape[0]
    for i in range(X.shape[1]):
        for l in range(lanes):
            A[0, i, l] = X[t, i]
    for k in range(layers):                       # forward
        n_in, n_out, w, b = table[k, 0], table[k, 1], table[k, 2], table[k, 3]
        for j in range(n_out):
            for l in range(lanes):
                back[0, l] = 0.0
            for i in range(n_in):
                for l in range(lanes):
                    back[0, l] += A[k, i, l] * theta[w + j * n_in + i, l]
            if k == layers - 1:
                for l in range(lanes):
                    s = 1.0 / (1.0 + math.exp(-(back[0, l] + theta[b + j, l])))
                    A[k + 1, j, l] = s
                    D[k, j, l] = s * (1.0 - s)
            else:
                for l in range(lanes):
                    z = back[0, l] + theta[b + j, l]
                    A[k + 1, j, l] = z if z > 0 else 0.01 * z
                    D[k, j, l] = 1.0 if z > 0 else 0.01
    n_out = table[layers - 1, 1]
    for j in range(n_out):                        # dL/dŷ of MSE
        for l in range(lanes):
            delta[j, l] = 2.0 * (A[layers, j, l] - Y[t, j])


@njit(cache=True, error_model="numpy")
def _train_block(theta, table, X, Y, epochs, lr):
    """theta (P, BLOCK): one network per column, trained in place."""
    lanes = theta.shape[1]
    layers = table.shape[0]
    width = max(X.shape[1], table[:, 1].max())
    A = np.zeros((layers + 1, width, lanes))     # A[0] the sample, A[k + 1] layer k's output
    D = np.zeros((layers, width, lanes))         # φ'(z)
    delta = np.zeros((width, lanes))
    back = np.zeros((width, lanes))
    for _ in range(epochs):
        for t in range(X.shape[0]):
            forward_and_error(theta, table, X, Y, t, A, D, delta, back)
            for k in range(layers - 1, -1, -1):           # backward, then SGD, layer by layer
                n_in, n_out, w, b = table[k, 0], table[k, 1], table[k, 2], table[k, 3]
                for j in range(n_out):
                    for l in range(lanes):
                        delta[j, l] *= D[k, j, l]
                if k > 0:
                    for i in range(n_in):
                        for l in range(lanes):
                            back[i, l] = 0.0
                        for j in range(n_out):
                            for l in range(lanes):
                                back[i, l] += delta[j, l] * theta[w + j * n_in + i, l]
                for j in range(n_out):
                    for i in range(n_in):
                        for l in range(lanes):
                            theta[w + j * n_in + i, l] -= lr * delta[j, l] * A[k, i, l]
                    for l in range(lanes):
                        theta[b + j, l] -= lr * delta[j, l]
                if k > 0:
                    for i in range(n_in):
                        for l in range(lanes):
                            delta[i, l] = back[i, l]


@njit(cache=True, parallel=True, error_model="numpy")
def _train(theta, table, X, Y, epochs, lr):
    members = theta.shape[1]
    for block in prange((members + BLOCK - 1) // BLOCK):
        first = block * BLOCK
        local = np.empty((theta.shape[0], BLOCK))
        for l in range(BLOCK):
            member = min(first + l, members - 1)
            for p in range(theta.shape[0]):
                local[p, l] = theta[p, member]
        _train_block(local, table, X, Y, epochs, lr)
        for l in range(min(BLOCK, members - first)):
            for p in range(theta.shape[0]):
                theta[p, first + l] = local[p, l]


def train(theta: np.ndarray, table: np.ndarray, X: np.ndarray, Y: np.ndarray, epochs: int,
          lr: float) -> np.ndarray:
    """Train the members in the rows of ``theta`` (S, P), packed as tinynet packs them, with
    layout ``table`` (tinynet.packing.layout(net).table); return the trained (S, P)."""
    lanes = np.ascontiguousarray(theta.T)
    _train(lanes, table, X, Y, epochs, lr)
    return lanes.T.copy()


@njit(cache=True, error_model="numpy")
def c_exp(x: float) -> float:
    """The C library's exp, ``math.exp``: a call Numba makes into libm."""
    return math.exp(x)


@njit(error_model="numpy", inline="always")
def _train_one(exp, W1, b1, W2, b2, X, Y, epochs, lr):
    """One network n_in-H-1 (LeakyReLU alpha 0.01, then a sigmoid on ``exp``), per-sample SGD
    on MSE, samples in data order: scalar loops over the units, as one writes it for one
    network. Compiled into each of the entry points below with their exp (a function passed
    in is a constant of the compiled code, its body inlined), and cached with them: cached on
    its own, it would be keyed by the exp's address in memory, and compiled anew by every
    process."""
    hidden = W1.shape[0]
    a = np.empty(hidden)
    slope = np.empty(hidden)
    for _ in range(epochs):
        for t in range(X.shape[0]):
            z_out = b2[0]
            for j in range(hidden):
                z = b1[j]
                for i in range(X.shape[1]):
                    z += W1[j, i] * X[t, i]
                a[j] = z if z > 0 else 0.01 * z
                slope[j] = 1.0 if z > 0 else 0.01
                z_out += W2[0, j] * a[j]
            s = 1.0 / (1.0 + exp(-z_out))
            delta = 2.0 * (s - Y[t, 0]) * s * (1.0 - s)
            for j in range(hidden):
                back = delta * W2[0, j] * slope[j]
                W2[0, j] -= lr * delta * a[j]
                for i in range(X.shape[1]):
                    W1[j, i] -= lr * back * X[t, i]
                b1[j] -= lr * back
            b2[0] -= lr * delta


@njit(cache=True, error_model="numpy")
def _train_one_c_exp(W1, b1, W2, b2, X, Y, epochs, lr):
    """The scalar loop on the C library's exp."""
    _train_one(c_exp, W1, b1, W2, b2, X, Y, epochs, lr)


@njit(cache=True, error_model="numpy")
def _train_one_vector_exp(W1, b1, W2, b2, X, Y, epochs, lr):
    """The scalar loop on tinynet's exp."""
    _train_one(vector_exp, W1, b1, W2, b2, X, Y, epochs, lr)


EXPS = {"math.exp": _train_one_c_exp, "vector_exp": _train_one_vector_exp}
"""The scalar loop compiled for each exp :func:`train_one` can run on, by name: the C
library's, and tinynet's own."""


def train_one(theta: np.ndarray, sizes: list[int], X: np.ndarray, Y: np.ndarray, epochs: int,
              lr: float, exp: str = "math.exp") -> np.ndarray:
    """Train one n_in-H-1 network packed as tinynet packs it (W1, b1, W2, b2 in that order)
    with the scalar loop, its sigmoid on ``exp`` (a name in :data:`EXPS`); return its trained
    parameters."""
    if exp not in EXPS:
        raise ValueError(f"exp must be one of {', '.join(map(repr, EXPS))}, got {exp!r}")
    n_in, hidden, _ = sizes
    cut = np.cumsum([hidden * n_in, hidden, hidden])
    W1, b1, W2, b2 = (part.copy() for part in np.split(np.asarray(theta, float), cut))
    W1, W2 = W1.reshape(hidden, n_in), W2.reshape(1, hidden)
    EXPS[exp](W1, b1, W2, b2, X, Y, epochs, lr)
    return np.concatenate([W1.ravel(), b1, W2.ravel(), b2])
