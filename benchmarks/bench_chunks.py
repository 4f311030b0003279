"""What cutting a long ensemble run into chunks costs (so that progress and Ctrl-C respond):
the same job in one chunk, in chunks of the default size, and in chunks 8 times smaller,
interleaved in one process, best of 5 each.

    python benchmarks/bench_chunks.py --readme README.md

BLAS threads 1; numba threads: every core. Writes benchmarks/results/bench_chunks.json and .md,
and the README's lines between its chunks markers (a test keeps the two equal).
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

for variable in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[variable] = "1"

import tinynet  # noqa: E402
from readme_block import put_between  # noqa: E402
from tinynet import reference  # noqa: E402
from tinynet.compiled import backend  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
README_START, README_END = "<!-- chunks: start -->", "<!-- chunks: end -->"
JOBS = [("numba", [2, 2, 1], 1000, 20_000, backend),
        ("numba", [2, 2, 2, 1], 1000, 20_000, backend),
        ("numpy", [2, 2, 1], 100, 5_000, reference)]
"""backend, sizes, seeds, epochs, the backend module whose CHUNK_STEPS is varied."""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--readme", type=Path, default=None)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    X, y = tinynet.data.xor()
    rows = []
    for name, sizes, seeds, epochs, module in JOBS:
        default = module.CHUNK_STEPS
        steps = seeds * epochs * len(X)
        sizes_tried = {"one chunk": 2 * steps, "default": default, "default / 8": default // 8}
        best = dict.fromkeys(sizes_tried, float("inf"))
        nets = [tinynet.mlp(sizes, seed=s) for s in range(seeds)]
        tinynet.fit_ensemble(nets, X, y, epochs=2, lr=0.01, backend=name)  # compile
        for _ in range(args.repeats):
            for label, chunk in sizes_tried.items():
                module.CHUNK_STEPS = chunk
                nets = [tinynet.mlp(sizes, seed=s) for s in range(seeds)]
                start = time.perf_counter()
                tinynet.fit_ensemble(nets, X, y, epochs=epochs, lr=0.01, backend=name)
                best[label] = min(best[label], time.perf_counter() - start)
        module.CHUNK_STEPS = default
        rows.append({"job": f"{name} {'-'.join(map(str, sizes))}, {seeds} seeds x "
                            f"{epochs:,} epochs",
                     "chunks": {label: -(-steps // chunk) for label, chunk in sizes_tried.items()},
                     "seconds": best})
    lines = [f"Best of {args.repeats}, interleaved; BLAS threads 1, {os.cpu_count()} cores, "
             f"1-minute load average {os.getloadavg()[0]:.1f} at the end. Time relative to one "
             "chunk (above 1: slower).", "",
             "| job | chunks (default) | one chunk (s) | default chunks | chunks 8x smaller |",
             "| --- | --- | --- | --- | --- |"]
    for row in rows:
        one = row["seconds"]["one chunk"]
        lines.append(f"| {row['job']} | {row['chunks']['default']} | {one:.3f} | "
                     f"{row['seconds']['default'] / one:.3f} | "
                     f"{row['seconds']['default / 8'] / one:.3f} |")
    markdown = "\n".join(lines) + "\n"
    print(markdown)
    out = ROOT / "benchmarks" / "results" / "bench_chunks.json"
    out.write_text(json.dumps(rows, indent=2))
    out.with_suffix(".md").write_text(markdown)
    if args.readme:
        put_between(args.readme, README_START, README_END, markdown)


if __name__ == "__main__":
    main()
