"""Lane kernels written for one layout: many networks side by side, every value a local.

The generic lane kernel (:mod:`tinynet.compiled.lanes`) loops over a layout table and keeps
activations, derivatives and gradients in 4-D scratch arrays, so every SGD step stores and
reloads them. For a small network this module writes the source of a kernel for its exact
layout instead, from the straight-line step of :mod:`tinynet.compiled.codegen`: one lane's
parameters are loaded into locals, the forward pass, loss, backward pass and update run on
locals, and the new parameters are stored back. That code sits inside a loop over the lanes of
a block, which the compiler turns into SIMD instructions, so each local lives in a vector
register. Member k is bit-identical to a numba fit of the same network.

The step is cut at each sigmoid layer's exps into loops of their own over the lanes: the
values needed across a cut go through a small ``spill`` array (parameters and inputs are
reloaded from where they are). The exp is a chain of about a dozen dependent operations
(:func:`~tinynet.compiled.scalars.vector_exp`); inside the whole step, the processor cannot
look far enough ahead to overlap the chains of neighbouring lanes, in a loop of exps alone it
can. Measured on the 100-seed XOR ensembles (``benchmarks/results/bench_jit_vs_numpy.md``,
targets), cutting makes 2-2-1 and 2-2-2-1 1.25-1.28x as fast, and 2-8-1 1.00x. The exp
loops are vector code with no call to ``exp`` (``tests/test_unrolled.py`` checks the
assembly). Tanh still calls ``math.tanh``, which does not vectorise.

Generated sources are cached as :mod:`~tinynet.compiled.codegen` describes.
"""

from __future__ import annotations

import functools
import os
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np

from ..packing import Layout
from . import codegen
from .codegen import (forward, indent, is_exp, n_params, name_defined, names_used,
                      parameter_loads, state_names, step)
from .kit import Maths
from .sources import kernel_dir

__all__ = ["LANES", "CUT_AT_EXPS", "source", "fit_lanes"]

LANES = 56
"""Members per block: a constant of every generated kernel (the compiler then sees that lanes
never overlap), the same for any number of members, so that 7, 64 or 100 seeds run on one
compiled kernel; blocks are spread over the cores. 56 (7 AVX-512 registers of float64, 14
AVX2 ones) puts 100 seeds in two blocks, one per core of a 2-core machine. Measured, 100 and
1,000 seeds of 2-2-1, 2-2-2-1 and 2-8-1 on 2 cores: blocks of 32 lanes took 1.0-1.2x the time
of 56, 64 0.9-1.1x, 16 1.3-1.6x (7 seeds: 64 lanes 1.1x); blocks sized to the seed count
needed a compile per count."""

CUT_AT_EXPS = True
"""Cut the step at each sigmoid layer's exps (see the module's docstring). Set to False only
to measure what the cut gains (``benchmarks/bench_jit_vs_numpy.py``)."""


# --- writing the source ---------------------------------------------------------------------

def _segments(lines: list[str], cut: bool) -> list[list[str]]:
    """The lines in runs: exps (:func:`~tinynet.compiled.codegen.is_exp`) and the rest; one
    run unless ``cut``."""
    if not cut:
        return [lines]
    runs: list[list[str]] = []
    for line in lines:
        if runs and is_exp(runs[-1][-1]) == is_exp(line):
            runs[-1].append(line)
        else:
            runs.append([line])
    return runs


_FLAGS = {"wrong"}
"""The step's booleans (:func:`tinynet.compiled.codegen.step`): spilled as 1.0 or 0.0, read
back as booleans."""


def _lane_loops(lines: list[str], loads: dict[str, str], lanes: int, slots: dict[str, int],
                cut: bool) -> list[str]:
    """``lines`` for lane ``l`` as loops over the lanes, one per run of :func:`_segments`.

    A name in ``loads`` (a parameter, input or target) is loaded where a loop needs it; any
    other value used past its own loop is stored to ``spill[slot · lanes + l]`` and loaded
    back, its slot taken from (and added to) ``slots``. A name assigned in several loops (the
    step's running ``loss``, with a loss whose definition calls exp) is loaded in every loop
    after the first that assigns it.
    """
    runs = _segments(lines, cut)
    made_in: dict[str | None, int] = {}  # the first loop that assigns each name
    for k, run in enumerate(runs):
        for line in run:
            made_in.setdefault(name_defined(line), k)
    later_uses = [set() for _ in runs]                    # names read after run k
    for k in range(len(runs) - 2, -1, -1):
        later_uses[k] = later_uses[k + 1] | {name for line in runs[k + 1]
                                             for name in names_used(line)}
    loops = []
    for k, run in enumerate(runs):
        used = list(dict.fromkeys(name for line in run for name in names_used(line)))
        body = [loads[name] for name in used if name in loads]
        for name in used:
            if made_in.get(name, k) < k:
                value = f"spill[{slots.setdefault(name, len(slots)) * lanes} + l]"
                body.append(f"{name} = {value} != 0.0" if name in _FLAGS else f"{name} = {value}")
        body += run
        for name in dict.fromkeys(map(name_defined, run)):
            if name in later_uses[k]:
                body.append(f"spill[{slots.setdefault(name, len(slots)) * lanes} + l] = {name}")
        loops += [f"for l in range({lanes}):"] + ["    " + line for line in body]
    return loops


