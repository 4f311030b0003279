"""The tutorial's lessons run from the command line and as notebooks, through the same code
a student runs (tutorial/make_notebooks.py), with small settings, in a clone whose `git status`
they leave clean, printing lines a notebook shows whole; so does every exercise; the teaching
page's lesson list is the committed run's, and the numbers the lessons' text quotes are what
they printed in it."""

import json
import re
import subprocess
from pathlib import Path

import pytest

from helpers import SMALL, checkout_environment, git_changes, lesson_checkout, page, run_python

import exercises  # tutorial/ is on the path (tests/conftest.py)
import make_notebooks

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOK_COLUMNS = 100
"""The longest line a lesson prints: what a notebook's output area shows whole beside a figure
968 pixels wide (tinynet.text.fold's default width)."""
LESSONS = {lesson.stem: lesson for lesson in make_notebooks.LESSONS}


def too_long(printed: str) -> list[str]:
    """The lines of ``printed`` longer than :data:`NOTEBOOK_COLUMNS`."""
    return [line for line in printed.splitlines() if len(line) > NOTEBOOK_COLUMNS]


FASTER = {  # what an exercise needs beside the small settings to stay quick, by exercise
    "02.1": {"GROUP": 100},   # studies of 100, as the exercise's 10,000 seeds make them
    "07.2": {"EPOCHS": 1},    # 200 seeds
    "08.3": {"EPOCHS": 40},   # steps enough for the warmup's 400
}

QUOTED = {  # per lesson: (what its text says, what its default run printed), both verbatim
    "01_a_network_by_hand": [("is exactly one such step",
                              "layer 0 W after one step, largest difference: 0\n")],
    "02_many_seeds": [("4 of the 20 intervals miss", "4 of 20 intervals miss"),
                      ("A p-value of 0.16", "against 55/100: p = 0.16"),
                      ("Ten points need about 400", "45% against 55%: 391 seeds"),
                      ("five about 1,500", "40% against 45%: 1,533 seeds"),
                      ("one point about 38,000", "40% against 41%: 37,826 seeds"),
                      ("from 91 % to 98 %, only about 160", "91% against 98%: 165 seeds")],
    "03_when_he_is_normal": [("`he_leaky`'s std is 0.99995", "std = 0.99995"),
                             ("about a quarter of the time", "2-2-1   23% [20%, 27%]"),
                             ("From width 8 on, He's rate is higher", "2-8-1   91% [89%, 94%]  98% [96%, 99%]"),
                             ("by more than the intervals", "2-16-1  89% [86%, 91%]  100% [99%, 100%]")],
    "04_depth": [("below the 10th percentile", "10th to 90th percentile 0.0029"),
                 ("lie far below the predictions", "He          E[a²] after 16 hidden layers: predicted     0.316, measured  0.000338"),
                 ("from 59 % of the seeds with four", "4      59% [47%, 71%]"),
                 ("162 at depth 4", "4      162 "),
                 ("not at all with eight", "8      0% [0%, 6%]       0% [0%, 6%]"),
                 ("trains with one or two hidden layers", "2      100% [94%, 100%]  0% [0%, 6%]")],
    "05_distributions_and_fans": [("At c = 2 that is 0.7737", "theory γ = 0.7737"),
                                  ("almost a quarter of the variance is gone",
                                   "variance left 0.7735"),
                                  ("Only the geometric mean makes that exactly 1",
                                   "multiplies E[a²] by m·n/fan² = 1.000")],
    "06_what_fixes_99mlp": [("The notes' network fails mostly with one output wrong",
                             "the notes' network              failed  123: one wrong  103")],
    "07_beyond_xor": [("std 0.01 barely moves in these epochs: no seed learns",
                       "std 0.01  0/50     0.0%"),
                      ("shrinks its input's scale by about 0.01 · √(100/2) ≈ 0.07",
                       "normal(std=0.01)   std of activations by layer: 0.058  0.0041")],
    "08_depth_that_trains": [("after 16 blocks it is in the millions",
                              "x + 1·F(x)\n  E[x²] after 16 blocks: measured 3.01e+06"),
                             ("grows only to about a hundred",
                              "x + 1·F(LN(x))\n  E[x²] after 16 blocks: measured 95.9"),
                             ("the gradient grows too, faster than the prediction, and again "
                              "far less with the norm", "second block: measured 158, "
                                                        "predicted 24.8"),
                             ("At four layers the plain stack learns from most seeds. At 32 "
                              "it learns from 3 % of them", "plain, He     92% [83%, 97%]   3%"),
                             ("the pre-norm blocks from 28 % and ReZero's from 80 %, both more "
                              "by Fisher's test", "pre-norm, He 28% vs plain, He 3%: significant"),
                             ("it learns from few seeds at four layers and from most at 32",
                              "ReZero, He    11% [5%, 21%]    80% [68%, 88%]")],
}


