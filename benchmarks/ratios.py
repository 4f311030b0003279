"""Runs interleaved in one process, each divided by the base run beside it: the median and
the range of each ratio, and how a table's cell shows them (``bench_chunks``,
``bench_evaluation``)."""

from __future__ import annotations

import numpy as np

__all__ = ["interleaved_ratios", "ratio_cell"]


def interleaved_ratios(seconds: dict[str, list[float]], base: str) -> dict:
    """``{"ratio_median": {label: m}, "ratio_range": {label: [low, high]}}``: run k of each
    label in ``seconds`` divided by run k of ``base``."""
    ratios = {label: np.array(times) / np.array(seconds[base]) for label, times in seconds.items()}
    return {"ratio_median": {k: float(np.median(v)) for k, v in ratios.items()},
            "ratio_range": {k: [float(v.min()), float(v.max())] for k, v in ratios.items()}}


def ratio_cell(row: dict, label: str) -> str:
    """``"1.380 [1.04, 1.43]"``: a row's median ratio for ``label`` and its range."""
    low, high = row["ratio_range"][label]
    return f"{row['ratio_median'][label]:.3f} [{low:.2f}, {high:.2f}]"
