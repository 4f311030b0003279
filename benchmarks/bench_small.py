"""Small layouts at the hardware's pace: tinynet's generated kernels against hand-written Numba
loops of the same jobs, interleaved in one process, and against the machine's FMA peak.

    python benchmarks/bench_small.py --readme docs/performance.md    # about three minutes

Ensembles: 2-2-1, 2-8-1 and 2-2-2-1 (LeakyReLU hidden, alpha 0.01, a sigmoid output, MSE,
per-sample SGD at lr 0.01, XOR's four points in data order) of 100 and 1,000 seeds, at 2 numba
threads and at 1. tinynet trains them with ``tinynet.fit_packed`` (the kernel generated for the
layout, :mod:`tinynet.compiled.unrolled`); the bar is ``benchmarks/handwritten.py``'s ``train``,
the seeds innermost in blocks of 64, a ``prange`` over the blocks (SIMD loops, with
``math.exp``, which Numba calls once per lane). Single fits: one 2-2-1 and one 2-8-1 network,
``tinynet.fit(net, ..., backend="numba")`` (:mod:`tinynet.compiled.fused`) against a scalar loop
(``handwritten.train_one``) twice: on tinynet's own exp (``vector_exp``, the same arithmetic:
the bar), and on the C library's (``math.exp``), a row beside it so that the exp's own cost
shows. Each comparison is compiled and checked to train the same networks before anything is
timed, then run alternately, ``REPEATS`` times each; the table gives each one's fastest run
and the ratio (hand-written seconds over tinynet's: above 1, tinynet is faster) and names the
exp the hand-written loop ran on.

The physical limit: flops per sample step are counted by :func:`flops_per_step` (its docstring
gives the count), the machine's peak by :func:`fma_peak` (independent fused multiply-adds on
every core), and the table gives the fraction of that peak each tinynet ensemble reaches.

Thread settings: BLAS threads 1; numba threads as the table says; the CPU (``machine.
describe``: its name, and the features and vector width Numba compiled for, 512 bits where the
CPU has AVX-512, :mod:`tinynet.compiled.target`) and the load average are printed with the
table. Results: benchmarks/results/bench_small.json, .md,
and with ``--readme`` between the small markers of docs/performance.md (``tests/test_readme.py``).
"""

from __future__ import annotations

import argparse
import copy
import os
import platform
import sys
import time
from collections.abc import Callable
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numba  # noqa: E402
import numpy as np  # noqa: E402
from numba import njit, prange  # noqa: E402
from numba.core.registry import cpu_target  # noqa: E402

import tinynet  # noqa: E402
from tinynet.compiled import load, scalars  # noqa: E402
from tinynet.packing import draw, layout  # noqa: E402

load()  # (importing scalars chose the vector width, before the hand-written loops compile)

from handwritten import train as handwritten  # noqa: E402
from handwritten import train_one as handwritten_one  # noqa: E402
from machine import describe  # noqa: E402
from readme_block import publish  # noqa: E402

README_START, README_END = "<!-- small: start -->", "<!-- small: end -->"

LAYOUTS = {"2-2-1": [2, 2, 1], "2-8-1": [2, 8, 1], "2-2-2-1": [2, 2, 2, 1]}
SEED_COUNTS = (100, 1_000)
THREADS = (2, 1)
EPOCHS = {100: 20_000, 1_000: 4_000}   # the notes' job at 100 seeds; 4e6 member-epochs at 1,000
SINGLE = {"2-2-1": [2, 2, 1], "2-8-1": [2, 8, 1]}
SINGLE_EPOCHS = 200_000  # ten times the notes' job: 20,000 epochs take 3-6 ms
SINGLE_EXPS = ("vector_exp", "math.exp")
"""The exps of the hand-written single fits: tinynet's own first (the same arithmetic as
tinynet's kernel, the bar), then the C library's (what the exp itself costs)."""
SINGLE_SAME = 1e-12
"""How far apart, at most, a parameter of a single fit trained by tinynet and by the scalar
loop may be after 20 epochs, on either exp. Not bit for bit even on ``vector_exp``: the loop
writes the sigmoid as 1 / (1 + e^-z) and its slope as s (1 - s), and adds the bias first
(measured on XOR: 4e-18 with ``vector_exp``, 3e-17 with ``math.exp``)."""
REPEATS = 5
LR = 0.01

