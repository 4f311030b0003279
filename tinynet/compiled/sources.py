"""Where generated kernels are written, and how they are loaded: once per machine for each
text, named by a hash of it.

Generated sources (:mod:`tinynet.compiled.kit`, :mod:`tinynet.compiled.unrolled`,
:mod:`tinynet.compiled.fused`) are written to :func:`kernel_dir` (``$TINYNET_KERNEL_DIR``, or
``~/.cache/tinynet/kernels``), named by a hash of their text, and compiled with numba's
``cache=True``. Numba's cache checks only a kernel's own file, so each generated text names
:func:`fingerprint`, a hash of the package sources it compiles in: a change of those, or of
the generators (which changes the text), gives new files, never a stale kernel.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.util
import os
import sys
import tempfile
from pathlib import Path
from types import ModuleType

from ..files import write_whole
from .caches import CacheUnwritableError, cache_error

__all__ = ["kernel_dir", "COMPILED_IN", "fingerprint", "load_module", "announce_compiling"]


_LOADED: dict[str, ModuleType] = {}
"""The generated modules imported so far, by file."""


def kernel_dir() -> Path:
    """Where generated kernels are written: ``$TINYNET_KERNEL_DIR``, else
    ``$XDG_CACHE_HOME/tinynet/kernels`` (default ``~/.cache``), else a directory of this
    user's own in the temporary directory; numba caches their compiled code beside them (in
    ``__pycache__``) unless ``$NUMBA_CACHE_DIR`` is set. The first of these where a file can
    be created wins; when none can, :class:`~tinynet.compiled.CacheUnwritableError` (an
    ``OSError``) says so and names ``TINYNET_KERNEL_DIR``. Found once per value of those
    variables (a fit asks for it on every call)."""
    return _kernel_dir(os.environ.get("TINYNET_KERNEL_DIR"), os.environ.get("XDG_CACHE_HOME"),
                       os.environ.get("HOME"))


@functools.lru_cache(maxsize=16)
def _kernel_dir(chosen: str | None, cache_home: str | None, home: str | None) -> Path:
    # home: a key only, for "~" (os.path.expanduser reads $HOME)
    if chosen:
        if _writable(Path(chosen), private=False):
            return Path(chosen)
        raise CacheUnwritableError(f"cannot write generated kernels: TINYNET_KERNEL_DIR={chosen} "
                                   "is not a writable directory; set TINYNET_KERNEL_DIR to one")
    user_cache = Path(cache_home) if cache_home else Path(os.path.expanduser("~")) / ".cache"
    candidates = [(user_cache / "tinynet" / "kernels", False), (_private_temp_dir(), True)]
    for directory, private in candidates:
        if directory.is_absolute() and _writable(directory, private):  # "~" if no home
            return directory
    raise CacheUnwritableError("cannot write generated kernels: neither "
                               f"{candidates[0][0]} nor {candidates[1][0]} is writable; set "
                               "TINYNET_KERNEL_DIR to a writable directory")


def _private_temp_dir() -> Path:
    """The last resort for generated kernels: a directory named for this user in the
    temporary directory (shared by every user: see :func:`_writable`)."""
    user = os.getuid() if hasattr(os, "getuid") else os.environ.get("USERNAME", "user")
    return Path(tempfile.gettempdir()) / f"tinynet-kernels-{user}"


def _writable(directory: Path, private: bool) -> bool:
    """Whether ``directory`` exists or can be made, and a file can be created in it (tried, as
    numba tries its cache directories). A ``private`` one must also belong to this user and be
    writable by no one else: numba's cache files there are pickles, loaded as code."""
    try:
        directory.mkdir(mode=0o700 if private else 0o777, parents=True, exist_ok=True)
        if private and hasattr(os, "geteuid"):
            status = directory.stat()
            if status.st_uid != os.geteuid() or status.st_mode & 0o022:
                return False
        tempfile.TemporaryFile(dir=directory).close()
    except OSError:
        return False
    return True


COMPILED_IN = ("compiled/lanes.py", "compiled/single.py", "compiled/scalars.py",
               "compiled/orders.py", "compiled/simd.py", "shuffle.py")
"""The sources a generated kernel compiles in besides its own, under ``tinynet/``: what its
header imports (:func:`tinynet.compiled.codegen.module_header`,
:func:`tinynet.compiled.kit.source`) and what those import in turn."""


@functools.cache
def fingerprint() -> str:
    """A hash of the sources :data:`COMPILED_IN`. Numba's cache checks only a kernel's own
    file, so each generated source names this hash: when one of them changes, the kernels get
    new files and are compiled anew, not loaded stale. (A change of the generators changes
    the generated text, and so its file name, by itself.)"""
    root = Path(__file__).resolve().parent.parent
    digest = hashlib.sha256()
    for name in COMPILED_IN:
        digest.update((root / name).read_bytes())
    return digest.hexdigest()[:16]


def load_module(text: str, directory: Path) -> ModuleType:
    """The generated module with source ``text``, written to ``directory`` once (named by a
    hash of the text) and imported once per process."""
    name = "tinynet_kernel_" + hashlib.sha256(text.encode()).hexdigest()[:20]
    path = directory / f"{name}.py"
    if str(path) not in _LOADED:
        if not path.exists() or path.read_text() != text:
            directory.mkdir(parents=True, exist_ok=True)  # in case it went since it was found
            write_whole(path, lambda partial: partial.write_text(text))  # a racing process
            # writing the same text: both win
        spec = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module  # numba's cache finds a kernel's module by name
        try:
            spec.loader.exec_module(module)
        except RuntimeError as error:  # numba found no cache directory for it
            del sys.modules[name]
            unwritable = cache_error(error, f"the generated kernel {path}",
                                     "set NUMBA_CACHE_DIR to a writable directory")
            if unwritable is None:
                raise
            raise unwritable from error
        _LOADED[str(path)] = module
    return _LOADED[str(path)]


def announce_compiling(kernel: object, what: str) -> None:
    """Print one line on stderr if numba's cache holds no compiled ``kernel`` (a generated
    kernel's numba dispatcher) yet, as it is about to compile it: a first run waits, and
    should say why (on a 2-core machine the default XOR run's first compile took 13 to 15 s
    in the committed benchmarks, up to a minute when the machine is busy). On a terminal the
    line first clears a progress line. A dispatcher without the cache numba has today is
    taken as compiled."""
    try:
        index = Path(kernel._cache._cache_file._index_path)
    except AttributeError:  # numba's private cache API moved: say nothing rather than guess
        return
    if not index.exists():
        clear = "\r\033[K" if sys.stderr.isatty() else ""
        print(f"{clear}tinynet: compiling a kernel for {what}, first run only (about 15 s, up "
              f"to a minute on a busy machine); cached in {index.parent}", file=sys.stderr,
              flush=True)
