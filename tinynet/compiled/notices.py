"""Compile waits, told: a line on stderr when a kernel is about to compile, in words a user
knows, with how long the same kind of kernel took on this machine last time.

A kernel compiles once per machine (numba caches it); the first run waits for it. The line
names what compiles (``the training of 2-2-2-1 networks, many side by side``) and its
estimate; while the compile runs, a terminal shows the seconds passing on that line and
anything else gets a line every :data:`QUIET_SECONDS`; when it ends, the seconds it took.
Those seconds are kept in :func:`times_file` (beside the kernels), by kind of kernel, as the
next estimate. The seconds counted are the kernel's own: the package's helper functions that
compile inside its first compile (once per machine, for every kernel) are left out, so that
the next kernel of the kind, which finds them cached, is told what it will wait.
"""

from __future__ import annotations

import json
import shutil
import sys
import textwrap
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from ..files import write_whole

__all__ = ["COMPILE_TIME", "QUIET_SECONDS", "ENTRY_WORDS", "entry_words", "announce_compiling",
           "compiling_told_to", "estimate", "times_file", "stop_watching"]

COMPILE_TIME = "the first compile on this machine: seconds to half a minute"
"""The estimate before any kernel of a kind has compiled here, in words, after the committed
compile times (``benchmarks/results/bench_compile.md``, ``python
benchmarks/bench_compile.py``): on an idle 2-core machine, from a few seconds for a new layout
to about half a minute with empty caches."""

QUIET_SECONDS = 15.0
"""How often a compile that is not shown on a terminal says it is still running."""

_LISTENERS: list[Callable[[str, str], None]] = []
"""Who else is told when a kernel is about to compile (:func:`compiling_told_to`)."""

_ANNOUNCED: set[str] = set()
"""The kernels (their cache index files) this process has told about: each is told once."""

_LOCK = threading.Lock()
"""Held while a kernel is checked and added to :data:`_ANNOUNCED` (threads ask at once)."""

_WATCHES: list[object] = []
"""The numba listeners waiting for a told kernel's compile (:func:`_watch`); each removes
itself when its compile ends, and :func:`stop_watching` removes any left (a kernel told of
but never compiled: another process cached it meanwhile)."""


ENTRY_WORDS = {
    "fit_lanes": "the training of many networks side by side",
    "fit_network": "the training of one network",
    "fit_members": "the training of many networks, each whole on a core",
    "forward_network": "the predictions of one network",
    "predict_members": "the predictions of many networks",
    "fit_stream": "the training of one residual network",
    "fit_stream_members": "the training of many residual networks, each whole on a core",
    "predict_stream_members": "the predictions of residual networks",
}
"""What each entry point of the kits does (:mod:`tinynet.compiled.kit`,
:mod:`tinynet.compiled.stream`), in the notice's words; ``_during`` adds the update order."""


def entry_words(name: str, layers: list[str], loss: str, optimizer: str) -> str:
    """What a kit's entry point ``name`` compiles, in words: ``"the training of one network
    of leaky_relu and sigmoid layers, loss mse, optimizer sgd"``; a prediction names its
    layers alone, which are all it runs."""
    base = name.removesuffix("_during")
    what = ENTRY_WORDS.get(base, base)
    kinds = layers[0] if len(layers) == 1 else f"{', '.join(layers[:-1])} and {layers[-1]}"
    what += f" of {kinds} layers"
    if not base.startswith(("predict", "forward")):
        what += f", loss {loss}, optimizer {optimizer}"
    return what + (", updating during the backward pass" if name.endswith("_during") else "")


def times_file(directory: Path) -> Path:
    """Where the seconds each kind of kernel took to compile are kept: beside the kernels."""
    return directory / "compile_times.json"


def _times(directory: Path) -> dict[str, float]:
    try:
        times = json.loads(times_file(directory).read_text(encoding="utf-8"))
    except (OSError, ValueError):  # none yet, or unreadable: no estimate, never a failure
        return {}
    return {key: float(value) for key, value in times.items()
            if isinstance(value, (int, float))} if isinstance(times, dict) else {}


def estimate(kind: str, directory: Path) -> str:
    """How long a kernel of ``kind`` should take to compile, in words: the seconds the last
    one took on this machine, or :data:`COMPILE_TIME` before any has."""
    seconds = _times(directory).get(kind)
    if seconds is None:
        return COMPILE_TIME
    return f"about {max(seconds, 1.0):.0f} s, as it took here last time"


def _keep(kind: str, seconds: float, directory: Path) -> None:
    times = {**_times(directory), kind: round(seconds, 2)}
    try:
        write_whole(times_file(directory), lambda partial: partial.write_text(
            json.dumps(times, indent=1, sort_keys=True), encoding="utf-8"))
    except OSError:  # a read-only cache: the estimate stays as it was
        pass


