"""Compiled training of one network: a dense layer's forward and backward passes, and a whole
training run in one call.

They compute what :mod:`tinynet.reference` computes, in the same order of operations, so that
the two backends agree to rounding: a dot product is summed from the first input to the last,
the bias is added after it, and the loss's gradient is its definition's. Underneath they are
plain Python: with ``NUMBA_DISABLE_JIT=1`` they run (slowly) and can be stepped through in a
debugger. Parameters travel as one flat vector ``theta`` with a :class:`tinynet.packing.Layout`.

The maths is not here: the functions take the network's activations, loss and optimizer as
compiled functions, which :mod:`tinynet.compiled.kit` writes from their definitions for each
network: switches over the network's activations (:func:`activation_rows`,
:func:`activation_pairs` for each), ``loss`` and ``update``. The step of :func:`fit_network`
is the kit's ``train_step``, :func:`tinynet.step.train_step` written out for any layout by
:mod:`tinynet.compiled.looping` in the words of this module (:func:`affine`, :func:`times`,
:func:`gradients`, :func:`_matmul_into`, inlined into it). The functions that take a
function are inlined where they are called (``inline="always"``), which numba caches: passed
through calls that are not inlined, they would become function pointers, which numba cannot
cache.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from .orders import epoch_order_into
from .verdicts import diverged, finite_mark

__all__ = ["BLAS_MIN_WORK", "activation_rows", "activation_pairs", "affine", "times", "gradients",
           "forward_network", "fit_network"]

BLAS_MIN_WORK = 32_768
"""Matrix products with at least this many multiply-adds go to BLAS (``np.dot``); smaller ones
are loops, which win there because a BLAS call costs about a microsecond before it starts."""


@njit(cache=True, error_model="numpy", inline="always")
def _matmul_into(a, b, out):
    """out = a b for a (m, k) and b (k, n), either of which may be a transposed view.

    Big products (at least :data:`BLAS_MIN_WORK` multiply-adds) go to BLAS; small ones are
    loops that sum from k = 0 upwards, the order the lanes kernel uses too, starting from the
    first product itself (not from 0.0 + it: an addition fewer in the chain, and a sum of
    -0.0 products stays -0.0 in every kernel alike). Inlined into its callers, so that the
    small loops of a per-sample step pay no call.
    """
    m, inner = a.shape
    n = b.shape[1]
    if m * inner * n >= BLAS_MIN_WORK:
        out[:, :] = np.dot(a, b)
        return
    for r in range(m):
        for c in range(n):
            acc = a[r, 0] * b[0, c]
            for k in range(1, inner):
                acc += a[r, k] * b[k, c]
            out[r, c] = acc


@njit(error_model="numpy", inline="always")
def activation_rows(activation, parameters, Z, out):
    """out = φ(Z), element by element, with ``activation(z, parameters) = (φ(z), φ'(z))``.
    The kit calls it once per activation of the network, so that each copy of the loop is
    straight-line arithmetic, which vectorises (as :func:`tinynet.compiled.lanes.
    dense_forward`)."""
    for r in range(Z.shape[0]):
        for j in range(Z.shape[1]):
            out[r, j] = activation(Z[r, j], parameters)[0]


@njit(error_model="numpy", inline="always")
def activation_pairs(activation, parameters, Z, A, D):
    """A = φ(Z) and D = φ'(Z), element by element (:func:`activation_rows`)."""
    for r in range(Z.shape[0]):
        for j in range(Z.shape[1]):
            A[r, j], D[r, j] = activation(Z[r, j], parameters)


# --- the words of a dense layer (tinynet.compiled.looping writes tinynet.step with them) ---

@njit(cache=True, error_model="numpy", inline="always")
def affine(X, W, b, Z):
    """Z = X Wᵀ + b (B, n_out), from X (B, n_in), W (n_out, n_in) and b (n_out,)."""
    _matmul_into(X, W.T, Z)
    for r in range(Z.shape[0]):
        for j in range(Z.shape[1]):
            Z[r, j] += b[j]


@njit(cache=True, error_model="numpy", inline="always")
def times(dA, D, dZ):
    """dZ = dA ⊙ D, element by element: the chain rule through φ, D = φ'(Z)."""
    for r in range(dZ.shape[0]):
        for j in range(dZ.shape[1]):
            dZ[r, j] = dA[r, j] * D[r, j]


@njit(cache=True, error_model="numpy", inline="always")
def gradients(dZ, X, dW, db):
    """dW = dZᵀ X (n_out, n_in) and db = Σ_rows dZ (n_out,), summed from the first row."""
    _matmul_into(dZ.T, X, dW)
    for j in range(dZ.shape[1]):
        db[j] = dZ[0, j]
    for r in range(1, dZ.shape[0]):
        for j in range(dZ.shape[1]):
            db[j] += dZ[r, j]


@njit(error_model="numpy", inline="always")
def _dense_forward(activate, X, W, b, kind, parameters, layer, Z, A):
    """Z = X Wᵀ + b and A = φ(Z), written into Z and A (B, n_out), for a forward pass
    alone (:func:`forward_network`). φ is activation ``kind`` of the kit's switch
    ``activate``, with row ``layer`` of ``parameters``."""
    affine(X, W, b, Z)
    activate(kind, parameters, layer, Z, A)


# --- whole networks -----------------------------------------------------------------------

@njit(cache=True, error_model="numpy")
def _weights(theta, table, layer):
    n_in, n_out, w_at, b_at = table[layer, 0], table[layer, 1], table[layer, 2], table[layer, 3]
    return theta[w_at:w_at + n_out * n_in].reshape(n_out, n_in), theta[b_at:b_at + n_out]


@njit(cache=True, error_model="numpy")
def _rows(buffer, rows, width):
    return buffer[:rows * width].reshape(rows, width)


@njit(error_model="numpy", inline="always")
def forward_network(activate, theta, layout, X, Zs, As):
    """Forward X (B, n_in) through every layer, keeping each layer's Z and A in the scratch
    rows Zs[layer] and As[layer] (each at least B · its width long); return the output, a
    view into As."""
    batch = X.shape[0]
    inputs = X
    for layer in range(layout.table.shape[0]):
        W, b = _weights(theta, layout.table, layer)
        n_out = layout.table[layer, 1]
        A = _rows(As[layer], batch, n_out)
        _dense_forward(activate, inputs, W, b, layout.kinds[layer], layout.parameters, layer,
                       _rows(Zs[layer], batch, n_out), A)
        inputs = A
    return inputs


@njit(error_model="numpy", inline="always")
def fit_network(step, per_step, steps, theta, state, hyper, layout, X, Y, seed, settings,
                record):
    """Train ``theta`` (P,) and the optimizer's ``state`` (k, P) in place on the network's
    loss, as :func:`tinynet.reference.train` does for one member: epochs
    ``settings.first_epoch`` on, written into row 0 of ``record``. ``step`` is the kit's
    ``train_step``, :func:`tinynet.step.train_step` written for any layout
    (:mod:`tinynet.compiled.looping`): forward, loss, backward and update of a batch,
    returning its summed loss and whether an output is on the wrong side of the threshold;
    ``per_step(state, lr, hyper, steps)`` the optimizer's part per step (the step values into
    ``steps``, the counters advanced: :mod:`tinynet.compiled.hoisting`); ``hyper`` holds the
    optimizer's hyperparameters and the loss's parameters
    (:func:`tinynet.compiled.kit.hyperparameters`).

    Returns the number of epochs run: fewer than ``settings.epochs`` when the loss or a
    parameter became NaN or infinite (divergence), which ends training.
    """
    table = layout.table
    n, n_in = X.shape
    n_out = Y.shape[1]
    layers = table.shape[0]
    batch_size, lr, threshold, every = (settings.batch_size, settings.lr, settings.threshold,
                                        settings.record_every)
    during = settings.update_during_backward
    width = max(n_in, table[:, 1].max())
    grad = np.zeros_like(theta)
    Zs = np.empty((layers, batch_size * width))
    As = np.empty((layers, batch_size * width))
    Ds = np.empty((layers, batch_size * width))
    dZ = np.empty(batch_size * width)
    delta = np.empty(batch_size * width)
    back = np.empty(batch_size * width)
    Xb = np.empty((batch_size, n_in))
    Yb = np.empty((batch_size, n_out))
    keys = np.empty(n, dtype=np.uint64)
    order = np.arange(n)
    for run in range(settings.epochs):
        epoch = settings.first_epoch + run
        if settings.shuffle:
            epoch_order_into(seed, epoch, keys, order)
        total = 0.0
        wrong = False
        for start in range(0, n, batch_size):
            rows = min(batch_size, n - start)
            for r in range(rows):
                Xb[r, :] = X[order[start + r]]
                Yb[r, :] = Y[order[start + r]]
            per_step(state, lr, hyper, steps)
            batch_loss, wrong_here = step(theta, grad, state, lr, hyper, steps, layout,
                                          Xb[:rows], Yb[:rows], rows, Zs, As, Ds, dZ, delta,
                                          back, threshold, during)
            total += batch_loss
            wrong |= wrong_here
        epoch_loss = total / n
        if wrong:
            record.last_wrong_epoch[0] = epoch
        record.final_loss[0] = epoch_loss
        if every > 0 and (epoch + 1) % every == 0:
            record.loss[0, (epoch + 1) // every - 1] = epoch_loss
        marks = finite_mark(epoch_loss)
        for p in range(theta.shape[0]):
            marks += finite_mark(theta[p])
        if diverged(marks):
            record.diverged_epoch[0] = epoch
            return run + 1
    return settings.epochs
