"""Runs of bench_jit_vs_numpy.py side by side: every row's ratio, new against old.

    python benchmarks/compare_runs.py --old A.json [B.json ...] --new C.json [D.json ...]
                                      [--markdown PATH]

With several runs on a side, each row takes its best (the highest rate, the shortest time),
which is the run least disturbed by whatever else the machine was doing. Ratios above 1 mean
the new code is faster (for times: old / new; for rates: new / old). Run the benchmarks
alternately on the same machine, with the same thread settings, for the ratios to mean
anything; rows of code that did not change (the learner loop) show the noise that is left.
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


def best(paths: list[Path]) -> dict[str, tuple[float, bool]]:
    """Per row, the best value over the runs in ``paths``."""
    runs = [rows(json.loads(path.read_text())) for path in paths]
    return {name: ((max if higher else min)(run[name][0] for run in runs if name in run), higher)
            for name, (_, higher) in runs[0].items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--old", type=Path, nargs="+", required=True)
    parser.add_argument("--new", type=Path, nargs="+", required=True)
    parser.add_argument("--markdown", type=Path, default=None, help="also write the table here")
    args = parser.parse_args()
    old, new = best(args.old), best(args.new)
    lines = [f"old: best of {', '.join(p.name for p in args.old)}; "
             f"new: best of {', '.join(p.name for p in args.new)}", "",
             "| row | old | new | new vs old |", "| --- | --- | --- | --- |"]
    for name, (value, higher_is_better) in old.items():
        if name not in new:
            lines.append(f"| {name} | {value:,.4g} | (missing) | |")
            continue
        now = new[name][0]
        ratio = now / value if higher_is_better else value / now
        lines.append(f"| {name} | {value:,.4g} | {now:,.4g} | {ratio:.2f}x |")
    print("\n".join(lines))
    if args.markdown:
        args.markdown.write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
