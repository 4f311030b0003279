"""A 100,000-seed study in this process against the same study on a local Dask cluster of 2
single-threaded workers, at several block sizes; and what one task costs.

    pip install ".[dask]"
    python benchmarks/bench_cluster.py --readme docs/ensembles.md

The study: 99mlp (2-2-2-1) on XOR, N(0,1), 20,000 epochs, seeds 0-99,999. In process it runs
on every core (numba threads: 2); on the cluster, in blocks of seeds, one task per block,
each task on one thread of one worker process. The workers are warmed first (a 1-epoch study
at every block size compiles their kernels), and every clustered study is checked against the
in-process one, bit for bit. The cost of a task beside its training comes from 64 blocks of
64 seeds that train for 1 epoch: submitting a block, drawing its 64 seeds' initial weights and
sending the results back.
BLAS threads 1. Writes benchmarks/results/bench_cluster.json and .md, and the lines of
docs/ensembles.md between its markers (a test keeps the two equal).
"""

from __future__ import annotations

import argparse
import logging
import os
import time
from dataclasses import replace
from pathlib import Path

for variable in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[variable] = "1"

import numba  # noqa: E402
import numpy as np  # noqa: E402
from dask.distributed import Client, LocalCluster  # noqa: E402

from readme_block import publish  # noqa: E402
from tinynet.packing import draw  # noqa: E402
from tinynet.xor import Arm, Setup, build_network, run_study  # noqa: E402

README_START, README_END = "<!-- cluster: start -->", "<!-- cluster: end -->"
SETUP = Setup(seeds=100_000)
ARMS = [Arm("normal")]
BLOCKS = (1024, 4096, 16384)
WORKERS = 2


def timed(**kwargs) -> tuple[object, float]:
    started = time.perf_counter()
    study = run_study(ARMS, SETUP, progress=False, **kwargs)
    return study, time.perf_counter() - started


def same(here, there) -> bool:
    """Bit for bit the same per-seed results."""
    return all(np.array_equal(a.trained, b.trained) and np.array_equal(a.solved, b.solved)
               and np.array_equal(a.ensemble.final_loss, b.ensemble.final_loss)
               for a, b in zip(here.results, there.results))


def task_cost(client: Client, tasks: int = 64) -> float:
    """Seconds of one worker per task of a 1-epoch block of 64 seeds (the workers busy
    side by side)."""
    setup = replace(SETUP, seeds=64 * tasks, epochs=1)
    started = time.perf_counter()
    run_study(ARMS, setup, progress=False, executor=client, block_seeds=64)
    return (time.perf_counter() - started) / tasks * WORKERS


def draw_cost(seeds: int = 65_536) -> float:
    """Seconds to draw one seed's initial weights into the study's packed array
    (:func:`tinynet.packing.draw`), in this process."""
    like = build_network(SETUP, ARMS[0], 0)
    started = time.perf_counter()
    draw(like, range(seeds))
    return (time.perf_counter() - started) / seeds


def render(data: dict) -> str:
    """The docs page's block, from the run's record."""
    alone, cost, drawn = data["in_process_seconds"], data["task_seconds"], data["draw_seconds"]
    seeds = data["seeds"]
    per_seed = alone * data["workers"] / seeds  # one core's seconds per seed, drawn and trained
    overhead = max(0.0, cost - 64 * drawn)      # a task's own cost: submitting, returning
    lines = [f"{data['setup']}; arm N(0,1). One run of each, in this order, on "
             f"{data['cores']} cores; BLAS threads 1, numba threads {data['numba_threads']} in "
             f"this process, 1 per worker; 1-minute load average {data['load_average_1min']:.1f}"
             " at the end. Every clustered study equals the in-process one, bit for bit.", "",
             "| where | seeds per block | tasks | study (s) | / in process |",
             "| --- | --- | --- | --- | --- |",
             f"| in this process, numba threads {data['numba_threads']} |  |  | {alone:.1f} | "
             "1.00 |"]
    lines += [f"| Dask, {data['workers']} workers x 1 thread | {row['block_seeds']:,} | "
              f"{row['tasks']} | {row['seconds']:.1f} | {row['seconds'] / alone:.2f} |"
              for row in data["cluster"]]
    sizes = (64, *(row["block_seeds"] for row in data["cluster"]))
    share = {b: overhead / (overhead + b * per_seed) for b in sizes}
    shares = ", ".join(f"{100 * share[b]:.2g} % at {b:,}" for b in sizes)
    amortised = [b for b in sizes if share[b] < 0.01]
    verdict = (f"from {amortised[0]:,} seeds per block on it is below 1 %" if amortised else
               "at no block size here is it below 1 %")
    lines += ["", f"In this process the {seeds:,} seeds' initial weights are drawn into one "
                  f"array in one Python thread, {seeds * drawn:.1f} s of the {alone:.0f} s at "
                  f"{1e6 * drawn:.0f} µs each; on the cluster each worker draws those of its "
                  f"own blocks, side by side with the other. A task of a 1-epoch block of 64 "
                  f"seeds costs a worker {1000 * cost:.0f} ms, of which drawing its 64 seeds "
                  f"takes {64 * 1000 * drawn:.1f} ms; the rest, {1000 * overhead:.0f} ms, is "
                  f"the task itself (submitting it, sending the block's results back). One seed "
                  f"of this study takes {1000 * per_seed:.2f} ms of one core, drawn and "
                  f"trained, so the task's own share of its time is {shares} seeds per block: "
                  f"{verdict}."]
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--readme", type=Path, default=None)
    args = parser.parse_args()
    run_study(ARMS, replace(SETUP, epochs=1), progress=False)  # warm: compile in this process
    here, alone = timed()
    data = {"setup": SETUP.describe(), "seeds": SETUP.seeds, "cores": os.cpu_count(),
            "numba_threads": numba.get_num_threads(), "workers": WORKERS,
            "in_process_seconds": alone, "cluster": []}
    with LocalCluster(n_workers=WORKERS, threads_per_worker=1, processes=True,
                      dashboard_address=None, silence_logs=logging.ERROR) as cluster, \
            Client(cluster) as client:
        for block_seeds in (64, *BLOCKS):  # warm: every worker compiles its kernels
            run_study(ARMS, replace(SETUP, epochs=1, seeds=max(block_seeds, 8192)),
                      progress=False, executor=client, block_seeds=block_seeds)
        data["task_seconds"] = task_cost(client)
        data["draw_seconds"] = draw_cost()
        for block_seeds in BLOCKS:
            there, seconds = timed(executor=client, block_seeds=block_seeds)
            if not same(here, there):
                raise SystemExit(f"blocks of {block_seeds}: the clustered study differs")
            data["cluster"].append({"block_seeds": block_seeds, "seconds": seconds,
                                    "tasks": -(-SETUP.seeds // block_seeds)})
    data["load_average_1min"] = os.getloadavg()[0]
    publish("bench_cluster", data, render(data), args.readme, README_START, README_END)


if __name__ == "__main__":
    main()
