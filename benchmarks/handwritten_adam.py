"""The bar for the compiled Adam ensembles: ``handwritten.py``'s SIMD loop (LeakyReLU(0.01)
hidden layers, a sigmoid output, MSE, per-sample steps, samples in data order, the seeds
innermost in blocks of 64, a ``prange`` over the blocks) with Adam in place of SGD, as someone
who knows Numba would write it: the bias corrections once per step, then each parameter's
update over the lanes, in PyTorch's order of operations (``torch.optim.Adam``). No tinynet
code runs in it. Timed beside ``handwritten.train`` it shows what Adam costs over SGD when the
per-step work is already out of the loops: the floor for tinynet's own Adam/SGD ratio on this
machine (``benchmarks/bench_optimizers.py``)."""

from __future__ import annotations

import math

import numpy as np
from numba import njit, prange

from handwritten import BLOCK, forward_and_error

__all__ = ["train"]


@njit(cache=True, error_model="numpy")
def _train_block(theta, table, X, Y, epochs, lr, beta1, beta2, eps):
    """theta (P, BLOCK): one network per column, trained in place by Adam from zero moments."""
    lanes = theta.shape[1]
    layers = table.shape[0]
    width = max(X.shape[1], table[:, 1].max())
    A = np.zeros((layers + 1, width, lanes))
    D = np.zeros((layers, width, lanes))
    delta = np.zeros((width, lanes))
    back = np.zeros((width, lanes))
    grad = np.zeros_like(theta)
    m = np.zeros_like(theta)
    v = np.zeros_like(theta)
    t = 0.0
    for _ in range(epochs):
        for s in range(X.shape[0]):
            forward_and_error(theta, table, X, Y, s, A, D, delta, back)
            for k in range(layers - 1, -1, -1):           # backward: every gradient
                n_in, n_out, w, b = table[k, 0], table[k, 1], table[k, 2], table[k, 3]
                for j in range(n_out):
                    for l in range(lanes):
                        delta[j, l] *= D[k, j, l]
                for j in range(n_out):
                    for i in range(n_in):
                        for l in range(lanes):
                            grad[w + j * n_in + i, l] = delta[j, l] * A[k, i, l]
                    for l in range(lanes):
                        grad[b + j, l] = delta[j, l]
                if k > 0:
                    for i in range(n_in):
                        for l in range(lanes):
                            back[i, l] = 0.0
                        for j in range(n_out):
                            for l in range(lanes):
                                back[i, l] += delta[j, l] * theta[w + j * n_in + i, l]
                    for i in range(n_in):
                        for l in range(lanes):
                            delta[i, l] = back[i, l]
            t += 1.0                                      # Adam: once per step, then per lane
            step_size = lr / (1.0 - beta1 ** t)
            root = math.sqrt(1.0 - beta2 ** t)
            for p in range(theta.shape[0]):
                for l in range(lanes):
                    g = grad[p, l]
                    m[p, l] = beta1 * m[p, l] + (1.0 - beta1) * g
                    v[p, l] = beta2 * v[p, l] + (1.0 - beta2) * g * g
                    theta[p, l] -= step_size * (m[p, l] / (math.sqrt(v[p, l]) / root + eps))


@njit(cache=True, parallel=True, error_model="numpy")
def _train(theta, table, X, Y, epochs, lr, beta1, beta2, eps):
    members = theta.shape[1]
    for block in prange((members + BLOCK - 1) // BLOCK):
        first = block * BLOCK
        local = np.empty((theta.shape[0], BLOCK))
        for l in range(BLOCK):
            member = min(first + l, members - 1)
            for p in range(theta.shape[0]):
                local[p, l] = theta[p, member]
        _train_block(local, table, X, Y, epochs, lr, beta1, beta2, eps)
        for l in range(min(BLOCK, members - first)):
            for p in range(theta.shape[0]):
                theta[p, first + l] = local[p, l]


def train(theta: np.ndarray, table: np.ndarray, X: np.ndarray, Y: np.ndarray, epochs: int,
          lr: float, beta1: float = 0.9, beta2: float = 0.999, eps: float = 1e-8) -> np.ndarray:
    """Train the members in the rows of ``theta`` (S, P), packed as tinynet packs them, with
    layout ``table`` (tinynet.packing.layout(net).table), by Adam from zero moments; return
    the trained (S, P)."""
    lanes = np.ascontiguousarray(theta.T)
    _train(lanes, table, X, Y, epochs, lr, beta1, beta2, eps)
    return lanes.T.copy()
