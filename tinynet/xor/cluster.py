"""The Dask cluster a command trains on: one it starts (``--workers N``: a local cluster of N
single-threaded worker processes, closed after the run) or one it is pointed at
(``--scheduler ADDRESS``). Before anything is sent, every worker must run this process's
tinynet code and ``--import`` modules (:func:`check_workers`); a worker that joins later is
checked on every block it trains (:func:`~tinynet.xor.blocks.run_blocks`).
"""

from __future__ import annotations

import argparse
import logging
import signal
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from ..validation import summarised
from .blocks import code_identity

__all__ = ["cluster", "check_workers", "send_modules", "CONNECT_TIMEOUT", "WORKERS_TIMEOUT",
           "DASK_MISSING"]

CONNECT_TIMEOUT = "10s"
"""How long --scheduler tries to reach the scheduler."""

WORKERS_TIMEOUT = 30.0
"""How long, in seconds, --scheduler or --workers waits for a first worker before it gives
up."""

GROUP_SIGNALS = tuple(getattr(signal, name) for name in ("SIGINT", "SIGHUP")
                      if hasattr(signal, name))
"""The signals a terminal sends to every process of its group (Ctrl-C; closing it), which the
workers of a local cluster ignore: the command stops them."""

DASK_MISSING = ('--scheduler and --workers run the study on Dask, which is not installed: '
                'pip install "dask[distributed]" (in a tinynet checkout: pip install ".[dask]")')


@contextmanager
def cluster(parser: argparse.ArgumentParser, args: argparse.Namespace) -> Iterator[object]:
    """The Dask client to train on (--workers: a local cluster, closed on the way out;
    --scheduler: a running one), or None to train in this process."""
    if args.workers is None and args.scheduler is None:
        yield None
        return
    try:
        from dask.distributed import Client, LocalCluster
    except ImportError:
        parser.error(DASK_MISSING)
    if args.workers is not None:
        # The workers (and multiprocessing's resource tracker) start with the terminal's
        # signals ignored (they inherit that): a Ctrl-C or a hang-up reaches every process of
        # the terminal's group, and it is this one's to handle, by closing them.
        handlers = {signum: signal.signal(signum, signal.SIG_IGN) for signum in GROUP_SIGNALS}
        try:
            local = LocalCluster(n_workers=args.workers, threads_per_worker=1,
                                 processes=True, dashboard_address=None,
                                 silence_logs=logging.ERROR)
        finally:
            for signum, handler in handlers.items():
                signal.signal(signum, signal.SIG_DFL if handler is None else handler)
        with local, Client(local) as client:
            check_workers(parser, client, f"--workers {args.workers}", args.modules)
            yield client
        return
    try:
        client = Client(args.scheduler, timeout=CONNECT_TIMEOUT)
    except (OSError, TimeoutError, ValueError) as error:
        parser.error(f"--scheduler {args.scheduler}: cannot reach it ({error})")
    with client:
        check_workers(parser, client, f"--scheduler {args.scheduler}", args.modules)
        yield client


def check_workers(parser: argparse.ArgumentParser, client: object, where: str,
                  modules: list[str]) -> None:
    """Before anything is sent: at least one worker within :data:`WORKERS_TIMEOUT`, and every
    worker able to import tinynet and running the same tinynet code as this process
    (:func:`~tinynet.xor.blocks.code_identity`); then the --import modules, sent
    (:func:`_send_modules`), and the same source of each on every worker. Else one line,
    exit 2."""
    try:
        client.wait_for_workers(1, timeout=WORKERS_TIMEOUT)
    except TimeoutError:
        parser.error(f"{where}: no worker joined within {WORKERS_TIMEOUT:g} s; start workers "
                     f"for its scheduler (dask worker ADDRESS) with tinynet installed")
    _compare_code(parser, client, where, ())
    if modules:
        _send_modules(parser, client, modules)
        _compare_code(parser, client, where, tuple(modules))


