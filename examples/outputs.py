"""Where an example writes its files: a folder of the user's (``--out``), by default one named
after the example under the current folder (``./datasets`` for ``datasets.py``), and the
committed ``examples/figures/`` only when asked (``--commit``), so that a trial run never
replaces what the docs show."""

from __future__ import annotations

import argparse
from pathlib import Path

COMMITTED_FIGURES = Path(__file__).resolve().parent / "figures"
"""The figures the docs show."""


def add_out(parser: argparse.ArgumentParser, example: str) -> None:
    """``--out FOLDER`` (default ``./<example>``, a folder named after the example) and
    ``--commit``."""
    parser.add_argument("--out", type=Path, default=Path(example), metavar="FOLDER",
                        help="folder to write into, made if missing (default: %(default)s, "
                             "under the current folder)")
    parser.add_argument("--commit", action="store_true",
                        help="write the committed files in examples/figures (the docs') "
                             "instead of into --out")


def parse_with_out(parser: argparse.ArgumentParser,
                   argv: list[str] | None) -> argparse.Namespace:
    """``parser``'s arguments ``argv`` (default: the command line), ``parser`` given
    :func:`add_out`, with ``out`` the folder to write into: the committed one with
    ``--commit``, else ``--out``; an argument error if that exists and is not a folder."""
    args = parser.parse_args(argv)
    args.out = COMMITTED_FIGURES if args.commit else args.out
    if args.out.exists() and not args.out.is_dir():
        parser.error(f"--out {args.out}: exists and is not a folder; give a folder")
    return args
