"""The registry at a terminal: ``python -m tinynet.init`` lists every initializer in the
terminal's width, ``python -m tinynet.init he_normal`` describes one, ``--markdown`` prints
docs/initializers.md's table."""

from __future__ import annotations

import argparse
import shutil
import sys
import textwrap

from ..activations import get_activation
from ..text import reader_gone
from ..validation import UnknownNameError
from .registry import Entry, available, distinct, entries as _entries, get
from .schemes import Auto, Initializer

__all__ = ["markdown_table", "listing", "description", "main"]

SHAPES = ((2, 2), (8, 2), (10, 100))
"""The layers (n_out, n_in) a description gives the std for: the notes' 2→2, the first
layer of 2→8 where initialization starts to decide, and a wide 100→10."""


def _entries_by_name() -> dict[str, Entry]:
    return {entry.name: entry for entry in _entries()}


def _leaky():
    return get_activation("leaky_relu", alpha=0.01)


def _formula(initializer: Initializer) -> str:
    return ("by the layer's activation" if isinstance(initializer, Auto) else
            initializer.describe((10, 100), _leaky()).formula.removeprefix("Var(w) = "))


def _label(entry: Entry, aliases: list[str], code: bool = False) -> str:
    """An entry's names and parameters: ``he_normal / kaiming_normal (a=0.0, ...)``, the names
    in Markdown's backticks when ``code``."""
    params = ", ".join(f"{k}={v!r}" for k, v in entry.parameters.items())
    names = [f"`{n}`" if code else n for n in [entry.name, *aliases]]
    return " / ".join(names) + (f" ({params})" if params else "")


def markdown_table() -> str:
    """One row per distinct scheme (:func:`tinynet.init.distinct`: aliases folded into it):
    docs/initializers.md's table."""
    leaky = _leaky()
    rows = ["| name | Var(w) | std, 2→2 layer | std, 100→10 layer | use | source |",
            "| --- | --- | --- | --- | --- | --- |"]
    entries = _entries_by_name()
    for name, aliases in distinct().items():
        entry = entries[name]
        initializer = get(name)
        label = _label(entry, aliases, code=True)
        small, large = (initializer.std(shape, leaky) for shape in [(2, 2), (10, 100)])
        rows.append(f"| {label} | {_formula(initializer)} | {small:.4g} | {large:.4g} | "
                    f"{entry.summary} | {entry.source} |")
    return "\n".join(rows)


def listing(width: int = 80) -> str:
    """Every distinct initializer in ``width`` columns: its names on one line, then its
    Var(w), its use and its source, indented and wrapped at word boundaries."""
    entries = _entries_by_name()
    width = max(width, 40)
    lines = textwrap.wrap(f"{len(distinct())} initializers ({len(available())} names); "
                          "python -m tinynet.init NAME describes one.", width) + [""]
    for name, aliases in distinct().items():
        entry = entries[name]
        lines += _wrapped(_label(entry, aliases), width, "", "  ")
        lines += _wrapped(f"Var(w) = {_formula(get(name))}; {entry.summary} ({entry.source})",
                          width, "    ", "    ")
    return "\n".join(lines)


def _wrapped(text: str, width: int, first: str, rest: str) -> list[str]:
    """``text`` wrapped at word boundaries in ``width`` columns, its first line indented by
    ``first`` and the others by ``rest``."""
    return textwrap.wrap(text, width, initial_indent=first, subsequent_indent=rest,
                         break_long_words=False, break_on_hyphens=False)


def description(name: str, width: int = 80) -> str:
    """What initializer ``name`` (any of its names) is and what it draws: its names and
    parameters, use and source, then for the layers of :data:`SHAPES` its formula, fans,
    variance, std and sampler, with the activation it is used before (leaky_relu, 0.01)."""
    if name not in available():
        raise UnknownNameError("initializer", name, available())
    entries = _entries_by_name()
    entry = entries[name]
    canonical = entries[entry.alias_of] if entry.alias_of else entry
    aliases = distinct()[canonical.name]
    width = max(width, 40)
    lines = _wrapped(_label(canonical, aliases), width, "", "  ")
    lines += _wrapped(f"use: {canonical.summary}", width, "", "  ")
    lines += _wrapped(f"source: {canonical.source}", width, "", "  ")
    initializer, leaky = get(name), _leaky()
    for shape in SHAPES:
        lines += ["", *_wrapped(f"a layer of {shape[1]} inputs and {shape[0]} outputs, "
                                "before leaky_relu(0.01):", width, "", "  ")]
        chosen = initializer.choice(leaky) if isinstance(initializer, Auto) else initializer
        if chosen is not initializer:
            lines.append(f"  chosen by the activation: {chosen.name}")
        for line in str(chosen.describe(shape, leaky)).splitlines():
            lines += _wrapped(line.strip(), width, "  ", "      ")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    """The command: a listing, one initializer's description, or the Markdown table."""
    parser = argparse.ArgumentParser(
        prog="python -m tinynet.init",
        description="tinynet's initializers: every name, or what one draws.")
    parser.add_argument("name", nargs="?", help="an initializer's name, such as he_normal: "
                        "describe it (its formula, fans, std and sampler for a few layers)")
    parser.add_argument("--markdown", action="store_true",
                        help="print every initializer as a Markdown table "
                             "(docs/initializers.md's), whatever the terminal's width")
    args = parser.parse_args(argv)
    if args.name is not None and args.markdown:
        parser.error("give an initializer's name or --markdown, not both")
    width = min(shutil.get_terminal_size().columns, 100)  # long lines read badly, even wide
    try:
        if args.markdown:
            text = markdown_table()
        elif args.name is not None:
            text = description(args.name, width)
        else:
            text = listing(width)
    except UnknownNameError as error:
        parser.error(str(error))
    try:
        print(text, flush=True)
    except BrokenPipeError:  # the reader went away (| head): stop quietly, as Unix tools do
        reader_gone()


if __name__ == "__main__":
    main(sys.argv[1:])
