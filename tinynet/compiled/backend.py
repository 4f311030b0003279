"""The compiled backend's entry points, called by :mod:`tinynet.training`: each packs the
networks into flat arrays (:mod:`tinynet.packing`), runs one kernel for the whole training run,
and copies the trained parameters back. Same signatures as :mod:`tinynet.reference`'s."""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING

import numba
import numpy as np

from ..activations import BUILT_IN
from ..losses import MSE, CrossEntropy, Loss
from ..optimizers import Optimizer
from ..packing import Layout, layer_rows, layout, pack, unpack
from ..results import Record, Settings, run_in_chunks
from . import codegen, epochs, fused, kit, lanes, single, stream, unrolled
from .blockruns import blocks_layout, structure_of
from .render import NotCompilableError

if TYPE_CHECKING:
    from ..network import Network

__all__ = ["CHUNK_WORK", "FIT_CHUNK_WORK", "lane_width", "fit_one", "fit_packed",
           "predict_packed", "predict", "typed", "check_counters"]


def fit_one(net: "Network", state: np.ndarray, loss: Loss, optimizer: Optimizer,
            X: np.ndarray, y: np.ndarray, seed: int, settings: Settings, record: Record) -> None:
    """Train ``net`` and its optimizer's ``state`` (k, P) in place on ``loss``: a small
    network's per-sample steps with the kernel generated for its layout
    (:mod:`tinynet.compiled.fused`), any other with its kit's ``fit_network``
    (:mod:`tinynet.compiled.epochs`), which calls BLAS for big products."""
    theta, maths = pack(net), kit.maths_of(net, loss, optimizer)
    hyper = kit.hyperparameters(maths)
    check_counters(maths, state[None], "net.optimizer_state")
    if net.residuals:    # the blocks' loop: tinynet.compiled.stream
        fit = stream.entry(maths, structure_of(net),
                           stream.entry_name("fit_stream", settings.update_during_backward))
        with typed(maths):
            fit(theta, state, hyper, kit.layout_for(layer_rows(net), maths),
                blocks_layout(net), X, y, seed, settings, record)
        unpack(net, theta)
        return
    net_layout = kit.layout_for(layout(net), maths)
    with typed(maths):
        if codegen.supports(net_layout, settings.batch_size):
            fused.fit_network(theta, state, hyper, net_layout, maths, X, y, seed, settings,
                              record)
        else:
            kit.entry(maths, "fit_network")(theta, state, hyper, net_layout, X, y, seed,
                                            settings, record)
    unpack(net, theta)


CHUNK_WORK = 1 << 30
"""A run of many networks is cut into chunks of about this much work, counted as lanes x
samples x parameters per epoch (:func:`lane_width`: the members, as the kernel lays them out
in SIMD lanes; about a second on 2 cores for XOR networks of 2-2-1), so
that Python regains control between them: to report progress and to stop at Ctrl-C. The
parameters stay packed from chunk to chunk. What chunks cost: ``benchmarks/bench_chunks.py``
(its last run is in docs/performance.md, section "Long runs in chunks")."""


FIT_CHUNK_WORK = 1 << 27
""":func:`tinynet.fit` runs one network in chunks of about this much work (epochs x samples
x parameters): one network's steps are a chain of dependent operations, so a chunk of
:data:`CHUNK_WORK` would take several seconds (about 7 for a 2-2-1 on XOR's four points);
this one, well under one."""