def _lane_step(layout: Layout, maths: Maths, during: bool, lanes: int,
               slots: dict[str, int], cut: bool) -> list[str]:
    """One step of every lane on its sample. Arrays are flat with the lane innermost and
    ``lanes`` a constant, so that the compiler can see that lane ``l``'s loads and stores
    never touch another lane's: theta[p·lanes + l], state[(slot·P + p)·lanes + l]."""
    table = layout.table
    n_in, n_out, count = int(table[0, 0]), int(table[-1, 1]), n_params(layout)
    loads = {f"p{p}": f"p{p} = theta[{p * lanes} + l]" for p in range(count)}
    stores = [f"theta[{p * lanes} + l] = q{p}" for p in range(count)]
    for p in range(count):
        for slot, (old, new) in enumerate(zip(state_names(maths, p),
                                              state_names(maths, p, new=True))):
            loads[old] = f"{old} = state[{(slot * count + p) * lanes} + l]"
            stores.append(f"state[{(slot * count + p) * lanes} + l] = {new}")
    loads |= {f"a0_0_{i}": f"a0_0_{i} = inputs[{i * lanes} + l]" for i in range(n_in)}
    loads |= {f"t_0_{k}": f"t_0_{k} = targets[{k * lanes} + l]" for k in range(n_out)}
    stores += ["total[l] = total[l] + loss",
               "last_wrong_epoch[l] = epoch if wrong else last_wrong_epoch[l]"]
    return _lane_loops(step(layout, maths, 1, during) + stores, loads, lanes, slots, cut)


def _gather(lanes: int) -> list[str]:
    """Sample ``start`` of each lane's order, lanes innermost, into ``inputs`` and
    ``targets``: a loop of its own, since gathers would keep the step from vectorising."""
    return ["for i in range(X.shape[1]):",
            f"    for l in range({lanes}):",
            f"        inputs[i * {lanes} + l] = X[order[start, l], i]",
            "for k in range(Y.shape[1]):",
            f"    for l in range({lanes}):",
            f"        targets[k * {lanes} + l] = Y[order[start, l], k]"]


def _outputs(layout: Layout, maths: Maths, lanes: int) -> list[str]:
    """The trained lane's outputs on sample ``t``, into ``predictions``."""
    table = layout.table
    lines = [f"p{p} = theta[{p * lanes} + l]" for p in range(n_params(layout))]
    lines += [f"a0_0_{i} = X[t, {i}]" for i in range(int(table[0, 0]))]
    lines += forward(layout, maths, 1, derivatives=False)
    return lines + [f"predictions[l, t, {k}] = a{len(table)}_0_{k}"
                    for k in range(int(table[-1, 1]))]


def source(layout: Layout, maths: Maths, during: bool, lanes: int, cut: bool = True) -> str:
    """The Python source of the kernels for ``layout`` and ``maths`` (the network's
    activations, loss and optimizer), per-sample steps, the update order (``during``: update
    during backward), blocks of ``lanes`` lanes, and the step cut at the exps (``cut``,
    :data:`CUT_AT_EXPS`). The samples, seeds, epochs, learning rate, shuffle and
    hyperparameters are the arrays' and settings' when it runs.

    The lanes are a constant of the kernel: with the block's width known only when it runs,
    the compiler cannot see that lanes never overlap, and the 2-2-1, 2-2-2-1 and 2-8-1
    ensembles of 100 seeds ran 2.2 to 2.5x slower (measured, then left)."""
    loads = parameter_loads(layout, maths)
    slots: dict[str, int] = {}
    full = _lane_step(layout, maths, during, lanes, slots, cut)
    header = codegen.module_header("tinynet.compiled.unrolled", layout, maths, during,
                                   ["lane_orders", "order_scratch", "record_scratch",
                                    "record_epoch", "restore_diverged", "keep_state",
                                    "restore_state"])
    return f'''{header}

@njit(cache=True, nogil=True, error_model="numpy")
def fit_block(theta, state, hyper, X, Y, seeds, settings, parameters, loss_history,
              final_loss, diverged_epoch, last_wrong_epoch, predictions):
    lanes = {lanes}
    n_params = theta.shape[0] // lanes
    n = X.shape[0]
    lr, threshold, every = settings.lr, settings.threshold, settings.record_every
{indent(loads, 1)}
    seed_hashes, keys, rank, order = order_scratch(seeds, n)
    total = np.zeros(lanes)
    inputs = np.zeros(X.shape[1] * lanes)
    targets = np.zeros(Y.shape[1] * lanes)
    spill = np.zeros({max(len(slots), 1)} * lanes)  # values that cross from one loop to the next
    by_lane = theta.reshape(n_params, lanes)  # the same numbers, for the record
    state_by_lane = state.reshape(state.shape[0] // (n_params * lanes), n_params, lanes)
    kept, kept_wrong, check = record_scratch(by_lane, last_wrong_epoch)
    kept_state = state_by_lane.copy()
    for run in range(settings.epochs):
        epoch = settings.first_epoch + run
        if settings.shuffle:
            lane_orders(seed_hashes, epoch, keys, rank, order)
        for l in range(lanes):
            total[l] = 0.0
        for start in range(n):
{indent(_gather(lanes), 3)}
{indent(full, 3)}
        alive = record_epoch(by_lane, total, n, epoch, every, loss_history, final_loss,
                             diverged_epoch, last_wrong_epoch, kept, kept_wrong, check)
        keep_state(state_by_lane, kept_state, diverged_epoch, epoch)
        if alive == 0:
            break
    restore_diverged(by_lane, diverged_epoch, last_wrong_epoch, kept, kept_wrong)
    restore_state(state_by_lane, kept_state, diverged_epoch)
    for t in range(n):
        for l in range({lanes}):
{indent(_outputs(layout, maths, lanes), 3)}

'''


