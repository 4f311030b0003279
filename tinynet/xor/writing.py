"""What the XOR command does with its results: the report on stdout (on stderr when stdout
carries ``--json -`` or ``--csv -``), and every file asked for, each written whole or not at
all (:func:`tinynet.files.write_whole`) and added to the list of files written, which a
stopped run names (:func:`write_results`)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path

from ..files import batch, write_whole
from .arguments import GALLERY_SEEDS
from .failed import save_failed
from .outputs import shape_path
from .ranges import SeedRanges
from .report import Study
from .sweep import Sweep

__all__ = ["write_results"]


def write_results(args: argparse.Namespace, results: Study | Sweep | SeedRanges,
                  written: list[Path]) -> None:
    """Print the report of ``results`` (a study, a sweep of several, or a check of seed
    ranges) and write every file ``args`` asks for, adding each to ``written``."""
    report = sys.stderr if "-" in (str(args.json), str(args.csv)) else sys.stdout
    studies = (results.studies if isinstance(results, Sweep) else
               [] if isinstance(results, SeedRanges) else [results])
    if isinstance(results, SeedRanges):
        print(results.report(), file=report)
    for study in studies:
        print(study.report(), end="\n\n", file=report)
    if isinstance(results, Sweep):
        print(results.table(), file=report)
    if args.json:
        _text(args.json, results.to_json(), written)
    if args.csv:
        _text(args.csv, results.to_csv(), written)
    if studies:
        _figures_and_seeds(args, studies, written)


def _figures_and_seeds(args: argparse.Namespace, studies: list[Study],
                       written: list[Path]) -> None:
    """--plot, --gallery, --curves and --save-failed, for every study (a file or folder per
    shape when there are several: :func:`~tinynet.xor.outputs.shape_path`)."""
    if args.plot or args.gallery or args.curves:
        from . import figures  # here: a run that draws nothing does not load the plots
    if args.plot:
        baseline = len(studies) == 1 and studies[0].baseline is not None
        _whole(args.plot, lambda path: figures.against_baseline(studies[0], path)
               if baseline else figures.rates(studies, path), written)
    gallery_seeds = GALLERY_SEEDS if args.gallery_seeds is None else args.gallery_seeds
    for study in studies:
        if args.gallery:
            _whole(shape_path(args.gallery, study.setup.shape, len(studies)),
                   lambda path: figures.seed_gallery(study, seeds=gallery_seeds, path=path),
                   written)
        if args.curves:  # a task with a test set: its evaluations' bands over all seeds
            from .bands import evaluation_curves
            draw = evaluation_curves if study.setup.task.classification else \
                figures.study_curves
            _whole(shape_path(args.curves, study.setup.shape, len(studies)),
                   lambda path: draw(study, path=path), written)
        if args.save_failed:
            with batch():  # three files a failed seed: one scan and one sync a folder
                save_failed(study, args.save_failed, written)


def _whole(path: Path, write: Callable[[Path], object], written: list[Path]) -> None:
    """``path`` written whole by ``write`` (:func:`tinynet.files.write_whole`), then added to
    ``written``."""
    written.append(write_whole(path, write))


def _text(path: Path, text: str, written: list[Path]) -> None:
    """``text`` into the file ``path`` (:func:`_whole`), or to stdout for ``-``."""
    if str(path) == "-":
        sys.stdout.write(text if text.endswith("\n") else text + "\n")
    else:
        _whole(path, lambda partial: partial.write_text(text), written)
