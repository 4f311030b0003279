"""The figures of XOR studies, drawn with :mod:`tinynet.plots`: each returns its
:class:`matplotlib.figure.Figure` (inline in Jupyter), ``path`` (optional) also writes it, and
those that draw one panel take ``ax``.

* :func:`seed_gallery`: many seeds' decision boundaries, each framed in the colour of what the
  seed did (:data:`OUTCOME_COLORS`), rows of seeds per arm of a study, one colour bar;
* :func:`loss_curves`: many seeds' (or one fit's) loss against the epoch, on a log scale,
  with the plateaus failed XOR seeds sit on (1/8, 1/6 and 1/4) marked; :func:`study_curves`,
  a panel per arm;
* :func:`rates`: success rates with their 95 % intervals, per arm and shape;
* :func:`against_baseline`: every arm's rate and interval beside a baseline's, marked by
  whether its test against the baseline is significant;
* :func:`depth`: success rate against depth per initializer, beside the second moment of the
  last hidden layer at initialisation (:mod:`tinynet.xor.depth`);
* :func:`layer_histograms`: a study's weights or layer outputs, per layer and arm.

They read the harness's results (:class:`~tinynet.xor.Study`, :class:`~tinynet.xor.ArmResult`,
:class:`~tinynet.xor.DepthStudy`) and its outcomes, so they sit beside it: the library's
:mod:`tinynet.plots` imports nothing of the harness. Importing ``tinynet.xor`` does not load
this module (nor matplotlib): a study that draws nothing does not pay for it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from .. import dense
from ..boundary import draw_boundary, output_colorbar
from ..network import Network
from ..plots import COLUMN_INCHES, TEXT_POINTS, color_cycle, figure, finish, histograms, \
    legend_below, panel, save
from ..results import EnsembleResult, History
from ..validation import check_choice, check_instance, check_int, check_sequence
from .outcome import FAILURES, ArmResult
from .report import Study

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

    from .depth import DepthStudy
    from .residual_depth import ResidualDepthStudy

__all__ = ["OUTCOME_COLORS", "OUTCOME_LABELS", "PLATEAUS", "seed_gallery", "loss_curves",
           "study_curves", "rates", "against_baseline", "depth", "residual_depth",
           "layer_histograms"]

OUTCOME_COLORS = {"solved": "#2ca02c", "one_wrong": "#ff7f0e", "two_wrong": "#d62728",
                  "three_or_more_wrong": "#9467bd", "diverged": "#000000"}
"""Frame and line colour of each seed outcome (:data:`tinynet.xor.OUTCOMES`)."""

OUTCOME_LABELS = {"solved": "solved", **{kind: label for kind, (label, _) in FAILURES.items()}}
"""How each seed outcome is named in legends and titles."""

PLATEAUS = {1 / 8: "1/8: two outputs at 0.5, two exact",
            1 / 6: "1/6: three outputs at 2/3, one exact",
            1 / 4: "1/4: every output at 0.5"}
"""XOR losses (the MSE over the four samples) at which failed seeds stop, with the outputs
that give them (targets 0, 1, 1, 0): value -> meaning. :func:`loss_curves` draws them."""


# --- many seeds ------------------------------------------------------------------------------

def _frame(ax: "Axes", color: str) -> None:
    for spine in ax.spines.values():
        spine.set_edgecolor(color)
        spine.set_linewidth(3.0)


def seed_gallery(study: "Study", arms: Sequence[str | int] | None = None, *, seeds: int = 10,
                 which: str = "all", columns: int | None = None,
                 path: str | Path | None = None, resolution: int = 41) -> "Figure":
    """Decision boundaries of ``seeds`` trained seeds per arm of ``study`` (default: every
    arm), each panel framed in the colour of what the seed did (:data:`OUTCOME_COLORS`) and
    titled with its seed, the outcomes named in a legend on top and the output's colours on
    one colour bar at the right, shared by every panel. ``which="all"`` shows the study's
    first seeds, an unbiased sample; ``"failed"`` its first seeds that did not succeed.
    ``columns`` panels per row (default: ⌈√n⌉ for the n panels of the largest arm, so that 100
    seeds are a 10 x 10 grid); an arm takes as many rows as it needs. The panels are 1.6
    inches wide, narrower where that many would not fit a notebook's column
    (:data:`tinynet.plots.COLUMN_INCHES`): shown there unshrunk, every text stays at its
    :data:`tinynet.plots.TEXT_POINTS` points or more."""
    check_instance("study", study, Study, "a tinynet.xor Study")
    indices = study.arm_indices(arms)
    results = [study.results[index] for index in indices]
    seeds = check_int("seeds", seeds, minimum=1)
    which = check_choice("which", which, ("all", "failed"))
    if columns is not None:
        columns = check_int("columns", columns, minimum=1)
    chosen = []
    for result in results:
        if result.outcomes is None:
            raise ValueError(f"arm {result.arm.name!r} kept no per-seed outcomes (a study read "
                             "from a file keeps none)")
        chosen.append((result, _first(result.outcomes, which, seeds)))
    if columns is None:
        columns = max(1, math.ceil(math.sqrt(max(len(picked) for _, picked in chosen))))
    rows_per_arm = [max(1, -(-len(picked) // columns)) for _, picked in chosen]
    side = min(1.6, (COLUMN_INCHES - _BAR_INCHES) / columns)  # a panel's width
    legend_columns = min(len(OUTCOME_COLORS), max(2, columns))
    top = 0.35 + 0.2 * -(-len(OUTCOME_COLORS) // legend_columns)  # the title, then the legend
    height = (side + 0.3) * sum(rows_per_arm) + top  # each row: its panels and their titles
    width = max(side * columns, 5.0) + _BAR_INCHES  # + the colour bar on the right
    fig = figure(figsize=(width, height))
    grid = fig.subplots(sum(rows_per_arm), columns, squeeze=False)
    row = 0
    X, y = study.setup.task.training_data()
    for index, (result, picked), rows in zip(indices, chosen, rows_per_arm):
        for k in range(rows * columns):
            ax = grid[row + k // columns, k % columns]
            ax.set_xticks([])
            ax.set_yticks([])
            if k >= len(picked):
                ax.set_axis_off()
                continue
            seed = study.seeds[picked[k]]
            draw_boundary(ax, study.network(index, seed), X, y, resolution, 0.5)
            _frame(ax, OUTCOME_COLORS[result.outcomes[picked[k]]])
            ax.set_title(f"seed {seed}", fontsize=TEXT_POINTS)
        grid[row, 0].set_ylabel(result.arm.name, fontsize=TEXT_POINTS)
        if not len(picked):
            grid[row, 0].set_axis_on()
            _frame(grid[row, 0], "lightgray")
            grid[row, 0].text(0.5, 0.5, "no seed to show", ha="center", va="center",
                              fontsize=TEXT_POINTS, transform=grid[row, 0].transAxes)
        row += rows
    shown = "failed only" if which == "failed" else "first seeds"
    fig.suptitle(f"{study.setup.task.name}, {study.shape}: decision boundaries of "
                 f"trained seeds ({shown})", fontsize=10, y=1 - 0.08 / height, va="top")
    _outcome_legend(fig, legend_columns, below=0.35 / height)
    fig.tight_layout(rect=(0, 0, 1 - _BAR_INCHES / width, 1 - top / height))
    _gallery_colorbar(fig, grid, width, height)
    return save(fig, path)


_BAR_INCHES = 1.0
"""The room kept at a gallery's right for its colour bar, with ticks and label."""


