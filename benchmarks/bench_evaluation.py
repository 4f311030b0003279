"""What evaluation during training costs (``test=`` and ``evaluate_every=``): the same
ensemble trained without evaluation, scored on its test set once at the end, and scored on
both sets every epoch and every 5 epochs, interleaved in one process, 5 runs each; the ratio
of each run to the unevaluated run beside it, as a median and a range.

    python benchmarks/bench_evaluation.py --readme docs/performance.md

The job: the digits (1,442 training, 355 test images), 64 seeds of *Deep Learning from
Scratch*'s 64-100x5-10 ReLU network with He weights, SGD at lr 0.01 in batches of 128, 10
epochs (its members train as single fits, BLAS on one thread each), and 256 seeds of a
64-8-10 network in batches of 32 (on the SIMD lanes). Numba threads: every core. Writes
benchmarks/results/bench_evaluation.json and .md, and the lines of docs/performance.md
between its evaluation markers (a test keeps the two equal).
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

for variable in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[variable] = "1"

import numba  # noqa: E402
import numpy as np  # noqa: E402

import tinynet  # noqa: E402
from machine import cpu_name  # noqa: E402
from ratios import interleaved_ratios, ratio_cell  # noqa: E402
from readme_block import publish  # noqa: E402

README_START, README_END = "<!-- evaluation: start -->", "<!-- evaluation: end -->"
JOBS = [([64, *[100] * 5, 10], 64, 128), ([64, 8, 10], 256, 32)]
"""sizes, seeds, batch size."""
EPOCHS = 10
CASES = {"none": {}, "none again": {}, "test set at the end": {"test": True},
         "every 5 epochs": {"test": True, "evaluate_every": 5},
         "every epoch": {"test": True, "evaluate_every": 1}}
"""What each run is given: nothing (twice: the noise), a test set, and how often."""


def run(sizes: list[int], seeds: int, batch: int, case: dict, digits) -> float:
    """Seconds to train the job with ``case``'s evaluation."""
    nets = [tinynet.mlp(sizes, activation="relu", output="softmax", init="he_normal", seed=s)
            for s in range(seeds)]
    extra = {**case, "test": (digits.X_test, digits.y_test)} if case else {}
    start = time.perf_counter()
    tinynet.fit_ensemble(nets, digits.X, digits.y, epochs=EPOCHS, lr=0.01, batch_size=batch,
                         loss="cross_entropy", **extra)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--readme", type=Path, default=None)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    digits = tinynet.data.digits()
    rows = []
    for sizes, seeds, batch in JOBS:
        for case in CASES.values():  # compiles every kernel the cases use
            run(sizes, 2, batch, case, digits)
        seconds = {label: [] for label in CASES}
        for _ in range(args.repeats):
            for label, case in CASES.items():
                seconds[label].append(run(sizes, seeds, batch, case, digits))
        rows.append({"job": f"{'-'.join(map(str, sizes))}, {seeds} seeds, batches of {batch}",
                     "seconds": seconds, **interleaved_ratios(seconds, "none")})
    lines = [f"{args.repeats} runs of each, interleaved, each divided by the unevaluated run "
             f"beside it: median [range]. {cpu_name()}, {os.cpu_count()} cores, numba threads "
             f"{numba.get_num_threads()}, BLAS threads 1; 1-minute load average "
             f"{os.getloadavg()[0]:.1f} at the end. {EPOCHS} epochs of the digits.", "",
             "| job | no evaluation (s, median) | none again (the noise) | test set at the "
             "end | both sets every 5 epochs | both sets every epoch |",
             "| --- | --- | --- | --- | --- | --- |"]
    for row in rows:
        cells = [ratio_cell(row, label) for label in list(CASES)[1:]]
        lines.append(f"| {row['job']} | {np.median(row['seconds']['none']):.3f} | "
                     + " | ".join(cells) + " |")
    markdown = "\n".join(lines) + "\n"
    publish("bench_evaluation", rows, markdown, args.readme, README_START, README_END)


if __name__ == "__main__":
    main()
