"""Pictures (tinynet.plots, and a study's: tinynet.xor.figures) rendered headless and read
back: each returns its Figure, writes a file only when given a path, and draws what the data
say (the 0.5 contour, frames coloured by each seed's outcome, the loss plateaus); and the
trained networks a study keeps."""

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from matplotlib.contour import ContourSet
from matplotlib.figure import Figure

import tinynet
from helpers import assert_legible_in_a_notebook, drawn, legends, overlap, page, \
    points_under
from tinynet import plots
from tinynet.xor import figures
from tinynet.xor import Arm, Setup, build_network, run_study


@pytest.fixture(scope="module")
def study():
    """Two arms of 24 seeds of 2-2-2-1, a short run: solved and failed seeds both, and a loss
    history every 50 epochs."""
    return run_study([Arm("normal"), Arm("he_leaky", shuffle=True)],
                     Setup(seeds=24, epochs=3000, lr=0.05), progress=False, record_every=50)


def test_every_plot_returns_its_figure_and_writes_a_file_only_when_asked(study, tmp_path):
    net = study.network(0, 0)
    against = run_study([Arm("normal"), Arm("normal", lr=0.3)], Setup(seeds=8, epochs=100),
                        progress=False, against=0)
    X = np.random.default_rng(0).normal(size=(16, 8))
    reports = {"tanh": tinynet.diagnostics.propagate(tinynet.mlp([8, 8, 8], activation="tanh"),
                                                     X)}
    drawings = {"rates": lambda path: figures.rates([study], path),
                "signal": lambda path: plots.signal(reports, path, "tanh"),
                "histograms": lambda path: plots.histograms({"a": [np.arange(5.0)] * 2}, path),
                "boundary": lambda path: plots.decision_boundary(net, path=path),
                "gallery": lambda path: figures.seed_gallery(study, seeds=4, path=path),
                "curves": lambda path: figures.loss_curves(study.result(0), path=path),
                "layers": lambda path: figures.layer_histograms(study, path=path),
                "against": lambda path: figures.against_baseline(against, path)}
    for name, draw in drawings.items():
        assert isinstance(draw(None), Figure), name
        assert list(tmp_path.iterdir()) == [], name  # no path: nothing written
        assert isinstance(draw(tmp_path / f"{name}.png"), Figure), name
        assert (tmp_path / f"{name}.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n", name
        (tmp_path / f"{name}.png").unlink()


def test_a_figure_replaces_a_symlink_and_never_writes_through_it(study, tmp_path):
    (tmp_path / "notes.txt").write_text("mine\n")
    (tmp_path / "boundary.png").symlink_to(tmp_path / "notes.txt")
    plots.decision_boundary(study.network(0, 0), path=tmp_path / "boundary.png")
    assert (tmp_path / "notes.txt").read_text() == "mine\n"
    assert not (tmp_path / "boundary.png").is_symlink()
    assert (tmp_path / "boundary.png").read_bytes()[:4] == b"\x89PNG"
    assert sorted(path.name for path in tmp_path.iterdir()) == ["boundary.png", "notes.txt"]


def test_a_figure_path_needs_a_format_and_is_never_a_folder(study, tmp_path):
    """Without a suffix matplotlib would write ``figs.png`` beside the ``figs`` asked for."""
    net = study.network(0, 0)
    (tmp_path / "figs").mkdir()
    with pytest.raises(ValueError, match=r"^path='.*figs': give a file name ending in a format "
                                         r"matplotlib writes, such as \.png, .*\)$"):
        plots.decision_boundary(net, path=tmp_path / "figs")
    (tmp_path / "figs.png").mkdir()
    with pytest.raises(IsADirectoryError, match=r"figs\.png is a directory"):
        plots.decision_boundary(net, path=tmp_path / "figs.png")
    assert sorted(path.name for path in tmp_path.iterdir()) == ["figs", "figs.png"]
    assert list((tmp_path / "figs").iterdir()) == []


def test_a_decision_boundary_is_the_half_contour_over_the_samples(study):
    X, y = tinynet.data.xor()
    solved = int(np.flatnonzero(study.result(0).outcomes == "solved")[0])
    fig = plots.decision_boundary(study.network(0, solved), X, y)
    ax = fig.axes[0]
    contours = [c for c in ax.collections if isinstance(c, ContourSet)]
    assert len(contours) == 1 and list(contours[0].levels) == [0.5]
    zeros, ones, wrong = [c for c in ax.collections if not isinstance(c, ContourSet)]
    np.testing.assert_array_equal(zeros.get_offsets(), X[[0, 3]])  # targets 0, then 1
    np.testing.assert_array_equal(ones.get_offsets(), X[[1, 2]])
    assert len(wrong.get_offsets()) == 0  # solved: no sample on the wrong side
    assert not (zeros.get_facecolors()[0] == ones.get_facecolors()[0]).all()  # classes differ
    assert zeros.get_paths()[0] != ones.get_paths()[0]  # and so do their markers' shapes
    image = ax.images[0].get_array()
    assert image.min() >= 0.0 and image.max() <= 1.0


def test_a_boundary_draws_into_the_axes_it_is_given(study):
    fig = Figure()
    left, right = fig.subplots(1, 2)
    assert plots.decision_boundary(study.network(0, 0), ax=right) is fig
    assert not left.images and right.images


def test_gallery_frames_are_the_outcomes_of_the_seeds_shown(study):
    fig = figures.seed_gallery(study, seeds=8, columns=4)
    panels = [ax for ax in fig.axes if ax.get_title().startswith("seed ")]
    assert len(panels) == 16  # 2 arms x 8 seeds
    for row, result in enumerate(study.results):
        for ax in panels[8 * row: 8 * row + 8]:
            seed = int(ax.get_title().split()[1])
            expected = figures.OUTCOME_COLORS[result.outcomes[seed - study.seeds.start]]
            colour = ax.spines["left"].get_edgecolor()
            assert np.allclose(colour[:3], _rgb(expected)), (result.arm.name, seed)
    failed = figures.seed_gallery(study, arms=["normal"], seeds=5, which="failed")
    shown = [int(ax.get_title().split()[1]) for ax in failed.axes
             if ax.get_title().startswith("seed ")]
    outcomes = study.result("normal").outcomes
    assert shown == [study.seeds[i] for i in np.flatnonzero(outcomes != "solved")[:5]]


def _rgb(colour: str) -> tuple[float, float, float]:
    from matplotlib.colors import to_rgb
    return to_rgb(colour)


def test_loss_curves_are_one_line_a_seed_on_a_log_scale_with_the_plateaus(study):
    result = study.result(1)
    fig = figures.loss_curves(result, seeds=10)
    ax = fig.axes[0]
    assert ax.get_yscale() == "log"
    levels = sorted(line.get_ydata()[0] for line in ax.lines if len(set(line.get_ydata())) == 1
                    and line.get_linestyle() == "--")
    assert np.allclose(levels, [1 / 8, 1 / 6, 1 / 4])
    curves = [line for line in ax.lines if line.get_linestyle() == "-"]
    assert len(curves) == 10
    np.testing.assert_array_equal(curves[3].get_ydata(), result.ensemble.loss[3])
    np.testing.assert_array_equal(curves[3].get_xdata(), 50 * np.arange(1, 61))
    assert np.allclose(_rgb(curves[3].get_color()), _rgb(figures.OUTCOME_COLORS[result.outcomes[3]]))


def test_layer_histograms_pool_the_seeds_of_each_arm(study):
    fig = figures.layer_histograms(study, arms=["normal"], seeds=5, trained=False)
    panels = [ax for ax in fig.axes if ax.patches]
    assert len(panels) == 3  # one row, a panel per layer
    counts = [sum(patch.get_height() for patch in ax.patches) for ax in panels]
    assert counts == [5 * 4, 5 * 4, 5 * 2]  # every weight of 5 seeds, once
    outputs = figures.layer_histograms(study, what="activations", seeds=3)
    counts = [sum(patch.get_height() for patch in ax.patches) for ax in outputs.axes[:3]]
    assert counts == [3 * 4 * 2, 3 * 4 * 2, 3 * 4 * 1]  # 4 XOR inputs, each layer's units
    with pytest.raises(ValueError, match="what"):
        figures.layer_histograms(study, what="gradients")


def test_loss_curves_need_a_history(study):
    X, y = tinynet.data.xor()
    result = tinynet.fit_ensemble([tinynet.mlp([2, 2, 1], seed=s) for s in range(3)], X, y,
                                  epochs=5, lr=0.1)
    with pytest.raises(ValueError, match="record_every"):
        figures.loss_curves(result)
    with pytest.raises(ValueError, match="one outcome per member"):
        figures.loss_curves(study.result(0).ensemble, ["solved"])
    with pytest.raises(TypeError, match="ax"):
        plots.decision_boundary(study.network(0, 0), ax="left")
    with pytest.raises(ValueError, match="2 inputs"):
        plots.decision_boundary(tinynet.mlp([3, 2, 1]))


def test_a_study_keeps_its_trained_networks(study):
    X, y = tinynet.data.xor()
    result = study.result("he_leaky, shuffled")
    for seed in (0, 7, 23):
        trained = study.network("he_leaky, shuffled", seed)
        np.testing.assert_allclose(tinynet.predict(trained, X, backend="numpy"),  # NumPy
                                   result.ensemble.predictions[seed], rtol=1e-12)  # vs numba
        initial = study.network(1, seed, trained=False)
        built = build_network(study.setup, result.arm, seed)
        for a, b in zip(initial.parameters(), built.parameters()):
            np.testing.assert_array_equal(a, b)
    with pytest.raises(ValueError, match="seed must be one of the study's seeds, 0 to 23"):
        study.network(0, 24)
    with pytest.raises(ValueError, match="arm must be one of"):
        study.network("he_normal", 0)
    assert isinstance(study.to_json(), str)  # what is kept in memory stays out of the file



ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.slow  # runs the example in a Python of its own (test_example_outputs: its quick run)
def test_the_example_writes_the_figures_the_docs_show(tmp_path):
    """examples/look_inside.py (smaller here) writes every figure of the page "Look inside
    the seeds" (docs/look-inside.md), and each one the page shows is committed."""
    sys.path.insert(0, str(ROOT / "examples"))
    try:
        from look_inside import FIGURES
    finally:
        sys.path.pop(0)
    subprocess.run([sys.executable, str(ROOT / "examples" / "look_inside.py"), "--seeds", "12",
                    "--epochs", "300", "--out", str(tmp_path)], check=True, capture_output=True,
                   timeout=300)
    section = page("look-inside.md")
    for name in FIGURES:
        assert (tmp_path / name).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        assert f"(../examples/figures/{name})" in section
        assert (ROOT / "examples" / "figures" / name).is_file()


def test_a_figure_shows_itself_in_jupyter(study):
    """Jupyter displays a cell's value through its _repr_png_ when pyplot registered nothing."""
    for fig in (plots.figure(), plots.decision_boundary(study.network(0, 0)),
                figures.seed_gallery(study, seeds=2), figures.loss_curves(study.result(0))):
        assert fig._repr_png_()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.fixture(scope="module")
def diverging():
    """An arm whose every seed diverges (identity activations at a large learning rate)."""
    return run_study([Arm("normal")], Setup(hidden=(3,), activation="identity",
                                               output="identity", seeds=6, epochs=40, lr=1.0),
                     progress=False, record_every=2)


def test_diverged_seeds_are_drawn_not_a_crash(diverging):
    result = diverging.result(0)
    assert result.ensemble.diverged.all()
    fig = figures.loss_curves(result)
    ax = fig.axes[0]
    low, high = ax.get_ylim()
    assert high <= 2.5 * 1.3 and np.isfinite(low)  # huge losses cut, the plateaus in view
    (marks,) = [line for line in ax.lines if line.get_marker() == "x"]
    np.testing.assert_array_equal(marks.get_xdata(), result.ensemble.diverged_epoch + 1)
    for what in ("weights", "activations"):
        fig = figures.layer_histograms(diverging, what=what, seeds=6)
        notes = [text.get_text() for ax in fig.axes for text in ax.texts]
        assert any("not finite, left out" in note for note in notes), what
    gallery = figures.seed_gallery(diverging, seeds=3)
    assert {tuple(np.round(ax.spines["top"].get_edgecolor()[:3], 3)) for ax in gallery.axes
            if ax.get_title().startswith("seed ")} == {(0.0, 0.0, 0.0)}  # framed: diverged


def test_outcomes_are_read_from_predictions_and_divergence():
    """tinynet.xor.outcomes on a hand-made result: every kind once."""
    y = tinynet.data.xor()[1]
    right, flip = y[:, 0].astype(float), 1 - y[:, 0]
    predictions = np.array([right, [flip[0], *right[1:]], [*flip[:2], *right[2:]],
                            [*flip[:3], right[3]], right])[:, :, None]
    result = tinynet.EnsembleResult(
        loss=np.zeros((5, 0)), final_loss=np.zeros(5),
        diverged_epoch=np.array([-1, -1, -1, -1, 3]), last_wrong_epoch=np.full(5, 2),
        predictions=predictions, epochs=10, record_every=0, threshold=0.5)
    assert list(tinynet.xor.outcomes(result, y)) == ["solved", "one_wrong", "two_wrong",
                                                     "three_or_more_wrong", "diverged"]


def test_arms_are_named_or_numbered_and_checked(study):
    assert study.arm_indices(["he_leaky, shuffled", 0, np.int64(-1)]) == [1, 0, 1]
    with pytest.raises(TypeError, match="arms must be a non-empty list"):
        figures.seed_gallery(study, arms=[])
    with pytest.raises(TypeError, match="arms must be a non-empty list"):
        figures.layer_histograms(study, arms="normal")
    with pytest.raises(TypeError, match="arm must be an arm's name or index, got 1.5"):
        study.result(1.5)
    with pytest.raises(ValueError, match="arms must have different names"):
        run_study([Arm("normal"), Arm("normal")], Setup(seeds=2, epochs=2))


def test_a_boundary_needs_two_inputs_one_output_and_fitting_targets(study):
    with pytest.raises(ValueError, match="2 inputs and 1 output"):
        plots.decision_boundary(tinynet.mlp([2, 2, 2]))
    X, y = tinynet.data.xor()
    with pytest.raises(ValueError, match="X and y must have the same number of samples"):
        plots.decision_boundary(study.network(0, 0), X, y[:3])
    with pytest.raises(ValueError, match="margin"):
        plots.decision_boundary(study.network(0, 0), margin=float("nan"))


def test_every_outcome_has_a_colour_and_the_label_of_its_failure_kind():
    from tinynet.xor import FAILURES, OUTCOMES
    assert list(figures.OUTCOME_COLORS) == list(OUTCOMES) == list(figures.OUTCOME_LABELS)
    assert all(figures.OUTCOME_LABELS[kind] == label for kind, (label, _) in FAILURES.items())


def test_a_boundary_drawn_without_data_shows_xors_points_in_their_classes():
    net = tinynet.mlp([2, 3, 1], seed=0)
    ax = plots.decision_boundary(net).axes[0]
    zeros, ones = ax.collections[-3:-1]  # the last: the samples on the wrong side
    np.testing.assert_array_equal(zeros.get_offsets(), [[0, 0], [1, 1]])
    np.testing.assert_array_equal(ones.get_offsets(), [[0, 1], [1, 0]])


# --- figures a class can read: shapes and text measured with the renderer's extents ---------

@pytest.fixture(scope="module")
def hundred():
    """One arm of 100 seeds of 2-2-2-1, briefly trained: for a gallery of 100 panels."""
    return run_study([Arm("normal")], Setup(seeds=100, epochs=300, lr=0.05), progress=False,
                     record_every=50)


@pytest.mark.slow  # draws 100 panels
def test_a_gallery_of_100_seeds_wraps_into_a_10_by_10_grid(hundred):
    fig = figures.seed_gallery(hundred, seeds=100)
    panels = [ax for ax in fig.axes if ax.get_title().startswith("seed ")]
    assert len(panels) == 100
    columns = {round(ax.get_position().x0, 6) for ax in panels}
    rows = {round(ax.get_position().y0, 6) for ax in panels}
    assert (len(columns), len(rows)) == (10, 10)
    width, height = fig.get_size_inches()
    assert 0.7 < width / height < 1.4  # near square, not a 16,000 x 235 px strip
    small = figures.seed_gallery(hundred, seeds=5, columns=5)
    assert small.get_size_inches()[0] == 5 * 1.6 + 1.0  # 1.6 inches a column, 1 for the bar


def test_the_figures_fit_a_notebook_column_at_9_points_or_more(study):
    """Catches figures a notebook shrinks (study_curves 5.5 inches an arm, histograms' 7-point
    ticks, a boundary's 8-point legend, the 11-inch signal figure): each figure, at its
    default size, is as wide as a notebook's column at most, every text 9 points or more
    there."""
    X, y = tinynet.data.xor()
    net = tinynet.mlp([2, 2, 1], activation="leaky_relu", output="sigmoid", seed=0)
    history = net.fit(X, y, epochs=20, lr=0.1, record_every=1)
    reports = {name: tinynet.diagnostics.propagate(
        tinynet.mlp([2, 8, 8, 1], activation="relu", init=name, seed=0), X)
        for name in ("he_normal", "xavier_normal")}
    for fig in (plots.decision_boundary(net), plots.signal(reports), figures.loss_curves(history),
                figures.study_curves(study), figures.layer_histograms(study),
                figures.rates([study]), figures.loss_curves(study.results[0]),
                figures.seed_gallery(study, seeds=4)):
        assert_legible_in_a_notebook(fig)


@pytest.mark.slow  # draws 100 panels
def test_a_gallery_of_100_seeds_fits_a_notebook_column_with_its_legend_on_top(hundred):
    """Catches the gallery a notebook shrinks (1,700 pixels wide shown at 968, its 8-point
    titles read at 4.6 points) and its legend after the 100 panels, where a reader finds it
    last: it is as wide as the column at most, every text 9 points or more there, and the
    legend above every panel."""
    fig = figures.seed_gallery(hundred, seeds=100)
    assert_legible_in_a_notebook(fig)
    renderer = drawn(fig)
    legend = fig.legends[0].get_window_extent(renderer)
    panels = [ax for ax in fig.axes if ax.get_title().startswith("seed ")]
    assert all(legend.y0 >= ax.get_tightbbox(renderer).y1 for ax in panels)


@pytest.mark.parametrize("seeds", [4, 10, pytest.param(100, marks=pytest.mark.slow)])
def test_the_gallerys_title_and_legend_overlap_no_panel(hundred, seeds):
    fig = figures.seed_gallery(hundred, seeds=seeds)
    renderer = drawn(fig)
    title = fig._suptitle.get_window_extent(renderer)
    legend = fig.legends[0].get_window_extent(renderer)
    for ax in fig.axes:
        box = ax.get_tightbbox(renderer)  # the panel with its title
        assert not overlap(title, box), ax.get_title()
        assert not overlap(legend, box), ax.get_title()
    assert not overlap(title, legend)


def test_failed_only_loss_curves_draw_the_failed_seeds_alone(study):
    result = study.result(0)
    failed = np.flatnonzero(result.outcomes != "solved")
    assert 0 < len(failed) < len(result.outcomes)  # the fixture has both
    fig = figures.loss_curves(result, which="failed", seeds=100)
    ax = fig.axes[0]
    curves = [line for line in ax.lines if line.get_linestyle() == "-"]
    assert len(curves) == len(failed)
    for line, member in zip(curves, failed):
        np.testing.assert_array_equal(line.get_ydata(), result.ensemble.loss[member])
        assert line.get_color() == figures.OUTCOME_COLORS[result.outcomes[member]]
    assert ax.get_title() == f"loss of {len(failed)} failed seeds"
    assert len([line for line in figures.loss_curves(result, which="failed", seeds=2).axes[0].lines
                if line.get_linestyle() == "-"]) == 2
    with pytest.raises(ValueError, match="which='failed' needs each member's outcome"):
        figures.loss_curves(result.ensemble, which="failed")
    with pytest.raises(tinynet.UnknownNameError, match="unknown which 'solved'"):
        figures.loss_curves(result, which="solved")


@pytest.mark.parametrize("which", ["all", "failed", "every arm"])
def test_no_text_of_a_loss_figure_overlaps_another_or_the_curves(study, which):
    fig = figures.study_curves(study) if which == "every arm" else \
        figures.loss_curves(study.result(0), which=which)
    renderer = drawn(fig)
    for ax in fig.axes:  # study_curves: one legend below every panel, the figure's
        _texts_apart(ax, renderer, fig.legends[0] if fig.legends else ax.get_legend())


def _texts_apart(ax, renderer, legend):
    labels = [text.get_text() for text in legend.get_texts()]
    assert sum(label.startswith("plateau 1/") for label in labels) == 3  # named there, once
    assert not overlap(legend.get_window_extent(renderer), ax.get_window_extent(renderer))
    texts = [ax.title, ax.xaxis.label, ax.yaxis.label, *legend.get_texts(),
             *[tick for tick in ax.get_xticklabels() + ax.get_yticklabels()
               if tick.get_text() and tick.get_visible()]]
    boxes = [(text.get_text(), text.get_window_extent(renderer)) for text in texts]
    for i, (name, box) in enumerate(boxes):
        for other, other_box in boxes[i + 1:]:
            assert not overlap(box, other_box), (name, other)
    assert not ax.texts  # nothing written over the curves


# --- what the colours mean, and a boundary drawn where it is --------------------------------

def _colour_bars(fig):
    """The Axes of ``fig`` that are colour bars of a network's output (by their label)."""
    return [ax for ax in fig.axes if ax.get_ylabel() == plots.OUTPUT_LABEL]


def test_a_boundary_has_a_colour_bar_saying_what_its_colours_are(study):
    """Catches a decision boundary whose colours nothing explains: its figure has a colour bar
    labelled as the network's output, from 0 to 1, with 0.5 (the contour's level) marked."""
    fig = plots.decision_boundary(study.network(0, 0))
    (bar,) = _colour_bars(fig)
    renderer = drawn(fig)
    assert bar.get_ylim() == (0.0, 1.0)
    assert [tick.get_text() for tick in bar.get_yticklabels()] == ["0.0", "0.5", "1.0"]
    (mark,) = bar.lines
    assert list(mark.get_ydata()) == [0.5, 0.5] and mark.get_color() == "black"
    assert not overlap(bar.get_tightbbox(renderer), fig.axes[0].get_tightbbox(renderer))
    assert not _colour_bars(plots.decision_boundary(study.network(0, 0), colorbar=False))


@pytest.mark.parametrize("seeds", [2, pytest.param(100, marks=pytest.mark.slow)])
def test_a_gallery_shares_one_colour_bar_beside_its_panels(hundred, seeds):
    """Catches a gallery without a colour bar, one bar per panel, or a bar over a panel, the
    title or the legend."""
    fig = figures.seed_gallery(hundred, seeds=seeds)
    (bar,) = _colour_bars(fig)
    renderer = drawn(fig)
    box = bar.get_tightbbox(renderer)
    panels = [ax for ax in fig.axes if ax.get_title().startswith("seed ")]
    assert len(panels) == seeds
    for ax in panels:
        assert not overlap(box, ax.get_tightbbox(renderer)), ax.get_title()
        assert box.x0 > ax.get_window_extent(renderer).x1  # at the right of every panel
    for text in (fig._suptitle, fig.legends[0]):
        assert not overlap(box, text.get_window_extent(renderer))
    assert box.x1 <= fig.bbox.x1  # all of it, label included, inside the figure


def _kinked_network() -> tinynet.Network:
    """A 2-1-1 network whose output's logit is z = -0.001 - leaky_relu(10 d), with
    d = x1 + 0.7 x2 - 1: steep where d > 0 (z = -0.001 - 10 d) and nearly flat where d < 0
    (z = 0.1 (-0.01 - d): an output within 0.002 of 0.5 near the kink), so that the output is
    0.5 on the straight line d = -0.01, x1 + 0.7 x2 = 0.99, within a grid spacing of the kink.
    Interpolating between grid nodes on either side of the kink puts the contour next to the
    flat side's nodes, which step along the slanted kink: a staircase."""
    net = tinynet.mlp([2, 1, 1], activation="leaky_relu", output="sigmoid", seed=0)
    net.layers[0].W[...], net.layers[0].b[...] = [[10.0, 7.0]], [-10.0]
    net.layers[1].W[...], net.layers[1].b[...] = [[-1.0]], [-0.001]
    return net


def _contour_lines(fig) -> list[np.ndarray]:
    """The vertices of the 0.5 contour of ``fig``'s first Axes, a (k, 2) array per line (none
    where the output never crosses 0.5)."""
    contours = [c for c in fig.axes[0].collections if isinstance(c, ContourSet)]
    assert all(list(contour.levels) == [0.5] for contour in contours)
    return [line for contour in contours for line in contour.allsegs[0]]


def _turning(line: np.ndarray) -> float:
    """The sum of the angles (radians) a line turns through at its vertices (segments shorter
    than 1e-9 left out)."""
    steps = np.diff(line, axis=0)
    steps = steps[np.hypot(*steps.T) > 1e-9]
    angles = np.arctan2(steps[:, 1], steps[:, 0])
    return float(np.abs(np.angle(np.exp(1j * np.diff(angles)))).sum())


@pytest.mark.parametrize("resolution", [41, 121])  # a gallery's panels, and the default
def test_the_half_contour_is_straight_where_the_boundary_is(resolution):
    """Catches the staircase that linear interpolation on the grid draws along a kink with a
    flat side: the boundary of this network is a straight line, so the contour must be one,
    every vertex on it. (A contour interpolated on the grid puts vertices up to a grid
    spacing off the line, and zig-zags: at resolution 41 its turns add up to 28 radians.)"""
    fig = plots.decision_boundary(_kinked_network(), resolution=resolution)
    (line,) = _contour_lines(fig)
    assert len(line) > 10
    np.testing.assert_allclose(line @ [1.0, 0.7], 0.99, atol=1e-9)
    assert _turning(line) < 1e-5  # radians, over the whole line


def test_every_vertex_of_a_trained_seeds_contour_has_an_output_of_one_half(study):
    """Catches contour vertices placed by interpolation between grid nodes: on these trained
    seeds' boundaries, each vertex is where the network itself outputs 0.5 (to 1e-9), not
    only near it."""
    checked = 0
    for seed in study.seeds[:12]:
        net = study.network(0, seed)
        fig = plots.decision_boundary(net, resolution=41)
        for line in _contour_lines(fig):
            output = tinynet.predict(net, line, backend="numpy")[:, 0]
            np.testing.assert_allclose(output, 0.5, atol=1e-9)
            checked += len(line)
    assert checked > 100


# --- depth and signal: points where depths are few, legends clear of the data ---------------

@pytest.fixture(scope="module")
def two_depths():
    """A depth study of two depths (1 and 8), lesson 4's six initializers, 4 seeds, briefly
    trained."""
    from dataclasses import replace

    from tinynet.xor import run_depth_study
    from tinynet.xor.depth import DEPTH_SETUP
    return run_depth_study(replace(DEPTH_SETUP, seeds=4, epochs=3), depths=(1, 8))


def test_a_depth_figure_draws_each_depth_as_points_with_intervals(two_depths):
    """Catches two depths joined by a line (a trend the study did not measure): the rates
    are points with their 95 % intervals as bars, the moments points too; the only line is
    the input's E[x²], across the panel."""
    fig = figures.depth(two_depths)
    rate_ax, moment_ax = fig.axes[:2]
    assert len(rate_ax.containers) == len(two_depths.arms)  # an errorbar per initializer
    for name, intervals, container in zip(two_depths.arms, two_depths.intervals,
                                          rate_ax.containers):
        marks, _, (bars,) = container.lines
        np.testing.assert_allclose(marks.get_ydata(), 100 * np.array(two_depths.rates(name)))
        np.testing.assert_allclose([bar[:, 1] for bar in bars.get_segments()],
                                   100 * np.array(intervals))
    for ax in (rate_ax, moment_ax):
        joined = [line.get_label() for line in ax.lines
                  if line.get_linestyle() != "None" and len(line.get_xdata()) > 1]
        assert joined == ([] if ax is rate_ax else ["input E[x²]"]), ax.get_title()


@pytest.mark.parametrize("draw", ["depth", "signal"])
def test_a_legend_covers_no_data_point(two_depths, draw):
    """Catches a legend drawn over the curves (lesson 4's signal legend hid N(0,0.01²)'s):
    no data point of any line lies inside a legend's box, and no legend overlaps a panel
    (its data area or its labels)."""
    if draw == "depth":
        fig = figures.depth(two_depths)
    else:  # lesson 4's signal: 16 relu layers of 16, each initializer of the depth study
        from tinynet.xor import depth_arms
        X = tinynet.data.circles(n=128, seed=0)[0]
        fig = plots.signal({arm.name: tinynet.diagnostics.propagate(
            tinynet.mlp([2] + [16] * 16 + [1], activation="relu", init=arm.init, seed=0), X)
            for arm in depth_arms("relu")})
    renderer = drawn(fig)
    assert legends(fig)
    for legend in legends(fig):
        box = legend.get_window_extent(renderer)
        assert points_under(box, fig) == []
        for ax in fig.axes:
            assert not overlap(box, ax.get_tightbbox(renderer)), ax.get_title()


def test_layers_are_numbered_with_whole_numbers():
    """Catches tick labels such as 2.5 and 7.5 on an axis of layer indices (lesson 5's 20
    layers): every tick label of the layer axis is a whole number."""
    X = np.random.default_rng(0).normal(size=(64, 8))
    net = tinynet.mlp([8] * 21, activation="identity", output="identity", seed=0)
    fig = plots.signal({"identity": tinynet.diagnostics.propagate(net, X)})
    drawn(fig)
    for ax in fig.axes:
        low, high = ax.get_xlim()
        labels = [tick.get_text() for tick in ax.get_xticklabels()
                  if tick.get_text() and low <= tick.get_position()[0] <= high]
        assert len(labels) >= 3
        assert all(label.isdigit() for label in labels), labels
