"""Pictures of experiments, drawn with matplotlib's object API straight to PNG files: no
screen needed, and pyplot's global backend and figure list are left alone (a notebook keeps
its own)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from .diagnostics import SignalReport
    from .xor import Study

__all__ = ["rates", "signal", "histograms"]


def _figure(**kwargs):
    """A matplotlib Figure, detached from pyplot: ``fig.savefig`` renders it with Agg."""
    from matplotlib.figure import Figure
    return Figure(**kwargs)


def _colors() -> list[str]:
    import matplotlib
    return matplotlib.rcParams["axes.prop_cycle"].by_key()["color"]


def rates(studies: "list[Study]", path: str | Path) -> None:
    """Bar chart of success rates with 95 % Wilson intervals, one group of bars per study
    (for a sweep over shapes) or one bar per arm; the notes' reported rates as diamonds."""
    names = [r.arm.name for r in studies[0].results]
    fig = _figure(figsize=(10.0 if len(studies) > 1 else 2.0 + 1.6 * len(names), 4.8))
    ax = fig.subplots()
    width = 0.8 / len(names) if len(studies) > 1 else 0.8
    for i, name in enumerate(names):
        results = [study.results[i] for study in studies]
        x = np.arange(len(studies)) + (i - (len(names) - 1) / 2) * width if len(studies) > 1 \
            else np.array([i])
        rate = np.array([r.rate for r in results])
        low = rate - np.array([r.interval[0] for r in results])
        high = np.array([r.interval[1] for r in results]) - rate
        ax.bar(x, 100 * rate, width * 0.95, yerr=100 * np.vstack([low, high]), capsize=3,
               label=name if len(studies) > 1 else None)
        reported = [r.arm.reported_rate for r in results]
        if any(v is not None for v in reported):
            ax.scatter(x, [100 * v if v is not None else np.nan for v in reported], marker="D",
                       color="black", zorder=3, label="reported in the notes" if i == 0 else None)
    if len(studies) > 1:
        ax.set_xticks(range(len(studies)), ["-".join(map(str, s.setup.sizes)) for s in studies])
        ax.set_xlabel("network shape")
    else:
        ax.set_xticks(range(len(names)), names, rotation=20, ha="right")
    ax.set_ylim(0, 105)
    ax.set_ylabel("seeds that learn XOR (%)")
    ax.set_title(f"XOR success rate, {studies[0].setup.seeds} seeds per bar, 95 % intervals")
    if ax.get_legend_handles_labels()[0]:
        ax.legend(fontsize="small")
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def signal(reports: "dict[str, SignalReport]", path: str | Path, title: str) -> None:
    """Second moments against depth, one line per report: forward E[a²] and backward
    E[(dL/da)²], measured (solid, dots) and predicted (dashed), on log scales."""
    fig = _figure(figsize=(11, 4.5))
    forward, backward = fig.subplots(1, 2, sharex=True)
    colors = _colors() * 3
    for (label, report), color in zip(reports.items(), colors):
        depth = np.arange(1, len(report.layers) + 1)
        for ax, key in [(forward, "a"), (backward, "grad_a")]:
            moments = [getattr(layer, key) for layer in report.layers]
            ax.plot(depth, [m.measured for m in moments], "o-", color=color, markersize=3,
                    label=label)
            ax.plot(depth, [m.predicted for m in moments], "--", color=color, linewidth=1)
    forward.set_title("forward: E[a²] after each layer")
    backward.set_title("backward: E[(dL/da)²] at each layer's output")
    for ax in (forward, backward):
        ax.set_yscale("log")
        ax.set_xlabel("layer")
        ax.grid(True, which="major", alpha=0.3)
    forward.legend(fontsize="small", title="solid: measured, dashed: theory")
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def histograms(activations: "dict[str, list[np.ndarray]]", path: str | Path, title: str) -> None:
    """One row per label, one panel per layer: the histogram of that layer's outputs over its
    whole range (not a fixed window), so saturation and collapse both show."""
    rows = len(activations)
    columns = max(len(layers) for layers in activations.values())
    fig = _figure(figsize=(2.4 * columns, 2.0 * rows))
    axes = fig.subplots(rows, columns, squeeze=False)
    for row, (label, layers) in enumerate(activations.items()):
        for column, values in enumerate(layers):
            ax = axes[row, column]
            values = np.ravel(values)
            low, high = float(values.min()), float(values.max())
            ax.hist(values, bins=40, range=(low, high if high > low else low + 1e-12))
            ax.set_yticks([])
            ax.tick_params(labelsize=7)
            if row == 0:
                ax.set_title(f"layer {column + 1}", fontsize=9)
            if column == 0:
                ax.set_ylabel(label, fontsize=8)
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
