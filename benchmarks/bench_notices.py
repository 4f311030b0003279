"""How close a compile notice's estimate comes to the compile it announces: one layout after
another in fresh Pythons on empty caches (the first compiles the package's helpers too, and
has no estimate), each new layout's notice stating what the last kept
(tinynet.compiled.notices), beside the seconds the compile then took.

    python benchmarks/bench_notices.py --readme docs/performance.md   # about a minute

Results go to benchmarks/results/bench_notices.json and .md, and with ``--readme`` between the
notices markers of docs/performance.md (``tests/test_readme.py`` keeps the two equal).
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

from machine import cpu_name  # benchmarks/, beside this script
from readme_block import publish

ROOT = Path(__file__).resolve().parents[1]
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
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--readme", type=Path, default=None,
                        help="also write the table between the notices markers of this page")
    args = parser.parse_args()
    rows = ["| layout | stated estimate (s) | compile took (s) | took / stated |",
            "| --- | --- | --- | --- |"]
    measured = []
    with tempfile.TemporaryDirectory() as folder:
        env = {**os.environ, "TINYNET_KERNEL_DIR": f"{folder}/kernels",
               "NUMBA_CACHE_DIR": f"{folder}/numba", "PYTHONPATH": str(ROOT)}
        load = os.getloadavg()[0]
        for hidden in LAYOUTS:
            err = subprocess.run([sys.executable, "-c", JOB, hidden], env=env, text=True,
                                 capture_output=True, check=True).stderr
            found = re.search(r"\(about (\d+) s, as it took here last time\)", err)
            stated = int(found[1]) if found else None
            taken = float(re.search(r"compiled in ([\d.]+) s", err)[1])
            layout = f"{hidden.replace(',', '-')}-1"
            measured.append({"layout": layout, "stated": stated, "taken": taken})
            if stated is None:
                rows.append(f"| {layout} | none yet (the first) | {taken:.1f} | |")
            else:
                rows.append(f"| {layout} | {stated} | {taken:.1f} | {taken / stated:.2f} |")
    text = (f"Compile notices' estimates against the compiles they announce: {cpu_name()}, "
            f"{os.cpu_count()} cores, 1-minute load {load:.1f} at the start, "
            f"{os.getloadavg()[0]:.1f} at the end (`python benchmarks/bench_notices.py "
            "--readme docs/performance.md`).\n\n"
            + "\n".join(rows) + "\n")
    publish("bench_notices", {"rows": measured, "load": load}, text, args.readme,
            "<!-- notices: start -->", "<!-- notices: end -->")


if __name__ == "__main__":
    main()
