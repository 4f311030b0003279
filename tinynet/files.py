"""Files written whole: the content goes to a file beside its path, which is then renamed into
place, so that an interrupted run (even by Ctrl-C) leaves the old file or the new one, never a
part, and two processes writing the same path do not remove each other's partial file."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

__all__ = ["write_whole", "put_between"]


def write_whole(path: Path, write: Callable[[Path], object]) -> Path:
    """Call ``write(partial)`` to write the file, then rename ``partial`` to ``path``.
    ``partial`` is a hidden name beside ``path`` with this process's id and the same suffix (so
    that a writer choosing the format by suffix, such as matplotlib, still does). Returns
    ``path``."""
    path = Path(path)
    partial = path.with_name(f".{path.stem}.{os.getpid()}.partial{path.suffix}")
    try:
        write(partial)
        os.replace(partial, path)
    finally:
        partial.unlink(missing_ok=True)
    return path


def put_between(path: Path, start: str, end: str, text: str) -> None:
    """Replace what stands between the first ``start`` in the file ``path`` and the ``end``
    after it with ``text`` (the markers stay), writing the file whole. How the README's
    generated sections are kept."""
    path = Path(path)
    content = path.read_text()
    if start not in content or end not in content[content.index(start):]:
        raise ValueError(f"{path} has no section between {start.strip()!r} and "
                         f"{end.strip()!r}")
    head = content.index(start) + len(start)
    tail = content.index(end, head)
    write_whole(path, lambda partial: partial.write_text(content[:head] + text + content[tail:]))
