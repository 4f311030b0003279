"""The README's numbers that come from committed results stay equal to them."""

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_the_performance_tables_are_the_committed_benchmark_run():
    readme = (ROOT / "README.md").read_text()
    start, end = "<!-- benchmark: start -->\n", "<!-- benchmark: end -->"
    shown = readme[readme.index(start) + len(start):readme.index(end)]
    committed = (ROOT / "benchmarks" / "results" / "bench_jit_vs_numpy.md").read_text()
    assert shown == committed
    assert "#### targets" in shown  # the whole run, not an empty block
