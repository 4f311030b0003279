"""Pictures of networks, drawn with matplotlib's object API.

Every function returns its :class:`matplotlib.figure.Figure`: in Jupyter it shows inline as
the cell's value, with no ``plt.show()``. ``path`` (optional) also writes it to a file, in
the format its suffix names (.png, .svg, .pdf, ...). No screen is needed, and pyplot's
global backend and figure list are left alone. Functions that draw one panel take ``ax``,
an Axes to draw into (its figure is returned).

What each draws (:func:`figure` gives an empty one, for pictures of your own, and
:func:`panel`, :func:`finish`, :func:`legend_below` and :func:`color_cycle` help draw them):

* :func:`decision_boundary`: a network's output over the input plane, read on a colour bar,
  its 0.5 contour and the samples;
* :func:`signal` and :func:`histograms`: second moments against depth, and each layer's
  outputs (:mod:`tinynet.diagnostics`).

The figures of a study of many seeds (seed galleries, loss curves, success rates, a rate
against depth, a study's layer histograms) draw the XOR harness's results, so they sit beside
it, in :mod:`tinynet.xor.figures`, built on this module: this one imports nothing of the
harness, and the layers point one way (tests/test_architecture.py).
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from . import data
from .boundary import OUTPUT_CMAP, OUTPUT_LABEL, draw_boundary, output_colorbar
from .files import write_whole
from .network import Network
from .validation import as_float_matrix, check_float, check_instance, check_int, \
    check_training_data, summarised

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

    from .diagnostics import SignalReport

__all__ = ["OUTPUT_CMAP", "OUTPUT_LABEL", "TEXT_POINTS", "COLUMN_INCHES", "figure",
           "decision_boundary", "output_colorbar", "signal", "histograms", "save",
           "figure_format", "panel", "finish", "legend_below", "color_cycle", "MOVED"]

MOVED = ("OUTCOME_COLORS", "OUTCOME_LABELS", "PLATEAUS", "seed_gallery", "loss_curves",
         "study_curves", "rates", "against_baseline", "depth", "layer_histograms")
"""The study figures and their colours, which moved to :mod:`tinynet.xor.figures`: asked
for here, each raises an AttributeError that names its new place (forwarding it would import
the harness from here, the arrow that ran back up the layers)."""


def __getattr__(name: str) -> object:
    """Say where a name of :data:`MOVED` went (PEP 562); any other, as Python says it."""
    if name in MOVED:
        raise AttributeError(f"tinynet.plots.{name} moved beside the XOR harness: use "
                             f"tinynet.xor.figures.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


COLUMN_INCHES = 9.6
"""The widest figure tinynet draws, in inches: at the 100 pixels an inch Jupyter shows it at
(:func:`_png`), about the width of a JupyterLab notebook's column (968 pixels), which shows a
wider figure shrunk to fit, its texts with it. (A figure of your own, from :func:`figure`, is
as wide as you make it.)"""

TEXT_POINTS = 9
"""The size of the smaller texts of tinynet's figures (legends, colour bars, the labels of
histograms and galleries; other texts keep matplotlib's 10), in points: what a notebook shows
legibly at :data:`COLUMN_INCHES`."""


def figure(**kwargs) -> "Figure":
    """A new matplotlib Figure (``kwargs`` as for :class:`~matplotlib.figure.Figure`, e.g.
    ``figsize``), detached from pyplot (``fig.savefig`` renders it with Agg), that Jupyter
    shows as a PNG when it is a cell's value: without pyplot no display hook for Figures is
    registered, so this one carries its own (:func:`_png`). Draw on ``fig.subplots()``."""
    from matplotlib.figure import Figure
    fig = Figure(**kwargs)
    fig._repr_png_ = lambda: _png(fig)
    return fig


def _png(fig: "Figure") -> bytes:
    """The figure rendered as PNG bytes."""
    import io
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=100)
    return buffer.getvalue()


def panel(ax: "Axes | None", **figure_kwargs) -> "Axes":
    """``ax``, or the single Axes of a new figure (``figure_kwargs`` as for :func:`figure`):
    what a function that draws one panel draws into."""
    if ax is None:
        return figure(**figure_kwargs).subplots()
    from matplotlib.axes import Axes
    return check_instance("ax", ax, Axes, "a matplotlib Axes")


def finish(fig: "Figure", path: str | Path | None, dpi: int, own: bool = True) -> "Figure":
    """Lay the figure out if it is ours (``own``: not an Axes the caller gave), write it to
    ``path`` if given, and return it."""
    if own:
        fig.tight_layout()
    return save(fig, path, dpi)


def save(fig: "Figure", path: str | Path | None, dpi: int = 100) -> "Figure":
    """Write ``fig`` to ``path`` (if not None) whole or not at all, through
    :func:`tinynet.files.write_whole`: a symlink at ``path`` is replaced, never written
    through, and a folder there is refused. The format is the suffix's (``.png``, ``.svg``,
    ``.pdf``, ...), which ``path`` must have: without one, matplotlib would add ``.png`` and
    write beside the name asked for. Returns ``fig``."""
    if path is None:
        return fig
    kind = figure_format(path, f"path={str(path)!r}")
    write_whole(Path(path), lambda partial: fig.savefig(partial, dpi=dpi, format=kind))
    return fig


def figure_format(path: str | Path, what: str) -> str:
    """The format matplotlib writes ``path`` in, read from its suffix; a ValueError starting
    with ``what`` (the argument, as the caller names it) if the suffix names none."""
    from matplotlib.backend_bases import FigureCanvasBase

    formats = FigureCanvasBase.get_supported_filetypes()
    kind = Path(path).suffix[1:].lower()
    if kind not in formats:
        raise ValueError(f"{what}: give a file name ending in a format matplotlib writes, such "
                         f"as .png, .svg or .pdf (one of: {summarised(sorted(formats))})")
    return kind


def color_cycle() -> list[str]:
    """The colours matplotlib gives lines in turn (its ``axes.prop_cycle``)."""
    import matplotlib
    return matplotlib.rcParams["axes.prop_cycle"].by_key()["color"]


# --- one network -----------------------------------------------------------------------------

def decision_boundary(net: Network, X: object = None, y: object = None, *,
                      ax: "Axes | None" = None, path: str | Path | None = None,
                      resolution: int = 121, margin: float = 0.5,
                      title: str | None = None, colorbar: bool = True,
                      legend: bool = True) -> "Figure":
    """The network's output over the plane of its two inputs (blue 0 to red 1, read on the
    colour bar beside it unless ``colorbar`` is False), the 0.5 contour where it changes class,
    and the samples X (B, 2), marked by their targets y (B, 1) when given (a blue circle for
    0, a red square for 1), with a cross on each sample on the wrong side of 0.5, named in a
    legend below the axes unless ``legend`` is False. Default: the four
    XOR points and their targets. The plane spans the samples plus ``margin`` on every side,
    the output drawn on a ``resolution`` x ``resolution`` grid; the contour's vertices lie on
    the boundary itself, found by bisection along the grid's edges (:mod:`tinynet.boundary`)."""
    from matplotlib.ticker import MaxNLocator
    check_instance("net", net, Network, "a tinynet Network")
    if net.n_in != 2 or net.n_out != 1:
        raise ValueError(f"net must have 2 inputs and 1 output to draw its decision boundary "
                         f"in a plane, got a network {net.n_in} -> {net.n_out}")
    if X is None:
        X, y = data.xor() if y is None else (data.xor()[0], y)
    if y is None:
        X = as_float_matrix("X", X, columns=2)
    else:
        X, y = check_training_data(X, y, 2, 1)
    resolution = check_int("resolution", resolution, minimum=2)
    margin = check_float("margin", margin, minimum=0.0, inclusive=True)
    own = ax is None
    ax = panel(ax, figsize=(5.6, 4.2 if legend else 3.8))
    draw_boundary(ax, net, X, y, resolution, margin)
    ax.set_xlabel("x1")
    ax.set_ylabel("x2")
    for axis in (ax.xaxis, ax.yaxis):  # ticks that stay apart at 10 points
        axis.set_major_locator(MaxNLocator(5, steps=[1, 2, 5, 10]))
    ax.set_title(title if title is not None else "the output and its 0.5 contour", fontsize=10)
    if colorbar:
        output_colorbar(ax.figure, ax=ax)
    if legend:  # below the axes, clear of the samples and the boundary
        ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.14), ncol=3, fontsize=TEXT_POINTS,
                  frameon=False, handletextpad=0.3, columnspacing=0.9)
    return finish(ax.figure, path, 110, own)


