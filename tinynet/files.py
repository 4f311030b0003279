"""Files written whole: the content goes to a file beside its path, which is then renamed into
place, so that an interrupted run (even by Ctrl-C) leaves the old file or the new one, never a
part, and two processes writing the same path do not remove each other's partial file."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

__all__ = ["write_whole"]


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
