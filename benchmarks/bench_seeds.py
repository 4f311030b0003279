"""A study of many seeds: 10^6 seeds of 2-2-1 for one epoch, each arm's seeds drawn straight
into one packed array (``tinynet.packing.draw``) and trained there (``tinynet.fit_packed``),
against the same study with one Network built per seed (how studies ran before issue 15), at
10^5 seeds (it would take about 10 minutes at 10^6). Each row in a fresh process, for its own
peak memory (resident set, after ``import tinynet`` and the compiled kernel's first use).

    python benchmarks/bench_seeds.py --readme docs/performance.md

BLAS threads 1; numba threads: every core. Writes benchmarks/results/bench_seeds.json and .md,
and the lines of docs/performance.md between its seeds markers (a test keeps the two equal).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

from readme_block import publish

README_START, README_END = "<!-- seeds: start -->", "<!-- seeds: end -->"
SEEDS = 1_000_000
NETWORK_SEEDS = 100_000

CHILD = """
import json, resource, sys, time
import tinynet
from tinynet.packing import stack
from tinynet.xor import Arm, Setup, build_network, run_study

how, seeds = sys.argv[1], int(sys.argv[2])
if how == "network per seed":  # the path before issue 15: a Network per seed, then stacked
    def train(arm, setup, record_every=None, progress=None):
        nets = [build_network(setup, arm, seed) for seed in setup.seed_range]
        X, y = setup.task.training_data()
        result = tinynet.fit_ensemble(nets, X, y, epochs=setup.epochs, lr=setup.lr,
                                      shuffle=arm.shuffle, threshold=0.5,
                                      record_every=record_every, progress=progress)
        return result, stack(nets)
    import tinynet.xor.bench as bench
    bench.train = train
run_study([Arm("he_leaky")], Setup(hidden=(2,), epochs=1, seeds=64), progress=False)  # compile
baseline = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
started = time.perf_counter()
study = run_study([Arm("he_leaky")], Setup(hidden=(2,), epochs=1, seeds=seeds), progress=False)
seconds = time.perf_counter() - started
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
print(json.dumps({"how": how, "seeds": seeds, "seconds": seconds, "baseline_bytes": baseline,
                  "peak_bytes": peak, "successes": study.results[0].successes}))
"""


def run(how: str, seeds: int) -> dict:
    """One row, in a fresh process."""
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1",
           "MKL_NUM_THREADS": "1"}
    out = subprocess.run([sys.executable, "-c", CHILD, how, str(seeds)], env=env, check=True,
                         capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--readme", type=Path, default=None)
    args = parser.parse_args()
    rows = [run("packed", SEEDS), run("packed", NETWORK_SEEDS),
            run("network per seed", NETWORK_SEEDS)]
    if rows[1]["successes"] != rows[2]["successes"]:
        raise SystemExit(f"the two paths differ: {rows[1]['successes']} and "
                         f"{rows[2]['successes']} seeds solved")
    per_seed = {row["how"] + str(row["seeds"]): row["seconds"] / row["seeds"] for row in rows}
    lines = ["One arm (he_leaky), 2-2-1 on XOR's four points, 1 epoch; each row a fresh "
             f"process. BLAS threads 1, {os.cpu_count()} cores, 1-minute load average "
             f"{os.getloadavg()[0]:.1f} at the end. Memory: the peak resident set during the "
             "study, over the process's peak before it (imports, the compiled kernel).", "",
             "| how | seeds | time (s) | µs per seed | memory (MB) | bytes per seed | "
             "time per seed, ratio to packed |",
             "| --- | --- | --- | --- | --- | --- | --- |"]
    for row in rows:
        extra = row["peak_bytes"] - row["baseline_bytes"]
        ratio = (row["seconds"] / row["seeds"]) / per_seed[f"packed{row['seeds']}"]
        lines.append(f"| {row['how']} | {row['seeds']:,} | {row['seconds']:.1f} | "
                     f"{1e6 * row['seconds'] / row['seeds']:.1f} | {extra / 2**20:,.0f} | "
                     f"{extra / row['seeds']:,.0f} | {ratio:.2f} |")
    markdown = "\n".join(lines) + "\n"
    publish("bench_seeds", rows, markdown, args.readme, README_START, README_END)


if __name__ == "__main__":
    main()
