"""Ensembles of residual networks: tinynet's compiled kernels against a hand-written Numba loop
of the same job, interleaved in one process.

    python benchmarks/bench_residual.py --readme docs/performance.md     # about two minutes

The job: a ReLU layer in, L pre-norm blocks ``x + F(LN(x))`` of two ReLU layers each, a sigmoid
output, MSE, SGD at lr 0.05 after the backward pass, batches of 20 of the 200 spiral points in
data order, 64 seeds. tinynet trains the members with ``tinynet.fit_packed`` (the stream's
kernels, :mod:`tinynet.compiled.stream`: ``fit_stream_members``, each member its own single
fit, the members spread over the cores); the bar is ``benchmarks/handwritten_residual.py``'s
``train``, the same shape of loop written by hand for this one family, on the same arithmetic.
Each row is checked to train the same networks (to :data:`SAME`) before anything is timed,
then the two run alternately, :data:`REPEATS` times each; the table gives each one's fastest
run and the ratio (hand-written seconds over tinynet's: above 1, tinynet is faster).

Thread settings: BLAS on 1 thread; numba on 2 (the machine's cores); the CPU (``machine.
describe``) and the load average are printed with the table. Results:
benchmarks/results/bench_residual.json, .md, and with ``--readme`` between the residual
markers of docs/performance.md.
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numba  # noqa: E402
import numpy as np  # noqa: E402

import tinynet  # noqa: E402
from tinynet.compiled import load  # noqa: E402
from tinynet.compiled.blockruns import blocks_layout  # noqa: E402
from tinynet.packing import draw, layer_rows  # noqa: E402

load()

from handwritten_residual import train as handwritten  # noqa: E402
from machine import describe  # noqa: E402
from readme_block import publish  # noqa: E402

README_START, README_END = "<!-- residual: start -->", "<!-- residual: end -->"

JOBS = [(8, 16), (32, 16), (8, 64)]
"""(blocks, width) of each row."""
SEEDS, EPOCHS, BATCH, LR, THREADS = 64, 20, 20, 0.05, 2
REPEATS = 5
SAME = 1e-8
"""How far apart a parameter trained by tinynet and by the hand-written loop may be after two
epochs. They are the same arithmetic, bit for bit where tinynet's products are loops (width
16); where a product reaches ``tinynet.compiled.single.BLAS_MIN_WORK`` multiply-adds (width 64:
20 · 64 · 64), tinynet calls BLAS, which sums in its own order (measured: 1.5e-10)."""


def network(blocks: int, width: int) -> tinynet.Network:
    return tinynet.mlp([2, *[width] * (blocks + 1), 1], activation="relu", residual=True,
                       norm="pre", branch=2, seed=0)


def tinynet_run(like, theta, X, y, epochs):
    trained = theta.copy()
    tinynet.fit_packed(like, trained, X, y, seeds=range(len(theta)), epochs=epochs, lr=LR,
                       batch_size=BATCH, shuffle=False)
    return trained


def handwritten_run(like, theta, X, y, epochs):
    trained = theta.copy()
    gains = blocks_layout(like)[0][:, 1].copy()
    eps = like.residuals[0].norm.eps
    handwritten(trained, layer_rows(like).table, gains, X, y, epochs, LR, BATCH, eps)
    return trained


def rows_for(X, y) -> list[dict]:
    rows = []
    for blocks, width in JOBS:
        like = network(blocks, width)
        theta = draw(like, range(SEEDS))
        ours, theirs = (run(like, theta, X, y, 2) for run in (tinynet_run, handwritten_run))
        np.testing.assert_allclose(ours, theirs, rtol=0, atol=SAME)
        assert np.abs(ours - theta).max() > 1e-3        # trained networks are compared
        times = {"tinynet": [], "handwritten": []}
        for _ in range(REPEATS):
            for name, run in (("tinynet", tinynet_run), ("handwritten", handwritten_run)):
                start = time.perf_counter()
                run(like, theta, X, y, EPOCHS)
                times[name].append(time.perf_counter() - start)
        row = {"blocks": blocks, "width": width, "parameters": theta.shape[1],
               "agreement": float(np.abs(ours - theirs).max()),
               "tinynet_s": min(times["tinynet"]), "handwritten_s": min(times["handwritten"]),
               "seconds": times}
        row["ratio"] = row["handwritten_s"] / row["tinynet_s"]
        rows.append(row)
        print(row, file=sys.stderr)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--readme", type=Path, default=None,
                        help="also put the table between the residual markers of this page")
    readme = parser.parse_args().readme
    numba.set_num_threads(THREADS)
    X, y = tinynet.data.spirals()
    rows = rows_for(X, y)
    load_average = os.getloadavg()[0]
    lines = [f"Residual ensembles, tinynet (tinynet.compiled.stream, members as single fits) "
             f"against a hand-written Numba loop of the same job "
             f"(benchmarks/handwritten_residual.py), alternately in one process, fastest of "
             f"{REPEATS}: {SEEDS} seeds, a ReLU layer in, pre-norm blocks of two ReLU layers, a "
             f"sigmoid output, MSE, SGD at lr {LR}, batches of {BATCH} of the 200 spiral "
             f"points in data order, {EPOCHS} epochs. {describe()}; Python "
             f"{platform.python_version()}, numba {numba.__version__}, {THREADS} numba "
             f"threads, 1 BLAS thread, 1-minute load average {load_average:.1f} at the end.", "",
             "| blocks | width | parameters | tinynet (s) | hand-written (s) | "
             "hand-written / tinynet | largest difference after 2 epochs |",
             "| --- | --- | --- | --- | --- | --- | --- |"]
    for r in rows:
        lines.append(f"| {r['blocks']} | {r['width']} | {r['parameters']:,} | "
                     f"{r['tinynet_s']:.3f} | {r['handwritten_s']:.3f} | {r['ratio']:.2f}x | "
                     f"{r['agreement']:.1e} |")
    publish("bench_residual", {"rows": rows, "load": load_average, "machine": describe()},
            "\n".join(lines) + "\n", readme, README_START, README_END)


if __name__ == "__main__":
    main()
