"""Compiled training of one network: a dense layer's forward and backward passes, and a whole
training run in one call.

They compute what :mod:`tinynet.reference` computes, in the same order of operations, so that
the two backends agree to rounding: a dot product is summed from the first input to the last,
the bias is added after it, and the loss's gradient is its definition's. Underneath they are
plain Python: with ``NUMBA_DISABLE_JIT=1`` they run (slowly) and can be stepped through in a
debugger. Parameters travel as one flat vector ``theta`` with a :class:`tinynet.packing.Layout`.

The maths is not here: the functions take the network's activations, loss and optimizer as
compiled functions, which :mod:`tinynet.compiled.kit` writes from their definitions for each
network: ``activate`` (a switch over the network's activations, :func:`activation_rows` for
each), ``loss`` and ``update``; :func:`fit_network` takes the kit's compiled forward pass and
layer gradients (:func:`forward_network` and :func:`_dense_gradients` with its switch) instead
of the switch. The functions that take a function are inlined where they are called
(``inline="always"``), which numba caches: passed through calls that are not inlined, they
would become function pointers, which numba cannot cache.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from .orders import epoch_order_into

__all__ = ["BLAS_MIN_WORK", "activation_rows", "forward_network", "fit_network"]

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
def activation_rows(activation, parameters, Z, dA, out, derivative):
    """out = φ(Z), or out = dA ⊙ φ'(Z) when ``derivative``, element by element, with
    ``activation(z, parameters) = (φ(z), φ'(z))``. The kit calls it once per activation of
    the network, so that each copy of the loop is straight-line arithmetic, which
    vectorises (as :func:`tinynet.compiled.lanes.activate_lanes`)."""
    for r in range(Z.shape[0]):
        for j in range(Z.shape[1]):
            value, slope = activation(Z[r, j], parameters)
            out[r, j] = dA[r, j] * slope if derivative else value


# --- a dense layer: forward and backward side by side ---------------------------------------

@njit(error_model="numpy", inline="always")
def _dense_forward(activate, X, W, b, kind, parameters, layer, Z, A):
    """Z = X Wᵀ + b and A = φ(Z), written into Z and A (B, n_out). X is (B, n_in); φ is
    activation ``kind`` of the kit's switch ``activate``, with row ``layer`` of
    ``parameters``."""
    _matmul_into(X, W.T, Z)
    for r in range(Z.shape[0]):
        for j in range(Z.shape[1]):
            Z[r, j] += b[j]
    activate(kind, parameters, layer, Z, Z, A, False)


@njit(error_model="numpy", inline="always")
def _dense_gradients(activate, dA, X, Z, kind, parameters, layer, dZ, dW, db):
    """From dL/dA (B, n_out): dZ = dA ⊙ φ'(Z), dW = dZᵀ X, db = Σ_rows dZ, the layer's own
    gradients (all but dX). Writes dZ (B, n_out), dW (n_out, n_in) and db (n_out,); X is
    (B, n_in)."""
    activate(kind, parameters, layer, Z, dA, dZ, True)
    _matmul_into(dZ.T, X, dW)
    for j in range(dZ.shape[1]):
        db[j] = dZ[0, j]
    for r in range(1, dZ.shape[0]):
        for j in range(dZ.shape[1]):
            db[j] += dZ[r, j]


@njit(error_model="numpy", inline="always")
def _dense_backward(activate, dA, X, W, Z, kind, parameters, layer, dZ, dW, db, dX, need_dX):
    """A dense layer's whole backward pass, as :func:`tinynet.dense.backward`: dZ, dW, db
    (:func:`_dense_gradients`) and, if ``need_dX``, dX = dZ W (B, n_in).

    :func:`fit_network` calls the two steps itself, so that it can update W between them.
    """
    _dense_gradients(activate, dA, X, Z, kind, parameters, layer, dZ, dW, db)
    if need_dX:
        _matmul_into(dZ, W, dX)


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
def fit_network(forward, gradients, loss, per_step, update, steps, theta, state, hyper, layout,
                X, Y, seed, settings, record):
    """Train ``theta`` (P,) and the optimizer's ``state`` (k, P) in place on the network's
    ``loss``, as :func:`tinynet.reference.train` does for one member: epochs
    ``settings.first_epoch`` on, written into row 0 of ``record``. ``forward(theta, layout,
    X, Zs, As)`` and ``gradients(dA, X, Z, kind, parameters, layer, dZ, dW, db)`` are the
    kit's :func:`forward_network` and :func:`_dense_gradients`; ``per_step(state, lr, hyper,
    steps)`` its optimizer's part per step (the step values into ``steps``, the counters
    advanced: :mod:`tinynet.compiled.hoisting`), and ``update(theta, grad, state, lr, hyper,
    steps, start, stop)`` its part per parameter, of parameters start to stop; ``hyper``
    holds the optimizer's hyperparameters and the loss's parameters
    (:func:`tinynet.compiled.kit.hyperparameters`). Each layer's W and b are updated as soon
    as their
    gradients are known, before the layer passes dX = dZ W back, if
    ``settings.update_during_backward``; all at once after the backward pass otherwise.

    Returns the number of epochs run: fewer than ``settings.epochs`` when the loss or a
    parameter became NaN or infinite (divergence), which ends training.
    """
    table, kinds, parameters = layout
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
    dZ = np.empty(batch_size * width)
    dA = np.empty(batch_size * width)
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
            x, y = Xb[:rows], Yb[:rows]
            outputs = forward(theta, layout, x, Zs, As)
            # the loss, dL/dŷ, outputs on the wrong side of the threshold
            delta = _rows(dA, rows, n_out)
            batch_loss = 0.0
            for r in range(rows):
                for k in range(n_out):
                    term, gradient = loss(outputs[r, k], y[r, k], rows, hyper)
                    batch_loss += term
                    delta[r, k] = gradient
                    wrong |= (outputs[r, k] > threshold) != (y[r, k] > threshold)
            total += batch_loss
            per_step(state, lr, hyper, steps)
            # backward
            for layer in range(layers - 1, -1, -1):
                W, _ = _weights(theta, table, layer)
                dW, db = _weights(grad, table, layer)
                width_in, width_out, w_at, b_at = (table[layer, 0], table[layer, 1],
                                                   table[layer, 2], table[layer, 3])
                prev = x if layer == 0 else _rows(As[layer - 1], rows, width_in)
                dz = _rows(dZ, rows, width_out)
                gradients(delta, prev, _rows(Zs[layer], rows, width_out), kinds[layer],
                          parameters, layer, dz, dW, db)
                if during:                                    # update this layer: W and b
                    update(theta, grad, state, lr, hyper, steps, w_at, b_at + width_out)
                if layer > 0:                                 # dX = dZ W, the next dA
                    delta = _rows(dA, rows, width_in)
                    _matmul_into(dz, W, delta)
            if not during:                                    # update every layer
                update(theta, grad, state, lr, hyper, steps, 0, theta.size)
        epoch_loss = total / n
        if wrong:
            record.last_wrong_epoch[0] = epoch
        record.final_loss[0] = epoch_loss
        if every > 0 and (epoch + 1) % every == 0:
            record.loss[0, (epoch + 1) // every - 1] = epoch_loss
        if not math.isfinite(epoch_loss) or not np.all(np.isfinite(theta)):
            record.diverged_epoch[0] = epoch
            return run + 1
    return settings.epochs