# --- running -------------------------------------------------------------------------------

@functools.lru_cache(maxsize=256)
def _kernel(table: bytes, kinds: bytes, maths: Maths, key: tuple, during: bool, cut: bool,
            directory: Path):
    """The compiled ``fit_block`` for a layout given by its table and activation kinds (as
    bytes, to be a key) and ``maths``: written, imported and compiled once per process and
    kernel directory, so that a short fit pays no Python per call for its source; ``key``,
    ``maths.key()``, keys it by the definitions as written, so that one edited in place
    compiles anew."""
    layout = codegen.layout_of(table, kinds)
    return codegen.kernel(source(layout, maths, during, LANES, cut), "fit_block", layout,
                          directory)


def fit_lanes(theta: np.ndarray, state: np.ndarray, hyper: np.ndarray, layout: Layout,
              maths: Maths, X: np.ndarray, Y: np.ndarray, seeds: np.ndarray, settings, record,
              predictions: np.ndarray, cores: int) -> None:
    """As :func:`tinynet.compiled.lanes.fit_lanes`, with the kernel generated for ``layout``:
    ``theta`` (P, S) and the optimizer's ``state`` (k, P, S) in place, in blocks of
    :data:`LANES` members, the blocks run on a pool of ``cores`` threads (the kernel releases
    the GIL; a numba ``prange`` would add seconds of compiling to every layout)."""
    members = theta.shape[1]
    blocks = -(-members // LANES)
    kernel = _kernel(layout.table.tobytes(), layout.kinds.tobytes(), maths, maths.key(),
                     bool(settings.update_during_backward), CUT_AT_EXPS, kernel_dir())

    def run(block: int) -> None:
        first = block * LANES
        taken = np.minimum(np.arange(first, first + LANES), members - 1)  # short: repeat last
        local = np.ascontiguousarray(theta[:, taken])       # (P, lanes), then flat
        local_state = np.ascontiguousarray(state[:, :, taken])
        parts = [np.ascontiguousarray(part[taken]) for part in record]
        outputs = np.empty((LANES, *predictions.shape[1:]))
        kernel(local.ravel(), local_state.ravel(), hyper, X, Y,
               np.ascontiguousarray(seeds[taken]), settings, layout.parameters, *parts, outputs)
        kept = slice(0, min(LANES, members - first))
        theta[:, first:first + kept.stop] = local[:, kept]
        state[:, :, first:first + kept.stop] = local_state[:, :, kept]
        for part, new in zip(record, parts):
            part[first:first + kept.stop] = new[kept]
        predictions[first:first + kept.stop] = outputs[kept]

    if cores == 1 or blocks == 1:  # inline: a pool of one thread would queue every caller's
        # blocks on it, and one block gains nothing from a pool
        for block in range(blocks):
            run(block)
        return
    list(_pool(cores).map(run, range(blocks)))


_POOLS: dict[tuple[int, int], ThreadPoolExecutor] = {}
_POOLS_LOCK = threading.Lock()


def _pool(cores: int) -> ThreadPoolExecutor:
    """A pool of ``cores`` threads for this process, started once: starting threads on every
    call cost 0.6 ms of a 3 ms ensemble call. Keyed by process id too, because a forked child
    inherits the pool but not its threads."""
    key = (os.getpid(), cores)
    with _POOLS_LOCK:
        if key not in _POOLS:
            _POOLS[key] = ThreadPoolExecutor(max_workers=cores, thread_name_prefix="tinynet")
        return _POOLS[key]
