"""The example scripts as command-line programs: they write where the user says, by default
into a new folder named after the example under the current folder, never over the committed
files (``--commit`` writes those, and only those); and their ``--help`` reads whole.

Each example that can run in a second or two runs here from a temporary working folder, with
its smallest arguments; the others (a full study, a browser) have their arguments resolved
only."""

import re
from pathlib import Path

import pytest

import datasets                # examples/, on the path (tests/conftest.py)
import depth
import fan_average
import fixes
import look_inside
import playground_screenshot
import residual_stream
import signal_propagation
import xor_studies
from helpers import ROOT
from outputs import COMMITTED_FIGURES

EXAMPLES = ROOT / "examples"

QUICK_RUNS = {
    "datasets": (datasets, ["--epochs", "1"]),
    "fan_average": (fan_average, ["--m", "2", "--n", "4", "--depths", "2", "--batch", "4",
                                  "--no-training"]),
    "signal_propagation": (signal_propagation, ["--depth", "1", "--width", "2", "--batch", "2"]),
    "look_inside": (look_inside, ["--seeds", "2", "--epochs", "10"]),
}
"""The examples that draw figures, each with its smallest run."""


def snapshot(folder: Path) -> dict[Path, tuple[int, int]]:
    """Every file under ``folder`` (bytecode caches aside), with its size and modification
    time in nanoseconds."""
    return {path: (path.stat().st_size, path.stat().st_mtime_ns)
            for path in folder.rglob("*") if path.is_file() and "__pycache__" not in path.parts}


@pytest.mark.parametrize("name", [
    # signal_propagation draws six figures, about 3 s even at its smallest: with the slow tests
    pytest.param(name, marks=pytest.mark.slow) if name == "signal_propagation" else name
    for name in QUICK_RUNS])
def test_an_example_writes_into_its_own_folder_under_the_working_folder(name, tmp_path,
                                                                        monkeypatch, capsys):
    module, argv = QUICK_RUNS[name]
    monkeypatch.chdir(tmp_path)
    before = snapshot(EXAMPLES)
    module.main(argv)
    assert snapshot(EXAMPLES) == before, "the example changed files under examples/"
    written = {path.relative_to(tmp_path) for path in tmp_path.rglob("*") if path.is_file()}
    assert written and all(path.parts[0] == name for path in written), written
    # --commit writes the same names into examples/figures: exactly committed files
    assert {path.name for path in written} <= {path.name for path in COMMITTED_FIGURES.iterdir()}


@pytest.mark.parametrize("name", [*QUICK_RUNS, "playground_screenshot"])
def test_out_and_commit_choose_the_folder(name, tmp_path, monkeypatch):
    module = QUICK_RUNS[name][0] if name in QUICK_RUNS else playground_screenshot
    monkeypatch.chdir(tmp_path)
    assert module.parse_args([]).out == Path(name)
    assert module.parse_args(["--out", str(tmp_path / "mine")]).out == tmp_path / "mine"
    assert module.parse_args(["--commit"]).out == COMMITTED_FIGURES


def test_the_screenshot_is_a_committed_figure():
    assert (COMMITTED_FIGURES / playground_screenshot.FIGURE).is_file()


def test_xor_studies_writes_under_its_own_folder(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    before = snapshot(EXAMPLES)
    xor_studies.main(["--seeds", "2", "--only", "seed_ranges"])
    assert snapshot(EXAMPLES) == before
    assert [path.relative_to(tmp_path) for path in tmp_path.rglob("*") if path.is_file()] == \
        [Path("xor_studies/results/xor_seed_ranges.json")]


def test_the_long_studies_write_under_their_own_folders_unless_committed(tmp_path,
                                                                         monkeypatch):
    """examples/depth.py and fixes.py run for an hour and half an hour: their paths only."""
    monkeypatch.chdir(tmp_path)
    args = depth.parse_args([])
    assert (args.json, args.figure) == (Path("depth/depth_relu.json"),
                                        Path("depth/depth_relu.png"))
    args = fixes.parse_args([])
    assert (args.json, args.figure) == (Path("fixes/fixes.json"), Path("fixes/fixes.png"))
    args = fixes.parse_args(["--commit"])
    assert (args.json, args.figure) == (EXAMPLES / "results" / "fixes.json",
                                        COMMITTED_FIGURES / "fixes.png")
    args = xor_studies.parse_args([])
    assert (args.results, args.figures) == (Path("xor_studies/results"),
                                            Path("xor_studies/figures"))


HELP_WIDTH = 100
"""The terminal width the help is read at (the width of the scripts' docstrings)."""


@pytest.mark.parametrize("module", [datasets, depth, fan_average, fixes, look_inside,
                                    playground_screenshot, residual_stream, signal_propagation,
                                    xor_studies],
                         ids=lambda module: module.__name__)
def test_an_examples_help_reads_whole(module, monkeypatch, capsys):
    """No line longer than the terminal, no command run together with the next line's (a
    lost backslash), and the description a whole sentence, not one that ends with a colon
    before the options."""
    monkeypatch.setenv("COLUMNS", str(HELP_WIDTH))
    with pytest.raises(SystemExit) as exited:
        module.parse_args(["--help"])
    assert exited.value.code == 0
    text = capsys.readouterr().out
    assert max(map(len, text.splitlines())) <= HELP_WIDTH
    usage, description, *rest = text.split("\n\n")
    assert description.rstrip().endswith((".", "?")), description
    options = next(i for i, part in enumerate(rest) if part.startswith("options:"))
    epilog = "\n\n".join(rest[options + 1:])
    assert not re.search(r"\S {2,}--\w", epilog), epilog
