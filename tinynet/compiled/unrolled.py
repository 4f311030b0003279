"""Lane kernels written for one layout: many networks side by side, every value a local.

The generic lane kernel (:mod:`tinynet.compiled.lanes`) loops over a layout table and keeps
activations, derivatives and gradients in 4-D scratch arrays, so every SGD step stores and
reloads them. For a small network this module writes the source of a kernel for its exact
layout instead, from the straight-line step of :mod:`tinynet.compiled.tracing`: one lane's
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
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np

from .. import step as description
from ..packing import Layout
from . import codegen
from .codegen import (hyperparameter_names, indent, is_comment, is_exp, n_params,
                      name_defined, names_used, parameter_loads, state_names, state_slots,
                      step_value_names)
from .epochs import Lanes
from .kit import Maths, per_step_lanes
from .render import Writer, said_by
from .sources import kernel_dir
from .tracing import Words, forward, names, train_step

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
    """The lines in runs: exps (:func:`~tinynet.compiled.codegen.is_exp`) and the rest, each
    comment in the run of the line after it; one run unless ``cut``."""
    if not cut:
        return [lines]
    runs: list[list[str]] = []
    exps: list[bool] = []                   # whether each run is one of exps
    comments: list[str] = []
    for line in lines:
        if is_comment(line):
            comments.append(line)
        elif runs and exps[-1] == is_exp(line):
            runs[-1] += [*comments, line]
            comments = []
        else:
            runs.append([*comments, line])
            exps.append(is_exp(line))
            comments = []
    if comments:
        runs[-1] += comments
    return runs


_FLAGS = {"wrong"}
"""The step's booleans (:func:`tinynet.compiled.tracing.train_step`): spilled as 1.0 or 0.0, read
back as booleans."""


def _lane_loops(lines: list[str], loads: dict[str, str], lanes: int, slots: dict[str, int],
                cut: bool, spill: int) -> list[str]:
    """``lines`` for lane ``l`` as loops over the lanes, one per run of :func:`_segments`.

    A name in ``loads`` (a parameter, input or target) is loaded where a loop needs it; any
    other value used past its own loop is stored to the spill rows of the work buffer,
    ``work[spill + slot · lanes + l]``, and loaded back, its slot taken from (and added to)
    ``slots``. A name assigned in several loops (the
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
                value = f"work[{spill + slots.setdefault(name, len(slots)) * lanes} + l]"
                body.append(f"{name} = {value} != 0.0" if name in _FLAGS else f"{name} = {value}")
        body += run
        for name in dict.fromkeys(map(name_defined, run)):
            if name in later_uses[k]:
                at = spill + slots.setdefault(name, len(slots)) * lanes
                body.append(f"work[{at} + l] = {name}")
        loops += [f"for l in range({lanes}):"] + ["    " + line for line in body]
    return loops


def buffer_rows(layout: Layout, maths: Maths) -> dict[str, int]:
    """The rows of a kernel's work buffer (each ``lanes`` long), by part, in order: the
    parameters, the optimizer's state (slot by slot), its step values, a sample's inputs and
    targets, the epoch's summed loss and last wrong epoch of each lane; the spill rows of
    :func:`_lane_loops` come after them. Everything the step's loops read and write is in this
    one array, at offsets the compiler sees as constants at least ``lanes`` apart: it needs no
    check at run time that two arrays do not overlap, which it gives up on past a few arrays
    (2-8-1 with momentum's state as an array of its own: "too many memory checks needed", and
    its step was scalar code, 3.6 times as slow as SGD's)."""
    count = n_params(layout)
    sizes = {"theta": count, "state": len(maths.optimizer.state) * count,
             "steps": len(step_value_names(maths)), "inputs": int(layout.table[0, 0]),
             "targets": int(layout.table[-1, 1]), "total": 1, "wrong": 1}
    rows, at = {}, 0
    for part, size in sizes.items():
        rows[part] = at
        at += size
    rows["spill"] = at
    return rows


class _Words(Lanes):
    """The epoch loop's words of an ensemble kernel generated for one layout: a sample of each
    lane's order gathered into the work buffer (:func:`buffer_rows`), and the step of every
    lane on it, with the epoch's summed loss and last wrong epoch of the lane, as loops over
    the lanes (:func:`_lane_loops`): the lane innermost and ``lanes`` a constant, so that the
    compiler can see that lane ``l``'s loads and stores never touch another lane's:
    parameter p at ``work[p·lanes + l]``, and so on. ``slots``: the spill rows' names, by
    slot."""

    def __init__(self, writer: Writer, layout: Layout, maths: Maths, during: bool, lanes: int,
                 cut: bool) -> None:
        super().__init__(writer, "by_lane", "state_by_lane")
        self.layout, self.maths, self.lanes, self.cut = layout, maths, lanes, cut
        self.rows = buffer_rows(layout, maths)
        self.slots: dict[str, int] = {}
        self.before_record = ["for l in range(lanes):",   # the lanes' last wrong epochs,
                              "    last_wrong_epoch[l] = np.int64(wrong_epochs[l])"]  # floats
        self.after_finish = [f"theta[:] = {_part(self.rows, lanes, 'theta', 'theta.size')}",
                             f"state[:] = {_part(self.rows, lanes, 'state', 'state.size')}"]
        self.step = self.written_out(train_step(Words(layout, maths, 1, self.body), during))

    def _at(self, part: str, row: int) -> str:
        return f"work[{(self.rows[part] + row) * self.lanes} + l]"

    def batches(self) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        """Each lane's ``total`` at 0, then the loop over the samples: the optimizer's part
        per step, and each lane's sample gathered into the work buffer."""
        n_in, n_out = int(self.layout.table[0, 0]), int(self.layout.table[-1, 1])
        return self.batch_loop(
            ["for l in range(lanes):", "    total[l] = 0.0"], "for start in range(n):",
            [*_per_step(self.layout, self.maths, self.lanes),
             *_gather(self.layout, self.maths, self.lanes)],
            (names("a0_{}_{}", 1, n_in), names("t_{}_{}", 1, n_out)))

    def end_batch(self) -> None:
        """The batch's lines, with the stores of the new parameters and state, as loops over
        the lanes (:func:`_lane_loops`)."""
        loads, stores = self._loads_and_stores()
        self.writer.write(*_lane_loops(self.body + stores, loads, self.lanes, self.slots,
                                       self.cut, self.rows["spill"] * self.lanes))
        self.body.clear()

    def add_loss(self, terms: str, y: object) -> None:
        total = self._at("total", 0)
        self.body += [f"# {said_by()}", f"{total} = {total} + {terms}"]

    def saw(self, y_hat: object, y: object, epoch: str) -> None:
        wrong = self._at("wrong", 0)
        self.body += [f"# {said_by()}; the step's loss tested each output (wrong_side)",
                      f"{wrong} = {epoch} if wrong else {wrong}"]

    def _loads_and_stores(self) -> tuple[dict[str, str], list[str]]:
        """Where the step's loops read each parameter, state value, step value, input and
        target (by name), and the stores of the new parameters and state."""
        maths, at = self.maths, self._at
        count = n_params(self.layout)
        loads = {f"p{p}": f"p{p} = {at('theta', p)}" for p in range(count)}
        stores = [f"{at('theta', p)} = q{p}" for p in range(count)]
        for p in range(count):
            for slot, old, new in zip(state_slots(maths), state_names(maths, p),
                                      state_names(maths, p, new=True)):
                loads[old] = f"{old} = {at('state', slot * count + p)}"
                stores.append(f"{at('state', slot * count + p)} = {new}")
        loads |= {name: f"{name} = {at('steps', k)}"
                  for k, name in enumerate(step_value_names(maths))}
        loads |= {f"a0_0_{i}": f"a0_0_{i} = {at('inputs', i)}"
                  for i in range(int(self.layout.table[0, 0]))}
        loads |= {f"t_0_{k}": f"t_0_{k} = {at('targets', k)}"
                  for k in range(int(self.layout.table[-1, 1]))}
        return loads, stores


def _part(rows: dict[str, int], lanes: int, name: str, size: str) -> str:
    """The slice of the work buffer holding part ``name`` (:func:`buffer_rows`), ``size``
    long."""
    return f"work[{rows[name] * lanes}:{rows[name] * lanes} + {size}]"


def _per_step(layout: Layout, maths: Maths, lanes: int) -> list[str]:
    """The optimizer's part per step before each sample's step
    (:func:`tinynet.compiled.kit.per_step_lanes`), its step values and counters (one number
    per network, in parameter 0's slot of the state) in their rows of the work buffer."""
    rows, count = buffer_rows(layout, maths), n_params(layout)
    return per_step_lanes(
        maths, lambda slot, l: f"work[{(rows['state'] + slot * count) * lanes} + {l}]",
        lambda k, l: f"work[{(rows['steps'] + k) * lanes} + {l}]", str(lanes),
        hyperparameter_names(maths))


def _gather(layout: Layout, maths: Maths, lanes: int) -> list[str]:
    """Sample ``start`` of each lane's order, lanes innermost, into the inputs' and targets'
    rows of the work buffer: a loop of its own, since gathers would keep the step from
    vectorising."""
    rows = buffer_rows(layout, maths)
    return ["for i in range(X.shape[1]):",
            f"    for l in range({lanes}):",
            f"        work[{rows['inputs'] * lanes} + i * {lanes} + l] = X[order[start, l], i]",
            "for k in range(Y.shape[1]):",
            f"    for l in range({lanes}):",
            f"        work[{rows['targets'] * lanes} + k * {lanes} + l] = Y[order[start, l], k]"]


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
    rows = buffer_rows(layout, maths)
    words = _Words(Writer(1), layout, maths, during, lanes, cut)
    description.train(words, words.step)
    header = codegen.module_header("tinynet.compiled.unrolled", layout, maths, during,
                                   ["lane_orders", "order_scratch", "record_scratch",
                                    "record_lanes", "diverged_lanes", "restore_diverged",
                                    "keep_state", "restore_state", "spread_counters"])

    def part(name: str, size: str) -> str:
        return _part(rows, lanes, name, size)

    return f'''{header}

COUNTERS = np.array({list(maths.split().counters)}, dtype=np.int64)  # the optimizer's counters


@njit(cache=True, nogil=True, error_model="numpy")
def fit_block(theta, state, hyper, X, Y, seeds, settings, parameters, loss_history,
              final_loss, diverged_epoch, last_wrong_epoch, predictions):
    lanes = {lanes}
    n_params = theta.shape[0] // lanes
    n = X.shape[0]
    lr, threshold, every = settings.lr, settings.threshold, settings.record_every
{indent(loads, 1)}
    seed_hashes, keys, rank, order = order_scratch(seeds, n)
    # one buffer for all the step reads and writes (buffer_rows), spill rows last
    work = np.zeros(({rows["spill"]} + {max(len(words.slots), 1)}) * lanes)
    {part("theta", "theta.size")} = theta
    {part("state", "state.size")} = state
    by_lane = {part("theta", "theta.size")}.reshape(n_params, lanes)  # views, for the record
    state_by_lane = {part("state", "state.size")}.reshape(
        state.shape[0] // (n_params * lanes), n_params, lanes)
    total = {part("total", "lanes")}
    wrong_epochs = {part("wrong", "lanes")}  # each lane's last wrong epoch, as a float
    for l in range(lanes):
        wrong_epochs[l] = last_wrong_epoch[l]
    kept, kept_wrong, marks = record_scratch(by_lane, last_wrong_epoch)
    kept_state = state_by_lane.copy()
{chr(10).join(words.writer.lines)}
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
                          directory, "the training of {sizes} networks, many side by side, "
                          + codegen.maths_words(maths, during))


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
    shared = (hyper, X, Y, settings, layout.parameters)
    if cores == 1 or blocks == 1:  # inline: a pool of one thread would queue every caller's
        # blocks on it, and one block gains nothing from a pool
        for block in range(blocks):
            arrays = _taken(block, theta, state, seeds, record, predictions)
            kernel(*_arguments(arrays, *shared))
            _put_back(block, arrays, theta, state, record, predictions)
        return
    list(_pool(cores).map(functools.partial(_run_block, kernel, theta, state, seeds, record,
                                            predictions, shared), range(blocks)))


def _taken(block: int, theta: np.ndarray, state: np.ndarray, seeds: np.ndarray, record,
           predictions: np.ndarray) -> tuple:
    """Block ``block``'s members as the kernel takes them, copies in lanes: parameters (P,
    lanes), state (k, P, lanes), seeds, record parts and an output array (a short last block
    repeats its last member)."""
    members = theta.shape[1]
    first = block * LANES
    taken = np.minimum(np.arange(first, first + LANES), members - 1)
    return (np.ascontiguousarray(theta[:, taken]), np.ascontiguousarray(state[:, :, taken]),
            np.ascontiguousarray(seeds[taken]),
            [np.ascontiguousarray(part[taken]) for part in record],
            np.empty((LANES, *predictions.shape[1:])))


def _arguments(arrays: tuple, hyper: np.ndarray, X: np.ndarray, Y: np.ndarray, settings,
               parameters: np.ndarray) -> tuple:
    """The kernel's arguments for a block's ``arrays`` (:func:`_taken`)."""
    local, local_state, seeds, parts, outputs = arrays
    return (local.ravel(), local_state.ravel(), hyper, X, Y, seeds, settings, parameters,
            *parts, outputs)


def _put_back(block: int, arrays: tuple, theta: np.ndarray, state: np.ndarray, record,
              predictions: np.ndarray) -> None:
    """The block's trained members, records and outputs into the whole run's arrays."""
    local, local_state, _, parts, outputs = arrays
    first = block * LANES
    kept = slice(0, min(LANES, theta.shape[1] - first))
    theta[:, first:first + kept.stop] = local[:, kept]
    state[:, :, first:first + kept.stop] = local_state[:, :, kept]
    for part, new in zip(record, parts):
        part[first:first + kept.stop] = new[kept]
    predictions[first:first + kept.stop] = outputs[kept]


def _run_block(kernel, theta: np.ndarray, state: np.ndarray, seeds: np.ndarray, record,
               predictions: np.ndarray, shared: tuple, block: int) -> None:
    """One block on a pool thread: :func:`_taken`, the kernel, :func:`_put_back`."""
    arrays = _taken(block, theta, state, seeds, record, predictions)
    kernel(*_arguments(arrays, *shared))
    _put_back(block, arrays, theta, state, record, predictions)


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
