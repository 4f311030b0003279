"""This checkout's tinynet against an earlier commit's, in one process, runs interleaved.

    python benchmarks/bench_before_after.py                  # against 3710c54 (before issue 17)
    python benchmarks/bench_before_after.py --rev 33228e1 --out benchmarks/results/before_after.json
    python benchmarks/bench_before_after.py --rev 577f9a4 \
        --out benchmarks/results/before_after_issue41.json

Two benchmark runs one after the other on a shared machine differ by 10-30 % on rows whose
code did not change. Here both versions are imported side by side (the earlier one, taken
with ``git archive``, as the package ``tinynet_before``), and every case runs old, new, old,
new, ..., so both see the same machine; each side keeps its best time. Cases use only the API
both versions have (``mlp``, ``Network.fit``, ``fit_ensemble``). BLAS threads: 1; numba
threads: every core. The last row is a cold start: the default CLI run in a new process with
empty kernel caches, each version once per round. Results go to
benchmarks/results/before_after_issue17.json and .md (issue 16's, against 33228e1, in
before_after.json and .md; issue 25's, against ee76111, ``--rev ee76111 --out
benchmarks/results/before_after_issue25.json``: its "issue 17's targets" lines do not apply
to it). Issue 41's, against 577f9a4, the commit before the step was written once: its rows
"on the generic kernel" train on the generic kernels (the lanes' for ensembles, the one
network's for fits), as layouts too big to unroll and minibatches do, in both versions.
"""

from __future__ import annotations

import argparse
import io
import statistics
import json
import os
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

for variable in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[variable] = "1"

import numpy as np  # noqa: E402

from generic import generic_kernels  # noqa: E402
from learner import learner_loop  # noqa: E402
from machine import describe  # noqa: E402
from readme_block import put_between  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
README_START, README_END = "<!-- before-after: start -->", "<!-- before-after: end -->"


def earlier_package(rev: str, into: Path) -> None:
    """Write commit ``rev``'s ``tinynet`` package to ``into/tinynet_before``, with the module
    names it imports by string renamed to match."""
    archive = subprocess.run(["git", "archive", rev, "tinynet"], cwd=ROOT, check=True,
                             capture_output=True).stdout
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(into, filter="data")
    (into / "tinynet").rename(into / "tinynet_before")
    for path in (into / "tinynet_before").rglob("*.py"):  # importlib.import_module("tinynet.x")
        path.write_text(path.read_text().replace('"tinynet.', '"tinynet_before.')  # and the
                        .replace("from tinynet.compiled", "from tinynet_before.compiled"))
        # imports in the sources it generates (its kit and kernels)


