"""What cutting a long ensemble run into chunks costs (so that progress and Ctrl-C respond):
the same job in one chunk, in chunks of the default size, and in chunks 8 times smaller,
interleaved in one process, 5 runs each; the ratio of each run to the one-chunk run next to
it, as a median and a range.

    python benchmarks/bench_chunks.py --readme docs/performance.md

BLAS threads 1; numba threads: every core. Writes benchmarks/results/bench_chunks.json and .md,
and the lines of docs/performance.md between its chunks markers (a test keeps the two equal).
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

for variable in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[variable] = "1"

import numpy as np  # noqa: E402

import tinynet  # noqa: E402
from ratios import interleaved_ratios, ratio_cell  # noqa: E402
from readme_block import publish  # noqa: E402
from tinynet import reference  # noqa: E402
from tinynet.compiled import backend  # noqa: E402
from tinynet.packing import layout  # noqa: E402

README_START, README_END = "<!-- chunks: start -->", "<!-- chunks: end -->"
JOBS = [("numba", [2, 2, 1], 5000, 20_000, backend),
        ("numba", [2, 2, 2, 1], 5000, 20_000, backend),
        ("numpy", [2, 2, 1], 100, 5_000, reference)]
"""backend, sizes, seeds, epochs, the backend module whose CHUNK_WORK is varied."""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--readme", type=Path, default=None)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    X, y = tinynet.data.xor()
    rows = []
    for name, sizes, seeds, epochs, module in JOBS:
        default = module.CHUNK_WORK
        nets = [tinynet.mlp(sizes, seed=s) for s in range(seeds)]
        width = seeds if name == "numpy" else backend.lane_width(seeds, layout(nets[0]), 1)
        work = width * len(X) * sum(p.size for p in nets[0].parameters())  # per epoch
        tried = {"one chunk": 2 * work * epochs, "one chunk again": 2 * work * epochs,
                 "default": default, "default / 8": default // 8}  # again: the noise
        seconds = {label: [] for label in tried}
        tinynet.fit_ensemble(nets, X, y, epochs=2, lr=0.01, backend=name)  # compile
        for _ in range(args.repeats):
            for label, chunk in tried.items():
                module.CHUNK_WORK = chunk
                nets = [tinynet.mlp(sizes, seed=s) for s in range(seeds)]
                start = time.perf_counter()
                tinynet.fit_ensemble(nets, X, y, epochs=epochs, lr=0.01, backend=name)
                seconds[label].append(time.perf_counter() - start)
        module.CHUNK_WORK = default
        rows.append({"job": f"{name} {'-'.join(map(str, sizes))}, {seeds} seeds x "
                            f"{epochs:,} epochs",
                     "chunks": {label: -(-epochs // max(1, chunk // work))
                                for label, chunk in tried.items()},
                     "seconds": seconds, **interleaved_ratios(seconds, "one chunk")})
    lines = [f"{args.repeats} runs of each, interleaved, each divided by the one-chunk run "
             f"beside it: median [range]. BLAS threads 1, {os.cpu_count()} cores, 1-minute "
             f"load average {os.getloadavg()[0]:.1f} at the end. Above 1: slower than one "
             "chunk.", "",
             "| job | one chunk (s, median) | one chunk again: time ratio (the noise) | "
             "default: chunks | default: time ratio | 8x smaller: chunks | "
             "8x smaller: time ratio |",
             "| --- | --- | --- | --- | --- | --- | --- |"]
    for row in rows:
        cells = [ratio_cell(row, label) for label in ("one chunk again", "default", "default / 8")]
        lines.append(f"| {row['job']} | {np.median(row['seconds']['one chunk']):.3f} | "
                     f"{cells[0]} | {row['chunks']['default']} | {cells[1]} | "
                     f"{row['chunks']['default / 8']} | {cells[2]} |")
    inside = [row["job"] for row in rows if row["ratio_median"]["default"]
              <= row["ratio_range"]["one chunk again"][1]]
    lines += ["", f"Default chunks: {len(inside)} of {len(rows)} jobs have a median ratio within "
                  "the range of one chunk run twice (the machine's noise in this run)."]
    markdown = "\n".join(lines) + "\n"
    publish("bench_chunks", rows, markdown, args.readme, README_START, README_END)


if __name__ == "__main__":
    main()