# --- diagnostics -----------------------------------------------------------------------------

def legend_below(fig: "Figure", handles: list, columns: int, title: str | None = None) -> None:
    """A legend of ``handles``, ``columns`` a row, centred below every panel of ``fig``, and
    the panels laid out above it (tight_layout in the rest of the height): it covers no data,
    however the curves run, and no label."""
    rows = math.ceil(len(handles) / columns)
    room = 0.15 + 0.24 * rows + (0.24 if title else 0.0)  # inches, for TEXT_POINTS text
    fig.legend(handles=handles, loc="lower center", ncol=columns, fontsize=TEXT_POINTS,
               title=title, title_fontsize=TEXT_POINTS, frameon=False)
    fig.tight_layout(rect=(0, room / fig.get_size_inches()[1], 1, 1))


def signal(reports: "dict[str, SignalReport]", path: str | Path | None = None,
           title: str = "") -> "Figure":
    """Second moments against depth, one line per report: forward E[a²] and backward
    E[(dL/da)²], measured (solid, dots) and predicted (dashed), on log scales, against the
    layer's index (0, 1, 2, ...: ticks on whole numbers only); the reports named in a legend
    below both panels, clear of the curves."""
    from matplotlib.ticker import MaxNLocator
    fig = figure(figsize=(COLUMN_INCHES, 4.5))
    forward, backward = fig.subplots(1, 2, sharex=True)
    colors = color_cycle() * 3
    for (label, report), color in zip(reports.items(), colors):
        depth = np.arange(len(report.layers))  # layers numbered from 0, as print(net) does
        for ax, key in [(forward, "a"), (backward, "grad_a")]:
            moments = [getattr(layer, key) for layer in report.layers]
            ax.plot(depth, [m.measured for m in moments], "o-", color=color, markersize=3,
                    label=label)
            ax.plot(depth, [m.predicted for m in moments], "--", color=color, linewidth=1)
    forward.set_title("forward: E[a²] after each layer")
    backward.set_title("backward: E[(dL/da)²] at each layer's output")
    for ax in (forward, backward):
        ax.set_yscale("log")
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))  # layers are whole numbers
        ax.set_xlabel("layer")
        ax.grid(True, which="major", alpha=0.3)
    fig.suptitle(title)
    legend_below(fig, forward.get_legend_handles_labels()[0],
                  columns=max(1, min(len(reports), 6)), title="solid: measured, dashed: theory")
    return save(fig, path, 110)