def _compare_code(parser: argparse.ArgumentParser, client: object, where: str,
                  modules: tuple[str, ...]) -> None:
    """Refuse the cluster, in one line, if a worker cannot import tinynet or runs other code
    than this process for tinynet or one of ``modules``."""
    here = code_identity(modules)
    there = client.run(code_identity, modules, on_error="return")
    problems = {}
    for worker, identity in sorted(there.items()):
        if isinstance(identity, BaseException):  # Dask may wrap it in a plain Exception
            text = (str(identity) if type(identity) is Exception else
                    f"{type(identity).__name__}: {identity}")
            problems[worker] = f"cannot run tinynet ({(text.splitlines() or [''])[0]})"
            continue
        differ = [name for name in here if identity.get(name) != here[name]]
        if differ:
            problems[worker] = "runs other code of " + ", ".join(
                f"{name} ({identity.get(name)})" if identity.get(name) in ("not imported",
                                                                          "not from a file")
                else name for name in differ)
    if problems:
        named = summarised([f"{worker} {why}" for worker, why in problems.items()], 7, "; ")
        parser.error(f"{where}: {len(problems)} of {len(there)} workers cannot train as this "
                     f"process would: {named}; give every worker this tinynet and the "
                     "--import modules")


def _send_modules(parser: argparse.ArgumentParser, client: object, modules: list[str]) -> None:
    """:func:`send_modules`, its refusal one line through ``parser``."""
    try:
        send_modules(client, modules)
    except ValueError as error:
        parser.error(str(error))


def send_modules(client: object, modules: list[str]) -> None:
    """Have every worker of ``client`` (a ``dask.distributed.Client``), now and joining
    later, import the modules ``modules`` (names of modules imported here, each one ``.py``
    file) from their source, sent along, so that what they register (initializers,
    activations, losses, optimizers) is known where the networks are built and trained: the
    ``--import`` modules, or a library user's before ``run_study(..., executor=client)``.

    A worker plugin, rather than ``client.upload_file`` or a path shipped with every task:
    it reaches workers that join later, needs no file system shared with them, and runs on
    each worker before any task of the study, which names the definitions only by name. A
    worker that already has a module with this very source keeps it; one whose copy differs
    (an older version, on a cluster that outlived an edit) runs the new source instead, its
    definitions registered over the old ones. A module that is not one file: ValueError."""
    if not modules:
        return
    from distributed.diagnostics.plugin import WorkerPlugin
    sources = {}
    for name in modules:
        path = getattr(sys.modules.get(name), "__file__", None)
        if path is None or not path.endswith(".py"):
            raise ValueError(f"--import {name}: only a module in one .py file can be sent to "
                             f"the workers; start them with dask worker --preload {name} "
                             "instead")
        sources[name] = Path(path).read_text()

    class ImportModules(WorkerPlugin):
        name = "tinynet-import"

        def __init__(self, sources: dict[str, str]):
            self.sources = sources

        def setup(self, worker) -> None:
            import types

            from tinynet.init.registry import replacing

            folder = Path(worker.local_directory) / "tinynet-import"
            folder.mkdir(exist_ok=True)
            stale = [module for module, text in self.sources.items()
                     if not _imported_from(module, text)]
            for module in stale:  # all written and forgotten first: one may import another
                (folder / f"{module}.py").write_text(self.sources[module])
                sys.modules.pop(module, None)
            if str(folder) not in sys.path:
                sys.path.insert(0, str(folder))
            with replacing():                      # over what an older copy registered
                for module in stale:
                    if module in sys.modules:      # imported meanwhile by another of them
                        continue
                    path = folder / f"{module}.py"
                    fresh = types.ModuleType(module)  # run from the text: no stale bytecode
                    fresh.__file__ = str(path)
                    sys.modules[module] = fresh
                    exec(compile(self.sources[module], str(path), "exec"), fresh.__dict__)

    client.register_plugin(ImportModules(sources))


def _imported_from(module: str, text: str) -> bool:
    """Whether ``module`` is imported in this process from a file whose source is ``text``."""
    source = getattr(sys.modules.get(module), "__file__", None)
    return source is not None and Path(source).is_file() and Path(source).read_text() == text

