"""Lane kernels written for one layout: every loop over units unrolled, every value a local.

The generic lane kernel (:mod:`tinynet.compiled.lanes`) loops over a layout table and keeps
activations, derivatives and gradients in 4-D scratch arrays, so every SGD step stores and
reloads them. For a small network this module instead writes the source of a kernel for its
exact layout — sizes, activations, batch size, the size of the last batch, update order — in
which one SGD step of one lane is straight-line code: the lane's parameters are loaded into
local variables, the forward pass, loss, backward pass and update run on locals, and the new
parameters are stored back. That code sits inside a loop over the lanes of a block, which the
compiler turns into SIMD instructions, so each local lives in a vector register.

Every value is computed as the generic kernels compute it, in the same order (dot products
from ``0.0`` and the first input upwards, then the bias; ``db`` from the first row; the same
scalar functions), so a member is bit-identical to a numba fit of the same network.

Sigmoid uses :func:`~tinynet.compiled.scalars.vector_exp`, once for σ and σ'; the hot loop of
the default XOR kernel is vector code with no call to ``exp`` (``tests/test_unrolled.py``
checks the assembly). Tanh still calls ``math.tanh``, which does not vectorise.

Generated sources are written to :func:`kernel_dir` (``$TINYNET_KERNEL_DIR``, or
``~/.cache/tinynet/kernels``), named by a hash of their text, and compiled with numba's
``cache=True``: a layout is compiled once per machine, and a change of this generator writes
new files. Layouts with more than :data:`MAX_UNROLLED_WORK` multiply-adds per SGD step use the
generic kernel, whose compile time does not grow with the network.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.util
import math
import os
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from types import ModuleType

import numpy as np

from ..activations import IDENTITY, LEAKY_RELU, RELU, SIGMOID, TANH
from ..packing import Layout

__all__ = ["MAX_UNROLLED_WORK", "SIMD_LANES", "MAX_LANES", "supports", "block_width",
           "kernel_dir", "source", "fit_lanes"]

MAX_UNROLLED_WORK = 160
"""Unroll a layout when one SGD step has at most this many multiply-adds in its weight
products (forward, dW and dX: 3 · batch size · Σ n_in · n_out). Above it, the generic kernel.
Chosen by compile time, which grows with the unrolled code: measured cold on a 2-core machine,
3 s for 2-2-1 (18 multiply-adds), 6 s for 2-16-1 (144), 16 s for 2-8-8-8-1 (456)."""

SIMD_LANES = 8
"""Lanes per block are a multiple of this: one AVX-512 register of float64, two AVX2 ones."""

MAX_LANES = 64
"""At most this many lanes per block: beyond, the scratch of a block leaves the L1 cache."""


def step_work(layout: Layout, batch_size: int) -> int:
    """Multiply-adds in the weight products of one SGD step: forward, dW and dX."""
    return 3 * batch_size * int(np.sum(layout.table[:, 0] * layout.table[:, 1]))


def supports(layout: Layout, batch_size: int) -> bool:
    """True when the layout is small enough to unroll (:data:`MAX_UNROLLED_WORK`)."""
    return step_work(layout, batch_size) <= MAX_UNROLLED_WORK


def block_width(members: int, cores: int) -> tuple[int, int]:
    """``(blocks, lanes)`` for ``members`` networks on ``cores`` threads.

    The rule: as many blocks as cores (more only when a block would exceed
    :data:`MAX_LANES`), never more blocks than groups of :data:`SIMD_LANES` members, and lanes
    per block the members per block rounded up to a multiple of :data:`SIMD_LANES`; one
    member gets one lane. 100 members on 2 cores: 2 blocks of 56 lanes, 12 idle (64 lanes
    would leave 28).
    """
    if members == 1:
        return 1, 1
    blocks = cores * math.ceil(members / (cores * MAX_LANES))
    blocks = max(1, min(blocks, math.ceil(members / SIMD_LANES)))
    lanes = SIMD_LANES * math.ceil(math.ceil(members / blocks) / SIMD_LANES)
    return math.ceil(members / lanes), lanes  # rounding lanes up can leave a block unneeded


# --- writing the source ---------------------------------------------------------------------

def _weight(table: np.ndarray, layer: int, j: int, i: int) -> int:
    return int(table[layer, 2] + j * table[layer, 0] + i)


def _bias(table: np.ndarray, layer: int, j: int) -> int:
    return int(table[layer, 3] + j)


def _activation(code: int, layer: int, z: str, a: str, d: str | None) -> list[str]:
    """Lines setting ``a`` = φ(z) and, unless ``d`` is None, ``d`` = φ'(z), as
    :func:`~tinynet.compiled.scalars.activate` and ``activate_derivative`` compute them."""
    if code == SIGMOID:
        lines = ["e = vector_exp(-abs(z))", f"{a} = (1.0 if {z} >= 0 else e) / (1.0 + e)"]
        return lines + ([f"{d} = e / ((1.0 + e) * (1.0 + e))"] if d else [])
    if code == TANH:
        return [f"{a} = math.tanh({z})"] + ([f"{d} = 1.0 - {a} * {a}"] if d else [])
    if code == RELU:
        return [f"{a} = {z} if {z} > 0 else 0.0"] + ([f"{d} = 1.0 if {z} > 0 else 0.0"] if d
                                                      else [])
    if code == LEAKY_RELU:
        return [f"{a} = {z} if {z} > 0 else alpha{layer} * {z}"] + (
            [f"{d} = 1.0 if {z} > 0 else alpha{layer}"] if d else [])
    if code == IDENTITY:
        return [f"{a} = {z}"] + ([f"{d} = 1.0"] if d else [])
    raise ValueError(f"no compiled activation with code {code}")


def _forward(layout: Layout, rows: int, derivatives: bool) -> list[str]:
    """a{k+1}_r_j = φ(Σ_i a{k}_r_i w_ji + b_j) for every layer k, row r, unit j (a0: input)."""
    table, lines = layout.table, []
    for k, (n_in, n_out, _, _) in enumerate(table):
        for r in range(rows):
            for j in range(n_out):
                products = " + ".join(f"a{k}_{r}_{i} * p{_weight(table, k, j, i)}"
                                      for i in range(n_in))
                lines.append(f"z = 0.0 + {products} + p{_bias(table, k, j)}")
                lines += _activation(int(layout.codes[k]), k, "z", f"a{k + 1}_{r}_{j}",
                                     f"d{k}_{r}_{j}" if derivatives else None)
    return lines


def _step(layout: Layout, rows: int, during: bool, lanes: int) -> list[str]:
    """One SGD step of lane ``l`` on the gathered batch of ``rows`` rows. Arrays are flat
    with the lane innermost and ``lanes`` a constant, so that the compiler can see that
    lane ``l``'s loads and stores never touch another lane's: theta[p·lanes + l]."""
    table = layout.table
    layers, n_params = len(table), int(table[-1, 3] + table[-1, 1])
    n_in, n_out = int(table[0, 0]), int(table[-1, 1])
    lines = [f"p{p} = theta[{p * lanes} + l]" for p in range(n_params)]
    for r in range(rows):
        lines += [f"a0_{r}_{i} = inputs[{(r * n_in + i) * lanes} + l]" for i in range(n_in)]
        lines += [f"t_{r}_{k} = targets[{(r * n_out + k) * lanes} + l]" for k in range(n_out)]
    lines += _forward(layout, rows, derivatives=True)
    lines += ["loss = 0.0", "wrong = False"]             # loss, dL/dŷ = (2/B)(ŷ − y), wrong sides
    for r in range(rows):
        for k in range(n_out):
            lines += [f"diff = a{layers}_{r}_{k} - t_{r}_{k}", "loss = loss + diff * diff",
                      f"g{layers}_{r}_{k} = {2.0 / rows!r} * diff",
                      f"wrong = wrong | ((a{layers}_{r}_{k} > threshold) != "
                      f"(t_{r}_{k} > threshold))"]
    lines += ["total[l] = total[l] + loss",
              "last_wrong_epoch[l] = epoch if wrong else last_wrong_epoch[l]"]
    for k in range(layers - 1, -1, -1):                   # backward, last layer first
        k_in, k_out = int(table[k, 0]), int(table[k, 1])
        for r in range(rows):
            lines += [f"dz{k}_{r}_{j} = g{k + 1}_{r}_{j} * d{k}_{r}_{j}" for j in range(k_out)]
        own = []
        for j in range(k_out):
            for i in range(k_in):
                terms = " + ".join(f"dz{k}_{r}_{j} * a{k}_{r}_{i}" for r in range(rows))
                lines.append(f"g{_weight(table, k, j, i)} = 0.0 + {terms}")
                own.append(_weight(table, k, j, i))
        for j in range(k_out):
            terms = " + ".join(f"dz{k}_{r}_{j}" for r in range(rows))
            lines.append(f"g{_bias(table, k, j)} = {terms}")
            own.append(_bias(table, k, j))
        if during:                                        # this layer steps now
            lines += [f"q{p} = p{p} - lr * g{p}" for p in own]
        weights = "q" if during else "p"
        if k > 0:                                         # dX = dZ W, the layer before's dA
            for r in range(rows):
                for i in range(k_in):
                    terms = " + ".join(f"dz{k}_{r}_{j} * {weights}{_weight(table, k, j, i)}"
                                       for j in range(k_out))
                    lines.append(f"g{k}_{r}_{i} = 0.0 + {terms}")
    if not during:                                        # every layer steps
        lines += [f"q{p} = p{p} - lr * g{p}" for p in range(n_params)]
    return lines + [f"theta[{p * lanes} + l] = q{p}" for p in range(n_params)]


def _gather(rows: int, lanes: int) -> list[str]:
    """The batch at ``start`` in each lane's order, lanes innermost, into ``inputs`` and
    ``targets``: a loop of its own, since gathers would keep the step from vectorising."""
    return [f"for r in range({rows}):",
            "    for i in range(X.shape[1]):",
            f"        for l in range({lanes}):",
            f"            inputs[(r * X.shape[1] + i) * {lanes} + l] = X[order[start + r, l], i]",
            "    for k in range(Y.shape[1]):",
            f"        for l in range({lanes}):",
            f"            targets[(r * Y.shape[1] + k) * {lanes} + l] = Y[order[start + r, l], k]"]


def _outputs(layout: Layout, lanes: int) -> list[str]:
    """The trained lane's outputs on sample ``t``, into ``predictions``."""
    table = layout.table
    n_params, n_in = int(table[-1, 3] + table[-1, 1]), int(table[0, 0])
    lines = [f"p{p} = theta[{p * lanes} + l]" for p in range(n_params)]
    lines += [f"a0_0_{i} = X[t, {i}]" for i in range(n_in)]
    lines += _forward(layout, 1, derivatives=False)
    return lines + [f"predictions[l, t, {k}] = a{len(table)}_0_{k}"
                    for k in range(int(table[-1, 1]))]


