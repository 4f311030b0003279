"""Cold compiles: how long a new layout waits before it trains, per layout and kernel.

    python benchmarks/bench_compile.py          # a few minutes

Each row times a layout's job twice, each time in fresh Pythons with caches
(``NUMBA_CACHE_DIR`` and ``TINYNET_KERNEL_DIR``) in a new temporary folder: once with the
caches empty, as on a machine that never ran tinynet, and once after another layout of the
same kind has trained there (a new layout on a machine that has trained before). Each Python
imports tinynet, trains the job once (timed: compiling and training), then trains it again
(timed: training alone); the difference is the compile. The kernel column says which kernels
the job compiles: a small layout's ensemble the kernel generated for it (``unrolled``), its
single fit the ``fused`` one; a layout too big to unroll the kit of its activations, loss and
optimizer (``kit``, shared by every layout), whose ensemble entry point (``fit_lanes``) and
single-fit entry point (``fit_network``) compile separately. With empty caches the package's
own kernels (epoch orders, records) compile too. BLAS threads 1; numba threads: every core.
Results go to benchmarks/results/bench_compile.json and .md.
"""

from __future__ import annotations

import os
import platform
import subprocess
import sys
import tempfile

from readme_block import publish

JOB = """
import time, tinynet
X, y = tinynet.data.xor()
def job():
    if {seeds} == 1:
        tinynet.mlp({sizes}, seed=0).fit(X, y, epochs=200, lr=0.01)
    else:
        tinynet.fit_ensemble([tinynet.mlp({sizes}, seed=s) for s in range({seeds})], X, y,
                             epochs=200, lr=0.01)
start = time.perf_counter(); job(); first = time.perf_counter() - start
start = time.perf_counter(); job(); again = time.perf_counter() - start
print(first, again)
"""

CASES = [  # layout, seeds, kernel, another layout of the same kernel kind
    ([2, 2, 1], 100, "unrolled", [2, 3, 1]),
    ([2, 2, 2, 1], 100, "unrolled", [2, 3, 1]),
    ([2, 8, 1], 100, "unrolled", [2, 3, 1]),
    ([2, 2, 2, 1], 1, "fused", [2, 3, 1]),
    ([2, 32, 1], 100, "kit: fit_lanes", [2, 24, 1]),
    ([2, 16, 16, 16, 16, 16, 16, 16, 16, 1], 100, "kit: fit_lanes", [2, 24, 1]),
    ([2, 32, 1], 1, "kit: fit_network", [2, 24, 1]),
]


def job(sizes: list[int], seeds: int, cache: str) -> tuple[float, float]:
    """Seconds of the first job (compiling what ``cache`` lacks) and of the second, in a
    fresh Python whose caches are in ``cache``."""
    environment = {**os.environ, "NUMBA_CACHE_DIR": cache, "TINYNET_KERNEL_DIR": cache,
                   "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"}
    out = subprocess.run([sys.executable, "-c", JOB.format(sizes=sizes, seeds=seeds)],
                         env=environment, check=True, capture_output=True, text=True)
    first, again = map(float, out.stdout.split())
    return first, again


def main() -> None:
    rows = []
    for sizes, seeds, kernel, other in CASES:
        with tempfile.TemporaryDirectory() as cache:
            first, again = job(sizes, seeds, cache)
        with tempfile.TemporaryDirectory() as cache:
            job(other, seeds, cache)                  # the package's kernels, and the kit
            new_first, new_again = job(sizes, seeds, cache)
        rows.append({"layout": "-".join(map(str, sizes)), "seeds": seeds, "kernel": kernel,
                     "first_s": first, "again_s": again, "compile_s": first - again,
                     "after": "-".join(map(str, other)),
                     "new_layout_compile_s": new_first - new_again})
        print(rows[-1], file=sys.stderr)
    load = os.getloadavg()[0]
    lines = [f"Cold compiles, each job in a fresh Python: Python {platform.python_version()}, "
             f"{os.cpu_count()} cores, 1-minute load average {load:.1f} at the end; 200 epochs "
             "of XOR. *Empty caches*: the first job on a machine, which also compiles the "
             "package's own kernels (epoch orders, records) and, for a layout too big to "
             "unroll, the kit of its activations, loss and optimizer. *A new layout*: the "
             "caches hold what another layout's job compiled (the column *after*), as on a "
             "machine that has trained before; a kit is shared by every layout, so there a "
             "new layout compiles nothing.", "",
             "| layout | seeds | kernel | empty caches: first job (s) | again (s) | "
             "compile (s) | after | a new layout: compile (s) |",
             "| --- | --- | --- | --- | --- | --- | --- | --- |"]
    lines += [f"| {r['layout']} | {r['seeds']} | {r['kernel']} | {r['first_s']:.2f} | "
              f"{r['again_s']:.3f} | {r['compile_s']:.2f} | {r['after']} | "
              f"{r['new_layout_compile_s']:.2f} |" for r in rows]
    publish("bench_compile", {"rows": rows, "load": load}, "\n".join(lines) + "\n", None, "",
            "")


if __name__ == "__main__":
    main()