def fit_packed(theta: np.ndarray, state: np.ndarray, like: "Network", loss: Loss,
               optimizer: Optimizer, X: np.ndarray, y: np.ndarray, seeds: np.ndarray,
               settings: Settings, record: Record,
               progress: Callable[[int], None] | None = None) -> np.ndarray:
    """Train the members whose packed parameters are the rows of ``theta`` (S, P), networks
    shaped ``like`` this one, and their optimizer's ``state`` (S, k, P) in place on ``loss``:
    side by side in SIMD lanes, with the kernel generated for their layout for per-sample
    steps of a small layout (:func:`tinynet.compiled.unrolled.fit_lanes`), else with the
    generic one (:mod:`tinynet.compiled.lanes`, through the kit of their maths:
    :mod:`tinynet.compiled.kit`); or, where a single fit calls BLAS (:func:`calls_blas`),
    each member as its own single fit, the members spread over the cores (the kit's
    ``fit_members``, BLAS on one thread each). Return the trained members' outputs on X,
    (S, N, n_out). The run goes in chunks (:data:`CHUNK_WORK`), after each of which
    ``progress`` (if given) is called with the number of epochs done; a KeyboardInterrupt
    between chunks leaves ``theta`` and ``state`` as they were."""
    maths = kit.maths_of(like, loss, optimizer)
    predictions = np.empty((len(theta), len(X), y.shape[1]))
    hyper = kit.hyperparameters(maths)
    check_counters(maths, state, "state")
    alone = bool(like.residuals) or calls_blas(like.sizes, settings.batch_size)
    if alone:  # copies, members first, as the single fits take them
        trained, trained_state = theta.copy(), state.copy()
    else:      # members side by side: (P, S) and (k, P, S)
        trained = np.ascontiguousarray(theta.T)
        trained_state = np.ascontiguousarray(state.transpose(1, 2, 0))
    net_layout = kit.layout_for(layer_rows(like), maths)  # a chain's layout, or every layer's
    if like.residuals:  # train(part): the kernel's caller
        joined = blocks_layout(like)
        members = stream.entry(maths, structure_of(like), stream.entry_name(
            "fit_stream_members", settings.update_during_backward))

        def train(part: Settings) -> None:
            with one_blas_thread():
                members(trained, trained_state, hyper, net_layout, joined, X, y, seeds, part,
                        record, predictions)
    elif alone:
        members = kit.entry(maths, "fit_members")

        def train(part: Settings) -> None:
            with one_blas_thread():
                members(trained, trained_state, hyper, net_layout, X, y, seeds, part, record,
                        predictions)
    elif codegen.supports(net_layout, settings.batch_size):
        train = functools.partial(unrolled.fit_lanes, trained, trained_state, hyper,
                                  net_layout, maths, X, y, seeds, record=record,
                                  predictions=predictions, cores=threads())
    else:
        generic = kit.entry(maths, epochs.lane_entry(settings.update_during_backward))

        def train(part: Settings) -> None:
            generic(trained, trained_state, hyper, net_layout, X, y, seeds, part, record,
                    predictions)
    lanes_wide = len(theta) if alone else lane_width(len(theta), net_layout, settings.batch_size)
    work = lanes_wide * theta.shape[1] * len(X)
    with typed(maths):
        run_in_chunks(settings, work, CHUNK_WORK, train, record, progress)
    theta[...] = trained if alone else trained.T
    state[...] = trained_state if alone else trained_state.transpose(2, 0, 1)
    return predictions


def calls_blas(sizes: Sequence[int], batch_size: int) -> bool:
    """Whether a single fit of a network of layer ``sizes`` (inputs first) in batches of
    ``batch_size`` calls BLAS: some layer's products (batch · n_in · n_out multiply-adds)
    reach :data:`tinynet.compiled.single.BLAS_MIN_WORK`. Such members train as single fits
    (and a study's memory estimate counts their scratch: :mod:`tinynet.xor.bench`)."""
    return any(batch_size * int(n_in) * int(n_out) >= single.BLAS_MIN_WORK
               for n_in, n_out in zip(sizes[:-1], sizes[1:]))


@contextmanager
def one_blas_thread() -> Iterator[None]:
    """BLAS on one thread in the block (``threadpoolctl``): the members' single fits run on
    every core already, and BLAS threads on top of them would fight for the cores (2-core
    OpenBLAS slows many times over when the other core is busy). SciPy's BLAS, which the
    kernels call, is loaded first, so that the limit reaches it."""
    import scipy.linalg.cython_blas  # noqa: F401  (loaded, so that threadpoolctl sees it)
    from threadpoolctl import threadpool_limits
    with threadpool_limits(1, user_api="blas"):
        yield


def check_counters(maths: kit.Maths, state: np.ndarray, name: str) -> None:
    """Raise ValueError unless each of the optimizer's counters (a step count: one number
    per network, :mod:`tinynet.compiled.hoisting`) holds one value across a member's
    parameters in ``state`` (S, k, P), as training leaves it; the kernels read it once per
    network."""
    for slot in maths.split().counters:
        values = state[:, slot, :]
        uneven = np.flatnonzero(np.any(values != values[:, :1], axis=1)
                                & ~np.all(np.isnan(values), axis=1))
        if len(uneven):
            member = int(uneven[0])
            raise ValueError(
                f"{name}'s slot {maths.optimizer.state[slot]!r} of optimizer "
                f"{maths.optimizer!r} is a step count, one number per network, but member "
                f"{member} holds {len(np.unique(values[member]))} different values (from "
                f"{float(values[member].min())!r} to {float(values[member].max())!r}); "
                "backend 'numba' reads it once per network: give every parameter the same "
                "count, or pass backend='numpy'")