def _indent(lines: list[str], depth: int) -> str:
    return "\n".join("    " * depth + line for line in lines)


def source(layout: Layout, batch_size: int, samples: int, during: bool, lanes: int) -> str:
    """The Python source of the kernels for ``layout``, batches of ``batch_size`` out of
    ``samples`` samples, the update order (``during``: update during backward) and blocks of
    ``lanes`` lanes."""
    last = samples % batch_size
    alphas = [f"alpha{k} = alphas[{k}]" for k in range(len(layout.table))]
    sizes = [int(layout.table[0, 0]), *(int(n) for n in layout.table[:, 1])]
    remainder = (f"""        if {last}:
            start = {samples - last}
{_indent(_gather(last, lanes), 3)}
            for l in range({lanes}):
{_indent(_step(layout, last, during, lanes), 4)}
""" if last else "")
    return f'''"""Generated by tinynet.compiled.unrolled: sizes {sizes}, activation codes
{[int(c) for c in layout.codes]}, batches of {batch_size} out of {samples} samples, update
{"during" if during else "after"} backward. Do not edit: it is rewritten from the generator."""

import math

import numpy as np
from numba import njit

from tinynet.compiled.lanes import lane_orders, order_scratch, record_epoch, restore_diverged
from tinynet.compiled.scalars import vector_exp


@njit(cache=True, nogil=True, error_model="numpy")
def fit_block(theta, X, Y, seeds, settings, alphas, loss_history, final_loss, diverged_epoch,
              last_wrong_epoch, predictions):
    lanes = {lanes}
    n_params = theta.shape[0] // lanes
    n = X.shape[0]
    lr, threshold, every = settings.lr, settings.threshold, settings.record_every
{_indent(alphas, 1)}
    seed_hashes, keys, rank, order = order_scratch(seeds, n)
    total = np.zeros(lanes)
    inputs = np.zeros({batch_size} * X.shape[1] * lanes)
    targets = np.zeros({batch_size} * Y.shape[1] * lanes)
    by_lane = theta.reshape(n_params, lanes)  # the same numbers, for the record
    kept = by_lane.copy()
    kept_wrong = last_wrong_epoch.copy()
    for run in range(settings.epochs):
        epoch = settings.first_epoch + run
        if settings.shuffle:
            lane_orders(seed_hashes, epoch, keys, rank, order)
        for l in range(lanes):
            total[l] = 0.0
        for start in range(0, {samples - last}, {batch_size}):
{_indent(_gather(batch_size, lanes), 3)}
            for l in range({lanes}):
{_indent(_step(layout, batch_size, during, lanes), 4)}
{remainder}        if record_epoch(by_lane, total, n, epoch, every, loss_history, final_loss,
                        diverged_epoch, last_wrong_epoch, kept, kept_wrong) == 0:
            break
    restore_diverged(by_lane, diverged_epoch, last_wrong_epoch, kept, kept_wrong)
    for t in range(n):
        for l in range({lanes}):
{_indent(_outputs(layout, lanes), 3)}

'''