def cases(X, y, Xm, ym) -> dict:
    """name -> function(library) that returns the seconds of one timed call."""
    def timed(call) -> float:
        start = time.perf_counter()
        call()
        return time.perf_counter() - start

    def ensemble(sizes, seeds, epochs, backend):
        def run(lib):
            nets = [lib.mlp(sizes, init="he_leaky", seed=s) for s in range(seeds)]
            return timed(lambda: lib.fit_ensemble(nets, X, y, epochs=epochs, lr=0.01,
                                                  backend=backend))
        return run

    def single(sizes, epochs, backend):
        def run(lib):
            net = lib.mlp(sizes, init="he_leaky", seed=0)
            return timed(lambda: net.fit(X, y, epochs=epochs, lr=0.01, backend=backend))
        return run

    def medium(backend):
        def run(lib):
            net = lib.mlp([64, 256, 256, 10], activation="relu", output="sigmoid", seed=0)
            return timed(lambda: net.fit(Xm, ym, epochs=2, lr=0.01, batch_size=64,
                                         backend=backend))
        return run

    deep = [2, *[16] * 8, 1]  # 2-16x8-1: too big to unroll, on the generic kernels

    def minibatch(seeds, epochs):
        def run(lib):
            nets = [lib.mlp(deep, init="he_leaky", seed=s) for s in range(seeds)]
            return timed(lambda: lib.fit_ensemble(nets, X, y, epochs=epochs, lr=0.01,
                                                  batch_size=2))
        return run

    def generic(sizes, seeds, epochs, batch_size=1):
        def run(lib):
            nets = [lib.mlp(sizes, init="he_leaky", seed=s) for s in range(seeds)]
            with generic_kernels(lib):
                return timed(lambda: lib.fit_ensemble(nets, X, y, epochs=epochs, lr=0.01,
                                                      batch_size=batch_size))
        return run

    def generic_single(sizes, epochs, batch_size=1):
        def run(lib):
            net = lib.mlp(sizes, init="he_leaky", seed=0)
            with generic_kernels(lib):
                return timed(lambda: net.fit(X, y, epochs=epochs, lr=0.01,
                                             batch_size=batch_size))
        return run

    def depth_job(run_epochs):  # benchmarks/bench_depth.py's job at depth 4
        def run(lib):
            Xc, yc = lib.data.circles(n=256, seed=0)
            nets = [lib.mlp([2, 16, 16, 16, 16, 1], activation="relu", init="he_normal",
                            seed=s) for s in range(128)]
            return timed(lambda: lib.fit_ensemble(nets, Xc, yc, epochs=run_epochs, lr=0.05,
                                                  batch_size=32))
        return run

    return {
        "numba ensemble 2-2-1, 100 seeds x 20,000 epochs (the XOR job)":
            ensemble([2, 2, 1], 100, 20_000, "numba"),
        "numba ensemble 2-2-1, 1000 seeds x 2,000 epochs":
            ensemble([2, 2, 1], 1000, 2000, "numba"),
        "numba ensemble 2-8-1, 100 seeds x 20,000 epochs": ensemble([2, 8, 1], 100, 20_000,
                                                                    "numba"),
        "numba ensemble 2-8-1, 1000 seeds x 2,000 epochs": ensemble([2, 8, 1], 1000, 2000,
                                                                    "numba"),
        "numba ensemble 2-2-2-1, 100 seeds x 20,000 epochs":
            ensemble([2, 2, 2, 1], 100, 20_000, "numba"),
        "numba ensemble 2-2-2-1, 1000 seeds x 2,000 epochs":
            ensemble([2, 2, 2, 1], 1000, 2000, "numba"),
        "numba ensemble 2-16x8-1, batch 2, 100 seeds x 200 epochs": minibatch(100, 200),
        "numba ensemble 2-2-1 on the generic kernel, 100 seeds x 20,000 epochs":
            generic([2, 2, 1], 100, 20_000),
        "numba ensemble 2-2-2-1 on the generic kernel, 100 seeds x 20,000 epochs":
            generic([2, 2, 2, 1], 100, 20_000),
        "numba ensemble 2-8-1 on the generic kernel, 100 seeds x 20,000 epochs":
            generic([2, 8, 1], 100, 20_000),
        "numba ensemble 2-2-2-1, batch 4 (generic kernel), 100 seeds x 20,000 epochs":
            generic([2, 2, 2, 1], 100, 20_000, batch_size=4),
        "numba ensemble 2-32-1 (generic kernel), 100 seeds x 5,000 epochs":
            generic([2, 32, 1], 100, 5000),
        "numba ensemble 2-16x4-1 ReLU, circles, batch 32 (generic kernel), 128 seeds x 8 epochs":
            depth_job(8),
        "numba fit 2-2-1, 3,000 epochs": single([2, 2, 1], 3000, "numba"),
        "numba fit 2-2-2-1, 3,000 epochs": single([2, 2, 2, 1], 3000, "numba"),
        "numba fit 2-8-1, 3,000 epochs": single([2, 8, 1], 3000, "numba"),
        "numba fit 2-2-2-1 on the generic kernel, 3,000 epochs":
            generic_single([2, 2, 2, 1], 3000),
        "numba fit 2-64-1 (generic kernel), 3,000 epochs": single([2, 64, 1], 3000, "numba"),
        "numba fit 2-8-1, batch 4 (generic kernel), 3,000 epochs":
            generic_single([2, 8, 1], 3000, batch_size=4),
        "NumPy ensemble 2-2-1, 100 seeds x 100 epochs": ensemble([2, 2, 1], 100, 100, "numpy"),
        "NumPy ensemble 2-2-2-1, 100 seeds x 100 epochs":
            ensemble([2, 2, 2, 1], 100, 100, "numpy"),
        "NumPy ensemble 2-2-2-1, 1000 seeds x 20 epochs":
            ensemble([2, 2, 2, 1], 1000, 20, "numpy"),
        "NumPy fit 2-2-2-1, 300 epochs": single([2, 2, 2, 1], 300, "numpy"),
        "medium MLP 64-256-256-10, batch 64, numba": medium("numba"),
        "medium MLP 64-256-256-10, batch 64, numpy": medium("numpy"),
    }


