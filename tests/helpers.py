"""Shared helpers for the test suite."""

from __future__ import annotations

import ctypes
import os
import shutil
import signal
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from tinynet.activations import ACTIVATIONS, Activation

ELEMENT_WISE = sorted(name for name, cls in ACTIVATIONS.items() if not cls.over_units)
"""The activations applied element by element (all but softmax, which is defined over a
layer's units and only ever an output layer, with cross-entropy): those a test may put in any
layer and differentiate alone."""


def central_difference(f, array: np.ndarray, h: float = 1e-6) -> np.ndarray:
    """Numerical gradient of the scalar f() w.r.t. ``array`` (changed in place, then restored)."""
    grad = np.zeros_like(array)
    for index in np.ndindex(array.shape):
        saved = array[index]
        array[index] = saved + h
        up = f()
        array[index] = saved - h
        down = f()
        array[index] = saved
        grad[index] = (up - down) / (2 * h)
    return grad


def relative_error(a: np.ndarray, b: np.ndarray) -> float:
    """||a - b|| / (||a|| + ||b||), 0 when both are 0."""
    scale = np.linalg.norm(a) + np.linalg.norm(b)
    return 0.0 if scale == 0 else float(np.linalg.norm(a - b) / scale)


@dataclass(frozen=True, repr=False)
class Softplus(Activation):
    """A user's own activation, log(1 + e^z): tinynet has no compiled version of it."""

    name = "softplus"

    def forward(self, z):
        return np.log1p(np.exp(z))

    def derivative(self, z):
        return 1 / (1 + np.exp(-z))


@dataclass(frozen=True, repr=False)
class Scaled(Activation):
    """A user's activation with a parameter: φ(z) = beta z."""

    name = "scaled"
    beta: float = 1.0

    def forward_and_derivative(self, z):
        return self.beta * z, self.beta


ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"


def page(name: str) -> str:
    """The text of the documentation page ``docs/<name>``, or of the README for
    ``"README.md"``: where the tests find the numbers, tables and sentences they keep in step
    with the code and the committed results."""
    return (ROOT / name if name == "README.md" else DOCS / name).read_text(encoding="utf-8")


def pages() -> dict[str, str]:
    """Every page a reader sees: the README and each Markdown page of ``docs/``, by name."""
    return {"README.md": page("README.md"),
            **{path.name: page(path.name) for path in sorted(DOCS.glob("*.md"))}}


def checkout_environment(*paths: Path) -> dict:
    """The environment for a Python started by a test: this checkout's tinynet (and
    ``paths``) first on the path, matplotlib headless."""
    return {**os.environ, "MPLBACKEND": "Agg", "PYTHONPATH": os.pathsep.join(
        filter(None, [str(ROOT), *map(str, paths), os.environ.get("PYTHONPATH")]))}


def run_python(arguments: list[str], folder: Path) -> subprocess.CompletedProcess:
    """``python *arguments`` in ``folder`` with :func:`checkout_environment`, output captured."""
    return subprocess.run([sys.executable, *arguments], cwd=folder, capture_output=True,
                          text=True, timeout=600, env=checkout_environment())


SMALL = {  # settings that keep each run of a lesson to a few seconds, by lesson
    "01_a_network_by_hand": {"EPOCHS": 300},
    "02_many_seeds": {"SEEDS": 100, "GROUP": 25, "EPOCHS": 2000},
    "03_when_he_is_normal": {"SEEDS": 100, "WIDTHS": (2, 8)},
    "04_depth": {"DEPTHS": (1, 2), "SEEDS": 64, "EPOCHS": 20, "SIGNAL_DEPTH": 4,
                 "SPREAD_SEEDS": 50},
    "05_distributions_and_fans": {"SAMPLES": 10_000, "LAYERS": 6},
    "06_what_fixes_99mlp": {"SEEDS": 64, "SWEEP_SEEDS": 16, "EPOCHS": 300},
    "07_beyond_xor": {"SEEDS": 8, "EPOCHS": 2, "DEPTH": 2},
    "08_depth_that_trains": {"DEPTH": 8, "SEEDS": 16, "EPOCHS": 20},
}


def lesson_checkout(folder: Path) -> Path:
    """A git repository in ``folder`` holding this checkout's ``.gitignore`` and ``tutorial/``
    (the lessons, the settings JupyterLab reads for them, the committed figures), all committed:
    a clone to run the lessons in, where :func:`git_changes` then shows what they left. Returns
    its root."""
    repository = folder / "checkout"
    shutil.copytree(ROOT / "tutorial", repository / "tutorial", ignore=shutil.ignore_patterns(
        "notebooks", "__pycache__", "lesson_figures", ".ipynb_checkpoints"))
    shutil.copyfile(ROOT / ".gitignore", repository / ".gitignore")
    for command in (["init", "-q"], ["add", "."],
                    ["-c", "user.name=tinynet tests", "-c", "user.email=tests@tinynet.invalid",
                     "commit", "-q", "-m", "the lessons"]):
        subprocess.run(["git", "-C", str(repository), *command], check=True)
    return repository