def words(text: str) -> str:
    """``text`` with its comment marks and line breaks folded into single spaces."""
    return " ".join(text.replace("\n# ", " ").replace("\n#", " ").split())


def run_script(text: str, name: str, folder: Path) -> subprocess.CompletedProcess:
    (folder / name).write_text(text)
    return run_python([name], folder)


def test_there_are_eight_lessons_each_with_small_settings_and_a_shown_figure():
    names = list(LESSONS)
    assert len(names) == 8 and names == sorted(names)
    assert set(SMALL) == set(names) == set(make_notebooks.SHOWN_FIGURES) == set(QUOTED)


@pytest.mark.slow
@pytest.mark.parametrize("name", LESSONS)
def test_the_lesson_runs_as_a_script(name, tmp_path):
    lesson = LESSONS[name]
    text = make_notebooks.script(lesson, SMALL[name])
    settings = "# %%\n" + "".join(f"{k} = {v!r}\n" for k, v in SMALL[name].items()) + "\n"
    assert text.replace(settings, "", 1) == lesson.read_text()  # the lesson, plus the settings
    assert make_notebooks.script(lesson) == lesson.read_text()
    clone = lesson_checkout(tmp_path)
    (tmp_path / lesson.name).write_text(text)
    done = run_python([str(tmp_path / lesson.name)], clone)  # from the clone's root
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip()
    figure, _ = make_notebooks.SHOWN_FIGURES[name]
    assert (clone / make_notebooks.OUTPUTS / figure).stat().st_size > 10_000
    assert git_changes(clone) == []  # what it wrote, git ignores


@pytest.mark.slow
@pytest.mark.parametrize("name", LESSONS)
def test_the_lesson_runs_as_a_notebook(name, tmp_path, monkeypatch):
    """In a clone's tutorial/, where JupyterLab starts a lesson's kernel; its output lines
    short enough for a notebook, and nothing it wrote seen by git."""
    monkeypatch.setenv("PYTHONPATH", checkout_environment()["PYTHONPATH"])  # the kernel inherits it
    clone = lesson_checkout(tmp_path)
    notebook = make_notebooks.execute(
        make_notebooks.with_parameters(LESSONS[name], SMALL[name]), clone / "tutorial")
    outputs = [output for cell in notebook.cells if cell.cell_type == "code"
               for output in cell.outputs]
    assert not [output for output in outputs if output.output_type == "error"]
    assert any("image/png" in output.get("data", {}) for output in outputs)  # shown inline
    printed = make_notebooks.printed(notebook)
    if name == "05_distributions_and_fans":  # the injected setting, not the lesson's own 20
        assert "after 6 layers" in printed and "after 20 layers" not in printed
    assert printed.strip()
    assert too_long(printed) == []
    figure, _ = make_notebooks.SHOWN_FIGURES[name]
    assert (clone / "tutorial" / make_notebooks.OUTPUTS / figure).exists()
    assert git_changes(clone) == []


@pytest.mark.slow
@pytest.mark.parametrize("name", exercises.numbered())
def test_every_exercise_runs(name, tmp_path):
    """Each exercise's change, as its lesson states it, on top of the small settings."""
    exercise = exercises.numbered()[name]
    lesson = LESSONS[exercise.lesson]
    assert words(exercise.says) in words(lesson.read_text().split("# ## Exercises")[1])
    script = exercise.script({**SMALL[exercise.lesson], **FASTER.get(name, {})})
    done = run_script(script, f"{exercise.lesson}.py", tmp_path)
    assert done.returncode == 0, done.stderr


def test_the_faster_settings_name_exercises_there_are():
    assert set(FASTER) <= set(exercises.numbered())


@pytest.mark.slow
def test_lesson_4_runs_with_leaky_relu_as_its_settings_say(tmp_path):
    lesson = LESSONS["04_depth"]
    assert "relu, leaky_relu or tanh" in lesson.read_text()
    done = run_script(make_notebooks.script(lesson, {**SMALL["04_depth"],
                                                     "ACTIVATION": "leaky_relu"}),
                      lesson.name, tmp_path)
    assert done.returncode == 0, done.stderr
    assert "He-leaky" in done.stdout


def test_an_unknown_setting_is_refused():
    lesson = LESSONS["05_distributions_and_fans"]
    for make in (make_notebooks.with_parameters, make_notebooks.script):
        with pytest.raises(ValueError, match="has no parameter SEED; its parameters are SAMPLES"):
            make(lesson, {"SEED": 1})


