"""Wide and deep layouts (too big for a kernel generated per layout) against the bar: the same
job written by hand as a plain Numba loop (``benchmarks/handwritten.py``).

    python benchmarks/bench_wide.py            # about a minute

The job: 100 seeds of 2-32-1, 2-64-1 and 2-16x8-1 (LeakyReLU hidden, sigmoid output, MSE,
per-sample SGD at lr 0.01, XOR's four points in data order), each seed's network from
``tinynet.mlp(sizes, seed=s)``. tinynet trains it with ``tinynet.fit_packed`` (the generic
ensemble kernel, :mod:`tinynet.compiled.lanes`, through its kit); the hand-written loop on the
same packed parameters. Both are compiled and checked to train the same networks (to 1e-9)
before anything is timed; then the two run alternately in this one process, ``REPEATS`` times
each, and the table gives each one's fastest run and the ratio (hand-written seconds over
tinynet's: above 1, tinynet is faster). BLAS threads 1; numba threads: every core; the load
average is printed with the table. Results go to benchmarks/results/bench_wide.json and .md.
"""

from __future__ import annotations

import os
import platform
import sys
import time

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numba  # noqa: E402
import numpy as np  # noqa: E402

import tinynet  # noqa: E402
from tinynet.packing import draw, layout  # noqa: E402

from handwritten import train as handwritten  # noqa: E402
from readme_block import publish  # noqa: E402

LAYOUTS = {"2-32-1": [2, 32, 1], "2-64-1": [2, 64, 1], "2-16x8-1": [2] + [16] * 8 + [1]}
SEEDS = 100
EPOCHS = 2_000
REPEATS = 5


def tinynet_run(like, theta, X, y, epochs):
    trained = theta.copy()
    tinynet.fit_packed(like, trained, X, y, seeds=range(SEEDS), epochs=epochs, lr=0.01,
                       shuffle=False)
    return trained


def main() -> None:
    X, y = tinynet.data.xor()
    rows = []
    for name, sizes in LAYOUTS.items():
        like = tinynet.mlp(sizes, seed=0)
        theta, table = draw(like, range(SEEDS)), layout(like).table
        ours = tinynet_run(like, theta, X, y, 20)              # compile both, and check
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
        rows.append({"layout": name, "seeds": SEEDS, "epochs": EPOCHS,
                     "tinynet_s": best["tinynet"], "handwritten_s": best["handwritten"],
                     "ratio": best["handwritten"] / best["tinynet"]})
        print(rows[-1], file=sys.stderr)
    load = os.getloadavg()[0]
    lines = [f"Wide and deep layouts, tinynet's generic ensemble kernel against a hand-written "
             f"Numba loop of the same job (benchmarks/handwritten.py), alternately in one "
             f"process, fastest of {REPEATS}: {SEEDS} seeds x {EPOCHS:,} epochs of XOR, "
             f"per-sample SGD; Python {platform.python_version()}, numba {numba.__version__}, "
             f"{numba.get_num_threads()} numba threads, 1 BLAS thread, {os.cpu_count()} cores, "
             f"1-minute load average {load:.1f} at the end.", "",
             "| layout | tinynet (s) | hand-written (s) | hand-written / tinynet |",
             "| --- | --- | --- | --- |"]
    lines += [f"| {r['layout']} | {r['tinynet_s']:.3f} | {r['handwritten_s']:.3f} | "
              f"{r['ratio']:.2f}x |" for r in rows]
    publish("bench_wide", {"rows": rows, "load": load, "threads": numba.get_num_threads()},
            "\n".join(lines) + "\n", None, "", "")


if __name__ == "__main__":
    main()
