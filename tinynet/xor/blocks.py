"""A study cut into blocks of seeds, trained wherever an executor runs them: a Dask cluster
(``dask.distributed.Client``) or a ``concurrent.futures`` process pool.

Every seed trains alone, so an arm's seeds split into blocks of consecutive seeds. A task
carries only the arm, the setup narrowed to its block's seeds and the record setting; it
draws its seeds' initial weights where it runs (:func:`tinynet.packing.draw`), trains them
on the compiled path with one thread (the executor's workers are the parallelism: one
single-threaded worker per core), and returns
per-seed results, which the driver puts back in seed order. On the numba backend the study is
then bit for bit the in-process one, whatever the block size, the number of workers, the
order in which blocks finish, or a worker lost and its blocks run again (Dask does that; a
process pool reports the loss as a :class:`BlockError`): a seed's training depends on that
seed alone. (The NumPy backend sums in an order that depends on how many members train
together, so it is refused here.) Workers must run the same tinynet code as the driver, and
the same ``--import`` modules: :func:`code_identity` says which, and the CLI compares it on
every worker before it sends anything. A worker may join later, so every block also carries
the hash of the tinynet code it ran (computed once per worker process), and the driver
refuses a block whose hash is not its own (:func:`run_blocks`).
"""

from __future__ import annotations

import functools
import hashlib
import math
import os
import sys
import time
from concurrent.futures import FIRST_COMPLETED, CancelledError, Executor, ThreadPoolExecutor, \
    wait
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from .. import compiled
from ..compiled.simd import LANES
from ..compiled.sources import sources_hash
from ..packing import draw
from ..results import EnsembleResult
from ..training import fit_packed
from ..validation import check_int
from .arms import Arm, Setup, build_network
from .outcome import THRESHOLD

__all__ = ["BLOCK_SEEDS", "Block", "BlockResult", "BlockError", "train", "train_block",
           "block_size", "check_block_seeds", "run_blocks", "code_identity"]

BLOCK_SEEDS = 4096
"""The most seeds a block gets unless told otherwise (:func:`block_size`): on 2 workers, 1,024
seeds per task already cost less than 1 % beside the training of 99mlp's 20,000 epochs
(``benchmarks/bench_cluster.py``)."""


def train(arm: Arm, setup: Setup, record_every: int | None = None, progress=None,
          evaluate_every: int | None = None) -> tuple[EnsembleResult, np.ndarray]:
    """Train ``arm`` on ``setup``'s seeds, one network per seed: the ensemble's result (S
    members) and the trained parameters (S, P), row s the packed parameters of the s-th
    seed. The seeds' initial parameters are drawn straight into that array
    (:func:`tinynet.packing.draw`), bit for bit those of :func:`build_network`; no Network is
    built per seed. The arm trains with its own learning rate and hidden layers where it
    gives them (:meth:`~tinynet.xor.Setup.for_arm`). On a task of many classes every seed is
    evaluated on the test set (:mod:`tinynet.evaluation`) at the end, and every
    ``evaluate_every`` epochs if given."""
    setup = setup.for_arm(arm)
    like = build_network(setup, arm, setup.first_seed)
    theta = draw(like, setup.seed_range)
    X, y = setup.task.training_data()
    result = fit_packed(like, theta, X, y, seeds=setup.seed_range, epochs=setup.epochs,
                        lr=setup.lr, batch_size=setup.batch_size, shuffle=arm.shuffle,
                        update=arm.update, backend=setup.backend, threshold=THRESHOLD,
                        record_every=record_every, progress=progress, loss=arm.loss,
                        optimizer=arm.optimizer,
                        test=setup.task.held_out_data() if setup.task.classification else None,
                        evaluate_every=evaluate_every, warmup=setup.warmup,
                        decay=setup.decay)
    return result, theta


@dataclass(frozen=True)
class Block:
    """One task: ``arm`` trained on ``setup``, whose ``first_seed`` and ``seeds`` are the
    block's."""

    arm: Arm
    setup: Setup
    record_every: int | None = None
    evaluate_every: int | None = None

    def __str__(self) -> str:
        first = self.setup.first_seed
        return f"arm {self.arm.name!r}, seeds {first:,}-{first + self.setup.seeds - 1:,}"


class BlockError(RuntimeError):
    """A block failed on the executor; the message, one line, names its arm and seeds."""


