"""Fixed-width text tables, for what tinynet prints (network summaries, study reports), and
how a command ends when the reader of what it prints goes away."""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from typing import NoReturn

__all__ = ["table", "reader_gone"]


def table(rows: Sequence[Sequence[str]]) -> str:
    """The rows as left-aligned columns two spaces apart, trailing spaces stripped."""
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return "\n".join("  ".join(cell.ljust(width) for cell, width in zip(row, widths)).rstrip()
                     for row in rows)


def reader_gone() -> NoReturn:
    """End the program quietly with status 1 after a BrokenPipeError on stdout: its reader
    went away (``| head``), as Unix tools end. Stdout is pointed at the null device first, so
    that Python's flush at exit does not fail again with a traceback (the recipe of Python's
    documentation, ``signal`` module, "Note on SIGPIPE")."""
    os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    sys.exit(1)