EXP_FLOPS = 44
"""Floating-point operations of one :func:`tinynet.compiled.scalars.vector_exp` on its normal
path, counted in its source (an fma counted as 2; comparisons, selects and the integer steps of
``power_of_two`` not counted; the 5 of the path for subnormal results, computed in vector code
too, not counted either)."""


def flops_per_step(sizes: list[int]) -> int:
    """Floating-point operations of one per-sample SGD step of a LeakyReLU-hidden, sigmoid-
    output MSE network, an fma or multiply-add counted as 2: forward 2·W + B; each hidden unit
    2 (value and slope), each output unit EXP_FLOPS + 6 (the sigmoid and its slope) + 4 (the
    loss and its gradient); backward, δ = g · φ' (1 per unit), dX = δ W for every layer after the
    first (2 W); the update 2 per weight (lr · δ_j once per unit, 1) and 2 per bias."""
    weights = sum(a * b for a, b in zip(sizes, sizes[1:]))
    first = sizes[0] * sizes[1]
    hidden, outputs = sum(sizes[1:-1]), sizes[-1]
    units = hidden + outputs
    forward = 2 * weights + units + 2 * hidden + (EXP_FLOPS + 6 + 4) * outputs
    backward = units + 2 * (weights - first)
    update = 2 * weights + units + 2 * units
    return forward + backward + update


@njit(cache=True, error_model="numpy")
def _fma_block(acc, multiplier, addend, rounds):
    """``rounds`` fused multiply-adds on each of the 64 accumulators, which sit in a local array
    (in registers: with ``acc`` itself the loop measured a quarter of this, a store and a load
    per fma)."""
    local = np.empty(64)
    for l in range(64):
        local[l] = acc[l]
    for _ in range(rounds):
        for l in range(64):
            local[l] = scalars.fma(local[l], multiplier, addend)
    for l in range(64):
        acc[l] = local[l]


@njit(cache=True, parallel=True, error_model="numpy")
def _fma_all(accumulators, multiplier, addend, rounds):
    for core in prange(accumulators.shape[0]):
        _fma_block(accumulators[core], multiplier, addend, rounds)


def fma_peak(rounds: int = 4_000_000) -> float:
    """Flops per second of independent fused multiply-adds on every numba thread: 64
    accumulators per thread (eight 512-bit registers, enough chains to hide the fma's latency on
    two ports), best of 5."""
    threads = numba.get_num_threads()
    lanes = 64
    acc = np.ones((threads, lanes))
    _fma_all(acc, 0.999999, 1e-7, 10)
    best = np.inf
    for _ in range(5):
        start = time.perf_counter()
        _fma_all(acc, 0.999999, 1e-7, rounds)
        best = min(best, time.perf_counter() - start)
    return 2.0 * threads * lanes * rounds / best


def ensemble(like, theta, X, y, epochs):
    trained = theta.copy()
    tinynet.fit_packed(like, trained, X, y, seeds=range(len(theta)), epochs=epochs, lr=LR,
                       shuffle=False)
    return trained


def single(net, X, y, epochs):
    """The single fit, keeping no loss history (record_every=None), as the hand loops keep
    none: 200,000 epochs' history is 7 % of a 2-2-1 fit."""
    trained = copy.deepcopy(net)
    tinynet.fit(trained, X, y, epochs=epochs, lr=LR, shuffle=False, backend="numba",
                record_every=None)
    return tinynet.packing.pack(trained)


def interleaved(*runs: Callable[[], object]) -> list[float]:
    """The fastest of REPEATS runs of each of ``runs``, one after the other in turn."""
    times = [[] for _ in runs]
    for _ in range(REPEATS):
        for run, kept in zip(runs, times):
            start = time.perf_counter()
            run()
            kept.append(time.perf_counter() - start)
    return [min(kept) for kept in times]


