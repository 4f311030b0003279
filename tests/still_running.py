"""A pytest plugin: while a test runs long, a line on the terminal says so, with the test's
name and its seconds, every ``--still-running-every`` seconds (default 30). A first run
compiles kernels inside some tests for a minute or more; with this, no test is silent that
long. The line sets capture aside while it is written, so it shows whatever the test prints.
"""

from __future__ import annotations

import threading
import time

import pytest

STILL_RUNNING_EVERY = 30.0
"""The default seconds between the lines."""


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--still-running-every", type=float, default=STILL_RUNNING_EVERY,
                     metavar="SECONDS", help="say which test is still running every SECONDS "
                     f"(default {STILL_RUNNING_EVERY:g}); 0: never")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item: pytest.Item):
    every = item.config.getoption("still_running_every")
    capture = item.config.pluginmanager.getplugin("capturemanager")
    writer = item.config.get_terminal_writer()
    done, start = threading.Event(), time.monotonic()

    def watch() -> None:
        while not done.wait(every):
            with capture.global_and_fixture_disabled():
                if writer.width_of_current_line:
                    writer.line()
                writer.line(f"    ... {item.nodeid} still running, "
                            f"{time.monotonic() - start:.0f} s (a first run compiles kernels)")

    watcher = threading.Thread(target=watch, daemon=True)
    if every > 0 and capture is not None:
        watcher.start()
    try:
        yield
    finally:
        done.set()
        if watcher.is_alive():
            watcher.join()  # not inside the capture's switch while pytest makes its own