def code_identity(modules: tuple[str, ...] = ()) -> dict[str, str]:
    """What code trains a block in this process: ``{"tinynet": a hash of the package's
    sources, name: a hash of module ``name``'s source, ...}`` for the imported ``modules``
    (``"not imported"`` for one that is not). A hash of the code itself, not a version
    string: an edited copy of tinynet differs."""
    identity = {"tinynet": _package_hash()}
    for name in modules:
        module = sys.modules.get(name)
        path = getattr(module, "__file__", None)
        identity[name] = ("not imported" if module is None else
                          _file_hash(path) if path else "not from a file")
    return identity


@functools.cache
def _package_hash() -> str:
    """A hash of every source file of the tinynet package
    (:func:`tinynet.compiled.sources.sources_hash`)."""
    package = Path(__file__).resolve().parent.parent
    return sources_hash(sorted(path.relative_to(package).as_posix()
                               for path in package.rglob("*.py")))


def _file_hash(path: str) -> str:
    try:
        return hashlib.sha256(Path(path).read_bytes()).hexdigest()[:16]
    except OSError as error:
        return f"unreadable ({error.strerror})"


@dataclass(frozen=True)
class BlockResult:
    """What a worker sends back for a block: the ensemble's result (S members), the trained
    parameters (S, P), the seconds it took, and which worker ran it with which tinynet code
    (:func:`_package_hash`), so that the driver can check every block's code, not only the
    workers present when the run started."""

    result: EnsembleResult
    trained: np.ndarray
    seconds: float
    worker: str
    code: str


def train_block(block: Block) -> BlockResult:
    """Run on a worker: :func:`train` on one thread (restored after), with the worker's name
    and code hash."""
    backend = compiled.load()
    previous = backend.use_threads(1)
    try:
        started = time.perf_counter()
        result, trained = train(block.arm, block.setup, block.record_every,
                                evaluate_every=block.evaluate_every)
        return BlockResult(result, trained, time.perf_counter() - started, _worker_name(),
                           _package_hash())
    finally:
        backend.use_threads(previous)


def _worker_name() -> str:
    """Where this block runs: the Dask worker's address, else this process's id and host (a
    process pool's worker)."""
    import socket  # here, not at the top: only a worker asks, and the CLI's start need not pay

    if "distributed" in sys.modules:  # a Dask worker has imported it; no one else needs to
        try:
            return sys.modules["distributed"].get_worker().address
        except ValueError:  # not in a Dask worker after all
            pass
    return f"process {os.getpid()} on {socket.gethostname()}"


def _check_code(block: Block, part: BlockResult, here: str) -> None:
    """Raise :class:`BlockError` if ``part`` was trained with other tinynet code than
    ``here``, this process's: a worker that joined the cluster after the start-up check
    (:func:`tinynet.xor.cluster.check_workers`) with another copy of tinynet would otherwise
    mix its results into the study unseen."""
    if part.code != here:
        raise BlockError(f"{block}: worker {part.worker} ran other tinynet code (hash "
                         f"{part.code[:12]}) than this process (hash {here[:12]}); give every "
                         "worker this tinynet")


def blocks(arm: Arm, setup: Setup, block_seeds: int, record_every: int | None = None,
           evaluate_every: int | None = None) -> list[Block]:
    """``arm``'s seeds cut into blocks of ``block_seeds`` (the last one shorter)."""
    last = setup.first_seed + setup.seeds
    return [Block(arm, replace(setup, first_seed=first, seeds=min(block_seeds, last - first)),
                  record_every, evaluate_every)
            for first in range(setup.first_seed, last, block_seeds)]


def check_block_seeds(block_seeds: int, name: str = "block_seeds") -> int:
    """``block_seeds``, if it is a whole number of SIMD-lane blocks (:data:`LANES`)."""
    block_seeds = check_int(name, block_seeds, minimum=LANES)
    if block_seeds % LANES:
        raise ValueError(f"{name} must be a multiple of {LANES} (the networks of one block of "
                         f"SIMD lanes), got {block_seeds}")
    return block_seeds


def workers_of(executor: object) -> int:
    """How many tasks ``executor`` runs at once: a Dask client's worker threads, a pool's
    workers (1 if it does not say)."""
    if hasattr(executor, "nthreads"):  # dask.distributed.Client
        return max(1, sum(executor.nthreads().values()))
    return max(1, getattr(executor, "_max_workers", 1))


