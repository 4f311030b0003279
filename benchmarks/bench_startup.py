"""Warm start: how long the default CLI job takes in a new process once every cache is warm,
and where that time goes.

    python benchmarks/bench_startup.py --readme docs/performance.md   # about half a minute

The jobs: ``python examples/xor.py --init he_leaky --shuffle --hidden 2`` (100 seeds of 2-2-1
for 20,000 epochs) and the README's first command, the same without
``--hidden 2`` (2-2-2-1). Each is run once untimed (it compiles what is missing and writes the
bytecode caches; PYTHONDONTWRITEBYTECODE is unset in every run here), then ``RUNS`` times,
each in a new Python, timed from outside (the total wall time, median). The breakdown comes
from as many other new Pythons, one after each timed run (so both see the same load), that
run the same job step by step, each run through ``tinynet.xor.cli.command`` as examples/xor.py
runs it, timing each step inside (median of ``RUNS``):

- *interpreter*: ``python -c pass``, timed from outside;
- *import tinynet*, then *CLI imports*: what ``tinynet.xor.cli`` imports beyond it;
- *kernel load*: the job with ``--epochs 1`` (same seeds, layout and kernel) run twice, the
  first run's time less the second's: importing Numba, checking the cache folders, loading
  the compiled kernels and starting the thread pool, and any other first-call cost;
- *training*: the job's training (``tinynet.xor.bench.train``), kernels loaded;
- *report*: the rest of the job's ``main``: arguments, outcomes and intervals, the table;
- *exit and rest*: the total less all of the above (the interpreter's shutdown, and the
  difference between the stepwise run and the plain one).

The children import the tinynet beside this file (PYTHONPATH) and inherit the thread
settings (unset: numba on every core, OpenBLAS its default), which the table's note states
with the Python and numba versions and the 1-minute load average at the start and the end.
Results go to benchmarks/results/bench_startup.json and .md, and with ``--readme`` between
the startup markers of docs/performance.md (``tests/test_readme.py`` keeps the two equal).
"""

from __future__ import annotations

import json
import argparse
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path

from readme_block import publish

README_START, README_END = "<!-- startup: start -->", "<!-- startup: end -->"

ROOT = Path(__file__).resolve().parents[1]
RUNS = 9
JOBS = {  # name: the CLI's arguments
    "2-2-1 (--hidden 2)": ["--init", "he_leaky", "--shuffle", "--hidden", "2"],
    "2-2-2-1 (README's first command)": ["--init", "he_leaky", "--shuffle"],
}
TINY = ["--epochs", "1"]

STEPS = r"""
import contextlib, io, json, sys, time
started = time.perf_counter()
import tinynet
imported = time.perf_counter()
from tinynet.xor import bench, cli
cli_imported = time.perf_counter()
argv, tiny = json.loads(sys.argv[1]), json.loads(sys.argv[2])
trained = []
train = bench.train
def timed_train(*args, **kwargs):
    start = time.perf_counter()
    try:
        return train(*args, **kwargs)
    finally:
        trained.append(time.perf_counter() - start)
bench.train = timed_train
def run(args):  # as examples/xor.py runs it: cli.command(), which reads sys.argv
    sys.argv, out = ["xor.py", *args], io.StringIO()
    start = time.perf_counter()
    with contextlib.redirect_stdout(out):
        cli.command()
    return time.perf_counter() - start, out.getvalue()
tiny_first, _ = run(argv + tiny)
tiny_again, _ = run(argv + tiny)
job, table = run(argv)
import numba, numba.core.config as config
print(json.dumps({
    "import_tinynet_s": imported - started, "cli_imports_s": cli_imported - imported,
    "kernel_load_s": tiny_first - tiny_again, "training_s": trained[-1],
    "report_s": job - trained[-1], "in_process_s": time.perf_counter() - started,
    "tiny_first_s": tiny_first, "tiny_again_s": tiny_again, "job_s": job, "table": table,
    "numba": numba.__version__, "numba_threads": numba.get_num_threads(),
    "threading_layer": numba.threading_layer()}))
"""


