"""Fixed-width text tables, for what tinynet prints (network summaries, study reports), long
lines folded to a width, and how a command ends when the reader of what it prints goes
away."""

from __future__ import annotations

import os
import sys
import textwrap
from collections.abc import Sequence
from typing import NoReturn

__all__ = ["table", "fold", "reader_gone"]


def table(rows: Sequence[Sequence[str]]) -> str:
    """The rows as left-aligned columns two spaces apart, trailing spaces stripped."""
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return "\n".join("  ".join(cell.ljust(width) for cell, width in zip(row, widths)).rstrip()
                     for row in rows)


def fold(text: str, width: int = 100) -> str:
    """``text`` fitted to ``width`` columns, for a notebook's output area, which breaks a line
    too long for it wherever it reaches the edge, mid-word. Lines as long as ``width`` or
    shorter stay as they are. A table (lines in a row whose columns, as :func:`table` lays them
    out, are two spaces apart) wider than that is cut into tables of its first column and as
    many of the next as fit, one under the other. Any other line is broken at spaces, the
    lines after its first indented two spaces more than it; a word longer than ``width`` stays
    whole."""
    lines = text.split("\n")
    folded: list[str] = []
    start = 0
    while start < len(lines):
        end = start
        while end < len(lines) and "  " in lines[end].strip():
            end += 1
        block = lines[start:end]
        cuts = _column_starts(block) if len(block) > 1 else []
        if cuts and max(map(len, block)) > width:
            folded += _split_table(block, cuts, width)
            start = end
            continue
        line = lines[start]
        if len(line) <= width:
            folded.append(line)
        else:
            indent = " " * (len(line) - len(line.lstrip()))
            folded += textwrap.wrap(line.lstrip(), width, initial_indent=indent,
                                    subsequent_indent=indent + "  ", break_long_words=False,
                                    break_on_hyphens=False)
        start += 1
    return "\n".join(folded)


def _column_starts(rows: Sequence[str]) -> list[int]:
    """Where the columns after the first begin in ``rows`` laid out as a table: the positions
    that follow two spaces in every row (or its end) and a character in some row."""
    indent = min(len(row) - len(row.lstrip()) for row in rows)
    return [position for position in range(indent + 2, max(map(len, rows)))
            if all(row[position - 2:position].strip() == "" for row in rows)
            and any(row[position:position + 1].strip() for row in rows)]


def _split_table(rows: Sequence[str], cuts: list[int], width: int) -> list[str]:
    """The table ``rows``, whose columns after the first begin at ``cuts``, as tables of its
    first column and as many of the next as fit ``width`` (one at least), a blank line between
    them."""
    bounds = [0, *cuts, max(map(len, rows))]
    first, *rest = zip(bounds[:-1], bounds[1:])  # each column with the two spaces after it
    groups: list[list[tuple[int, int]]] = [[]]
    for column in rest:
        wide = sum(stop - begin for begin, stop in [first, *groups[-1], column])
        if groups[-1] and wide - (0 if column == rest[-1] else 2) > width:
            groups.append([])
        groups[-1].append(column)
    out: list[str] = []
    for group in groups:
        if out:
            out.append("")
        out += [(row[slice(*first)] + "".join(row[slice(*column)] for column in group)).rstrip()
                for row in rows]
    return out


def reader_gone() -> NoReturn:
    """End the program quietly with status 1 after a BrokenPipeError on stdout: its reader
    went away (``| head``), as Unix tools end. Stdout is pointed at the null device first, so
    that Python's flush at exit does not fail again with a traceback (the recipe of Python's
    documentation, ``signal`` module, "Note on SIGPIPE")."""
    os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    sys.exit(1)
