"""Compiled training of one network of any layout: the words of a dense layer's forward and
backward passes, and the scratch of a whole training run in one call.

They compute what :mod:`tinynet.reference` computes, in the same order of operations, so that
the two backends agree to rounding: a dot product is summed from the first input to the last,
the bias is added after it, and the loss's gradient is its definition's. Underneath they are
plain Python: with ``NUMBA_DISABLE_JIT=1`` they run (slowly) and can be stepped through in a
debugger. Parameters travel as one flat vector ``theta`` with a :class:`tinynet.packing.Layout`.

The maths is not here: the functions take the network's activations, loss and optimizer as
compiled functions, which :mod:`tinynet.compiled.kit` writes from their definitions for each
network: switches over the network's activations (:func:`activation_rows`,
:func:`activation_pairs` for each), ``loss`` and ``update``. Nor is the training: the kit's
``fit_network`` is :func:`tinynet.step.train`, the epoch loop, written by
:mod:`tinynet.compiled.epochs` on the scratch of :func:`scratch`, and its step is the kit's
``train_step``, :func:`tinynet.step.train_step` written out for any layout by
:mod:`tinynet.compiled.looping` in the words of this module (:func:`affine`, :func:`times`,
:func:`gradients`, :func:`_matmul_into`, inlined into it). The functions that take a
function are inlined where they are called (``inline="always"``), which numba caches: passed
through calls that are not inlined, they would become function pointers, which numba cannot
cache.
"""

from __future__ import annotations

import numpy as np
from numba import njit

__all__ = ["BLAS_MIN_WORK", "activation_rows", "activation_pairs", "affine", "times", "gradients",
           "normalize", "scale_shift", "norm_gradients", "normalize_backward", "skip_sum", "scaled",
           "copy_rows", "scale_gradient", "forward_network", "scratch", "stream_scratch"]

BLAS_MIN_WORK = 32_768
"""Matrix products with at least this many multiply-adds go to BLAS (``np.dot``); smaller ones
are loops, which win there because a BLAS call costs about a microsecond before it starts."""


@njit(cache=True, error_model="numpy", _nrt=True)
def _blas_into(a, b, out):
    """out = a b by BLAS (``np.dot``, which allocates its result, so counts references): a
    function of its own, called from the kit's one-network step, which counts none
    (:data:`tinynet.compiled.looping.UNCOUNTED`) and whose setting it would inherit without
    ``_nrt=True``."""
    out[:, :] = np.dot(a, b)


@njit(cache=True, error_model="numpy", inline="always")
def _matmul_into(a, b, out):
    """out = a b for a (m, k) and b (k, n), either of which may be a transposed view.

    Big products (at least :data:`BLAS_MIN_WORK` multiply-adds) go to BLAS; small ones are
    loops that sum from k = 0 upwards, the order the lanes kernel uses too, starting from the
    first product itself (not from 0.0 + it: an addition fewer in the chain, and a sum of
    -0.0 products stays -0.0 in every kernel alike). Inlined into its callers, so that the
    small loops of a per-sample step pay no call. From four rows of a on, loops of their own
    (a call each), by b's memory order, give the same sums in the same order, so the same
    bits, faster (:func:`_sums_along_rows`, :func:`_sums_four_rows_at_once`).
    """
    m, inner = a.shape
    n = b.shape[1]
    if m * inner * n >= BLAS_MIN_WORK:
        _blas_into(a, b, out)
    elif m >= 4 and b.strides[1] == b.itemsize:
        _sums_along_rows(a, b, out)
    elif m >= 4:
        _sums_four_rows_at_once(a, b, out)
    else:
        for r in range(m):
            for c in range(n):
                acc = a[r, 0] * b[0, c]
                for k in range(1, inner):
                    acc += a[r, k] * b[k, c]
                out[r, c] = acc


@njit(cache=True, error_model="numpy")
def _sums_along_rows(a, b, out):
    """out = a b where b's rows are contiguous: a row of out at a time, each term k added to
    every column of it (out[r, :] += a[r, k] b[k, :], a loop that vectorises). A dot product
    summed term by term is a chain of dependent additions; a row's columns are independent.
    About three times as fast as a dot product per output at 32 x 10 x 100 (issue 42)."""
    m, inner = a.shape
    n = b.shape[1]
    for r in range(m):
        x = a[r, 0]
        for c in range(n):
            out[r, c] = x * b[0, c]
        for k in range(1, inner):
            x = a[r, k]
            for c in range(n):
                out[r, c] += x * b[k, c]