def block_size(seeds: int, workers: int) -> int:
    """Seeds per block by default: enough blocks for every worker to get two (so that a slow
    one does not hold the others up), at most :data:`BLOCK_SEEDS`, a multiple of
    :data:`LANES`."""
    return min(BLOCK_SEEDS, LANES * max(1, math.ceil(seeds / (2 * workers * LANES))))


def _as_executor(executor: object) -> Executor:
    """``executor``, or the ``concurrent.futures`` face of a Dask client, refusing what
    cannot help."""
    if hasattr(executor, "get_executor"):  # dask.distributed.Client
        return executor.get_executor(pure=False)  # a block run again is run, not recalled
    if isinstance(executor, ThreadPoolExecutor):
        raise TypeError("executor must run tasks in other processes (a Dask client, a "
                        "ProcessPoolExecutor), got a ThreadPoolExecutor: in this process a "
                        "study already trains on every core")
    if not callable(getattr(executor, "submit", None)):
        raise TypeError(f"executor must be a concurrent.futures.Executor or a "
                        f"dask.distributed.Client, got {executor!r}")
    return executor


def _one_line(error: BaseException) -> str:
    """What went wrong, on one line."""
    if isinstance(error, CancelledError) or type(error).__name__ == "FutureCancelledError":
        return ("cancelled on the executor (a Dask scheduler that went away or restarted, "
                "or a pool that was shut down)")
    return f"{type(error).__name__}: {' '.join(str(error).split())}"


def run_blocks(arms: list[Arm], setup: Setup, executor: object, block_seeds: int | None = None,
               record_every: int | None = None, progress: bool = False,
               evaluate_every: int | None = None,
               ) -> list[tuple[EnsembleResult, np.ndarray, float]]:
    """Every arm's seeds in blocks of ``block_seeds`` (default: :func:`block_size`) on
    ``executor``; per arm, in seed order: the ensemble's result (S members), the trained
    parameters (S, P) and the workers' seconds summed over its blocks.

    All blocks are submitted at once. A block that raises, or that a worker trained with
    other tinynet code than this process's (each block says which it ran), stops the run with
    a :class:`BlockError` naming its arm and seeds, and the blocks not yet started are
    cancelled. ``progress`` prints on stderr how many blocks are done, every 10 s (every
    second on a terminal)."""
    if setup.backend != "numba":
        raise ValueError(f"a study on an executor trains on the numba backend, bit for bit as "
                         f"in process; got setup.backend={setup.backend!r}")
    pool = _as_executor(executor)
    block_seeds = (block_size(setup.seeds, workers_of(executor)) if block_seeds is None
                   else check_block_seeds(block_seeds))
    pending = {pool.submit(train_block, block): (a, b, block)
               for a, arm in enumerate(arms)
               for b, block in enumerate(blocks(arm, setup, block_seeds, record_every,
                                                evaluate_every))}
    done: dict[tuple[int, int], BlockResult] = {}
    here = _package_hash()
    total, started = len(pending), time.perf_counter()
    every = 1.0 if sys.stderr.isatty() else 10.0
    shown = started
    try:
        while pending:
            finished, _ = wait(pending, timeout=every, return_when=FIRST_COMPLETED)
            for future in finished:
                a, b, block = pending.pop(future)
                try:
                    part = future.result()
                except Exception as error:  # concurrent.futures' CancelledError included
                    raise BlockError(f"{block}: {_one_line(error)}") from error
                _check_code(block, part, here)
                done[a, b] = part
            if progress and (not finished or time.perf_counter() - shown >= every
                             or not pending):  # a wait that timed out, or every `every` s
                shown = time.perf_counter()
                print(f"{setup.shape}: {len(done)} of {total} blocks of up to "
                      f"{min(block_seeds, setup.seeds):,} seeds done ({shown - started:,.0f} s)",
                      file=sys.stderr, flush=True)
    finally:
        for future in pending:
            future.cancel()
    return [_assemble([done[key] for key in sorted(key for key in done if key[0] == a)])
            for a in range(len(arms))]


def _assemble(parts: list[BlockResult]) -> tuple[EnsembleResult, np.ndarray, float]:
    """One arm's blocks, in seed order, as one result."""
    return (EnsembleResult.concatenate([part.result for part in parts]),
            np.concatenate([part.trained for part in parts]),
            sum(part.seconds for part in parts))