def _gallery_colorbar(fig: "Figure", panels: np.ndarray, width: float, height: float) -> None:
    """One colour bar for every panel (the Axes of ``panels``) of a gallery ``width`` x
    ``height`` inches, in the room kept at its right: beside the panels, centred on them, and
    at most 3.5 inches tall."""
    boxes = [ax.get_position() for ax in panels.ravel()]  # figure fractions, laid out
    bottom, top = min(box.y0 for box in boxes), max(box.y1 for box in boxes)
    tall = min(top - bottom, 3.5 / height)
    cax = fig.add_axes((1 - 0.8 / width, (bottom + top - tall) / 2, 0.15 / width, tall))
    output_colorbar(fig, cax=cax)


def _first(outcomes: np.ndarray | None, which: str, seeds: int,
           members: int | None = None) -> np.ndarray:
    """The indices of the first ``seeds`` members (``which="all"``) or of the first
    ``seeds`` members whose outcome is not ``"solved"`` (``"failed"``), of ``outcomes`` (or
    of ``members`` members whose outcomes are not known)."""
    if which == "failed":
        return np.flatnonzero(outcomes != "solved")[:seeds]
    return np.arange(len(outcomes) if members is None else members)[:seeds]


def _outcome_legend(fig: "Figure", columns: int, below: float) -> None:
    """The outcomes' frame colours named in ``columns`` columns across the top of ``fig``,
    ``below`` (a fraction of its height) under its top edge."""
    from matplotlib.patches import Patch
    fig.legend(handles=[Patch(facecolor="white", edgecolor=color, linewidth=3,
                              label=OUTCOME_LABELS[kind])
                        for kind, color in OUTCOME_COLORS.items()],
               loc="upper center", bbox_to_anchor=(0.5, 1 - below), ncol=columns,
               fontsize=TEXT_POINTS, frameon=False)