def environment() -> dict[str, str]:
    """This environment, the tinynet beside this file first on the path, bytecode caches
    written."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        p for p in [str(ROOT), os.environ.get("PYTHONPATH")] if p)}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def wall(command: list[str], env: dict[str, str]) -> tuple[float, str]:
    """Seconds ``command`` takes from outside, and its stdout (it must succeed)."""
    start = time.perf_counter()
    done = subprocess.run(command, env=env, cwd=ROOT, capture_output=True, text=True)
    seconds = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed:\n{done.stderr}")
    return seconds, done.stdout


def median_of(rows: list[dict], key: str) -> float:
    return statistics.median(row[key] for row in rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--readme", type=Path, default=None,
                        help="also put the table between the startup markers of this page")
    readme = parser.parse_args().readme
    load_at_start = os.getloadavg()[0]
    env = environment()
    python = [sys.executable]
    wall(python + ["-c", "pass"], env)
    interpreter = statistics.median(wall(python + ["-c", "pass"], env)[0] for _ in range(RUNS))
    rows, versions = [], {}
    for name, argv in JOBS.items():
        command = python + [str(ROOT / "examples" / "xor.py"), *argv]
        _, expected = wall(command, env)                         # untimed: warms every cache
        walls, steps = [], []
        for _ in range(RUNS):  # a plain run, then a stepwise one
            seconds, out = wall(command, env)
            if out != expected:
                raise SystemExit(f"{name}: a run printed another table")
            walls.append(seconds)
            out = wall(python + ["-c", STEPS, json.dumps(argv), json.dumps(TINY)], env)[1]
            steps.append(json.loads(out.strip().splitlines()[-1]))
            if steps[-1].pop("table") != expected:
                raise SystemExit(f"{name}: the stepwise run printed another table")
        versions = {key: steps[0][key] for key in ("numba", "numba_threads", "threading_layer")}
        row = {"job": name, "command": "python examples/xor.py " + " ".join(argv),
               "interpreter_s": interpreter, "total_s": statistics.median(walls),
               "total_min_s": min(walls), "total_max_s": max(walls), "total_runs_s": walls}
        for key in ("import_tinynet_s", "cli_imports_s", "kernel_load_s", "training_s",
                    "report_s", "in_process_s", "tiny_first_s", "tiny_again_s", "job_s"):
            row[key] = median_of(steps, key)
        row["exit_and_rest_s"] = row["total_s"] - interpreter - sum(
            row[key] for key in ("import_tinynet_s", "cli_imports_s", "kernel_load_s",
                                 "training_s", "report_s"))
        rows.append(row)
        print({key: value for key, value in row.items() if key != "total_runs_s"},
              file=sys.stderr)
    load = os.getloadavg()[0]
    threads = {variable: os.environ.get(variable, "unset")
               for variable in ("NUMBA_NUM_THREADS", "OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS")}
    lines = [f"Warm start of the default CLI job, each run a new Python with every cache warm "
             f"(one untimed run first; bytecode caches written): total wall time, median of "
             f"{RUNS} runs timed from outside (min-max in brackets), and where it goes, "
             f"medians of {RUNS} runs that time each step inside (kernel load: the job at "
             f"--epochs 1 run twice, the first less the second). Python "
             f"{platform.python_version()}, numba {versions['numba']} "
             f"({versions['numba_threads']} threads, {versions['threading_layer']} layer), "
             + ", ".join(f"{k}={v}" for k, v in threads.items())
             + f"; {machine()}; 1-minute load average {load_at_start:.1f} at the start "
             f"and {load:.1f} at the end (this benchmark's own runs included).", "",
             "| job | interpreter (s) | import tinynet (s) | CLI imports (s) | kernel load (s) "
             "| training (s) | report (s) | exit and rest (s) | total wall (s) |",
             "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    lines += [f"| {r['job']} | {r['interpreter_s']:.3f} | {r['import_tinynet_s']:.3f} | "
              f"{r['cli_imports_s']:.3f} | {r['kernel_load_s']:.3f} | {r['training_s']:.3f} | "
              f"{r['report_s']:.3f} | {r['exit_and_rest_s']:.3f} | **{r['total_s']:.2f}** "
              f"({r['total_min_s']:.2f}-{r['total_max_s']:.2f}) |" for r in rows]
    publish("bench_startup", {"rows": rows, "runs": RUNS, "load_at_start": load_at_start,
                              "load": load, "threads": threads,
                              "python": platform.python_version(), **versions,
                              "cores": os.cpu_count()},
            "\n".join(lines) + "\n", readme, README_START, README_END)


def machine() -> str:
    """:func:`machine.describe` of this CPU, asked of a child Python (this process loads no
    Numba: its children are what it times)."""
    code = ("import tinynet.compiled as c; c.load(); import sys; sys.path.insert(0, "
            f"{str(Path(__file__).parent)!r}); from machine import describe; print(describe())")
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True, env={**os.environ, "PYTHONPATH": str(ROOT)}).stdout.strip()


if __name__ == "__main__":
    main()