def threads() -> int:
    """How many threads a run may use: Numba's setting (:func:`use_threads`), read without
    starting Numba's own thread pool, which the generated kernels never use (they run on a
    pool of Python threads): ``numba.get_num_threads()`` starts it (some 10 ms, and it
    imports ``multiprocessing``), and until it is started no count can have been set
    (``numba.set_num_threads`` starts it too), so Numba's default holds."""
    from numba.np.ufunc import parallel

    if getattr(parallel, "_is_initialized", True):  # started, or numba's API moved: ask
        return numba.get_num_threads()
    return numba.config.NUMBA_NUM_THREADS


def lane_width(members: int, net_layout: Layout, batch_size: int) -> int:
    """How many SIMD lanes the kernel for ``net_layout`` trains ``members`` networks in: a
    lane costs as much whether a member fills it or not. The generated kernel's blocks of
    :data:`tinynet.compiled.unrolled.LANES`, or the generic kernel's blocks of
    :data:`tinynet.compiled.simd.LANES`; where members train as single fits
    (:func:`calls_blas`), no lanes: ``members``."""
    if calls_blas([net_layout.table[0, 0], *net_layout.table[:, 1]], batch_size):
        return members
    width = unrolled.LANES if codegen.supports(net_layout, batch_size) else lanes.LANES
    return -(-members // width) * width


def use_threads(threads: int) -> int:
    """Train on ``threads`` threads from now on, in the calling thread (Numba's setting, which
    the ensemble kernels follow); return the number it replaces."""
    previous = numba.get_num_threads()
    numba.set_num_threads(threads)
    return previous


def predict_packed(theta: np.ndarray, like: "Network", loss: Loss, optimizer: Optimizer,
                   X: np.ndarray) -> np.ndarray:
    """The outputs on X (N, n_in) of the members whose packed parameters are ``theta``
    (S, P), networks shaped ``like`` this one: (S, N, n_out), by the kit's
    ``predict_members`` of the training run's maths (``loss``, ``optimizer``: the kit a run
    has loaded already), members spread over the cores, BLAS on one thread."""
    maths = kit.maths_of(like, loss, optimizer)
    outputs = np.empty((len(theta), len(X), like.n_out))
    rows = kit.layout_for(layer_rows(like), maths)
    if like.residuals:   # tinynet.compiled.stream's
        function = stream.entry(maths, structure_of(like), "predict_stream_members")
        arguments = (rows, blocks_layout(like))
    else:
        function, arguments = kit.entry(maths, "predict_members"), (rows,)
    with typed(maths), one_blas_thread():
        function(np.ascontiguousarray(theta), *arguments, X, outputs)
    return outputs


def predict(net: "Network", X: np.ndarray) -> np.ndarray:
    """The network's output for X (B, n_in): (B, n_out), by the kit of its activations (the
    loss is not used: the notes' MSE stands in for it, and cross-entropy for a softmax
    output's, which trains with nothing else)."""
    loss = CrossEntropy() if net.layers[-1].activation.over_units else MSE()
    if net.residuals:
        return predict_packed(pack(net)[None], net, loss, None, X)[0]
    scratch = np.empty((len(net.layers), len(X) * max(net.sizes)))
    maths = kit.maths_of(net, loss)
    with typed(maths):
        return kit.entry(maths, "forward_network")(pack(net), kit.layout_for(layout(net), maths),
                                                   X, scratch, np.empty_like(scratch)).copy()


@contextmanager
def typed(maths: kit.Maths) -> Iterator[None]:
    """Run kernels of ``maths``, turning numba's ``TypingError`` (raised as a kernel compiles,
    at its first call) into :class:`~tinynet.compiled.render.NotCompilableError`: the renderer
    refuses what it knows numba cannot type (:mod:`tinynet.compiled.render`), and anything
    else it let through is still refused by name, in one line, never run another way."""
    try:
        yield
    except numba.core.errors.TypingError as error:
        own = [*(activation for activation in maths.activations
                 if type(activation) not in BUILT_IN), maths.loss, maths.optimizer]
        what = ", ".join(f"{owner!r} ({type(owner).__name__})" for owner in own)
        raise NotCompilableError(f"backend 'numba' cannot run {what}: numba cannot type the "
                                 f"kernel written from them ({_reason(str(error))}); pass "
                                 "backend='numpy'") from None


def _reason(message: str) -> str:
    """What numba's TypingError ``message`` says, in one line: its first line after the
    pipeline's, and the generated line it points at (the one above its ``^``)."""
    lines = [line.rstrip() for line in re.sub(r"\x1b\[[0-9;]*m", "", message).splitlines()]
    said = next((line.strip() for line in lines[1:] if line.strip()), lines[0] if lines else "")
    at = next((lines[index - 1].strip() for index, line in enumerate(lines)
               if index and line.strip() == "^"), None)
    return f"{said}, at {at}" if at else said