# --- compiling and caching ------------------------------------------------------------------

_LOADED: dict[str, ModuleType] = {}
"""The generated modules imported so far, by file."""


def kernel_dir() -> Path:
    """Where generated kernels are written: ``$TINYNET_KERNEL_DIR``, else
    ``$XDG_CACHE_HOME/tinynet/kernels`` (default ``~/.cache``), else a temporary directory."""
    chosen = os.environ.get("TINYNET_KERNEL_DIR")
    candidates = [Path(chosen)] if chosen else [
        Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "tinynet" / "kernels",
        Path(tempfile.gettempdir()) / "tinynet-kernels"]
    for directory in candidates:
        try:
            directory.mkdir(parents=True, exist_ok=True)
        except OSError:
            continue
        if os.access(directory, os.W_OK):
            return directory
    raise OSError(f"no writable directory for generated kernels among {candidates}; set "
                  "TINYNET_KERNEL_DIR")


def _module(text: str) -> ModuleType:
    """The generated module with source ``text``, written once and imported once."""
    name = "tinynet_kernel_" + hashlib.sha256(text.encode()).hexdigest()[:20]
    path = kernel_dir() / f"{name}.py"
    if str(path) not in _LOADED:
        if not path.exists() or path.read_text() != text:
            partial = path.with_name(f"{path.name}.{os.getpid()}.partial")
            partial.write_text(text)
            os.replace(partial, path)  # another process may write the same text: both win
        spec = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module  # numba's cache finds a kernel's module by name
        spec.loader.exec_module(module)
        _LOADED[str(path)] = module
    return _LOADED[str(path)]