def ensemble_rows(X, y) -> list[dict]:
    rows = []
    for threads in THREADS:
        numba.set_num_threads(threads)
        peak = fma_peak()
        for name, sizes in LAYOUTS.items():
            for seeds in SEED_COUNTS:
                like = tinynet.mlp(sizes, seed=0)
                theta, table = draw(like, range(seeds)), layout(like).table
                ours = ensemble(like, theta, X, y, 20)         # compile both, and check
                theirs = handwritten(theta, table, X, y, 20, LR)
                np.testing.assert_allclose(ours, theirs, rtol=0, atol=1e-9)
                epochs = EPOCHS[seeds]
                tinynet_s, hand_s = interleaved(
                    lambda: ensemble(like, theta, X, y, epochs),
                    lambda: handwritten(theta, table, X, y, epochs, LR))
                flops = flops_per_step(sizes) * seeds * epochs * len(X)
                rows.append({"job": f"ensemble {name}", "seeds": seeds, "threads": threads,
                             "exp": "math.exp", "epochs": epochs, "tinynet_s": tinynet_s,
                             "handwritten_s": hand_s,
                             "ratio": hand_s / tinynet_s,
                             "flops_per_step": flops_per_step(sizes),
                             "peak_flops": peak, "fraction_of_peak": flops / tinynet_s / peak})
                print(rows[-1], file=sys.stderr)
    numba.set_num_threads(max(THREADS))
    return rows


def single_rows(X, y) -> list[dict]:
    """A row per layout of SINGLE and exp of SINGLE_EXPS: tinynet's single fit against the
    scalar loop on that exp, the three run in turn."""
    rows = []
    for name, sizes in SINGLE.items():
        net = tinynet.mlp(sizes, seed=3)
        theta = tinynet.packing.pack(net)
        ours = single(net, X, y, 20)
        for exp in SINGLE_EXPS:
            theirs = handwritten_one(theta, sizes, X, y, 20, LR, exp=exp)
            np.testing.assert_allclose(ours, theirs, rtol=0, atol=SINGLE_SAME)
        tinynet_s, *hand = interleaved(
            lambda: single(net, X, y, SINGLE_EPOCHS),
            *(lambda exp=exp: handwritten_one(theta, sizes, X, y, SINGLE_EPOCHS, LR, exp=exp)
              for exp in SINGLE_EXPS))
        for exp, hand_s in zip(SINGLE_EXPS, hand):
            rows.append({"job": f"single fit {name}", "seeds": 1, "threads": 1, "exp": exp,
                         "epochs": SINGLE_EPOCHS, "tinynet_s": tinynet_s,
                         "handwritten_s": hand_s, "ratio": hand_s / tinynet_s})
            print(rows[-1], file=sys.stderr)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--readme", type=Path, default=None,
                        help="also put the table between the small markers of this page")
    readme = parser.parse_args().readme
    X, y = tinynet.data.xor()
    rows = ensemble_rows(X, y) + single_rows(X, y)
    load_average = os.getloadavg()[0]
    features = cpu_target.target_context.codegen().magic_tuple()[2]  # what was compiled for
    lines = [f"Small layouts, tinynet against hand-written Numba loops of the same jobs "
             f"(benchmarks/handwritten.py), alternately in one process, fastest of {REPEATS}; "
             f"XOR in data order, per-sample SGD. Ensembles against the SIMD loop (seeds "
             f"innermost, math.exp), single fits against a scalar loop, on tinynet's exp "
             f"(vector_exp: the same arithmetic) and on the C library's (math.exp: what the "
             f"exp costs). {describe()}; Python {platform.python_version()}, numba "
             f"{numba.__version__}, 1 BLAS thread, 1-minute load average {load_average:.1f} "
             f"at the end. Peak: independent fused multiply-adds on every thread, measured in "
             f"this run; flops per sample step counted by flops_per_step.", "",
             "| job | seeds | threads | epochs | tinynet (s) | hand-written (s) | "
             "hand-written's exp | hand-written / tinynet | flops per step | peak (Gflop/s) | "
             "tinynet's fraction of peak |",
             "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for r in rows:
        limit = (f"{r['flops_per_step']} | {r['peak_flops'] / 1e9:.1f} | "
                 f"{100 * r['fraction_of_peak']:.1f} % |" if "peak_flops" in r else "| | |")
        lines.append(f"| {r['job']} | {r['seeds']:,} | {r['threads']} | {r['epochs']:,} | "
                     f"{r['tinynet_s']:.3f} | {r['handwritten_s']:.3f} | {r['exp']} | "
                     f"{r['ratio']:.2f}x | "
                     + limit)
    publish("bench_small", {"rows": rows, "load": load_average, "features": features},
            "\n".join(lines) + "\n", readme, README_START, README_END)


if __name__ == "__main__":
    main()
