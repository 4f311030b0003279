"""Fixed-width text tables, for what tinynet prints (network summaries, study reports)."""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["table"]


def table(rows: Sequence[Sequence[str]]) -> str:
    """The rows as left-aligned columns two spaces apart, trailing spaces stripped."""
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return "\n".join("  ".join(cell.ljust(width) for cell, width in zip(row, widths)).rstrip()
                     for row in rows)
