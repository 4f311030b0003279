"""Putting a benchmark's Markdown into a documentation page, between a pair of markers such as
``<!-- chunks: start -->`` and ``<!-- chunks: end -->``; tests/test_readme.py checks that what
stands there equals the committed result file."""

from __future__ import annotations

import json
from pathlib import Path

from tinynet import files

__all__ = ["put_between", "publish"]

RESULTS = Path(__file__).resolve().parent / "results"


def put_between(readme: Path, start: str, end: str, markdown: str) -> None:
    """Replace what stands between the markers ``start`` and ``end`` of ``readme`` with
    ``markdown`` on a line of its own (:func:`tinynet.files.put_between`)."""
    files.put_between(readme, start, end, "\n" + markdown)


def publish(name: str, data: object, markdown: str, readme: Path | None, start: str,
            end: str) -> None:
    """Print ``markdown``; write ``data`` to ``benchmarks/results/<name>.json`` and
    ``markdown`` to ``<name>.md``; put ``markdown`` between ``start`` and ``end`` of
    ``readme`` if given."""
    print(markdown)
    out = RESULTS / f"{name}.json"
    out.write_text(json.dumps(data, indent=2))
    out.with_suffix(".md").write_text(markdown)
    if readme:
        put_between(readme, start, end, markdown)
