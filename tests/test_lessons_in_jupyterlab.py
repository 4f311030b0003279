"""A lesson as a teacher opens it, in a real browser: ``jupyter lab tutorial/`` from the root of
a clone, with the lessons' JupyterLab settings (``JUPYTER_CONFIG_PATH=tutorial/.jupyter``, as
tutorial/README.md says), a double-click on the lesson in JupyterLab's file browser, then Run
All Cells. The user's own Jupyter settings play no part: the server's config, data and runtime
folders are new. Marked ``browser`` (the system's Chromium, driven by Playwright), like
tests/test_playground_browser.py; each run leaves a screenshot of the notebook in
``test-artifacts/`` (or ``$TINYNET_TEST_ARTIFACTS``)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

import make_notebooks  # tutorial/ is on the path (tests/conftest.py)
from helpers import ROOT, git_changes, lesson_checkout
from jupyter_lab import TOKEN, jupyter_lab, launched_chromium

pytestmark = pytest.mark.browser

ARTIFACTS = Path(os.environ.get("TINYNET_TEST_ARTIFACTS", ROOT / "test-artifacts"))
COMMAND = "JUPYTER_CONFIG_PATH=tutorial/.jupyter jupyter lab tutorial/"
"""How tutorial/README.md and docs/teaching.md say to start JupyterLab on the lessons, from the
repository's root."""
LESSON = "05_distributions_and_fans.py"  # the quickest lesson at its own settings
WAIT = 180  # seconds for each step (start, open, run): a bound on a hang, not a measure of speed
MS = WAIT * 1000


@pytest.fixture
def lab(tmp_path):
    """JupyterLab started by :data:`COMMAND` at the root of a clone of the lessons
    (tests/helpers.lesson_checkout), with new config, data and runtime folders; yields (its
    address, the clone)."""
    for document in (ROOT / "tutorial" / "README.md", ROOT / "docs" / "teaching.md",
                     ROOT / "README.md"):
        assert f"\n{COMMAND}\n" in document.read_text()
    setting, *command = COMMAND.split()
    variable, value = setting.split("=")
    clone = lesson_checkout(tmp_path)
    with jupyter_lab(command, tmp_path / "jupyter", WAIT, cwd=clone, **{variable: value}) as at:
        yield at, clone


@pytest.fixture
def page():
    with launched_chromium() as browser:
        yield browser.new_page(viewport={"width": 1400, "height": 1000})


def test_a_double_click_opens_the_lesson_as_a_notebook_that_runs(lab, page):
    address, clone = lab
    page.goto(f"{address}/lab?token={TOKEN}")
    page.locator(f'.jp-DirListing-item[title^="Name: {LESSON}"]').dblclick(timeout=MS)
    page.locator(".jp-NotebookPanel, .jp-FileEditor").first.wait_for(timeout=MS)
    assert page.locator(".jp-FileEditor").count() == 0, "the lesson opened as text"
    notebook = page.locator(".jp-NotebookPanel")
    for kind in ("jp-CodeCell", "jp-MarkdownCell"):  # its cells, code and text
        notebook.locator(f".{kind}").nth(1).wait_for(timeout=MS)

    # Its kernel started (the status bar's "Initializing" over): Run All before would run nothing.
    page.get_by_text("Python 3 (ipykernel) | Idle", exact=True).wait_for(timeout=MS)
    page.locator(".lm-MenuBar-itemLabel", has_text="Run").first.click()
    page.get_by_text("Run All Cells", exact=True).click()
    # Every code cell numbered ([n]:, not [*]: or [ ]:): the last has run, the kernel is idle.
    page.wait_for_function(
        """() => [...document.querySelectorAll('.jp-NotebookPanel .jp-CodeCell .jp-InputPrompt')]
                 .every(prompt => /^\\[\\d+\\]:$/.test(prompt.textContent.trim()))""",
        timeout=MS)
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=ARTIFACTS / "lesson_in_jupyterlab.png")

    outputs = notebook.locator(".jp-OutputArea-output")
    assert notebook.locator(".jp-OutputArea-output img").count() >= 2  # its two figures
    assert "after 20 layers" in " ".join(outputs.all_inner_texts())  # its own settings
    assert notebook.locator('.jp-OutputArea-output:has-text("Traceback")').count() == 0
    figures = clone / "tutorial" / make_notebooks.OUTPUTS
    assert {"05_distributions.png", "05_fans.png"} <= {path.name for path in figures.iterdir()}
    assert git_changes(clone) == []  # the figures and JupyterLab's checkpoints are ignored
