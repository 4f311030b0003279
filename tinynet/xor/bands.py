"""How a study's arms learn a task with a test set, over epochs: each arm's evaluations
(:mod:`tinynet.evaluation`) drawn as the median over seeds with a band from the first to the
third quartile, for test accuracy, test loss and training loss. One seed's curve is an
anecdote; the band says where half of the seeds were."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from ..evaluation import Evaluation
from ..plots import COLUMN_INCHES, color_cycle, figure, finish, legend_below
from ..validation import check_instance
from .report import Study

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

__all__ = ["quartiles", "band", "evaluation_curves", "PANELS"]

PANELS = (("test_accuracy", "test accuracy"), ("test_loss", "test loss"),
          ("train_loss", "training loss"))
"""What :func:`evaluation_curves` draws, a panel each: the :class:`~tinynet.evaluation.Evaluation`
field and its axis label."""


def quartiles(values: np.ndarray) -> np.ndarray:
    """The first quartile, median and third quartile over seeds of ``values`` (seeds,
    evaluations), (3, evaluations); seeds that diverged (not finite) are left out of each
    point, which is NaN where all did."""
    with np.errstate(all="ignore"):
        finite = np.where(np.isfinite(values), values, np.nan)
        if np.all(np.isnan(finite), axis=0).any():
            found = np.full((3, values.shape[1]), np.nan)
            some = ~np.all(np.isnan(finite), axis=0)
            found[:, some] = np.nanpercentile(finite[:, some], [25, 50, 75], axis=0)
            return found
        return np.nanpercentile(finite, [25, 50, 75], axis=0)


def band(ax: "Axes", epochs: object, bands: object, label: str, color: str) -> None:
    """A median against ``epochs`` with its quartiles as a shaded band: ``bands`` (3, E),
    the first quartile, median and third quartile (:func:`quartiles`; None or NaN where no
    seed was left)."""
    q1, median, q3 = np.array(bands, dtype=np.float64)
    ax.fill_between(epochs, q1, q3, color=color, alpha=0.25, linewidth=0)
    ax.plot(epochs, median, color=color, label=label, linewidth=1.8)


def evaluation_curves(study: Study, path: str | Path | None = None) -> "Figure":
    """Each arm's test accuracy, test loss and training loss over epochs, median and
    quartiles over its seeds (:func:`band`), one panel per measure; the study must have been
    run with ``evaluate_every`` on a task with a test set."""
    check_instance("study", study, Study, "a tinynet.xor Study")
    evaluations = [r.ensemble.evaluation if r.ensemble is not None else None
                   for r in study.results]
    if not study.setup.task.classification or any(e is None for e in evaluations):
        raise ValueError("evaluation_curves draws evaluations over epochs: run the study on a task "
                         "with a test set (Task('digits'), Task('mnist1d')) with "
                         "evaluate_every=k")
    fig = figure(figsize=(min(COLUMN_INCHES, 4.2 * len(PANELS)), 4.4))
    axes = fig.subplots(1, len(PANELS))
    colors = color_cycle()
    for ax, (field, label) in zip(axes, PANELS):
        for index, (result, evaluation) in enumerate(zip(study.results, evaluations)):
            check_instance("evaluation", evaluation, Evaluation, "an Evaluation")
            band(ax, evaluation.epochs, quartiles(getattr(evaluation, field)),
                 result.arm.name, colors[index % len(colors)])
        ax.set_xlabel("epoch")
        ax.set_ylabel(label)
        if field.endswith("loss"):
            ax.set_yscale("log")
        ax.grid(alpha=0.3)
    criterion = study.setup.task.criterion
    axes[0].axhline(criterion, color="grey", linestyle=":", linewidth=1,
                    label=f"learned above {criterion:.0%}")
    fig.suptitle(f"{study.setup.task.name}, {study.shape}: median and quartiles over "
                 f"{study.setup.seeds:,} seeds")
    legend_below(fig, axes[0].get_legend_handles_labels()[0], min(3, len(study.results) + 1))
    return finish(fig, path, 110, own=False)