def loss_curves(result: "EnsembleResult | ArmResult | History",
                outcomes: Sequence[str] | None = None, *, seeds: int = 100, which: str = "all",
                ax: "Axes | None" = None, path: str | Path | None = None,
                title: str | None = None, plateaus: bool = True) -> "Figure":
    """The loss of the first ``seeds`` members against the epoch (``which="failed"``: of the
    first ``seeds`` members that did not solve the task, which needs their outcomes), on a
    log scale, one line each, coloured by outcome (:data:`OUTCOME_COLORS`) when known, with
    the XOR plateaus (:data:`PLATEAUS`) as dashed lines unless ``plateaus`` is False (another
    task) or the arm trained on another loss than MSE. The outcomes and plateaus are named in
    a legend below the axes, clear of the curves.
    ``result``: an :class:`~tinynet.EnsembleResult` trained with ``record_every`` (and
    ``outcomes``, per member, if wanted), an arm's result of a study run with
    ``record_every`` (its own outcomes), or one network's :class:`~tinynet.History` (``fit``
    with ``record_every``; ``outcomes`` then one outcome, if wanted)."""
    loss = "the loss"  # an ensemble's result does not say which
    if isinstance(result, ArmResult):
        loss = result.arm.loss.upper()
        plateaus = plateaus and result.arm.loss == "mse"  # the plateaus are MSE's values
        if result.ensemble is None:
            raise ValueError(f"arm {result.arm.name!r} kept no training run (a study read from "
                             "a file keeps none)")
        result, outcomes = result.ensemble, result.outcomes if outcomes is None else outcomes
    one = isinstance(result, History)
    check_instance("result", result, (EnsembleResult, History),
                   "an EnsembleResult, a study's ArmResult or a fit's History")
    if result.record_every == 0:
        raise ValueError("result has no loss history: train with record_every=k (fit, "
                         "fit_ensemble, run_study, or --curves in the CLI)")
    # one network's run as a run of one member: its losses (1, recorded) and where it diverged
    recorded = result.loss[None, :] if one else result.loss
    diverged_epoch = np.array([result.diverged_epoch]) if one else result.diverged_epoch
    count = len(recorded)
    seeds = check_int("seeds", seeds, minimum=1)
    which = check_choice("which", which, ("all", "failed"))
    if outcomes is not None and len(outcomes) != count:
        raise ValueError(f"outcomes must give one outcome per member ({count}), got "
                         f"{len(outcomes)}")
    if which == "failed" and outcomes is None:
        raise ValueError("which='failed' needs each member's outcome: pass outcomes=..., or "
                         "a study's ArmResult")
    outcomes = None if outcomes is None else np.asarray(outcomes, dtype=object)
    members = _first(outcomes, which, seeds, count)
    own = ax is None
    ax = panel(ax, figsize=(7.0, 5.0))
    epochs = result.record_every * np.arange(1, recorded.shape[1] + 1)
    losses = recorded[members]
    finite = losses[np.isfinite(losses) & (losses > 0)]
    top = min(float(finite.max()) if finite.size else 1.0, 2.5) * 1.3  # the plateaus stay in view
    for member, loss_of_member in zip(members, losses):
        color = "#1f77b4" if outcomes is None else OUTCOME_COLORS[outcomes[member]]
        ax.plot(epochs, np.clip(loss_of_member, None, top), color=color,
                linewidth=1.5 if one else 0.8, alpha=1.0 if one else 0.5)
    from matplotlib.lines import Line2D
    handles = [] if outcomes is None else [
        Line2D([], [], color=OUTCOME_COLORS[kind], label=OUTCOME_LABELS[kind])
        for kind in OUTCOME_COLORS if kind in set(outcomes[members])]
    diverged = members[diverged_epoch[members] >= 0]
    if diverged.size:  # where each stopped, on the top edge
        handles += ax.plot(diverged_epoch[diverged] + 1, np.full(diverged.size, top),
                           "x", color=OUTCOME_COLORS["diverged"], clip_on=False,
                           label=f"diverged ({diverged.size}), loss cut at the top")
    if finite.size:
        ax.set_ylim(float(finite.min()) * 0.7, top)
    for (level, meaning), dashes in zip((PLATEAUS if plateaus else {}).items(), _PLATEAU_DASHES):
        handles.append(ax.axhline(level, color="gray", linestyle=(0, dashes), linewidth=1.0,
                                  label=f"plateau {meaning}"))
    ax.set_yscale("log")
    ax.set_xlabel("epoch")
    ax.set_ylabel(f"{loss} over the epoch")
    shown = "one network" if one else \
        f"{len(members)} failed seeds" if which == "failed" else f"{len(members)} seeds"
    ax.set_title(title if title is not None else f"loss of {shown}", fontsize=10)
    if handles:
        ax.legend(handles=handles, fontsize=TEXT_POINTS, loc="upper center", ncol=2, frameon=False,
                  bbox_to_anchor=(0.5, 0.0), borderaxespad=4.5)  # 36 pt below: the x labels
    return finish(ax.figure, path, 110, own)


