"""The tutorial's lessons run from the command line and as notebooks, through the same code
a student runs (tutorial/make_notebooks.py), with small settings; the README's lesson block
is the committed run's."""

import ast
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import make_notebooks  # tutorial/ is on the path (tests/conftest.py)

ROOT = Path(__file__).resolve().parents[1]
LESSONS = make_notebooks.LESSONS

SMALL = {  # settings that keep each run to a few seconds
    "01_a_network_by_hand": {"EPOCHS": 300},
    "02_many_seeds": {"SEEDS": 100, "GROUP": 25, "EPOCHS": 2000},
    "03_when_he_is_normal": {"SEEDS": 100, "WIDTHS": (2, 8)},
    "04_depth": {"DEPTHS": (1, 2), "SEEDS": 64, "EPOCHS": 20, "SIGNAL_DEPTH": 4,
                 "SPREAD_SEEDS": 50},
    "05_distributions_and_fans": {"SAMPLES": 10_000, "LAYERS": 6},
}


def test_there_are_five_lessons_each_with_small_settings_and_a_readme_figure():
    names = [lesson.stem for lesson in LESSONS]
    assert len(names) == 5 and names == sorted(names)
    assert set(SMALL) == set(names) == set(make_notebooks.README_FIGURES)


@pytest.mark.parametrize("lesson", LESSONS, ids=lambda lesson: lesson.stem)
def test_the_lesson_runs_as_a_script(lesson, tmp_path):
    script = tmp_path / lesson.name
    script.write_text(make_notebooks.as_script(
        make_notebooks.with_parameters(lesson, SMALL[lesson.stem])))
    done = subprocess.run([sys.executable, script.name], cwd=tmp_path, capture_output=True,
                          text=True, timeout=600,
                          env={**os.environ, "MPLBACKEND": "Agg",
                               "PYTHONPATH": os.pathsep.join(
                                   filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))})
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip()
    figure, _ = make_notebooks.README_FIGURES[lesson.stem]
    assert (tmp_path / figure).stat().st_size > 10_000


@pytest.mark.parametrize("lesson", LESSONS, ids=lambda lesson: lesson.stem)
def test_the_lesson_runs_as_a_notebook(lesson, tmp_path):
    notebook = make_notebooks.execute(
        make_notebooks.with_parameters(lesson, SMALL[lesson.stem]), tmp_path)
    outputs = [output for cell in notebook.cells if cell.cell_type == "code"
               for output in cell.outputs]
    assert not [output for output in outputs if output.output_type == "error"]
    assert any("image/png" in output.get("data", {}) for output in outputs)  # shown inline
    figure, _ = make_notebooks.README_FIGURES[lesson.stem]
    assert (tmp_path / figure).exists()


def test_the_injected_settings_are_the_ones_used(tmp_path):
    notebook = make_notebooks.execute(make_notebooks.with_parameters(
        LESSONS[4], {"SAMPLES": 1000, "LAYERS": 2}), tmp_path)
    printed = "".join(output.get("text", "") for cell in notebook.cells
                      if cell.cell_type == "code" for output in cell.outputs)
    assert "after 2 layers" in printed and "after 20 layers" not in printed


def test_an_unknown_setting_is_refused():
    with pytest.raises(ValueError, match="has no parameter SEED; its parameters are SAMPLES"):
        make_notebooks.with_parameters(LESSONS[4], {"SEED": 1})


@pytest.mark.parametrize("lesson", LESSONS, ids=lambda lesson: lesson.stem)
def test_the_lesson_has_settings_a_title_and_two_or_three_exercises(lesson):
    notebook = make_notebooks.with_parameters(lesson)
    assert make_notebooks.parameter_names(notebook)
    assert make_notebooks.title(lesson)
    exercises = [cell.source for cell in notebook.cells
                 if cell.cell_type == "markdown" and "## Exercises" in cell.source]
    assert len(exercises) == 1
    numbered = [line for line in exercises[0].splitlines() if line[:2] in ("1.", "2.", "3.")]
    assert 2 <= len(numbered) <= 3
    ast.parse(make_notebooks.as_script(notebook))  # the script is valid Python


def test_the_readme_block_is_the_committed_run():
    readme = (ROOT / "README.md").read_text()
    start, end = make_notebooks.MARKERS
    shown = readme[readme.index(start) + len(start) + 1:readme.index(end)]
    record = json.loads(make_notebooks.RECORD.read_text())
    assert shown == make_notebooks.render(record)
    assert set(record["lessons"]) == set(SMALL)
    for figure, _ in make_notebooks.README_FIGURES.values():
        assert (make_notebooks.FIGURES / figure).exists()
        assert f"tutorial/figures/{figure}" in shown
