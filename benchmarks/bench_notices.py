"""How close a compile notice's estimate comes to the compile it announces: one layout after
another in fresh Pythons on empty caches (the first compiles the package's helpers too, and
has no estimate), each new layout's notice stating what the last kept
(tinynet.compiled.notices), beside the seconds the compile then took.

    python benchmarks/bench_notices.py     # about a minute; benchmarks/results/bench_notices.md
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

from machine import cpu_name  # benchmarks/, beside this script

ROOT = Path(__file__).resolve().parents[1]
RESULT = ROOT / "benchmarks" / "results" / "bench_notices.md"
LAYOUTS = ("2,3", "2,5", "2,4,4", "2,6", "2,3,3", "2,7")
"""The hidden layers of each job in turn, ensembles of 2-...-1 networks (generated kernels)."""

JOB = """
import sys
import tinynet
X, y = tinynet.data.xor()
sizes = [int(n) for n in sys.argv[1].split(",")] + [1]
tinynet.fit_ensemble([tinynet.mlp(sizes, seed=s) for s in range(3)], X, y, epochs=2, lr=0.1)
"""


def main() -> None:
    rows = ["| layout | stated estimate (s) | compile took (s) | took / stated |",
            "| --- | --- | --- | --- |"]
    with tempfile.TemporaryDirectory() as folder:
        env = {**os.environ, "TINYNET_KERNEL_DIR": f"{folder}/kernels",
               "NUMBA_CACHE_DIR": f"{folder}/numba", "PYTHONPATH": str(ROOT)}
        load = os.getloadavg()[0]
        for hidden in LAYOUTS:
            err = subprocess.run([sys.executable, "-c", JOB, hidden], env=env, text=True,
                                 capture_output=True, check=True).stderr
            stated = re.search(r"\(about (\d+) s, as it took here last time\)", err)
            taken = float(re.search(r"compiled in ([\d.]+) s", err)[1])
            layout = f"{hidden.replace(',', '-')}-1"
            rows.append(f"| {layout} | {stated[1] if stated else 'none yet'} | {taken:.1f} | "
                        f"{taken / int(stated[1]):.2f} |" if stated else
                        f"| {layout} | none yet (the first) | {taken:.1f} | |")
    text = (f"Compile notices' estimates against the compiles they announce: {cpu_name()}, "
            f"{os.cpu_count()} cores, 1-minute load {load:.1f} at the start, "
            f"{os.getloadavg()[0]:.1f} at the end (`python benchmarks/bench_notices.py`).\n\n"
            + "\n".join(rows) + "\n")
    RESULT.write_text(text, encoding="utf-8")
    print(text)


if __name__ == "__main__":
    main()