_PLATEAU_DASHES = ((5, 2), (1, 1.5), (6, 2, 1, 2))
"""A dash pattern per plateau, so that the legend tells their lines apart."""


# --- studies ---------------------------------------------------------------------------------

def study_curves(study: "Study", *, seeds: int = 100,
                 path: str | Path | None = None) -> "Figure":
    """:func:`loss_curves` of the first ``seeds`` seeds of every arm of ``study`` (run with
    ``record_every``), a panel per arm side by side on one loss scale, as wide as a notebook's
    column at most, the outcomes and plateaus named once, in a legend below every panel; XOR's
    plateaus only on its four points."""
    check_instance("study", study, Study, "a tinynet.xor Study")
    seeds = check_int("seeds", seeds, minimum=1)
    fig = figure(figsize=(min(COLUMN_INCHES, 5.5 * len(study.results)), 5.0))
    named: dict[str, object] = {}  # a legend entry per label, the outcomes before the plateaus
    for ax, result in zip(fig.subplots(1, len(study.results), sharey=True, squeeze=False)[0],
                          study.results):
        loss_curves(result, seeds=seeds, ax=ax, title=result.arm.name,
                    plateaus=study.setup.task.four_points)
        if ax.get_legend() is not None:  # the panel's legend, gathered into the figure's
            for handle, text in zip(ax.get_legend().legend_handles, ax.get_legend().get_texts()):
                named.setdefault(text.get_text(), handle)
            ax.get_legend().remove()
    fig.suptitle(f"{study.setup.task.name}, {study.shape}: loss of the first "
                 f"{min(seeds, study.setup.seeds)} seeds")
    order = sorted(named, key=lambda label: label.startswith("plateau "))  # a stable sort
    legend_below(fig, [named[label] for label in order], columns=2)
    return finish(fig, path, 110, own=False)


