"""How the ensemble path's rate scales with depth and width: the numba SIMD-lane ensemble
against the NumPy ensemble (every array with a leading members axis) on the depth study's
kind of job: 128 seeds, 256 samples of circles, batches of 32, shuffled, ReLU hidden layers.

    python benchmarks/bench_depth.py --readme docs/performance.md

Each job is timed on both backends, interleaved, 3 runs each (the best counts); numba over
enough epochs for about a second, NumPy over at least one. The rate is in parameter-sample
steps per second (seeds x samples x parameters per second: each one a multiply-add forward,
two backward and an update), so that shapes of different sizes compare. BLAS threads 1 (the
NumPy ensemble's products are small batched matmuls); numba threads: every core. Writes
benchmarks/results/bench_depth.json and .md, and the lines of docs/performance.md between its
markers (a test keeps the two equal).
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

for variable in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[variable] = "1"

import numba  # noqa: E402

import tinynet  # noqa: E402
from readme_block import publish  # noqa: E402
from tinynet.xor.depth import DEPTH_SETUP  # noqa: E402

README_START, README_END = "<!-- depth-bench: start -->", "<!-- depth-bench: end -->"
SEEDS, SAMPLES, BATCH = 128, 256, 32
SHAPES = [(16,) * depth for depth in (1, 2, 4, 8, 16, 32)] + [(width,) * 4
                                                               for width in (8, 32, 64)]
"""Hidden layers of each job: width 16 at depths 1 to 32, then depth 4 at widths 8 to 64."""


def time_job(hidden: tuple[int, ...], backend: str, epochs: int) -> float:
    """Seconds to train SEEDS networks of ``hidden`` for ``epochs`` epochs (setup excluded)."""
    X, y = tinynet.data.circles(n=SAMPLES, seed=0)
    nets = [tinynet.mlp([2, *hidden, 1], activation="relu", init="he_normal", seed=s)
            for s in range(SEEDS)]
    start = time.perf_counter()
    tinynet.fit_ensemble(nets, X, y, epochs=epochs, lr=0.05, batch_size=BATCH, backend=backend)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--readme", type=Path, default=None)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    rows = []
    for hidden in SHAPES:
        sizes = [2, *hidden, 1]
        params = sum(a * b + b for a, b in zip(sizes, sizes[1:]))
        work = SEEDS * SAMPLES * params  # parameter-sample steps per epoch
        time_job(hidden, "numba", 1)  # compile, warm
        probe = time_job(hidden, "numba", 2) / 2
        epochs = {"numba": max(2, round(1.0 / probe)), "numpy": 1}
        seconds = {"numba": [], "numpy": []}
        for _ in range(args.repeats):
            for backend in seconds:
                seconds[backend].append(time_job(hidden, backend, epochs[backend]))
        rate = {backend: work * epochs[backend] / min(times)
                for backend, times in seconds.items()}
        rows.append({"hidden": list(hidden), "parameters": params, "epochs": epochs,
                     "seconds": seconds, "rate": rate,
                     "speedup": rate["numba"] / rate["numpy"]})
        print(f"2-{hidden[0]}x{len(hidden)}-1: numba {rate['numba'] / 1e9:.2f} G/s, numpy "
              f"{rate['numpy'] / 1e9:.3f} G/s", flush=True)
    lines = [f"{SEEDS} seeds x {SAMPLES} samples of circles, batches of {BATCH}, shuffled, ReLU; "
             f"best of {args.repeats} runs, interleaved. Rate: parameter-sample steps per "
             f"second, in millions. BLAS threads 1, numba threads {numba.get_num_threads()}, "
             f"{os.cpu_count()} cores, 1-minute load average {os.getloadavg()[0]:.1f} at the "
             "end.", "",
             "| network | parameters | numba ensemble (M/s) | NumPy ensemble (M/s) | "
             "numba / NumPy | one epoch of the depth study's cell, numba (s) |",
             "| --- | --- | --- | --- | --- | --- |"]
    for row in rows:
        hidden = row["hidden"]
        cell = SEEDS * DEPTH_SETUP.task.n * row["parameters"] / row["rate"]["numba"]
        lines.append(f"| 2-{hidden[0]}x{len(hidden)}-1 | {row['parameters']:,} | "
                     f"{row['rate']['numba'] / 1e6:,.0f} | {row['rate']['numpy'] / 1e6:,.1f} | "
                     f"{row['speedup']:.0f} | {cell:.3f} |")
    markdown = "\n".join(lines) + "\n"
    publish("bench_depth", rows, markdown, args.readme, README_START, README_END)


if __name__ == "__main__":
    main()