def announce_compiling(kernel: object, what: str, kind: str, directory: Path) -> None:
    """Tell stderr, once per kernel and process, that ``kernel`` (a generated kernel's numba
    dispatcher) is about to compile, if numba's cache holds none of it: ``what`` compiles,
    and how long a ``kind`` of kernel took here last time (:func:`estimate`, from
    ``directory``'s :func:`times_file`). The compile, when it comes, is watched: its seconds
    shown as they pass and kept for the next estimate. On a terminal the line first clears a
    progress line. The listeners of :func:`compiling_told_to` are called with ``what`` and
    the estimate. A
    dispatcher without the cache numba has today is taken as compiled."""
    try:
        index = Path(kernel._cache._cache_file._index_path)
    except AttributeError:  # numba's private cache API moved: say nothing rather than guess
        return
    with _LOCK:
        if index.exists() or str(index) in _ANNOUNCED:
            return
        _ANNOUNCED.add(str(index))
    stop_watching()  # a kernel told of before and never compiled: its compile will not come
    expected = estimate(kind, directory)
    line = f"tinynet: compiling {what}, once on this machine ({expected})"
    terminal = sys.stderr.isatty()
    if terminal:  # one line, rewritten in place: it must not wrap
        width = max(shutil.get_terminal_size().columns - 20, 40)
        line = textwrap.shorten(line, width, placeholder="...")
    print(("\r\033[K" + line) if terminal else f"{line}; cached in {index.parent}",
          end="" if terminal else "\n", file=sys.stderr, flush=True)
    _watch(kernel, line, lambda seconds: _keep(kind, seconds, directory), terminal)
    for listener in list(_LISTENERS):
        listener(what, expected)


def _watch(kernel: object, line: str, done: Callable[[float], None], terminal: bool) -> None:
    """Listen to numba's compile events for ``kernel``'s compile: show its seconds while it
    runs, then say how long it took and pass its own seconds (those of the package's helper
    functions compiled inside it, :func:`_helper`, left out) to ``done``."""
    from numba.core import event

    class Watch(event.Listener):
        def __init__(self) -> None:
            self.started = self.inner_started = 0.0
            self.overloads = 0
            self.inner = 0.0        # seconds of the package's helpers compiled inside it
            self.depth = 0
            self.finished = threading.Event()

        def on_start(self, ev: event.Event) -> None:
            if ev.data["dispatcher"] is kernel:
                self.started = time.perf_counter()
                self.overloads = _overloads(kernel)
                threading.Thread(target=self.tick, daemon=True).start()
            elif self.started and not self.finished.is_set() and _helper(ev):
                self.depth += 1
                if self.depth == 1:
                    self.inner_started = time.perf_counter()

        def on_end(self, ev: event.Event) -> None:
            if ev.data["dispatcher"] is not kernel:
                if self.started and not self.finished.is_set() and self.depth and _helper(ev):
                    self.depth -= 1
                    if self.depth == 0:
                        self.inner += time.perf_counter() - self.inner_started
                return
            seconds = time.perf_counter() - self.started
            self.finished.set()
            _unwatch(self)
            if _overloads(kernel) == self.overloads:  # failed: numba raises the error
                # (numba's Event.is_failed reads the other way round in 0.6x: not used)
                print("\r\033[K" if terminal else "", end="", file=sys.stderr, flush=True)
                return
            print(("\r\033[K" + line + f": done in {seconds:.1f} s") if terminal else
                  f"tinynet: compiled in {seconds:.1f} s", file=sys.stderr, flush=True)
            done(seconds - self.inner)

        def tick(self) -> None:
            every = 1.0 if terminal else QUIET_SECONDS
            while not self.finished.wait(every):
                seconds = time.perf_counter() - self.started
                print(f"\r\033[K{line}: {seconds:.0f} s" if terminal else
                      f"tinynet: still compiling, {seconds:.0f} s so far",
                      end="" if terminal else "\n", file=sys.stderr, flush=True)

    watch = Watch()
    with _LOCK:
        _WATCHES.append(watch)
    event.register("numba:compile", watch)


def _unwatch(watch: object) -> None:
    from numba.core import event
    with _LOCK:
        if watch not in _WATCHES:
            return
        _WATCHES.remove(watch)
    event.unregister("numba:compile", watch)


def stop_watching() -> None:
    """Remove the watches of kernels told of whose compile has not begun: called before each
    new notice (a kernel's compile follows its notice at once, in the same call), so that
    listeners never pile up."""
    for watch in list(_WATCHES):
        if not watch.started:
            _unwatch(watch)


def _overloads(kernel: object) -> int:
    """How many compiled versions a dispatcher holds: one more after a compile that worked
    (numba adds it before the compile's end event)."""
    return len(getattr(kernel, "overloads", ()))


def _helper(ev: object) -> bool:
    """Whether a compile event is of one of the package's own functions that numba caches on
    disk (``tinynet.*``, ``cache=True``): compiled once per machine, inside whichever kernel
    compiles first, and loaded by the others. (The kernel's generated module, and functions
    without a disk cache, compile with every kernel: they are its own seconds.)"""
    dispatcher = ev.data["dispatcher"]
    module = getattr(getattr(dispatcher, "py_func", None), "__module__", "") or ""
    cached = getattr(getattr(dispatcher, "_cache", None), "_cache_file", None) is not None
    return module.startswith("tinynet.") and cached


@contextmanager
def compiling_told_to(listener: Callable[[str, str], None]) -> Iterator[None]:
    """Within the block, also call ``listener(what, estimate)`` whenever
    :func:`announce_compiling` says a kernel is about to compile (the playground shows it on
    its page): what compiles, and how long it should take (:func:`estimate`)."""
    _LISTENERS.append(listener)
    try:
        yield
    finally:
        _LISTENERS.remove(listener)