def rates(studies: "list[Study]", path: str | Path | None = None, *,
          ax: "Axes | None" = None) -> "Figure":
    """Bar chart of success rates with 95 % Wilson intervals, one group of bars per study
    (for a sweep over shapes) or one bar per arm; the notes' reported rates as diamonds."""
    studies = check_sequence("studies", studies, Study, "tinynet.xor Study")
    names = [r.arm.name for r in studies[0].results]
    own = ax is None
    ax = panel(ax, figsize=(COLUMN_INCHES if len(studies) > 1 else
                            min(COLUMN_INCHES, 2.0 + 1.6 * len(names)), 4.8))
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
    name = studies[0].setup.task.name
    ax.set_ylabel(f"seeds that learn {name} (%)")
    ax.set_title(f"{name} success rate, {studies[0].setup.seeds} seeds per bar, 95 % intervals")
    if ax.get_legend_handles_labels()[0]:
        ax.legend(fontsize=TEXT_POINTS)
    return finish(ax.figure, path, 110, own)


def against_baseline(study: "Study", path: str | Path | None = None, *,
                     ax: "Axes | None" = None) -> "Figure":
    """A row per arm: its success rate with the 95 % Wilson interval, the baseline's rate as a
    dashed line and its interval as a band; a filled dot where the arm's test against the
    baseline is significant at the 5 % level after Holm's correction, a hollow one where it is
    not. ``study`` compares every arm with one (``run_study(..., against=i)``)."""
    check_instance("study", study, Study, "a tinynet.xor Study")
    if study.baseline is None:
        raise ValueError("study must compare its arms with a baseline (run_study(..., "
                         "against=index)); this one compares every pair")
    significant = {c.b: c.p_holm < 0.05 for c in study.comparisons}
    results = study.results
    own = ax is None
    ax = panel(ax, figsize=(8.0, 1.2 + 0.45 * len(results)))
    base = study.result(study.baseline)
    ax.axvspan(100 * base.interval[0], 100 * base.interval[1], color="0.88", zorder=0)
    ax.axvline(100 * base.rate, color="0.4", linestyle="--", linewidth=1, zorder=1)
    for row, r in enumerate(results):
        y = len(results) - 1 - row
        is_base = r.arm.name == study.baseline
        ax.errorbar(100 * r.rate, y, xerr=[[100 * (r.rate - r.interval[0])],
                                           [100 * (r.interval[1] - r.rate)]],
                    fmt="o", color="0.3" if is_base else "C0", capsize=3, markersize=7,
                    markerfacecolor="0.3" if is_base else
                    ("C0" if significant[r.arm.name] else "white"), zorder=2)
    names = [f"{r.arm.name} (baseline)" if r.arm.name == study.baseline else r.arm.name
             for r in results]
    ax.set_yticks(range(len(results)), names[::-1])
    ax.set_xlim(-1, 101)  # a dot at 0 % or 100 % shows whole
    ax.set_ylim(-0.7, len(results) - 0.3)
    name = study.setup.task.name
    ax.set_xlabel(f"seeds that learn {name} (%), 95 % intervals")
    ax.set_title(f"{name}: each arm against the baseline, {study.setup.seeds:,} seeds each\n"
                 "filled: significant after Holm; hollow: cannot be told apart",
                 fontsize="medium")
    return finish(ax.figure, path, 110, own)


