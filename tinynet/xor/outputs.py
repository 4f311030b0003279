"""The files the XOR command writes (``--json``, ``--csv``, ``--plot``, ``--gallery``,
``--curves``), checked before any training: a file that could not be written, or that two
outputs (or an output and an ``--import`` module) would share, is refused in one line then,
not found after hours of training. (``--save-failed``'s folder: :mod:`~tinynet.xor.failed`.)
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from ..files import check_destination, writable_folder

__all__ = ["OUTPUTS", "check_outputs", "check_output_names", "shape_path"]

OUTPUTS = ("json", "csv", "plot", "gallery", "curves")
"""The flags that name a file to write."""


def check_outputs(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """Refuse, before training, an output that could not be written or would be lost: what
    the write itself would refuse (:func:`tinynet.files.check_destination`: a path the
    system cannot look up, a folder, a device such as /dev/full), or a folder that cannot be
    written into (:func:`tinynet.files.writable_folder`). Two outputs naming one file are
    refused once the shapes are known (:func:`check_output_names`)."""
    named: dict[Path, str] = {}
    for name in OUTPUTS:
        path = getattr(args, name)
        if path is None or str(path) == "-":
            continue
        flag = f"--{name} {path}"
        try:
            check_destination(path)
        except (OSError, ValueError) as error:
            parser.error(f"{flag}: {error}")
        folder = _real(path.parent)
        if not writable_folder(folder):
            parser.error(f"{flag}: cannot write into {folder} (not a folder that can be "
                         "written)")
        if name in ("plot", "gallery", "curves"):
            _check_image_suffix(parser, flag, path)
        named[_real(path)] = f"--{name}"
    if args.save_failed is not None:  # the folder itself: once the shapes are known
        target = _real(args.save_failed)
        for path, flag in named.items():
            if path == target or target in path.parents:
                parser.error(f"--save-failed {args.save_failed}: {flag} writes {path}, in or "
                             "at the folder for the failed seeds; give them different paths")


def _real(path: Path | str) -> Path:
    """``path`` with every symlink followed, as far as they lead (a loop, or a link to
    nothing, is left as it stands rather than raised)."""
    return Path(os.path.realpath(path))


def _check_image_suffix(parser: argparse.ArgumentParser, flag: str, path: Path) -> None:
    """Refuse an image path whose suffix names no format matplotlib writes (it would fail
    only after training)."""
    from .. import plots  # here: a run that draws nothing does not load the plots

    try:
        plots.figure_format(path, flag)
    except ValueError as error:
        parser.error(str(error))


def shape_path(path: Path, shape: str, shapes: int) -> Path:
    """``path`` for one of ``shapes`` shapes: itself for one, else with the shape before its
    suffix (``g.png`` -> ``g-2-2-1.png``)."""
    return path if shapes == 1 else path.with_name(f"{path.stem}-{shape}{path.suffix}")


def check_output_names(parser: argparse.ArgumentParser, args: argparse.Namespace,
                       shapes: list[str]) -> None:
    """Refuse, before training, outputs that would overwrite each other or an input once the
    per-shape names are derived (``--gallery g.png`` over several shapes writes
    ``g-2-2-1.png``, ...): every file to write against every other, and against the files of
    the --import modules; and a derived name where something other than a file stands (the
    flags' own names are checked with the arguments, :func:`check_outputs`)."""
    claimed: dict[Path, str] = {}
    for name in OUTPUTS:
        path = getattr(args, name)
        if path is None or str(path) == "-":
            continue
        derived = ([(shape_path(path, shape, len(shapes)), f" (for {shape})")
                    for shape in shapes] if name in ("gallery", "curves") and len(shapes) > 1
                   else [(path, "")])
        for target, note in derived:
            what = f"--{name} {path}{note}"
            if _real(target) in claimed:
                parser.error(f"{what} writes {target}, as {claimed[_real(target)]} does; "
                             "give each output its own path")
            if note:
                try:
                    check_destination(target)
                except (OSError, ValueError) as error:
                    parser.error(f"{what}: {error}")
            claimed[_real(target)] = what
    for module in args.modules:
        source = getattr(sys.modules.get(module), "__file__", None)
        if source is not None and _real(source) in claimed:
            parser.error(f"{claimed[_real(source)]} would overwrite {source}, the "
                         f"--import module {module}; give the output another path")