def against_learner(libraries: dict, X, y, repeats: int) -> list[dict]:
    """Sample-steps/s of the learner's loop (one seed) and of each version's NumPy ensemble
    (100 seeds), 500 epochs each, interleaved, best of ``repeats``: the issue's ratio."""
    rows = []
    for sizes in ([2, 2, 1], [2, 2, 2, 1]):
        rates = {"learner": 0.0, **{name: 0.0 for name in libraries}}
        for _ in range(repeats):
            start = time.perf_counter()
            learner_loop(sizes, [0], 500, X, y)
            rates["learner"] = max(rates["learner"], 500 * len(X) / (time.perf_counter() - start))
            for name, lib in libraries.items():
                nets = [lib.mlp(sizes, init="he_leaky", seed=s) for s in range(100)]
                start = time.perf_counter()
                lib.fit_ensemble(nets, X, y, epochs=500, lr=0.01, backend="numpy")
                rates[name] = max(rates[name], 100 * 500 * len(X) / (time.perf_counter() - start))
        rows.append({"shape": "-".join(map(str, sizes)), **rates})
    return rows


def targets(rows: list[dict], learner: list[dict]) -> list[str]:
    """Issue 17's targets, each met or not in this run's rows."""
    ratio = {row["case"]: row["before_over_after"] for row in rows}
    checks = [("numba ensemble 2-2-1, 100 seeds x 20,000 epochs (the XOR job)", 2.5),
              ("numba ensemble 2-8-1, 100 seeds x 20,000 epochs", 2.0),
              ("numba fit 2-2-1, 3,000 epochs", 20.0),
              ("numba fit 2-2-2-1, 3,000 epochs", 20.0),
              ("numba fit 2-8-1, 3,000 epochs", 20.0),
              ("cold start: default CLI run, empty caches (new process)", 1.0)]
    lines = [f"{case} >= {goal:g}x the commit before: {ratio[case]:.2f}x: "
             f"{'met' if ratio[case] >= goal else 'NOT met'}" for case, goal in checks]
    return lines + [f"NumPy ensemble {row['shape']} >= 40x the learner's loop: "
                    f"{row['after'] / row['learner']:.1f}x: "
                    f"{'met' if row['after'] >= 40 * row['learner'] else 'NOT met'}"
                    for row in learner]