def depth(study: "DepthStudy", path: str | Path | None = None) -> "Figure":
    """Two panels against the number of hidden layers: each initializer's success rate with
    its 95 % interval as a bar, and the second moment E[a²] of the last hidden layer at
    initialisation that :func:`tinynet.diagnostics.propagate` predicts (hollow circles) beside
    the first seed's measured value (dots), with the input's E[x²] dashed. Depths are points,
    not joined: a study of two depths is two measurements, not a trend. Within a depth the
    arms sit side by side, each in one colour in both panels, named in one legend below them."""
    fig = figure(figsize=(COLUMN_INCHES, 5.0))
    rate_ax, moment_ax = fig.subplots(1, 2)
    depths = np.array(study.depths)
    arms = len(study.arms)
    for a, (name, color) in enumerate(zip(study.arms, color_cycle())):
        x = depths * 2.0 ** (0.05 * (a - (arms - 1) / 2))  # side by side on the log2 axis
        rate = 100 * np.array(study.rates(name))
        low, high = (100 * np.array(bound) for bound in zip(*study.intervals[a]))
        rate_ax.errorbar(x, rate, yerr=[rate - low, high - rate], fmt="o", color=color,
                         capsize=3, markersize=5, label=name)
        moment_ax.plot(x, np.array(study.moments[a]), "o", color=color, markerfacecolor="none",
                       markersize=7)
        moment_ax.plot(x, np.array(study.measured[a]), "o", color=color, markersize=3.5)
    moment_ax.axhline(study.input_moment, color="grey", linestyle="--", linewidth=1,
                      label="input E[x²]")
    for ax in (rate_ax, moment_ax):
        ax.set_xscale("log", base=2)
        ax.set_xticks(depths, [str(d) for d in depths])
        ax.minorticks_off()
        ax.set_xlim(depths[0] / 1.5, depths[-1] * 1.5)
        ax.set_xlabel(f"hidden layers of {study.width} ({study.setup.activation})")
    rate_ax.set_ylim(-3, 103)
    rate_ax.set_ylabel(f"seeds reaching {study.setup.task.criterion:.0%} training accuracy (%)")
    rate_ax.set_title(f"{study.setup.task.data}: success rate, {study.n} seeds per point, "
                      "95 % intervals", fontsize="medium")
    moment_ax.set_yscale("log")
    moment_ax.set_ylabel("E[a²] of the last hidden layer")
    moment_ax.set_title(f"at initialisation: predicted (circles), seed "
                        f"{study.setup.first_seed} (dots)", fontsize="medium")
    handles = [*rate_ax.get_legend_handles_labels()[0],
               *moment_ax.get_legend_handles_labels()[0]]
    legend_below(fig, handles, columns=7)
    return save(fig, path, 110)


def _seeds(n: int) -> str:
    """A count of seeds short enough for a tick label: 1k for 1,000, 200 for 200."""
    return f"{n // 1000}k" if n >= 1000 and n % 1000 == 0 else f"{n:,}"


