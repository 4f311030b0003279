"""How long the README's test command takes: the fast suite run twice in fresh Pythons, first
with empty kernel caches (a machine's first run: every kernel the suite trains on compiles)
and then with them filled, as a newcomer will meet it. Writes
``benchmarks/results/suite_time.json``, which the README quotes (tests/test_readme.py keeps
them in step).

    python benchmarks/time_suite.py          # about 15 minutes on 2 cores

Each run states the machine's 1-minute load before and after: the times are only what they
are on a quiet machine (the README asks for a load near 1).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from machine import cpu_name  # benchmarks/, beside this script

ROOT = Path(__file__).resolve().parents[1]
RESULT = ROOT / "benchmarks" / "results" / "suite_time.json"


def run_suite(caches: Path) -> dict:
    """One run of ``python -m pytest`` (the fast suite) with the generated kernels' caches
    under ``caches`` (``XDG_CACHE_HOME``: the tests that set ``NUMBA_CACHE_DIR`` or
    ``TINYNET_KERNEL_DIR`` themselves need both unset): its seconds, the tests it passed and
    the load around it."""
    env = {**os.environ, "XDG_CACHE_HOME": str(caches)}
    for variable in ("NUMBA_CACHE_DIR", "TINYNET_KERNEL_DIR"):
        env.pop(variable, None)
    before = os.getloadavg()[0]
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider"], cwd=ROOT,
                          env=env, capture_output=True, text=True)
    seconds = time.perf_counter() - start
    summary = done.stdout.strip().splitlines()[-1]
    if done.returncode != 0:
        failed = [line for line in done.stdout.splitlines() if line.startswith("FAILED")]
        raise SystemExit(f"the suite failed: {summary}\n" + "\n".join(failed))
    return {"seconds": round(seconds, 1), "passed": int(re.search(r"(\d+) passed", summary)[1]),
            "load_before": round(before, 2), "load_after": round(os.getloadavg()[0], 2)}


def forget_package_kernels() -> None:
    """Remove numba's caches of the package's own compiled functions (``__pycache__`` beside
    their sources), so that the first run compiles them as a new machine does."""
    for cached in (ROOT / "tinynet").rglob("__pycache__/*.nb[ci]"):
        cached.unlink()


def main() -> None:
    forget_package_kernels()
    with tempfile.TemporaryDirectory() as folder:
        cold = run_suite(Path(folder))
        warm = run_suite(Path(folder))
    result = {"cpu": cpu_name(), "cores": os.cpu_count(), "cold": cold, "warm": warm}
    RESULT.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
