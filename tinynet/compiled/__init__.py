"""The compiled backend (``backend="numba"``): every training run in one Numba call.

It computes what the NumPy backend (:mod:`tinynet.reference`) computes, in the same order of
operations: a numba fit agrees with a NumPy fit to rounding (tested to 1e-12 after training),
and member k of a compiled ensemble is bit-identical to a compiled fit of the same network
while every matrix product stays below ``single.BLAS_MIN_WORK`` multiply-adds (from there the
single fit calls BLAS, which rounds differently; the lanes never do).

Each step of SGD and the one function per backend that does it (module names within
``tinynet``; the numba columns are in ``tinynet.compiled``):

================== ======================== ============================== =======================
step               NumPy: ``reference``     numba, one network:            numba, one network per
                                            ``single``                     SIMD lane: ``lanes``
================== ======================== ============================== =======================
epoch order        ``shuffle.epoch_orders`` ``orders.epoch_order_into``    ``lanes.lane_orders``
forward            ``dense.forward_*``      ``single._dense_forward``      ``lanes._forward``
φ and φ'           ``activations.*``        ``scalars.activate``,          ``scalars.activate``,
                                            ``activate_derivative``        ``activate_derivative``
loss and dL/dŷ     ``losses.mse``,          ``single.fit_network``         ``lanes._fit_block``
                   ``losses.mse_gradient``
backward           ``dense.backward_*``     ``single._dense_gradients``,   ``lanes._backward``
                                            dX = dZ W: ``_matmul_into``
update θ − lr ∇θ,  ``reference.sgd_step``   ``single._sgd_update``         ``lanes._sgd_update``
after or during
the backward pass
wrong sides,       ``reference.train``      ``single.fit_network``         ``lanes._fit_block``
divergence, record
trained outputs    ``reference.predict``    ``single.forward_network``     ``lanes._fit_block``
================== ======================== ============================== =======================

Forward and backward are one layer per call in the first two columns and every layer in one
call in the lanes (``_forward``, ``_backward``). The first two take a layer's backward pass in
steps (``dense.backward_activation``, ``backward_parameters``, ``backward_input``;
``single._dense_gradients``, then ``_matmul_into``), so that with ``update="during_backward"``
the layer is updated before it passes dX back; the lanes do that inside ``_backward``.

Which kernel runs: a small layout (at most ``codegen.MAX_UNROLLED_WORK`` multiply-adds per
SGD step) trains on a kernel generated for it from one straight-line SGD step
(:mod:`~tinynet.compiled.codegen`): an ensemble on :mod:`~tinynet.compiled.unrolled` (the step
in a loop over SIMD lanes, cut at the exps so that neighbouring lanes' exps overlap), a
single fit on :mod:`~tinynet.compiled.fused` (the step on parameters held in locals for the
whole run). A larger layout trains on ``lanes`` (ensembles) or ``single`` (one network, BLAS
for big layers). The generated kernels do the arithmetic of the ``lanes`` column in the same
order, bit for bit.

Modules: :mod:`~tinynet.compiled.scalars` (exp that vectorises, activations),
:mod:`~tinynet.compiled.orders` (epoch orders), :mod:`~tinynet.compiled.single` (one network,
BLAS for big layers), :mod:`~tinynet.compiled.lanes` (many networks side by side, any
layout), :mod:`~tinynet.compiled.codegen` (the step written out for one layout, and the cache
of generated kernels), :mod:`~tinynet.compiled.unrolled` and :mod:`~tinynet.compiled.fused`
(the kernels generated from it), :mod:`~tinynet.compiled.backend` (the entry points: pack,
choose the kernel, run, unpack).
Networks reach the kernels as flat arrays (:mod:`tinynet.packing`), settings and results as
the named tuples of :mod:`tinynet.results`. This package's ``__init__`` imports no Numba:
:func:`load` does, when the backend is first used, so ``import tinynet`` and the NumPy
backend work without it.
"""

from __future__ import annotations

import importlib
from types import ModuleType

__all__ = ["load"]


def load() -> ModuleType:
    """Return :mod:`tinynet.compiled.backend`, importing Numba and compiling (or loading the
    cached) kernels the first time."""
    try:
        return importlib.import_module("tinynet.compiled.backend")
    except ModuleNotFoundError as error:
        if error.name not in ("numba", "llvmlite"):
            raise
        raise ModuleNotFoundError(f"backend='numba' needs the numba package ({error}); install "
                                  "it (pip install numba) or pass backend='numpy'") from error