@pytest.mark.parametrize("name", LESSONS)
def test_the_lesson_has_settings_a_title_and_two_or_three_exercises(name):
    notebook = make_notebooks.with_parameters(LESSONS[name])
    assert make_notebooks.parameter_names(notebook)
    assert make_notebooks.title(LESSONS[name])
    sections = [cell.source for cell in notebook.cells
                 if cell.cell_type == "markdown" and "## Exercises" in cell.source]
    assert len(sections) == 1
    numbered = [line for line in sections[0].splitlines() if re.match(r"\d+\.", line)]
    assert 2 <= len(numbered) <= 3
    assert len([e for e in exercises.EXERCISES if e.lesson == name]) == len(numbered)


@pytest.mark.slow
def test_the_command_builds_the_chosen_lesson_and_leaves_tracked_files_alone(tmp_path,
                                                                           monkeypatch):
    monkeypatch.setenv("PYTHONPATH", checkout_environment()["PYTHONPATH"])
    tracked = {path: path.read_bytes() for path in make_notebooks.FIGURES.iterdir()}
    make_notebooks.main(["5", "--out", str(tmp_path)])
    notebook = json.loads((tmp_path / "05_distributions_and_fans.ipynb").read_text())
    assert any(output.get("output_type") == "execute_result"
               for cell in notebook["cells"] for output in cell.get("outputs", []))
    assert {path: path.read_bytes() for path in make_notebooks.FIGURES.iterdir()} == tracked
    with pytest.raises(SystemExit):
        make_notebooks.main(["9", "--out", str(tmp_path)])
    with pytest.raises(SystemExit):  # the docs' record needs every lesson, timed cold
        make_notebooks.main(["5", "--readme", "docs/teaching.md"])


def test_the_docs_lesson_block_is_the_committed_run():
    readme = page("teaching.md")
    start, end = make_notebooks.MARKERS
    shown = readme[readme.index(start) + len(start) + 1:readme.index(end)]
    record = json.loads(make_notebooks.RECORD.read_text())
    assert shown == make_notebooks.render(record)
    assert set(record["lessons"]) == set(LESSONS)
    for figure, _ in make_notebooks.SHOWN_FIGURES.values():
        assert (make_notebooks.FIGURES / figure).exists()
        assert f"tutorial/figures/{figure}" in shown


@pytest.mark.parametrize("name", LESSONS)
def test_what_the_lessons_default_run_printed_fits_a_notebooks_lines(name):
    """Catches a report that a notebook's output area breaks mid-word (it breaks a line too
    long for it wherever it reaches the edge)."""
    printed = json.loads(make_notebooks.RECORD.read_text())["lessons"][name]["output"]
    assert too_long(printed) == []


@pytest.mark.parametrize("name", LESSONS)
def test_what_the_lesson_says_is_what_its_default_run_printed(name):
    text = words(LESSONS[name].read_text())
    printed = json.loads(make_notebooks.RECORD.read_text())["lessons"][name]["output"]
    for says, shown in QUOTED[name]:
        assert words(says) in text, f"{name} no longer says {says!r}"
        assert shown in printed, f"{name}'s default run did not print {shown!r}"


def test_lesson_2_quotes_the_committed_shuffling_study():
    """Exercise 3's 40.6 % against 42.5 % are N(0,1) in data order and shuffled in the
    committed 10,000-seed study of docs/xor.md (examples/results/xor_notes.json)."""
    study = json.loads((ROOT / "examples" / "results" / "xor_notes.json").read_text())
    rates = {(r["arm"]["init"], r["arm"]["output_init"], r["arm"]["shuffle"]):
             r["successes"] / r["n"] for r in study["studies"][0]["results"]}
    plain, shuffled = rates[("normal", None, False)], rates[("normal", None, True)]
    text = words(LESSONS["02_many_seeds"].read_text())
    assert f"({100 * plain:.1f} % against {100 * shuffled:.1f} %)" in text
    assert f"`[({plain:.3f}, {shuffled:.3f})]`" in text


def test_the_answer_key_quotes_what_each_exercise_printed():
    """Every exercise has its answer in tutorial/answers/README.md, under a heading that names
    it, and each line the answer quotes (its fenced blocks) is a line that exercise printed in
    the committed run of every exercise with its lesson's defaults."""
    key = (ROOT / "tutorial" / "answers" / "README.md").read_text()
    record = json.loads(exercises.RECORD.read_text())
    assert list(record) == list(exercises.numbered())
    parts = re.split(r"^### Exercise (\d\d\.\d)\b.*$", key, flags=re.MULTILINE)
    answers = dict(zip(parts[1::2], parts[2::2]))
    assert list(answers) == list(record)
    for name, answer in answers.items():
        quoted = [line for block in re.findall(r"^```\n(.*?)^```$", answer,
                                               flags=re.MULTILINE | re.DOTALL)
                  for line in block.splitlines()]
        assert quoted, f"the answer to exercise {name} quotes nothing it printed"
        printed = record[name].splitlines()
        assert [line for line in quoted if line not in printed] == [], name
