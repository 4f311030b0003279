"""How the XOR command stops when asked to: Ctrl-C (SIGINT), ``kill`` or a batch system's time
limit (SIGTERM), or a closed terminal or lost SSH session (SIGHUP) all stop a run the same way,
between two chunks of training, with the networks as they were and only whole files written;
then one line on stderr says which files were (:func:`stopped_message`). The playground's
command stops on the same signals through :func:`stop_signals_as_interrupt`.
"""

from __future__ import annotations

import os
import signal
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

__all__ = ["Terminated", "stop_signals_as_interrupt", "stopped_message", "exit_status",
           "PATHS_SHOWN"]

PATHS_SHOWN = 3
"""How many of the files written the one line names before it counts the rest."""

STOP_SIGNALS = tuple(getattr(signal, name) for name in ("SIGTERM", "SIGHUP")
                     if hasattr(signal, name))
"""The signals that stop a run as Ctrl-C does (those this system has: Windows has no
SIGHUP)."""


class Terminated(KeyboardInterrupt):
    """SIGTERM or SIGHUP (``signum``), raised where Ctrl-C's KeyboardInterrupt would be, so
    that it stops a run the same way: between chunks, the networks as they were, only whole
    files written."""

    def __init__(self, signum: int):
        super().__init__(signum)
        self.signum = signum


@contextmanager
def stop_signals_as_interrupt() -> Iterator[None]:
    """Within the block, SIGTERM and SIGHUP raise :class:`Terminated` (in the main thread
    only, where Python runs signal handlers); the previous handlers are put back after.

    A signal ignored when the block starts stays ignored: a run started with ``nohup``
    (SIGHUP ignored, so that it outlives its terminal) is not stopped by the hang-up."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def terminate(signum: int, frame: object) -> None:
        raise Terminated(signum)

    # None: a handler set outside Python, put back as the default
    previous = {signum: signal.signal(signum, terminate) for signum in STOP_SIGNALS
                if signal.getsignal(signum) is not signal.SIG_IGN}
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, signal.SIG_DFL if handler is None else handler)


def exit_status(stop: KeyboardInterrupt) -> int:
    """The shell's status for a run stopped by ``stop``: 128 plus the signal's number (130
    for Ctrl-C's SIGINT, 143 for SIGTERM, 129 for SIGHUP)."""
    return 128 + (stop.signum if isinstance(stop, Terminated) else signal.SIGINT)


def stopped_message(stop: KeyboardInterrupt, written: Sequence[Path]) -> str:
    """The one line a stopped run ends with: ``interrupted`` (Ctrl-C) or ``terminated`` (a
    signal), and the files written before the stop. Past :data:`PATHS_SHOWN` + 1 files (a
    ``--save-failed`` of thousands of seeds writes three files each), the first
    :data:`PATHS_SHOWN` are named and the rest counted, with the folder that holds them."""
    word = "terminated" if isinstance(stop, Terminated) else "interrupted"
    if not written:
        return f"{word}: nothing was written"
    if len(written) <= PATHS_SHOWN + 1:
        return f"{word}: wrote only " + ", ".join(map(str, written))
    shown, rest = written[:PATHS_SHOWN], written[PATHS_SHOWN:]
    folder = os.path.commonpath([os.path.abspath(path.parent) for path in rest])
    return (f"{word}: wrote only " + ", ".join(map(str, shown)) +
            f" ... and {len(rest):,} more in {folder}")
