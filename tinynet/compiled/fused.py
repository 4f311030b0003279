"""One small network trained by a kernel written for its layout, its parameters in locals.

A single network's SGD is a chain of dependent scalar operations, so its speed is the
latency of that chain. The generic kernel (the kit's ``fit_network``) adds
to it: every step reads and writes the parameters, activations and gradients through arrays,
one layer per call. For a small layout (:func:`tinynet.compiled.codegen.supports`) this
module writes a kernel in which the step (:func:`tinynet.step.train_step` written out by
:func:`tinynet.compiled.tracing.train_step`) runs on locals from the first epoch to the last,
in the epoch loop of :func:`tinynet.step.train` (:mod:`tinynet.compiled.epochs`): the
parameters are read from ``theta`` once, before
training, and written back once, after it (or when the run diverges). A sample's inputs and
targets are read straight from X and Y in the epoch's order. Bit-identical to the generic
kernel and to a lane of :mod:`tinynet.compiled.unrolled`.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator
from pathlib import Path

import numpy as np

from .. import step as description
from ..packing import Layout
from ..results import Record, Settings
from . import codegen
from .codegen import indent, n_params, parameter_loads, per_step, state_names, state_slots
from .epochs import OneNetwork
from .kit import Maths
from .render import Writer, said_by
from .sources import kernel_dir
from .tracing import Words, names, train_step

__all__ = ["ORDER_BLOCK", "ORDER_BLOCK_SAMPLES", "source", "fit_network"]


ORDER_BLOCK = 64
"""Epochs whose sample orders the kernel draws in one call of :func:`~tinynet.compiled.lanes.
lane_orders`, one epoch per lane, for up to :data:`ORDER_BLOCK_SAMPLES` samples (above, one
epoch at a time). Drawn one epoch at a time, the hashing and ranking of a 4-sample epoch are
a chain of their own, and made a shuffled XOR fit 1.3-1.5x slower than an unshuffled one; 64
epochs at once are vector code, and the shuffled fits of 2-2-1, 2-2-2-1 and 2-8-1 ran 1.3x
as fast as before. Above 32 samples an epoch's order is a sort, and its steps dwarf it."""

ORDER_BLOCK_SAMPLES = 32
"""The most samples for which :data:`ORDER_BLOCK` epochs' orders are drawn at once."""


class _Words(OneNetwork):
    """The epoch loop's words of a kernel generated for one layout: the epoch's order drawn
    :data:`ORDER_BLOCK` epochs at a time (column ``column`` of ``order`` is this epoch's), a
    sample's inputs and targets read into locals, its step written out on them
    (:func:`tinynet.compiled.tracing.train_step`), and θ ← q, the state ← r after it."""

    def __init__(self, writer: Writer, layout: Layout, maths: Maths, during: bool) -> None:
        count = n_params(layout)
        marks = _pairwise_sum(["finite_mark(epoch_loss)"]
                              + [f"finite_mark(p{p})" for p in range(count)])
        state, counters = _state(maths, count), maths.split().counters
        super().__init__(writer, [f"marks = {marks}"],
                         [*(f"theta[{p}] = p{p}" for p in range(count)),
                          *(f"{element} = {name}" for name, element in state),
                          *(f"state[{slot}, {p}] = counter{slot}" for slot in counters
                            for p in range(count))])
        self.layout, self.maths, self.count = layout, maths, count
        self.counters = [f"counter{slot}" for slot in counters]
        self.step = self.written_out(train_step(Words(layout, maths, 1, self.body), during))

    def visit(self, epoch: str) -> None:
        self.writer.write(f"# {said_by()}",
                          "column = 0 if column == block - 1 else column + 1  # run % block, "
                          "without a division",
                          "if settings.shuffle and column == 0:",
                          f"    lane_orders(seed_hashes, {epoch}, keys, rank, order)")

    def batches(self) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        """``total = 0.0``, then the loop over the samples: each one's inputs and targets
        read into locals and the optimizer's part per step, before the step; the counters, θ
        and the state renamed to their new values after it."""
        n_in, n_out = int(self.layout.table[0, 0]), int(self.layout.table[-1, 1])
        own, new = per_step(self.maths, self.counters, "")
        return self.batch_loop(
            ["total = 0.0"], "for start in range(n):",
            [*(f"a0_0_{i} = X[order[start, column], {i}]" for i in range(n_in)),
             *(f"t_0_{k} = Y[order[start, column], {k}]" for k in range(n_out)),
             *own, *(f"next_{counter} = {value}"        # each counter's new value read from
                     for counter, value in zip(self.counters, new))],  # the old ones first
            (names("a0_{}_{}", 1, n_in), names("t_{}_{}", 1, n_out)),
            [*(f"{counter} = next_{counter}" for counter in self.counters),
             *(f"p{p} = q{p}" for p in range(self.count)),
             *(f"{old} = {new}" for p in range(self.count)
               for old, new in zip(state_names(self.maths, p),
                                   state_names(self.maths, p, new=True)))])


