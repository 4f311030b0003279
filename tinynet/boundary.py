"""A network's output over the plane of its two inputs, as :mod:`tinynet.plots` draws it: the
output as an image from 0 to 1 (:data:`OUTPUT_CMAP`), read on a colour bar
(:func:`output_colorbar`), and its 0.5 contour, every vertex of which is put on the network's
own boundary by bisection (:func:`half_contour`), with the samples on top
(:func:`draw_boundary`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

import numpy as np

from .network import Network

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

__all__ = ["OUTPUT_CMAP", "OUTPUT_LABEL", "half_contour", "draw_boundary", "output_colorbar"]

OUTPUT_CMAP = "coolwarm"
"""The colour map of a network's output, from 0 (blue) through 0.5 (grey) to 1 (red)."""

OUTPUT_LABEL = "network output (black line: 0.5)"
"""What the colour bar of a decision boundary says it shows."""

_BISECTIONS = 30
"""Halvings that move each vertex of the 0.5 contour onto the boundary (:func:`half_contour`):
it ends within a grid spacing / 2³⁰ of it, far below a pixel."""


def _output_unit(net: Network, points: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The output unit's pre-activation z and output φ(z) at ``points`` (B, 2): (B,) each
    (:func:`tinynet.reference.output_layer`)."""
    from .reference import output_layer
    with np.errstate(all="ignore"):  # a diverged network gives NaN: an empty panel
        z, out = output_layer(net, points)
    return z[:, 0], out[:, 0]


def _above_half(net: Network, z: np.ndarray, out: np.ndarray) -> np.ndarray:
    """A number of the sign of (output - 0.5), from the output unit's pre-activation z and
    output φ(z) (any shape, the same). For a sigmoid output, z itself: σ(z) - 0.5 has the sign
    of z, and z keeps it where σ(z) rounds to exactly 0.5 (|z| below about 1e-16, in a flat
    output); for any other output activation, φ(z) - 0.5."""
    from .activations import Sigmoid
    return z if isinstance(net.layers[-1].activation, Sigmoid) else out - 0.5


def half_contour(net: Network, xs: np.ndarray, ys: np.ndarray,
                  above: np.ndarray) -> list[np.ndarray]:
    """The lines along which the network's output is 0.5, each (k, 2), every vertex on the
    boundary itself; ``above`` (len(ys), len(xs)) is :func:`_above_half` on the grid xs x ys.

    Marching squares (contourpy, which matplotlib's contour runs) finds every grid edge whose
    two ends lie on either side of 0.5 and joins a point on each into lines, the point placed
    by linear interpolation between the ends' values. That is exact where the output is linear
    along the edge; but a ReLU-family network's output is piecewise linear, and where a kink
    with a nearly flat side (an output of 0.5 ± 0.001, say) crosses an edge, interpolation puts
    the point next to the flat end: along such a kink the points step from one grid node to
    the next, a staircase of the grid's spacing. So each point is moved along its own edge, by
    bisection on the network itself, to where the output crosses 0.5 (:func:`_bisect`); a
    point on a grid node whose output is 0.5 (to rounding), where the edge's ends need not
    differ in sign, is on the boundary already and stays. The lines keep the grid's points and
    how they join; only where the boundary bends inside one grid cell does the straight piece
    between two points cut the corner."""
    import contourpy
    lines = contourpy.contour_generator(xs, ys, np.ma.masked_invalid(above),
                                        line_type="Separate").lines(0.0)
    if not lines:
        return []
    points = np.concatenate(lines)
    start, end = _grid_edges(points, xs, ys)

    def above_at(p: np.ndarray) -> np.ndarray:
        return _above_half(net, *_output_unit(net, p))

    crossed = np.sign(above_at(start)) != np.sign(above_at(end))  # else: on a node at 0.5
    points[crossed] = _bisect(above_at, start[crossed], end[crossed], _BISECTIONS)
    return np.split(points, np.cumsum([len(line) for line in lines])[:-1])


def _grid_edges(points: np.ndarray, xs: np.ndarray,
                ys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The ends (n, 2) and (n, 2) of the grid edge each of ``points`` (n, 2) lies on: a point
    on a vertical edge has its x on a grid column, one on a horizontal edge its y on a grid row
    (whichever it is nearer to, measured in grid spacings)."""
    u = (points[:, 0] - xs[0]) / (xs[1] - xs[0])  # in grid spacings from the first node
    v = (points[:, 1] - ys[0]) / (ys[1] - ys[0])
    vertical = np.abs(u - np.round(u)) <= np.abs(v - np.round(v))
    column = np.where(vertical, np.round(u), np.clip(np.floor(u), 0, len(xs) - 2)).astype(int)
    row = np.where(vertical, np.clip(np.floor(v), 0, len(ys) - 2), np.round(v)).astype(int)
    start = np.column_stack([xs[column], ys[row]])
    end = np.column_stack([xs[column + ~vertical], ys[row + vertical]])
    return start, end


def _bisect(f: Callable[[np.ndarray], np.ndarray], start: np.ndarray, end: np.ndarray,
            steps: int) -> np.ndarray:
    """Where ``f`` (points (n, 2) -> (n,)) changes sign on each segment from ``start`` to
    ``end`` (n, 2 each; f of opposite signs, or 0, at the two ends): the segments halved
    ``steps`` times, each time keeping the half whose ends differ in sign; their midpoints,
    (n, 2), within |end - start| / 2^(steps + 1) of a sign change."""
    start_sign = np.sign(f(start))
    for _ in range(steps):
        middle = (start + end) / 2
        beyond = (np.sign(f(middle)) == start_sign)[:, None]  # the change lies past the middle
        start, end = np.where(beyond, middle, start), np.where(beyond, end, middle)
    return (start + end) / 2


SAMPLE_MARKS = (("o", "#3b4cc0"), ("s", "#b40426"))
"""How a sample of target 0 and of target 1 is drawn: a marker and its fill (the ends of
:data:`OUTPUT_CMAP`), so that the two tell apart by shape as well as colour."""


def draw_boundary(ax: "Axes", net: Network, X: np.ndarray, y: np.ndarray | None,
                   resolution: int, margin: float) -> None:
    """The output as an image in [0, 1] (:data:`OUTPUT_CMAP`), its 0.5 contour
    (:func:`half_contour`, a :class:`~matplotlib.contour.ContourSet` of the level 0.5), and
    the samples by target (:data:`SAMPLE_MARKS`: a blue circle for 0, a red square for 1,
    outlined in black, so that a sample on its own class's colour still shows; smaller when
    many), and a black cross on each sample the network puts on the wrong side of 0.5; each
    labelled, for a legend. The output is computed on a ``resolution`` x ``resolution``
    grid over the samples plus ``margin``."""
    from matplotlib.contour import ContourSet
    low, high = X.min(axis=0) - margin, X.max(axis=0) + margin
    xs, ys = np.linspace(low[0], high[0], resolution), np.linspace(low[1], high[1], resolution)
    grid_x, grid_y = np.meshgrid(xs, ys)  # row i: ys[i], column j: xs[j]
    z, out = (values.reshape(resolution, resolution) for values in
              _output_unit(net, np.column_stack([grid_x.ravel(), grid_y.ravel()])))
    ax.imshow(out, origin="lower", extent=(low[0], high[0], low[1], high[1]), cmap=OUTPUT_CMAP,
              vmin=0.0, vmax=1.0, aspect="auto", interpolation="nearest")
    lines = half_contour(net, xs, ys, _above_half(net, z, out))
    if lines:
        ContourSet(ax, [0.5], [lines], colors="black", linewidths=1.2)
    classes = np.zeros(len(X), dtype=bool) if y is None else (y[:, 0] > 0.5)
    few = len(X) <= 16
    for target, (marker, color) in enumerate(SAMPLE_MARKS[:1 if y is None else 2]):
        chosen = classes == bool(target)
        ax.scatter(X[chosen, 0], X[chosen, 1], marker=marker, c=color, s=45 if few else 14,
                   edgecolors="black", linewidths=1.5 if few else 0.5,
                   zorder=3, label=f"target {target}" if y is not None else "sample")
    if y is not None:  # a diverged network's NaN output is on neither side: no cross
        side = _above_half(net, *_output_unit(net, X))
        wrong = np.isfinite(side) & ((side > 0) != classes)
        ax.scatter(X[wrong, 0], X[wrong, 1], marker="x", c="black", s=60 if few else 20,
                   linewidths=2.0 if few else 1.0, zorder=4,
                   label=f"wrong side of 0.5 ({int(wrong.sum())} of {len(X)})")
    ax.set_xlim(low[0], high[0])
    ax.set_ylim(low[1], high[1])


def output_colorbar(fig: "Figure", **where: "Axes | Sequence[Axes]") -> None:
    """A colour bar of the network's output, 0 to 1 in :data:`OUTPUT_CMAP`, with 0.5, the
    black contour's level, marked by a black line. ``where``: ``ax=`` an Axes (or a list of
    them, for one bar shared by several boundaries drawn with ``colorbar=False``) to take its
    room from, or ``cax=`` an Axes to draw it in."""
    from matplotlib.cm import ScalarMappable
    from matplotlib.colors import Normalize
    bar = fig.colorbar(ScalarMappable(Normalize(0.0, 1.0), OUTPUT_CMAP), ticks=[0.0, 0.5, 1.0],
                       **where)
    bar.ax.axhline(0.5, color="black", linewidth=1.2)
    bar.ax.tick_params(labelsize=9)  # tinynet.plots.TEXT_POINTS, which imports this module
    bar.set_label(OUTPUT_LABEL, fontsize=9)