def cold_start(package: str, folder: str) -> float:
    """Seconds for ``python -m <package>.xor`` (the default run) in a new process whose
    numba and kernel caches start empty."""
    with tempfile.TemporaryDirectory() as caches:
        env = {**os.environ, "NUMBA_CACHE_DIR": caches, "TINYNET_KERNEL_DIR": caches,
               "PYTHONPATH": os.pathsep.join([folder, str(ROOT)])}
        start = time.perf_counter()
        subprocess.run([sys.executable, "-m", f"{package}.xor"], env=env, check=True,
                       capture_output=True)
        return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rev", default="3710c54", help="the earlier commit")
    parser.add_argument("--cold", type=int, default=2, help="cold starts per side")
    parser.add_argument("--only", default="", help="run only the cases whose name holds this "
                        "text (a quick look: nothing is written)")
    parser.add_argument("--repeats", type=int, default=7, help="timed runs per side and case")
    parser.add_argument("--readme", type=Path, default=None,
                        help="also put the table in this page (docs/performance.md), "
                             "between its before-after markers")
    parser.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results" /
                        "before_after_issue17.json")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        earlier_package(args.rev, Path(folder))
        sys.path[:0] = [folder, str(ROOT)]
        import tinynet
        import tinynet_before
        X, y = tinynet.data.xor()
        rng = np.random.default_rng(0)
        Xm, ym = rng.normal(size=(512, 64)), rng.uniform(size=(512, 10))
        rows = []
        for name, run in cases(X, y, Xm, ym).items():
            if args.only not in name:
                continue
            run(tinynet), run(tinynet_before)  # compile, warm up
            old, new = [], []
            for _ in range(args.repeats):
                old.append(run(tinynet_before))
                new.append(run(tinynet))
            rows.append({"case": name, "before_ms": 1e3 * min(old), "after_ms": 1e3 * min(new),
                         "before_over_after": min(old) / min(new),
                         "median_before_over_after": statistics.median(old) /
                         statistics.median(new)})
            print(f"{name}: {rows[-1]['before_over_after']:.3f}", file=sys.stderr)
        if args.only:
            return
        learner = against_learner({"before": tinynet_before, "after": tinynet}, X, y,
                                  args.repeats)
        old, new = [], []
        for _ in range(args.cold):
            old.append(cold_start("tinynet_before", folder))
            new.append(cold_start("tinynet", folder))
        rows.append({"case": "cold start: default CLI run, empty caches (new process)",
                     "before_ms": 1e3 * min(old), "after_ms": 1e3 * min(new),
                     "before_over_after": min(old) / min(new),
                     "median_before_over_after": statistics.median(old) /
                     statistics.median(new)})
        machine = describe()
    load = os.getloadavg()[0]
    lines = [f"tinynet at {args.rev} (before) against this checkout (after), interleaved in one "
             f"process, best of {args.repeats} each (cold starts: best of {args.cold}); BLAS "
             f"threads 1, {machine}, 1-minute load average {load:.1f} at the end. "
             "Above 1: the checkout is faster.", "",
             "| case | before (ms) | after (ms) | before / after | medians' ratio |",
             "| --- | --- | --- | --- | --- |"]
    lines += [f"| {r['case']} | {r['before_ms']:.1f} | {r['after_ms']:.1f} | "
              f"{r['before_over_after']:.3f} | {r['median_before_over_after']:.3f} |"
              for r in rows]
    lines += ["", "The NumPy ensemble (100 seeds) against the learner's loop (one seed, "
              "benchmarks/learner.py), sample-steps/s, 500 epochs each, interleaved in the same "
              "run:", "",
              "| network | learner's loop | NumPy ensemble before | after | before / learner "
              "| after / learner |", "| --- | --- | --- | --- | --- | --- |"]
    lines += [f"| {r['shape']} | {r['learner']:,.0f} | {r['before']:,.0f} | {r['after']:,.0f} | "
              f"{r['before'] / r['learner']:.1f} | {r['after'] / r['learner']:.1f} |"
              for r in learner]
    markdown = "\n".join(lines) + "\n"
    print(markdown)
    print("Issue 17's targets in this run (the CHANGELOG records them):\n" +
          "\n".join(f"- {line}" for line in targets(rows, learner)))
    args.out.write_text(json.dumps({"rev": args.rev, "repeats": args.repeats, "rows": rows,
                                    "numpy_against_learner": learner},
                                   indent=2))
    args.out.with_suffix(".md").write_text(markdown)
    if args.readme:
        put_between(args.readme, README_START, README_END, markdown)


if __name__ == "__main__":
    main()