@functools.lru_cache(maxsize=256)
def _kernel(table: bytes, codes: bytes, batch_size: int, samples: int, during: bool,
            lanes: int, directory: Path):
    """The compiled ``fit_block`` for a layout given by its table and codes (as bytes, to be a
    key): written, imported and compiled once per process and kernel directory, so that a
    short fit pays no Python per call for its source."""
    layout = Layout(np.frombuffer(table, dtype=np.int64).reshape(-1, 4),
                    np.frombuffer(codes, dtype=np.int64), np.zeros(len(codes)))
    return _module(source(layout, batch_size, samples, during, lanes)).fit_block


def fit_lanes(theta: np.ndarray, layout: Layout, X: np.ndarray, Y: np.ndarray,
              seeds: np.ndarray, settings, record, predictions: np.ndarray,
              cores: int) -> None:
    """As :func:`tinynet.compiled.lanes.fit_lanes`, with the kernel generated for ``layout``,
    blocks as :func:`block_width` chooses for ``cores`` threads, and the blocks run on a pool
    of that many threads (the kernel releases the GIL; a numba ``prange`` would add seconds of
    compiling to every layout)."""
    members = theta.shape[1]
    blocks, lanes = block_width(members, cores)
    kernel = _kernel(layout.table.tobytes(), layout.codes.tobytes(), settings.batch_size,
                     len(X), bool(settings.update_during_backward), lanes, kernel_dir())

    def run(block: int) -> None:
        first = block * lanes
        taken = np.minimum(np.arange(first, first + lanes), members - 1)  # short: repeat last
        local = np.ascontiguousarray(theta[:, taken])       # (P, lanes), then flat
        parts = [np.ascontiguousarray(part[taken]) for part in record]
        outputs = np.empty((lanes, *predictions.shape[1:]))
        kernel(local.ravel(), X, Y, np.ascontiguousarray(seeds[taken]), settings,
               layout.alphas, *parts, outputs)
        kept = slice(0, min(lanes, members - first))
        theta[:, first:first + kept.stop] = local[:, kept]
        for part, new in zip(record, parts):
            part[first:first + kept.stop] = new[kept]
        predictions[first:first + kept.stop] = outputs[kept]

    if blocks == 1:
        run(0)
        return
    with ThreadPoolExecutor(max_workers=min(cores, blocks)) as pool:
        list(pool.map(run, range(blocks)))
