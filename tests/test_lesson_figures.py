"""The lessons' own figures, read back from a run of the lesson in this process with small
settings: what their titles say, what lesson 2 shows of its seeds, and that every figure a
lesson draws is legible at the width a notebook shows it. (The figures of tinynet.plots and
tinynet.xor.figures are measured in tests/test_plots.py; tests/test_tutorial.py runs every
lesson both ways.)"""

import copy

import numpy as np
import pytest

import make_notebooks  # tutorial/ is on the path (tests/conftest.py)
import tinynet
from helpers import SMALL, assert_legible_in_a_notebook, shown_points
from tinynet import plots


def run_lesson(number: str, settings: dict, folder, monkeypatch) -> dict:
    """Run lesson ``number`` ("01" to "08") as its script, with ``settings`` after its
    parameters cell, in ``folder``; return the variables it leaves."""
    (lesson,) = [path for path in make_notebooks.LESSONS if path.stem.startswith(number)]
    monkeypatch.chdir(folder)
    variables = {"__name__": "__main__"}
    exec(compile(make_notebooks.script(lesson, settings), str(lesson), "exec"), variables)
    return variables


def panels(fig) -> list:
    """The Axes of ``fig`` that are panels (with a title), not colour bars."""
    return [ax for ax in fig.axes if ax.get_title()]


def test_lesson_1_titles_the_trained_network_with_the_epochs_it_trained(tmp_path,
                                                                        monkeypatch):
    """Catches the title's off-by-one ("after 3001 epochs" for EPOCHS = 3000, counting the
    one step of the section before on a network the figure does not show as its start): the
    right panel is the left panel's network trained for EPOCHS epochs, and says so."""
    lesson = run_lesson("01", {"EPOCHS": 300}, tmp_path, monkeypatch)
    before, after = panels(lesson["fig"])
    assert before.get_title() == "seed 1, as initialised"
    assert after.get_title() == "after 300 epochs"
    assert lesson["history"].epochs == 300
    again = copy.deepcopy(lesson["start"])  # the left panel's network, trained the same way
    again.fit(*tinynet.data.xor(), epochs=300, lr=lesson["LR"])
    for mine, theirs in zip(again.parameters(), lesson["trained"].parameters()):
        np.testing.assert_array_equal(mine, theirs)
    assert (tmp_path / make_notebooks.OUTPUTS / "01_boundaries.png").is_file()


@pytest.mark.slow  # trains 100 seeds for 2,000 epochs and draws 100 panels
def test_lesson_2_shows_100_seeds_in_a_square_and_the_failed_seeds_losses(tmp_path,
                                                                          monkeypatch):
    """Catches lesson 2 without its gallery of 100 seeds (a 10 x 10 grid, one colour bar, its
    texts 9 points or more as a notebook shows it) or without the loss curves of the seeds
    that failed, and only those."""
    lesson = run_lesson("02", {"SEEDS": 100, "GROUP": 25, "EPOCHS": 2000}, tmp_path,
                        monkeypatch)
    gallery = lesson["gallery"]
    shown = [ax for ax in gallery.axes if ax.get_title().startswith("seed ")]
    assert [int(ax.get_title().split()[1]) for ax in shown] == list(range(100))
    assert len({round(ax.get_position().x0, 6) for ax in shown}) == 10  # columns
    assert len({round(ax.get_position().y0, 6) for ax in shown}) == 10  # rows
    assert [ax.get_ylabel() for ax in gallery.axes].count(plots.OUTPUT_LABEL) == 1
    assert shown_points(gallery) >= 9

    result = lesson["study"].results[0]
    failed = np.flatnonzero(result.outcomes != "solved")
    assert 0 < len(failed) < 100
    (ax,) = lesson["failed"].axes
    curves = [line for line in ax.lines if line.get_linestyle() == "-"]
    assert len(curves) == len(failed)
    for line, member in zip(curves, failed):
        np.testing.assert_array_equal(line.get_ydata(), result.ensemble.loss[member])
    assert ax.get_title() == f"loss of {len(failed)} failed seeds"
    assert (tmp_path / make_notebooks.OUTPUTS / "02_gallery.png").is_file()
    assert (tmp_path / make_notebooks.OUTPUTS / "02_failed_losses.png").is_file()


def drawn_figures(monkeypatch) -> list:
    """A list that collects every matplotlib Figure made from here on (however it is made:
    tinynet.plots.figure, or matplotlib's own)."""
    from matplotlib.figure import Figure
    made, make = [], Figure.__init__

    def recorded(self, *args, **kwargs):
        make(self, *args, **kwargs)
        made.append(self)
    monkeypatch.setattr(Figure, "__init__", recorded)
    return made


@pytest.mark.slow  # runs every lesson, whose studies compile kernels
@pytest.mark.parametrize("lesson", make_notebooks.LESSONS, ids=lambda path: path.stem)
def test_every_figure_a_lesson_draws_reads_at_9_points_or_more_in_a_notebook(
        lesson, tmp_path, monkeypatch):
    """Catches a figure a notebook shrinks to unreadable text (lesson 4's 11-inch signal
    figure with 8.3-point legends, shown at 7.3 points; lesson 7's curves at 6.4): every
    figure the lesson draws is as wide as a notebook's column at most, and its smallest
    text is 9 points or more as the notebook shows it."""
    made = drawn_figures(monkeypatch)
    run_lesson(lesson.stem[:2], SMALL[lesson.stem], tmp_path, monkeypatch)
    assert made
    for fig in made:
        assert_legible_in_a_notebook(fig)