@njit(cache=True, error_model="numpy")
def _sums_four_rows_at_once(a, b, out):
    """out = a b where b's columns are contiguous (b = Wᵀ, the forward pass's X Wᵀ): dot
    products, four rows of out at a time, so that four independent chains of additions share
    each load of b (about 1.5-2 times as fast as one at a time from 4 rows on); the rows left
    over one at a time."""
    m, inner = a.shape
    n = b.shape[1]
    r = 0
    while r + 4 <= m:
        for c in range(n):
            w = b[0, c]
            acc0, acc1, acc2, acc3 = a[r, 0] * w, a[r + 1, 0] * w, a[r + 2, 0] * w, \
                a[r + 3, 0] * w
            for k in range(1, inner):
                w = b[k, c]
                acc0 += a[r, k] * w
                acc1 += a[r + 1, k] * w
                acc2 += a[r + 2, k] * w
                acc3 += a[r + 3, k] * w
            out[r, c], out[r + 1, c], out[r + 2, c], out[r + 3, c] = acc0, acc1, acc2, acc3
        r += 4
    for left in range(r, m):
        for c in range(n):
            acc = a[left, 0] * b[0, c]
            for k in range(1, inner):
                acc += a[left, k] * b[k, c]
            out[left, c] = acc


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


# --- the words of a residual block and its LayerNorm (tinynet.blocks' order of sums) ---------

@njit(cache=True, error_model="numpy", inline="always")
def _unit_sum(X, r):
    """Σ_j X[r, j], from the first unit to the last (:func:`tinynet.maths.unit_sum`)."""
    total = X[r, 0]
    for j in range(1, X.shape[1]):
        total += X[r, j]
    return total


@njit(cache=True, error_model="numpy", inline="always")
def normalize(X, eps, normalized, inverse_std):
    """x̂ = (X − μ) / √(σ² + ε) into ``normalized`` (B, n) and 1/√(σ² + ε) into
    ``inverse_std`` (B,), row by row (:func:`tinynet.blocks.normalize`)."""
    n = X.shape[1]
    for r in range(X.shape[0]):
        mean = _unit_sum(X, r) / n
        for j in range(n):
            normalized[r, j] = X[r, j] - mean
        square = normalized[r, 0] * normalized[r, 0]
        for j in range(1, n):
            square += normalized[r, j] * normalized[r, j]
        inverse_std[r] = 1.0 / np.sqrt(square / n + eps)
        for j in range(n):
            normalized[r, j] = normalized[r, j] * inverse_std[r]


@njit(cache=True, error_model="numpy", inline="always")
def scale_shift(normalized, gain, bias, Y):
    """Y = γ ⊙ x̂ + β (:func:`tinynet.blocks.scale_shift`)."""
    for r in range(Y.shape[0]):
        for j in range(Y.shape[1]):
            Y[r, j] = normalized[r, j] * gain[j] + bias[j]


@njit(cache=True, error_model="numpy", inline="always")
def norm_gradients(dY, normalized, dgain, dbias):
    """dγ = Σ_rows dY ⊙ x̂ and dβ = Σ_rows dY, from the first row
    (:func:`tinynet.blocks.norm_gradients`)."""
    for j in range(dY.shape[1]):
        dgain[j] = dY[0, j] * normalized[0, j]
        dbias[j] = dY[0, j]
    for r in range(1, dY.shape[0]):
        for j in range(dY.shape[1]):
            dgain[j] += dY[r, j] * normalized[r, j]
            dbias[j] += dY[r, j]


@njit(cache=True, error_model="numpy", inline="always")
def normalize_backward(dY, gain, normalized, inverse_std, dX):
    """dX from dY through γ ⊙ x̂ + β and the normalization, row by row
    (:func:`tinynet.blocks.normalize_backward`); dX may be dY itself."""
    n = dY.shape[1]
    for r in range(dY.shape[0]):
        first = dY[r, 0] * gain[0]
        total, along = first, first * normalized[r, 0]
        for j in range(1, n):
            d = dY[r, j] * gain[j]
            total += d
            along += d * normalized[r, j]
        mean, mean_along = total / n, along / n
        for j in range(n):
            dX[r, j] = (dY[r, j] * gain[j] - mean
                        - normalized[r, j] * mean_along) * inverse_std[r]


