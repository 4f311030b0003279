"""Putting a benchmark's Markdown into the README, between a pair of markers such as
``<!-- chunks: start -->`` and ``<!-- chunks: end -->``; tests/test_readme.py checks that what
stands there equals the committed result file."""

from __future__ import annotations

from pathlib import Path

__all__ = ["put_between"]


def put_between(readme: Path, start: str, end: str, markdown: str) -> None:
    """Replace what stands between the markers ``start`` and ``end`` of ``readme`` with
    ``markdown``."""
    text = readme.read_text()
    after = text.index(start) + len(start)
    readme.write_text(text[:after] + "\n" + markdown + text[text.index(end):])
