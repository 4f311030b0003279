"""How long the README's first command takes in a fresh virtualenv: pip's install, the job's
first run (which compiles its kernel) and a later run (which loads it), as a newcomer meets
them. Writes ``benchmarks/results/first_command.json``, which the README quotes
(tests/test_readme.py keeps them in step).

    python benchmarks/time_first_command.py          # about a minute on 2 cores

The command is read from the README in this folder (its first code block's first line, ``pip
install . && python examples/xor.py ...``) and run in a clone of this repository's committed
HEAD, with a new virtualenv made by this Python (not timed: the README's commands start in
one) and every cache empty: ``XDG_CACHE_HOME`` and ``PIP_CACHE_DIR`` point into a new folder
beside the clone, so pip has no cached wheels and tinynet no kernels, and ``NUMBA_CACHE_DIR``
and ``TINYNET_KERNEL_DIR`` are unset. pip reads its configuration as it would here (the
index it installs from is this machine's: the JSON records ``pip config list``). The
first run is repeated ``RUNS`` times from empty caches (the kernels and numba's caches of the
package's own compiled helpers removed between runs; pip's bytecode left, as pip installs
it), and the later run as often with them filled; medians, with min-max. Thread settings
are inherited (the JSON records them) and the 1-minute load is read before and after each
part: these times are what they are on a quiet machine (the README asks for a load near 1).
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from machine import cpu_name  # benchmarks/, beside this script

ROOT = Path(__file__).resolve().parents[1]
RESULT = ROOT / "benchmarks" / "results" / "first_command.json"
RUNS = 3
THREAD_SETTINGS = ("NUMBA_NUM_THREADS", "OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS")


def first_command(readme: Path = ROOT / "README.md") -> tuple[list[str], list[str]]:
    """The README's first command split at its ``&&``: the install's words and the job's."""
    text = readme.read_text(encoding="utf-8")
    block = re.search(r"```bash\n(.*?)```", text, re.S)
    if block is None:
        raise SystemExit(f"{readme} has no ```bash block to read its first command from")
    install, job = block[1].splitlines()[0].split(" && ")
    return shlex.split(install), shlex.split(job)


def timed(words: list[str], cwd: Path, env: dict) -> dict:
    """Run ``words`` in ``cwd``; its wall seconds, the load before and after, what it printed
    (stdout, stderr). A failure stops the benchmark with what it printed."""
    before = os.getloadavg()[0]
    start = time.perf_counter()
    done = subprocess.run(words, cwd=cwd, env=env, capture_output=True, text=True)
    seconds = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"{shlex.join(words)} failed ({done.returncode}):\n{done.stderr}")
    return {"seconds": round(seconds, 2), "load_before": round(before, 2),
            "load_after": round(os.getloadavg()[0], 2), "stdout": done.stdout,
            "stderr": done.stderr}


def forget_kernels(venv: Path, caches: Path) -> None:
    """Empty the caches a first run fills: tinynet's generated kernels (under ``caches``) and
    numba's caches of the package's own compiled helpers (``__pycache__/*.nbi``, ``*.nbc``
    beside the installed sources)."""
    shutil.rmtree(caches / "tinynet", ignore_errors=True)
    for package in venv.glob("lib/python*/site-packages/tinynet"):
        for cached in package.rglob("*.nb[ci]"):
            cached.unlink()


def summary(runs: list[dict]) -> dict:
    """The median of ``runs``' seconds with their min-max and loads, and the compile seconds
    the notice printed (``tinynet: compiled in X s``) where it did."""
    seconds = [run["seconds"] for run in runs]
    compiled = [float(found[1]) for run in runs
                if (found := re.search(r"compiled in ([\d.]+) s", run["stderr"]))]
    return {"seconds": round(statistics.median(seconds), 2), "min": min(seconds),
            "max": max(seconds), "compile_seconds": round(statistics.median(compiled), 1)
            if compiled else None, "loads": [[run["load_before"], run["load_after"]]
                                             for run in runs]}


def main() -> None:
    install, job = first_command()
    with tempfile.TemporaryDirectory() as folder:
        clone, caches = Path(folder) / "tinynet", Path(folder) / "cache"
        subprocess.run(["git", "clone", "-q", str(ROOT), str(clone)], check=True)
        venv = clone / ".venv"
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        env = {**os.environ, "XDG_CACHE_HOME": str(caches), "PIP_CACHE_DIR": str(caches / "pip"),
               "VIRTUAL_ENV": str(venv), "PATH": f"{venv / 'bin'}{os.pathsep}{os.environ['PATH']}"}
        for variable in ("NUMBA_CACHE_DIR", "TINYNET_KERNEL_DIR", "PYTHONPATH",
                         "PYTHONDONTWRITEBYTECODE"):
            env.pop(variable, None)
        installed = timed(install, clone, env)
        pip_config = subprocess.run([str(venv / "bin" / "pip"), "config", "list"], env=env,
                                    capture_output=True, text=True, check=True).stdout
        first, later = [], []
        for _ in range(RUNS):
            forget_kernels(venv, caches)
            first.append(timed(job, clone, env))
            later.append(timed(job, clone, env))
        versions = subprocess.run([str(venv / "bin" / "python"), "-c",
                                   "import sys, numba; print(sys.version.split()[0], "
                                   "numba.__version__)"],
                                  env=env, capture_output=True, text=True, check=True)
    python, numba = versions.stdout.split()
    printed = [line for line in first[0]["stdout"].splitlines() if "/100" in line]
    result = {
        "cpu": cpu_name(), "cores": os.cpu_count(), "python": python, "numba": numba,
        "threads": {variable: os.environ.get(variable, "unset") for variable in THREAD_SETTINGS},
        "command": f"{shlex.join(install)} && {shlex.join(job)}",
        "pip_config": pip_config.splitlines(),
        "install": {"seconds": installed["seconds"],
                    "loads": [[installed["load_before"], installed["load_after"]]]},
        "first_run": summary(first), "later_run": summary(later),
        "printed": printed[0] if printed else None,
        "date": time.strftime("%Y-%m-%d"),
    }
    RESULT.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    print(json.dumps(result, indent=1))
    print(f"\n| part | seconds (median of {RUNS}, min-max) |\n| --- | --- |\n"
          f"| pip install (empty pip cache) | {installed['seconds']:.1f} |\n"
          f"| first run (compiles; {result['first_run']['compile_seconds']} s of it) | "
          f"{result['first_run']['seconds']:.1f} ({result['first_run']['min']:.1f}-"
          f"{result['first_run']['max']:.1f}) |\n"
          f"| later run | {result['later_run']['seconds']:.1f} ({result['later_run']['min']:.1f}-"
          f"{result['later_run']['max']:.1f}) |")


if __name__ == "__main__":
    main()
