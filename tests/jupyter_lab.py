"""JupyterLab for the tests that open lessons in it (tests/test_teaching.py through its REST
API, tests/test_lessons_in_jupyterlab.py in Chromium): a server on a free port with a token
and folders of its own, and Chromium driven by Playwright."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from helpers import checkout_environment, default_sigint

TOKEN = "tinynet-test"
"""The token every test server takes (``Authorization: token ...``)."""


def free_port() -> int:
    """A port no one listens on now, on the loopback."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def ask(url: str, wait: float, method: str = "GET", body: dict | None = None) -> dict:
    """What a JupyterLab started here answers at ``url`` (its REST API, with :data:`TOKEN`),
    read as JSON; ``body`` sent as JSON; ``wait`` seconds at most."""
    request = urllib.request.Request(url, method=method, headers={
        "Authorization": f"token {TOKEN}", "Content-Type": "application/json"},
        data=None if body is None else json.dumps(body).encode())
    with urllib.request.urlopen(request, timeout=wait) as answer:
        return json.loads(answer.read())


def answering(address: str, wait: float) -> bool:
    """Whether the JupyterLab at ``address`` answers its status with the test token."""
    try:
        ask(f"{address}/api/status", wait)
        return True
    except (urllib.error.URLError, ConnectionError):
        return False


@contextmanager
def jupyter_lab(command: list[str], home: Path, wait: float, cwd: Path | None = None,
                **variables: str) -> Iterator[str]:
    """``python -m jupyter lab ...`` (``command``: ``["jupyter", "lab", folder]``), on a free
    port with :data:`TOKEN`, its config, data, runtime and IPython folders under ``home``
    and ``variables`` in its environment; yields its address once it answers (within
    ``wait`` seconds, else the test fails with what it printed), and stops it after."""
    environment = {**checkout_environment(), **variables,
                   "JUPYTER_CONFIG_DIR": str(home / "config"),
                   "JUPYTER_DATA_DIR": str(home / "data"),
                   "JUPYTER_RUNTIME_DIR": str(home / "runtime"), "IPYTHONDIR": str(home / "ipython")}
    port = free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", *command, "--no-browser", "--allow-root", f"--port={port}",
         "--ServerApp.port_retries=0", f"--IdentityProvider.token={TOKEN}"],
        cwd=cwd, env=environment, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
        preexec_fn=default_sigint)
    address = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + wait
    try:
        while not answering(address, wait):
            if server.poll() is not None or time.monotonic() > deadline:
                raise AssertionError("JupyterLab did not start:\n" +
                                     server.stdout.read().decode()) from None
            time.sleep(0.2)
        yield address
    finally:
        server.terminate()
        try:
            server.wait(timeout=wait)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()


@contextmanager
def launched_chromium() -> Iterator[object]:
    """The system's Chromium under Playwright, as the project launches it
    (examples/playground_screenshot.py); the test fails, naming what to install, without."""
    from playground_screenshot import CHROMIUM_FLAGS, NO_CHROMIUM, chromium  # examples/
    executable = chromium()
    if executable is None:
        pytest.fail(f"the browser tests need Chromium: {NO_CHROMIUM}")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.fail("the browser tests need Playwright: pip install '.[browser]'")
    with sync_playwright() as driver:
        browser = driver.chromium.launch(executable_path=executable, args=CHROMIUM_FLAGS)
        try:
            yield browser
        finally:
            browser.close()
