"""The XOR command's argument types: how the text of a flag becomes a value (argparse's
``type=``), each refusing bad text in one line; and the ``--progress`` flag, which other
example scripts share."""

from __future__ import annotations

import argparse
import sys

from .. import data, init
from .task import OwnData

__all__ = ["split_specs", "Every", "initializer_specs", "seed_count", "integers",
           "data_source", "add_progress_flag", "show_progress"]


def split_specs(text: str) -> list[str]:
    """Split "a,b(x=1, y=2),c" on the commas outside parentheses."""
    specs, depth, current = [], 0, ""
    for char in text:
        depth += {"(": 1, ")": -1}.get(char, 0)
        if char == "," and depth == 0:
            specs.append(current.strip())
            current = ""
        else:
            current += char
    return [spec for spec in specs + [current.strip()] if spec]


class Every(list):
    """``--init all``: every distinct registered initializer once (:func:`tinynet.init.distinct`);
    ``aliases`` maps each to its other names, which are not run again."""

    def __init__(self) -> None:
        self.aliases = init.distinct()
        super().__init__(self.aliases)

    def note(self) -> str:
        """One line for stderr: how many run, and which names are the same initializer."""
        same = [f"{', '.join(others)} = {name}" for name, others in self.aliases.items() if others]
        return (f"--init all: {len(self)} initializers, each once; not run again under their "
                f"other names: {'; '.join(same)}")


def initializer_specs(text: str) -> list[str]:
    """argparse type for --init: comma-separated initializer specs, or ``all`` (each distinct
    registered initializer once). The names themselves are checked by :class:`Arm`."""
    specs = Every() if text == "all" else split_specs(text)
    if not specs:
        raise argparse.ArgumentTypeError("expected at least one initializer name")
    return specs


def data_source(text: str) -> str | OwnData:
    """argparse type for --data: a data set's name (checked when the task is made), or your
    own data from a ``.npz`` or ``.csv`` file (:func:`tinynet.data.read_split`), read and
    checked now."""
    if not text.endswith((".npz", ".csv")):
        return text
    try:
        return OwnData(data.read_split(text))
    except (OSError, ValueError, TypeError) as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def seed_count(text: str) -> int:
    """argparse type for --gallery-seeds: a whole number of seeds, at least 1 (at most the
    study's seeds, checked once the setup is known)."""
    try:
        count = int(text)
    except ValueError:
        count = None
    if count is None or count < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number of seeds, at least 1, got "
                                         f"{text!r}")
    return count


def integers(example: str):
    """argparse type: comma-separated integers (checked where they are used)."""
    def parse(text: str) -> tuple[int, ...]:
        try:
            return tuple(int(value) for value in text.split(","))
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected integers such as {example}, got "
                                             f"{text!r}") from None
    return parse


def add_progress_flag(parser: argparse.ArgumentParser) -> None:
    """``--progress/--no-progress`` on ``parser``: whether to report training progress on
    stderr; not given, None, which :func:`show_progress` reads as "on a terminal only"."""
    parser.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                        help="report each arm's progress on stderr (default: on a terminal "
                             "only)")


def show_progress(flag: bool | None) -> bool:
    """The command line's rule for progress: as ``--progress`` or ``--no-progress`` says
    (``flag`` True or False), else (None) only when stderr is a terminal. The library itself
    prints nothing unless asked (:func:`~tinynet.xor.run_study`)."""
    return sys.stderr.isatty() if flag is None else flag
