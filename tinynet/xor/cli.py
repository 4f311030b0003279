"""The XOR command, ``python -m tinynet.xor`` (``--help`` for its usage): the arguments in
(:mod:`~tinynet.xor.arguments`; their types :mod:`~tinynet.xor.argtypes`; ``--import``
:mod:`~tinynet.xor.imports`; a flag per hyperparameter :mod:`~tinynet.xor.hyperparameters`),
the study they describe (:mod:`~tinynet.xor.design`), the training, and the report and files
out (:mod:`~tinynet.xor.writing`).

:func:`main` calls the bench itself: :func:`~tinynet.xor.run_study` for one setup,
:func:`~tinynet.xor.run_sweep` for a preset of several shapes,
:func:`~tinynet.xor.run_seed_ranges` for ``--seed-ranges``, so that the path from the
command line to the training is ``main`` -> ``run_study``.
"""

from __future__ import annotations

import contextlib
import gc
import sys
from collections.abc import Iterator
from pathlib import Path

from ..text import reader_gone
from .arguments import parse_args
from .argtypes import Every, add_progress_flag, show_progress, split_specs
from .bench import run_study
from .blocks import BlockError
from .design import design
from .interrupts import exit_status, stop_signals_as_interrupt, stopped_message
from .presets import get_preset
from .ranges import run_seed_ranges
from .sweep import run_sweep
from .writing import write_results

__all__ = ["main", "command", "whole_process", "parse_args", "split_specs",
           "add_progress_flag", "show_progress"]

GC_THRESHOLD = 10_000
"""How many new container objects start a collection of Python's cyclic garbage collector's
youngest generation while the command runs (Python's own default is 700); see
:func:`whole_process`."""


def main(argv: list[str] | None = None, prog: str | None = None) -> None:
    """Run the command with arguments ``argv`` (default: the command line); ``prog`` names it
    in usage and errors (default: the script's file name).

    Bad arguments exit with status 2 and one line on stderr; a reader of stdout that goes away
    (``| head``) ends the run quietly with status 1; Ctrl-C ends it with status 130 and one
    line saying which files were written (each file is written whole or not at all); SIGTERM
    (``kill``, a batch system's time limit) and SIGHUP (a closed terminal) the same way, with
    status 143 and 129 (:mod:`~tinynet.xor.interrupts`).
    """
    parser, args = parse_args(argv, prog)
    arms, setups = design(parser, args)
    if isinstance(args.init, Every):
        print(args.init.note(), file=sys.stderr)
    progress = show_progress(args.progress)
    many = setups[0].task.classification
    record_every = (max(1, setups[0].epochs // 200) if (args.curves and not many)
                    or args.save_failed else None)
    evaluate_every = args.evaluate_every or (max(1, setups[0].epochs // 50)
                                             if args.curves and many else None)
    against = None if args.preset is None else get_preset(args.preset).against
    written: list[Path] = []
    try:
        with _executor(parser, args) as executor, stop_signals_as_interrupt():
            blocks = {} if executor is None else {"executor": executor,
                                                  "block_seeds": args.block_seeds}
            if args.seed_ranges is not None:
                results = run_seed_ranges(arms, setups[0], args.seed_ranges, progress,
                                          **blocks)
            elif len(setups) == 1:
                results = run_study(arms, setups[0], progress, record_every, against=against,
                                    evaluate_every=evaluate_every, **blocks)
            else:
                results = run_sweep(arms, setups, progress, record_every, against=against,
                                    **blocks)
            write_results(args, results, written)
    except KeyboardInterrupt as stop:
        print(stopped_message(stop, written), file=sys.stderr)
        sys.exit(exit_status(stop))
    except BrokenPipeError:  # the reader went away (| head): stop quietly, as Unix tools do
        reader_gone()
    except BlockError as error:  # a task failed on the cluster: not a bad argument
        parser.exit(1, f"{parser.prog}: error: {error}\n")
    except (ValueError, TypeError, OSError) as error:
        parser.error(f"{type(error).__name__}: {error}")


def _executor(parser, args) -> contextlib.AbstractContextManager[object | None]:
    """The Dask client to train on (:func:`tinynet.xor.cluster.cluster`), or None to train in
    this process: without --workers and --scheduler the cluster code is not even imported."""
    if args.workers is None and args.scheduler is None:
        return contextlib.nullcontext()
    from .cluster import cluster

    return cluster(parser, args)


@contextlib.contextmanager
def whole_process() -> Iterator[None]:
    """Run the block as the whole of a process (``python -m tinynet.xor``, ``python
    examples/xor.py``), with Python's cyclic garbage collector told so; results and output
    are the same.

    Loading Numba and the compiled kernels makes some 10^5 long-lived objects. At Python's
    default pace (a collection every 700 new objects) the collector walked them again and
    again, and the interpreter's exit walked them all a few more times: about 0.25 s of the
    warm default job's 1 s. So the youngest generation is collected every
    :data:`GC_THRESHOLD` new objects instead (cyclic garbage is still freed, a little later),
    and once the block has ended (or exited) every object left is frozen (:func:`gc.freeze`),
    which the exit's passes skip; the operating system frees their memory as it would
    anyway. Files are written and closed before that (:func:`main`), and the standard streams
    are flushed at exit all the same. A context manager, not a function around :func:`main`,
    so that it adds no call between the command line and the bench; and not in :func:`main`
    itself, which a Python session may call many times."""
    gc.set_threshold(GC_THRESHOLD, *gc.get_threshold()[1:])
    try:
        yield
    finally:
        gc.freeze()


def command(prog: str | None = None) -> None:
    """:func:`main` on the command line's arguments as the whole of a process
    (:func:`whole_process`): ``examples/xor.py``."""
    with whole_process():
        main(prog=prog)
