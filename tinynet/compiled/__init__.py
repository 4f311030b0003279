"""The compiled backend (``backend="numba"``): every training run in one Numba call.

It computes what the NumPy backend (:mod:`tinynet.reference`) computes, in the same order of
operations: a numba fit agrees with a NumPy fit to rounding (tested to 1e-12 after training),
and member k of a compiled ensemble is bit-identical to a compiled fit of the same network:
the lanes sum every product as the single fit's loops do, and where a single fit calls BLAS
(a product of ``single.BLAS_MIN_WORK`` multiply-adds or more) every member trains as its own
single fit (the kit's ``fit_members``).

The maths is in none of these modules: every activation, loss and optimizer is defined once,
as a method written with :mod:`tinynet.maths` (``Activation.forward_and_derivative``,
``Loss.value_and_gradient``, ``Optimizer.update``), and :mod:`~tinynet.compiled.render`
writes that method into every kernel. The step around it (a dense layer's forward and
backward, the chain through the layers, when the update happens) is written once too, in
:mod:`tinynet.step`: the NumPy backend runs it, and :mod:`~tinynet.compiled.tracing` runs it
on names to write the step of the kernels generated for a small layout
(:mod:`~tinynet.compiled.tracing`), and :mod:`~tinynet.compiled.looping` on runtime layers to
write the step of the generic kernels (one network, and many in SIMD lanes); the epoch loop
around the step, :func:`tinynet.step.train`, is written out by :mod:`~tinynet.compiled.epochs`
for every kernel. Each part of
training and where it is written (modules within ``tinynet``, those of the compiled backend within
``tinynet.compiled``):

* **a layer's forward and backward** (Z = X Wᵀ + b and φ; the chain rule dZ = dA ⊙ φ'(Z);
  dW, db; dX; when the update happens) **and the chain through the layers**:
  ``step.Dense``, ``step.forward``, ``step.backward``, ``step.train_step``. NumPy runs them
  (``reference``, with ``dense``'s arrays); ``tracing`` writes them out for the kernels
  generated for a small layout (``fused``: one network, ``unrolled``: SIMD lanes), and
  ``looping`` for the generic kernels: the kit's ``train_step``, in the words of ``single``
  (``affine``, ``times``, ``gradients``, ``_matmul_into``), and its ``train_step_lanes``
  and ``forward_lanes``, in the words of ``lanes`` (``dense_forward``, ``times``,
  ``gradients_and_step``, ``backward_input``, ``backward_input_then_step``).
* **a residual block and its LayerNorm** (``step.Residual``, ``step.Norm``): NumPy runs them
  with ``blocks``' arrays; ``stream`` writes them out for a network of layers, a run of blocks
  of one kind and layers, the blocks as one loop whose body is the block's pass traced once,
  in the words of ``single`` (``normalize``, ``scale_shift``, ``norm_gradients``,
  ``normalize_backward``, ``skip_sum``, ``scaled``, ``scale_gradient``).
* **φ and φ'**: the activation's definition; the kit's ``activation_k`` in the generic
  kernels, its lines (``kit.activation_lines``) in the generated ones.
* **the loss and dL/dŷ**: the loss's definition, called by ``dense.loss``; its lines in
  ``tracing.Words.loss``; the kit's ``loss`` in the generic kernels.
* **the optimizer's step**: its definition, by ``Optimizer.step``; its lines
  (``kit.update_lines``, its part per step ``kit.step_lines``) in every kernel.
* **an output on the wrong side, a run diverged, the history's slot**: their one definition
  each, :mod:`tinynet.verdicts` (``wrong_side``; ``diverged`` of the summed ``finite_mark``;
  ``history_slot``), run on arrays by ``reference.Epochs`` and compiled for every kernel
  (``compiled.verdicts``).
* **the epoch loop** (the epochs, their orders, the batches, the step, the epoch's loss, its
  record, the verdicts, the stop at divergence): ``step.train``. NumPy runs it in the words of
  ``reference.Epochs``; ``epochs`` writes it out for every kernel, one network's record in the
  words of ``epochs.OneNetwork`` (``fused``, the kit's ``fit_network``) and a block of
  lanes' in those of ``epochs.Lanes`` (``unrolled``, the kit's ``train_block``, with
  ``lanes.record_lanes`` and ``diverged_lanes``).
* **epoch orders**: ``shuffle``; ``orders`` (the kit's ``fit_network``) and
  ``lanes.lane_orders`` (the others), the same orders.

The kit (:mod:`~tinynet.compiled.kit`) is a module written for each network's maths: its
activations and loss as scalar functions, the optimizer's step as loops over parameters, the
generic kernels' step and epoch loop in the words of ``single`` and ``lanes``, and their entry
points. The state of
an optimizer (velocities, moments) travels beside the parameters: ``state`` (k, P), or
(k, P, lanes) in the lanes; the hyperparameters, and after them the loss's parameters, in one
array read at run time (``kit.hyperparameters``).

With ``update="during_backward"`` a layer is updated before it passes dX back: in
``step.Dense.backward``, and so in every kernel. The lanes keep no gradients, so their
words step a layer after the backward pass where nothing later reads its W: right after its
dX (``looping``).

Which kernel runs: per-sample steps of a small layout (at most ``codegen.MAX_UNROLLED_WORK``
multiply-adds per step) train on a kernel generated for it from one straight-line step
(:mod:`tinynet.step` written out by :mod:`~tinynet.compiled.tracing`, with the helpers of
:mod:`~tinynet.compiled.codegen`): an ensemble on :mod:`~tinynet.compiled.unrolled` (the step
in a loop over SIMD lanes, cut at the exps so that neighbouring lanes' exps overlap), a
single fit on :mod:`~tinynet.compiled.fused` (the step on parameters held in locals for the
whole run). A larger layout, or minibatches, train on ``lanes`` (ensembles) or ``single``
(one network, BLAS for big layers); an ensemble whose single fits call BLAS trains each member
as its own single fit, the members over the cores (the kit's ``fit_members``:
``backend.calls_blas``). A softmax output, defined over a layer's units, is written by
:mod:`~tinynet.compiled.reducing` (a chain over the units in the generated kernels, loops in
the generic ones). Every kernel is keyed by the maths (layout, the activation
classes the network uses, the loss's and optimizer's classes, update order): seeds, samples,
batch size, epochs, learning rate, hyperparameters and the loss's parameters are read when it
runs. The generated kernels do the arithmetic of the
``lanes`` column in the same order, bit for bit.

An optimizer's step comes in two parts (:mod:`~tinynet.compiled.hoisting`): what is the same
for every parameter (Adam's bias corrections, from the step count, which is one number per
network while the kernels run) once per step, the kit's ``per_step`` or the generated
kernels' step values; the rest per parameter, as the table says.

Modules: :mod:`~tinynet.compiled.scalars` (the exp, log and log1p that vectorise),
:mod:`~tinynet.compiled.render` (a definition written as scalar code),
:mod:`~tinynet.compiled.reducing` (a definition over a layer's units, its reductions as loops),
:mod:`~tinynet.compiled.hoisting` (an optimizer's per-step work out of its per-parameter
loop),
:mod:`~tinynet.compiled.kit` (a network's maths, and the generic kernels' entry points),
:mod:`~tinynet.compiled.tracing` (the words :mod:`tinynet.step` writes code in),
:mod:`~tinynet.compiled.looping` (the generic kernels' step, on runtime layers),
:mod:`~tinynet.compiled.stream` (residual networks' kernels, the blocks as one loop),
:mod:`~tinynet.compiled.epochs` (every kernel's epoch loop, from :func:`tinynet.step.train`),
:mod:`~tinynet.compiled.sources` (where generated modules are written and loaded),
:mod:`~tinynet.compiled.orders` (epoch orders), :mod:`~tinynet.compiled.single` (one network,
BLAS for big layers), :mod:`~tinynet.compiled.lanes` (many networks side by side, any
layout), :mod:`~tinynet.compiled.codegen` (the step written out for one layout),
:mod:`~tinynet.compiled.unrolled` and :mod:`~tinynet.compiled.fused`
(the kernels generated from it), :mod:`~tinynet.compiled.backend` (the entry points: pack,
choose the kernel, run, unpack).
Networks reach the kernels as flat arrays (:mod:`tinynet.packing`), settings and results as
the named tuples of :mod:`tinynet.results`. This package's ``__init__`` imports no Numba:
:func:`load` does, when the backend is first used, so ``import tinynet`` and the NumPy
backend work without it.

Where the caches go: numba caches the compiled modules in ``$NUMBA_CACHE_DIR`` if that is set
and writable, else in this package's ``__pycache__``, else in its user cache
(``$XDG_CACHE_HOME/numba``, default ``~/.cache/numba``); the generated kernels, and their
compiled code unless ``$NUMBA_CACHE_DIR`` is set, go to
:func:`~tinynet.compiled.sources.kernel_dir`. When none of these is writable, :func:`load` (or
the first fit on a generated kernel) raises :class:`CacheUnwritableError`, an ``OSError`` whose
one-line message names the directories tried and the variable(s) to set, instead of Numba's
traceback from the middle of an import. A cache folder that is not this user's own, or that
others can write, is not used (:func:`~tinynet.compiled.caches.untrusted`), and a damaged
cache entry is compiled again (:func:`~tinynet.compiled.caches.guard`), each with one line.
"""