def _pairwise_sum(terms: list[str]) -> str:
    """``terms`` added as a balanced tree, ``(a + b) + (c + d)``: the divergence check is a
    sum of the loss's and every parameter's :func:`~tinynet.verdicts.finite_mark` (NaN if one
    is NaN or ±inf, else 0, in any order), and as one chain of additions its latency, 4
    cycles an addition, held up every epoch of a small fit (2-8-1: 34 terms; measured in
    ``benchmarks/bench_small.py``)."""
    while len(terms) > 1:
        odd = terms[-1:] if len(terms) % 2 else []
        terms = [f"({a} + {b})" for a, b in zip(terms[::2], terms[1::2])] + odd
    return terms[0]


def _state(maths: Maths, count: int) -> list[tuple[str, str]]:
    """``(local, element)``: each parameter's optimizer state and where it is in ``state``;
    the optimizer's counters (one number per network: :mod:`tinynet.compiled.hoisting`) are
    read from parameter 0's slot by :func:`source`, and written back into every one's."""
    return [(name, f"state[{slot}, {p}]") for p in range(count)
            for slot, name in zip(state_slots(maths), state_names(maths, p))]


def source(layout: Layout, maths: Maths, during: bool) -> str:
    """The Python source of the kernel for ``layout`` and ``maths``, per-sample steps and the
    update order (``during``: update during backward); the samples, epochs, learning rate,
    shuffle and hyperparameters are the arrays' and settings' when it runs. Its epoch loop is
    :func:`tinynet.step.train` in the words of :class:`_Words`."""
    count = n_params(layout)
    loads = parameter_loads(layout, maths)
    header = codegen.module_header("tinynet.compiled.fused", layout, maths, during,
                                   ["lane_orders", "order_scratch"])
    state = _state(maths, count)
    counters = maths.split().counters
    words = _Words(Writer(1), layout, maths, during)
    description.train(words, words.step)
    return f'''{header}

@njit(cache=True, nogil=True, error_model="numpy")
def fit_network(theta, state, hyper, X, Y, seed, settings, parameters, loss_history,
                final_loss, diverged_epoch, last_wrong_epoch):
    lr, threshold, every = settings.lr, settings.threshold, settings.record_every
    n = X.shape[0]
{indent(loads, 1)}
    # epochs whose orders are drawn at once (tinynet.compiled.fused.ORDER_BLOCK)
    block = {ORDER_BLOCK} if n <= {ORDER_BLOCK_SAMPLES} else 1
    seed_hashes, keys, rank, order = order_scratch(np.full(block, seed), n)
    for column in range(block):  # lane c of lane_orders(..., epoch) is epoch + c's order
        seed_hashes[column] += np.uint64(column)
{indent([f"p{p} = theta[{p}]" for p in range(count)], 1)}
{indent([f"{name} = {element}" for name, element in state], 1)}
{indent([f"counter{slot} = state[{slot}, 0]" for slot in counters], 1)}
    wrong_epoch = last_wrong_epoch[0]
    column = block - 1
{chr(10).join(words.writer.lines)}
'''


@functools.lru_cache(maxsize=256)
def _kernel(table: bytes, kinds: bytes, maths: Maths, key: tuple, during: bool,
            directory: Path):
    """The compiled ``fit_network`` for a layout given by its table and activation kinds (as
    bytes, to be a key) and ``maths``, written, imported and compiled once per process and
    kernel directory; ``key``, ``maths.key()``, keys it by the definitions as written, so
    that one edited in place compiles anew."""
    layout = codegen.layout_of(table, kinds)
    return codegen.kernel(source(layout, maths, during), "fit_network", layout, directory,
                          "the training of one {sizes} network, "
                          + codegen.maths_words(maths, during))


def fit_network(theta: np.ndarray, state: np.ndarray, hyper: np.ndarray, layout: Layout,
                maths: Maths, X: np.ndarray, Y: np.ndarray, seed: int, settings: Settings,
                record: Record) -> None:
    """Train ``theta`` (P,) and the optimizer's ``state`` (k, P) in place as
    the kit's ``fit_network`` does, writing row 0 of ``record``, on the
    kernel generated for ``layout``."""
    kernel = _kernel(layout.table.tobytes(), layout.kinds.tobytes(), maths, maths.key(),
                     bool(settings.update_during_backward), kernel_dir())
    kernel(theta, state, hyper, X, Y, seed, settings, layout.parameters, *record)
