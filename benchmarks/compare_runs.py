"""Two runs of bench_jit_vs_numpy.py side by side: every row's ratio, new against old.

    python benchmarks/compare_runs.py OLD.json NEW.json

Ratios above 1 mean the new run is faster (for times: old time / new time; for rates: new
rate / old rate). Run the two benchmarks back to back on the same machine, with the same
thread settings, for the ratios to mean anything.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path


def rows(results: dict) -> dict[str, tuple[float, bool]]:
    """Every measured number by name: (value, whether higher is better)."""
    found = {}
    for row in results["kernels"]:
        found[f"(a) {row['case']}, NumPy µs"] = (row["numpy_us"], False)
        found[f"(a) {row['case']}, numba µs"] = (row["numba_us"], False)
    for shape, table in results["xor"].items():
        for row in table:
            found[f"(b) {shape}: {row['case']}"] = (row["steps_per_s"], True)
    for row in results["mlp"]:
        found[f"(c) {row['case']}"] = (row["samples_per_s"], True)
    for key, seconds in results["startup"].items():
        found[f"start-up: {key}"] = (seconds, False)
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("old", type=Path)
    parser.add_argument("new", type=Path)
    args = parser.parse_args()
    old, new = (rows(json.loads(path.read_text())) for path in (args.old, args.new))
    print("| row | old | new | new vs old |\n| --- | --- | --- | --- |")
    for name, (value, higher_is_better) in old.items():
        if name not in new:
            print(f"| {name} | {value:,.4g} | (missing) | |")
            continue
        now = new[name][0]
        ratio = now / value if higher_is_better else value / now
        print(f"| {name} | {value:,.4g} | {now:,.4g} | {ratio:.2f}x |")


if __name__ == "__main__":
    main()
