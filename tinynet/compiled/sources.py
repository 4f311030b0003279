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
from collections.abc import Iterable
from pathlib import Path
from types import ModuleType

from ..files import write_whole
from .notices import COMPILE_TIME, announce_compiling, compiling_told_to
from .caches import (CacheUnwritableError, cache_error, guard_loaded, private_dir, read_only,
                     say, unusable, untrusted, use_read_only)

__all__ = ["kernel_dir", "COMPILED_IN", "fingerprint", "sources_hash", "escaped", "load_module",
           "announce_compiling", "COMPILE_TIME", "compiling_told_to"]

_LOADED: dict[str, ModuleType] = {}
"""The generated modules imported so far, by file."""


def kernel_dir() -> Path:
    """Where generated kernels are written: ``$TINYNET_KERNEL_DIR`` (``~`` and ``$VARS``
    expanded; it must be absolute), else ``$XDG_CACHE_HOME/tinynet/kernels`` (default
    ``~/.cache``), else a folder of this user's own in the temporary folder; numba caches
    their compiled code beside them (in ``__pycache__``) unless ``$NUMBA_CACHE_DIR`` is set.

    A folder is used only if it can be trusted with code (:func:`~tinynet.compiled.caches.
    untrusted`: this user's or root's, writable by no one else, and so is everything in it);
    otherwise one line on stderr says why, and the kernels go to the private folder. When
    nothing can be written, :class:`~tinynet.compiled.CacheUnwritableError` (an ``OSError``)
    says so and names ``TINYNET_KERNEL_DIR``. Found once per value of those variables (a fit
    asks for it on every call)."""
    return _kernel_dir(os.environ.get("TINYNET_KERNEL_DIR"), os.environ.get("XDG_CACHE_HOME"),
                       os.environ.get("HOME"))


@functools.lru_cache(maxsize=16)
def _kernel_dir(chosen: str | None, cache_home: str | None, home: str | None) -> Path:
    # home: a key only, for "~" (os.path.expanduser reads $HOME)
    if chosen:
        directory = Path(os.path.expandvars(os.path.expanduser(chosen)))
        if not directory.is_absolute():
            raise CacheUnwritableError(f"TINYNET_KERNEL_DIR must be an absolute path, got "
                                       f"{chosen!r}")
        reason = unusable(directory)
        if reason is None:
            return directory
        trusted = untrusted(directory) is None  # asked once more, not once per use below
        if trusted and use_read_only(directory, trusted=True):  # prepared ahead: read from
            return directory
        if trusted:  # but not a folder that can be written
            raise CacheUnwritableError(f"cannot write generated kernels: TINYNET_KERNEL_DIR="
                                       f"{chosen} is not a writable directory; set "
                                       "TINYNET_KERNEL_DIR to one")
        return private_dir("kernels", f"TINYNET_KERNEL_DIR={chosen}", reason)
    user_cache = Path(os.path.expandvars(os.path.expanduser(cache_home or "~/.cache")))
    directory = user_cache / "tinynet" / "kernels"
    if not directory.is_absolute():  # a relative XDG_CACHE_HOME is ignored, as the spec says
        directory = Path(os.path.expanduser("~")) / ".cache" / "tinynet" / "kernels"
    if not directory.is_absolute():  # "~" if there is no home
        return private_dir("kernels")
    reason = unusable(directory)
    if reason is None:
        return directory
    trusted = untrusted(directory) is None
    if trusted and use_read_only(directory, trusted=True):
        return directory
    if trusted:  # only not writable: the private folder, quietly
        return private_dir("kernels")
    return private_dir("kernels", str(directory), reason)


COMPILED_IN = ("compiled/lanes.py", "compiled/single.py", "compiled/scalars.py",
               "compiled/orders.py", "compiled/simd.py", "compiled/target.py",
               "compiled/verdicts.py", "verdicts.py", "shuffle.py", "compiled/schedules.py",
               "schedules.py")
"""The sources a generated kernel compiles in besides its own, under ``tinynet/``: what its
header imports (:func:`tinynet.compiled.codegen.module_header`,
:func:`tinynet.compiled.kit.source`) and what those import in turn."""


@functools.cache
def fingerprint() -> str:
    """A hash of the sources :data:`COMPILED_IN`. Numba's cache checks only a kernel's own
    file, so each generated source names this hash: when one of them changes, the kernels get
    new files and are compiled anew, not loaded stale. (A change of the generators changes
    the generated text, and so its file name, by itself.)"""
    return sources_hash(COMPILED_IN)


def sources_hash(names: Iterable[str]) -> str:
    """A hash of the package's source files ``names`` (paths under ``tinynet/``), in order."""
    root = Path(__file__).resolve().parent.parent
    digest = hashlib.sha256()
    for name in names:
        digest.update((root / name).read_bytes())
    return digest.hexdigest()[:16]


def escaped(text: str) -> str:
    """``text`` as it may stand inside a generated triple-quoted docstring and read back as
    itself: backslashes, quotes, line breaks and every character outside printable ASCII
    escaped, so that a name holding three double quotes or a newline breaks no kernel's
    source. Plain names come out unchanged."""
    return text.encode("unicode_escape").decode("ascii").replace('"', '\\"')


def load_module(text: str, directory: Path) -> ModuleType:
    """The generated module with source ``text``, written to ``directory`` once (named by a
    hash of the text) and imported once per process."""
    name = "tinynet_kernel_" + hashlib.sha256(text.encode()).hexdigest()[:20]
    path = directory / f"{name}.py"
    if str(path) not in _LOADED:
        if not path.exists() or path.read_text(encoding="utf-8") != text:
            if read_only(directory):  # prepared ahead, without this kernel
                private = private_dir("kernels")
                say(f"{directory} is read-only and has no kernel {path.name}; compiling it "
                    f"into {private}")
                return load_module(text, private)
            directory.mkdir(parents=True, exist_ok=True)  # in case it went since it was found
            write_whole(path, lambda partial: partial.write_text(text, encoding="utf-8"))
            # (a racing process writing the same text: both win)
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
        guard_loaded()  # this module's kernels, and those of the modules it imported
        _LOADED[str(path)] = module
    return _LOADED[str(path)]