@njit(cache=True, error_model="numpy", inline="always")
def skip_sum(skip, X, scale, F, S):
    """S = s·X + α·F (:func:`tinynet.blocks.skip_sum`)."""
    for r in range(S.shape[0]):
        for j in range(S.shape[1]):
            S[r, j] = skip * X[r, j] + scale * F[r, j]


@njit(cache=True, error_model="numpy", inline="always")
def scaled(scale, dS, dF):
    """dF = α·dS (:func:`tinynet.blocks.scaled`)."""
    for r in range(dF.shape[0]):
        for j in range(dF.shape[1]):
            dF[r, j] = scale * dS[r, j]


@njit(cache=True, error_model="numpy", inline="always")
def copy_rows(X, out):
    """out = X, element by element (the stream's first value: the layer before the blocks'
    output)."""
    for r in range(X.shape[0]):
        for j in range(X.shape[1]):
            out[r, j] = X[r, j]


@njit(cache=True, error_model="numpy", inline="always")
def scale_gradient(dS, F):
    """dα = Σ_rows Σ_units dS ⊙ F, each row's units in order, then the rows in order
    (:func:`tinynet.blocks.scale_gradient`)."""
    total = 0.0
    for r in range(dS.shape[0]):
        row = dS[r, 0] * F[r, 0]
        for j in range(1, dS.shape[1]):
            row += dS[r, j] * F[r, j]
        total = row if r == 0 else total + row
    return total


# --- whole networks -----------------------------------------------------------------------

@njit(cache=True, error_model="numpy", inline="always")
def _weights(theta, table, layer):
    n_in, n_out, w_at, b_at = table[layer, 0], table[layer, 1], table[layer, 2], table[layer, 3]
    return theta[w_at:w_at + n_out * n_in].reshape(n_out, n_in), theta[b_at:b_at + n_out]


@njit(cache=True, error_model="numpy", inline="always")
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


@njit(cache=True, error_model="numpy")
def scratch(theta, layout, X, Y, batch_size):
    """One network's scratch for the kit's ``fit_network``: ``grad`` (P,); the rows of each
    layer's Z, A and φ'(Z) (layers, batch · width); dZ, delta and back (batch · width); a
    batch's samples and targets, Xb (batch, n_in) and Yb (batch, n_out)."""
    layers, n_in = layout.table.shape[0], X.shape[1]
    width = max(n_in, layout.table[:, 1].max())
    return (np.zeros_like(theta), np.empty((layers, batch_size * width)),
            np.empty((layers, batch_size * width)), np.empty((layers, batch_size * width)),
            np.empty(batch_size * width), np.empty(batch_size * width),
            np.empty(batch_size * width), np.empty((batch_size, n_in)),
            np.empty((batch_size, Y.shape[1])))


@njit(cache=True, error_model="numpy")
def stream_scratch(layout, blocks_layout, batch_size):
    """A network with residual blocks' further scratch (:mod:`tinynet.compiled.stream`), for
    L blocks of width w: ``stream`` (L + 1, batch · w), block k's input in row k and the
    last block's output in row L; ``hidden`` (L, batch · w), a pre-norm block's LN(x);
    ``normalized`` (L, batch · w) and ``inverse_std`` (L, batch), each norm's x̂ and
    1/√(σ² + ε); ``summed`` (batch · w), a post-norm block's sum before its norm; ``carry``,
    a block's dS while its branch's backward pass runs, which then trades places with
    :func:`scratch`'s ``delta`` and ``back`` and so is as long as they are (batch · the
    widest layer's width). Every kind of block gets all of them (one type of tuple for every
    kernel), a block without a norm leaving the norm's unused."""
    table, block_table = layout.table, blocks_layout[0]
    blocks, width = block_table.shape[0], table[block_table[0, 0], 0]
    widest = max(table[:, 0].max(), table[:, 1].max())
    return (np.empty((blocks + 1, batch_size * width)), np.empty((blocks, batch_size * width)),
            np.empty((blocks, batch_size * width)), np.empty((blocks, batch_size)),
            np.empty(batch_size * width), np.empty(batch_size * widest))