def git_changes(repository: Path) -> list[str]:
    """What ``git status`` shows in ``repository``: every changed or untracked file, one line
    each (``--porcelain``, untracked files listed one by one); [] for a clean tree."""
    return subprocess.run(["git", "-C", str(repository), "status", "--porcelain",
                           "--untracked-files=all"], check=True, capture_output=True,
                          text=True).stdout.splitlines()


NOTEBOOK_PIXELS = 968
"""How wide JupyterLab's notebook column shows a figure, in pixels: a wider one is shrunk to
fit, its texts with it."""


def shown_points(fig) -> float:
    """The size of the smallest text of ``fig`` (a matplotlib Figure), in points, as a notebook
    shows it: its size in the figure, times the column's width over the figure's in pixels
    when the figure is wider (Jupyter shows tinynet's figures at 100 pixels an inch,
    tinynet.plots._png)."""
    from matplotlib.text import Text
    fig.draw_without_rendering()  # makes the tick labels
    pixels = fig.get_size_inches()[0] * 100
    texts = [text for text in fig.findobj(Text) if text.get_visible() and text.get_text().strip()]
    return min(text.get_fontsize() for text in texts) * min(1.0, NOTEBOOK_PIXELS / pixels)


def assert_legible_in_a_notebook(fig) -> None:
    """``fig`` is as wide as a notebook's column at most (it is shown unshrunk) and its smallest
    text is 9 points or more there (:func:`shown_points`)."""
    assert fig.get_size_inches()[0] * 100 <= NOTEBOOK_PIXELS
    assert shown_points(fig) >= 9


# --- figures, as drawn -------------------------------------------------------------------------

def drawn(fig):
    """``fig`` laid out and drawn by Agg, and its renderer, so extents are final."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    canvas = FigureCanvasAgg(fig)
    canvas.draw()
    return canvas.get_renderer()


def overlap(a, b) -> bool:
    """Whether two display-space boxes share more than a pixel's sliver."""
    return min(a.x1, b.x1) - max(a.x0, b.x0) > 1 and min(a.y1, b.y1) - max(a.y0, b.y0) > 1


def legends(fig) -> list:
    """Every legend of ``fig``: the figure's and its Axes'."""
    return [*fig.legends, *(ax.get_legend() for ax in fig.axes if ax.get_legend())]


def points_under(box, fig) -> list[str]:
    """The lines of ``fig`` with a data point inside ``box`` (display space)."""
    covered = []
    for ax in fig.axes:
        for line in ax.lines:
            points = line.get_transform().transform(line.get_xydata())
            if any(box.contains(x, y) for x, y in points[np.isfinite(points).all(axis=1)]):
                covered.append(line.get_label())
    return covered


CAPABILITIES = {"dac_override": 1, "dac_read_search": 2, "fowner": 3}
"""The capabilities that let root write (and read, and chmod) regardless of a file's mode."""


def capabilities_dropped() -> Callable[[], None]:
    """A preexec_fn for a Python started by root: it removes :data:`CAPABILITIES` from the
    bounding set, so that the program exec'd next runs without them (root's permitted set
    after exec is the bounding set). prctl is looked up here, before the fork."""
    prctl = ctypes.CDLL(None, use_errno=True).prctl

    def drop() -> None:
        for number in CAPABILITIES.values():
            prctl(24, number, 0, 0, 0)  # PR_CAPBSET_DROP; fails, harmlessly, without CAP_SETPCAP
    return drop


def default_sigint() -> None:
    """A preexec_fn: SIGINT's default disposition in the child. A suite started in the
    background by a shell inherits SIGINT ignored, and so would the child: it would never see
    the Ctrl-C a test sends it, as a terminal's Ctrl-C finds it."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def default_stop_signals() -> None:
    """A preexec_fn: SIGINT's and SIGHUP's default dispositions in the child (a suite started
    with ``nohup``, or in the background, inherits them ignored; see :func:`default_sigint`)."""
    default_sigint()
    if hasattr(signal, "SIGHUP"):
        signal.signal(signal.SIGHUP, signal.SIG_DFL)


COMPILE_NOTICES = ("tinynet: compiling the ", "tinynet: compiled in ", "tinynet: still compiling")
"""How the lines of a compile notice start (tinynet.compiled.notices)."""


def is_compile_notice(line: str) -> bool:
    """Whether ``line`` is one of a compile notice's lines."""
    return line.lstrip("\r\x1b[K").startswith(COMPILE_NOTICES)