from __future__ import annotations

import importlib
from types import ModuleType

from .caches import (CacheUnwritableError, cache_error, guard_loaded, numba_cache_problem,
                     trust_numba_cache)

__all__ = ["load", "CacheUnwritableError"]


_checked = False
"""Whether :func:`load` has checked numba's cache directories in this process."""


def load() -> ModuleType:
    """Return :mod:`tinynet.compiled.backend`, importing Numba and compiling (or loading the
    cached) kernels the first time. Raises :class:`CacheUnwritableError` when Numba could
    cache them nowhere."""
    global _checked
    try:
        if not _checked:
            trust_numba_cache()
            problem = numba_cache_problem(_what_to_set)
            if problem is not None:
                raise CacheUnwritableError(problem)
            importlib.import_module("tinynet.compiled.backend")
            guard_loaded()
            _checked = True
        return importlib.import_module("tinynet.compiled.backend")
    except ModuleNotFoundError as error:
        if error.name not in ("numba", "llvmlite"):
            raise
        raise ModuleNotFoundError(f"backend='numba' needs the numba package ({error}); install "
                                  "it (pip install numba) or pass backend='numpy'") from error
    except RuntimeError as error:  # what the check above cannot foresee (a locator of numba's
        unwritable = cache_error(error, "the compiled kernels", _what_to_set())  # we do not
        if unwritable is None:                                     # know, a race with a chmod)
            raise
        raise unwritable from error


def _what_to_set() -> str:
    """The advice ending a :class:`CacheUnwritableError` about numba's cache: set
    NUMBA_CACHE_DIR, and TINYNET_KERNEL_DIR too if tinynet has nowhere to write its generated
    kernels either."""
    from . import sources

    try:
        sources.kernel_dir()
    except CacheUnwritableError:
        return "set NUMBA_CACHE_DIR and TINYNET_KERNEL_DIR to writable directories"
    return "set NUMBA_CACHE_DIR to a writable directory"