def histograms(activations: "dict[str, list[np.ndarray]]", path: str | Path | None = None,
               title: str = "") -> "Figure":
    """One row per label, one panel per layer (numbered from 0, as ``print(net)`` does): the
    histogram of that layer's outputs (or weights) over their whole range (not a fixed
    window), so saturation and collapse both show. Values that are not finite (a diverged
    network's) are left out and counted in the panel."""
    from matplotlib.ticker import MaxNLocator
    rows = len(activations)
    columns = max(len(layers) for layers in activations.values())
    fig = figure(figsize=(min(COLUMN_INCHES, 2.4 * columns), 2.0 * rows))
    axes = fig.subplots(rows, columns, squeeze=False)
    for row, (label, layers) in enumerate(activations.items()):
        for column, values in enumerate(layers):
            ax = axes[row, column]
            values = np.ravel(values)
            finite = values[np.isfinite(values)]  # a diverged network's NaN and inf left out
            if finite.size:
                low, high = float(finite.min()), float(finite.max())
                ax.hist(finite, bins=40, range=(low, high if high > low else low + 1e-12))
            if finite.size < values.size:
                ax.text(0.98, 0.95, f"{values.size - finite.size} not finite, left out",
                        ha="right", va="top", fontsize=TEXT_POINTS, transform=ax.transAxes)
            ax.set_yticks([])
            ax.xaxis.set_major_locator(MaxNLocator(3))  # apart at TEXT_POINTS in 1.9 inches
            ax.tick_params(labelsize=TEXT_POINTS)
            if row == 0:
                ax.set_title(f"layer {column}", fontsize=TEXT_POINTS)
            if column == 0:
                ax.set_ylabel(label, fontsize=TEXT_POINTS)
    fig.suptitle(title)
    return finish(fig, path, 100)
