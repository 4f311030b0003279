"""The docs' picture of the playground: its default study (100 seeds of a 2-8-1 XOR
network, N(0,1) against He), trained by pressing Train in the system's Chromium, the top of
the page as a 1280 x 720 projector shows it: the form and the two grids.

    python examples/playground_screenshot.py            # into ./playground_screenshot/
    python examples/playground_screenshot.py --commit   # examples/figures/playground.png

Needs Playwright (``pip install ".[browser]"``) and Chromium (Debian: ``apt-get install
chromium``; pip cannot download browsers).
"""

from __future__ import annotations

import argparse
import os
import shutil
import threading

from tinynet.playground import Playground

from outputs import add_out, parse_with_out  # examples/, beside this script

CHROMIUM_FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update",
                  "--disable-sync"]
"""As root in a sandbox without a network: no sandbox of Chromium's own, and none of its
background connections (each would be refused)."""

WAIT_MS = 120_000
"""The longest wait for the study: a first compile on a busy machine takes up to a minute."""


NO_CHROMIUM = "no Chromium: apt-get install chromium, or set TINYNET_CHROMIUM to its path"

VIEWPORT = {"width": 1280, "height": 720}
"""A projector's screen, which the page is laid out to fit (tests/test_playground_browser.py
holds both grids inside it)."""

FIGURE = "playground.png"
"""The file written, in --out."""


def chromium() -> str | None:
    """The Chromium to drive: ``$TINYNET_CHROMIUM``, or ``chromium`` on the PATH (None if
    there is neither); the browser tests drive the same one."""
    return os.environ.get("TINYNET_CHROMIUM") or shutil.which("chromium")


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """The arguments ``argv`` (default: the command line), with ``out`` the folder to write
    into (:func:`outputs.parse_with_out`)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_out(parser, "playground_screenshot")
    return parse_with_out(parser, argv)


def main(argv: list[str] | None = None) -> None:
    """Take the screenshot (arguments ``argv``, default: the command line)."""
    args = parse_args(argv)
    executable = chromium()
    if executable is None:
        raise SystemExit(f"error: {NO_CHROMIUM}")
    from playwright.sync_api import sync_playwright

    server = Playground(port=0)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        with sync_playwright() as driver:
            browser = driver.chromium.launch(executable_path=executable, args=CHROMIUM_FLAGS)
            page = browser.new_page(viewport=VIEWPORT)
            page.goto(server.url)
            page.click("#train")  # a page trains only when its user says so
            page.wait_for_function("document.getElementById('status').textContent"
                                   ".startsWith('Done')", timeout=WAIT_MS)
            page.evaluate("window.scrollTo(0, 0)")  # the click scrolled to Train
            args.out.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=args.out / FIGURE, full_page=False)
            browser.close()
    finally:
        server.shutdown()
        server.server_close()
    print(f"wrote {args.out / FIGURE}")


if __name__ == "__main__":
    main()