def residual_depth(study: "ResidualDepthStudy", path: str | Path | None = None) -> "Figure":
    """Success rate against depth, one panel per family of blocks the study has (in this
    order: the plain stack; x + F(x); pre-norm; post-norm; ReZero and Fixup; then any other
    family, named by its arms' labels up to the first comma), each arm's rate with its 95 %
    interval as a bar, the plain He stack drawn grey in every other panel for reference.
    Depths are points, not joined; the seeds per depth are in the axis labels."""
    families = {"plain": "plain", "x + F(x)": "x + F(x)", "pre-norm": "pre-norm",
                "post-norm": "post-norm", "ReZero": "ReZero and Fixup",
                "Fixup": "ReZero and Fixup"}
    panels: dict[str, list[str]] = {title: [] for title in families.values()}
    for name in study.names:
        family = name.split(",")[0]
        panels.setdefault(families.get(family, family), []).append(name)
    panels = {title: names for title, names in panels.items() if names}
    columns = min(len(panels), 3)  # rows of three: legible at a page's or notebook's width
    rows = math.ceil(len(panels) / columns)
    fig = figure(figsize=(min(COLUMN_INCHES, 2.2 + 2.8 * columns), 5.2 * rows))
    axes = np.atleast_1d(fig.subplots(rows, columns, sharey=True)).ravel()
    for spare in axes[len(panels):]:
        fig.delaxes(spare)  # a row's empty place: no axes left to read
    axes = axes[:len(panels)]
    depths = np.array(study.depths)
    colours = list(color_cycle())
    for ax, (title, names) in zip(axes, panels.items()):
        shown = names if "plain, He" in names else ["plain, He", *names]
        shown = [name for name in shown if name in study.names]
        for k, name in enumerate(shown):
            a = study.names.index(name)
            x = depths * 2.0 ** (0.06 * (k - (len(shown) - 1) / 2))
            rate = 100 * np.array(study.successes[a]) / np.array(study.n)
            low, high = (100 * np.array(bound) for bound in zip(*study.intervals[a]))
            reference = name == "plain, He" and title != "plain"
            ax.errorbar(x, rate, yerr=[rate - low, high - rate], fmt="o", capsize=3,
                        markersize=4, color="0.6" if reference else colours[k % len(colours)],
                        label=name + (" (reference)" if reference else ""))
        ax.set_xscale("log", base=2)
        ax.set_xticks(depths, [f"{d}\n{_seeds(n)}" for d, n in zip(study.depths, study.n)])
        ax.minorticks_off()
        ax.set_xlim(depths[0] / 1.3, depths[-1] * 1.3)
        ax.set_xlabel("layers, and seeds below")
        ax.set_title(title, fontsize="medium")
        # below the depths, their seeds and the axis label (5.5 text heights down, however
        # tall the panel): the points fill the panel at every height
        ax.legend(fontsize=TEXT_POINTS, loc="upper center", bbox_to_anchor=(0.5, 0.0),
                  borderaxespad=5.5, frameon=False)
    axes[0].set_ylim(-3, 103)
    for ax in axes[::columns]:
        ax.set_ylabel(f"seeds reaching {study.setup.task.criterion:.0%} training "
                      "accuracy (%)")
    fig.tight_layout()
    return save(fig, path, 110)


def layer_histograms(study: "Study", arms: Sequence[str | int] | None = None, *,
                     what: str = "weights", trained: bool = True, seeds: int = 100,
                     path: str | Path | None = None) -> "Figure":
    """:func:`histograms` of a study's networks, a row per arm (default: every arm): each
    layer's weights (``what="weights"``) or outputs on the study's training inputs
    (``"activations"``), pooled over the first ``seeds`` seeds, as trained or as initialised
    (``trained=False``)."""
    check_instance("study", study, Study, "a tinynet.xor Study")
    what = check_choice("what", what, ("weights", "activations"))
    seeds = check_int("seeds", seeds, minimum=1)
    X, _ = study.setup.task.training_data()
    rows = {}
    for index in study.arm_indices(arms):
        name = f"{index}: {study.results[index].arm.name}"
        nets = [study.network(index, seed, trained=trained) for seed in study.seeds[:seeds]]
        if what == "weights":
            rows[name] = [np.concatenate([net.layers[k].W.ravel() for net in nets])
                          for k in range(len(nets[0].layers))]
        else:
            with np.errstate(all="ignore"):  # a diverged network's outputs are NaN
                outputs = [_layer_outputs(net, X) for net in nets]
            rows[name] = [np.concatenate([out[k] for out in outputs])
                          for k in range(len(outputs[0]))]
    state = "trained" if trained else "initialised"
    return histograms(rows, path, f"{study.setup.task.name}, {study.shape}: each layer's "
                                  f"{what}, {state}, first {min(seeds, study.setup.seeds)} "
                                  "seeds pooled")


def _layer_outputs(net: Network, X: np.ndarray) -> list[np.ndarray]:
    """Each layer's outputs on X, flattened, computed with :mod:`tinynet.dense`."""
    outputs, a = [], X
    for layer in net.layers:
        _, a = dense.forward(a, layer.W, layer.b, layer.activation)
        outputs.append(a.ravel())
    return outputs
