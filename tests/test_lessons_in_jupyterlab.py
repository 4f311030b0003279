"""A lesson as a teacher opens it, in a real browser: ``jupyter lab tutorial/`` from the root of
a clone, with the lessons' JupyterLab settings (``JUPYTER_CONFIG_PATH=tutorial/.jupyter``, as
tutorial/README.md says), a double-click on the lesson in JupyterLab's file browser, then Run
All Cells. The user's own Jupyter settings play no part: the server's config, data and runtime
folders are new. Marked ``browser`` (the system's Chromium, driven by Playwright), like
tests/test_playground_browser.py; each run leaves a screenshot of the notebook in
``test-artifacts/`` (or ``$TINYNET_TEST_ARTIFACTS``)."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from playground_screenshot import CHROMIUM_FLAGS, NO_CHROMIUM, chromium  # examples/

import make_notebooks  # tutorial/ is on the path (tests/conftest.py)
from helpers import ROOT, checkout_environment, default_sigint, git_changes, lesson_checkout

pytestmark = pytest.mark.browser

ARTIFACTS = Path(os.environ.get("TINYNET_TEST_ARTIFACTS", ROOT / "test-artifacts"))
COMMAND = "JUPYTER_CONFIG_PATH=tutorial/.jupyter jupyter lab tutorial/"
"""How tutorial/README.md and docs/teaching.md say to start JupyterLab on the lessons, from the
repository's root."""
LESSON = "05_distributions_and_fans.py"  # the quickest lesson at its own settings
TOKEN = "tinynet-test"
WAIT = 180  # seconds for each step (start, open, run): a bound on a hang, not a measure of speed
MS = WAIT * 1000


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def answering(address: str) -> bool:
    request = urllib.request.Request(f"{address}/api/status",
                                     headers={"Authorization": f"token {TOKEN}"})
    try:
        with urllib.request.urlopen(request, timeout=WAIT):
            return True
    except (urllib.error.URLError, ConnectionError):
        return False


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
    home = tmp_path / "jupyter"
    environment = {**checkout_environment(), variable: value,
                   "JUPYTER_CONFIG_DIR": str(home / "config"),
                   "JUPYTER_DATA_DIR": str(home / "data"),
                   "JUPYTER_RUNTIME_DIR": str(home / "runtime"), "IPYTHONDIR": str(home / "ipython")}
    port = free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", *command, "--no-browser", "--allow-root",
         f"--port={port}", "--ServerApp.port_retries=0", f"--IdentityProvider.token={TOKEN}"],
        cwd=clone, env=environment, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
        preexec_fn=default_sigint)
    address = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + WAIT
    try:
        while not answering(address):
            if server.poll() is not None or time.monotonic() > deadline:
                raise AssertionError("JupyterLab did not start:\n" +
                                     server.stdout.read().decode()) from None
            time.sleep(0.2)
        yield address, clone
    finally:
        server.terminate()
        try:
            server.wait(timeout=WAIT)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()


@pytest.fixture
def page():
    executable = chromium()
    if executable is None:
        pytest.fail(f"the browser tests need Chromium: {NO_CHROMIUM}")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.fail("the browser tests need Playwright: pip install '.[browser]'")
    with sync_playwright() as driver:
        browser = driver.chromium.launch(executable_path=executable, args=CHROMIUM_FLAGS)
        yield browser.new_page(viewport={"width": 1400, "height": 1000})
        browser.close()


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
