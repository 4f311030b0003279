"""Wide and deep layouts (too big for a kernel generated per layout) against the bar: the same
job written by hand as a plain Numba loop (``benchmarks/handwritten.py``), on this CPU and as
compiled for an AVX2-only one.

    python benchmarks/bench_wide.py --readme docs/performance.md   # about three minutes

The job: 100 and 1,000 seeds of 2-32-1, 2-64-1 and 2-16x8-1 (LeakyReLU hidden, sigmoid
output, MSE, per-sample SGD at lr 0.01, XOR's four points in data order), each seed's network
from ``tinynet.mlp(sizes, seed=s)``. tinynet trains it with ``tinynet.fit_packed`` (the generic
ensemble kernel, :mod:`tinynet.compiled.lanes`, through its kit); the hand-written loop on the
same packed parameters. Both are compiled and checked to train the same networks (to 1e-9)
before anything is timed; then the two run alternately in one process, ``REPEATS`` times each,
and the table gives each one's fastest run and the ratio (hand-written seconds over tinynet's:
above 1, tinynet is faster). Then the same again in a child process compiled as for an
AVX2-only CPU (``avx2.avx2_environment``: the host's features less AVX-512, so 16 registers
of 4 float64 instead of 32 of 8; the execution units are still this host's). BLAS threads 1;
numba threads 2; the CPU (``machine.describe``) and the load average are printed with the
table. Results go to benchmarks/results/bench_wide.json and .md, and with ``--readme``
between the wide markers of docs/performance.md (``tests/test_readme.py``).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numba  # noqa: E402
import numpy as np  # noqa: E402

import tinynet  # noqa: E402
from tinynet.packing import draw, layout  # noqa: E402

from avx2 import avx2_environment  # noqa: E402
from handwritten import train as handwritten  # noqa: E402
from machine import describe  # noqa: E402
from readme_block import publish  # noqa: E402

README_START, README_END = "<!-- wide: start -->", "<!-- wide: end -->"

LAYOUTS = {"2-32-1": [2, 32, 1], "2-64-1": [2, 64, 1], "2-16x8-1": [2] + [16] * 8 + [1]}
SEEDS = (100, 1_000)
EPOCHS = 2_000
REPEATS = 5


def tinynet_run(like, theta, X, y, epochs):
    trained = theta.copy()
    tinynet.fit_packed(like, trained, X, y, seeds=range(len(theta)), epochs=epochs, lr=0.01,
                       shuffle=False)
    return trained


def measure() -> list[dict]:
    """Every layout and seed count, tinynet and the hand-written loop alternately, in this
    process as Numba compiles here."""
    numba.set_num_threads(min(2, numba.config.NUMBA_NUM_THREADS))
    X, y = tinynet.data.xor()
    rows = []
    for name, sizes in LAYOUTS.items():
        for seeds in SEEDS:
            like = tinynet.mlp(sizes, seed=0)
            theta, table = draw(like, range(seeds)), layout(like).table
            ours = tinynet_run(like, theta, X, y, 20)          # compile both, and check
            theirs = handwritten(theta, table, X, y, 20, 0.01)
            np.testing.assert_allclose(ours, theirs, rtol=0, atol=1e-9)
            times = {"tinynet": [], "handwritten": []}
            for _ in range(REPEATS):
                start = time.perf_counter()
                tinynet_run(like, theta, X, y, EPOCHS)
                times["tinynet"].append(time.perf_counter() - start)
                start = time.perf_counter()
                handwritten(theta, table, X, y, EPOCHS, 0.01)
                times["handwritten"].append(time.perf_counter() - start)
            best = {who: min(seconds) for who, seconds in times.items()}
            rows.append({"layout": name, "seeds": seeds, "epochs": EPOCHS,
                         "tinynet_s": best["tinynet"], "handwritten_s": best["handwritten"],
                         "ratio": best["handwritten"] / best["tinynet"],
                         "compiled_for": describe()})
            print(rows[-1], file=sys.stderr)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--readme", type=Path, default=None,
                        help="also put the table between the wide markers of this page")
    parser.add_argument("--rows-to", type=Path, default=None,
                        help="measure in this process only and write the rows here as JSON "
                             "(how the AVX2-only child reports)")
    args = parser.parse_args()
    if args.rows_to is not None:
        args.rows_to.write_text(json.dumps(measure()))
        return
    load_start = os.getloadavg()[0]
    rows = measure()
    child = Path(__file__).with_name("results") / "bench_wide_avx2_rows.json"
    subprocess.run([sys.executable, __file__, "--rows-to", str(child)], check=True,
                   env={**os.environ, **avx2_environment()})
    rows += json.loads(child.read_text())
    child.unlink()
    load = os.getloadavg()[0]
    lines = [f"Wide and deep layouts, tinynet's generic ensemble kernel against a hand-written "
             f"Numba loop of the same job (benchmarks/handwritten.py), alternately in one "
             f"process, fastest of {REPEATS}: {EPOCHS:,} epochs of XOR, per-sample SGD; "
             f"compiled for this CPU, then in a child compiled as for an AVX2-only CPU "
             f"(benchmarks/avx2.py). Python {platform.python_version()}, numba "
             f"{numba.__version__}, {numba.get_num_threads()} numba threads, 1 BLAS thread; "
             f"1-minute load average {load_start:.1f} at the start and {load:.1f} at the end.",
             "", "| layout | seeds | compiled for | tinynet (s) | hand-written (s) | "
             "hand-written / tinynet |", "| --- | --- | --- | --- | --- | --- |"]
    lines += [f"| {r['layout']} | {r['seeds']:,} | {r['compiled_for']} | {r['tinynet_s']:.3f} "
              f"| {r['handwritten_s']:.3f} | {r['ratio']:.2f}x |" for r in rows]
    publish("bench_wide", {"rows": rows, "load": load, "threads": numba.get_num_threads()},
            "\n".join(lines) + "\n", args.readme, README_START, README_END)


if __name__ == "__main__":
    main()
