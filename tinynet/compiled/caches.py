"""Where Numba caches the compiled kernels, and the error when it can cache them nowhere.

Numba's imports are inside the functions: importing this module (and so ``tinynet``) imports
no Numba.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

__all__ = ["CacheUnwritableError", "NO_LOCATOR", "CACHED_SOURCES", "numba_cache_problem",
           "cache_error"]


class CacheUnwritableError(OSError):
    """No directory where Numba would cache the compiled kernels, or tinynet would write the
    generated ones, is writable. The message names the directories tried and the variables
    to set (``NUMBA_CACHE_DIR``, ``TINYNET_KERNEL_DIR``)."""


CACHED_SOURCES = ("shuffle.py", "compiled/lanes.py")
"""One source, under ``tinynet/``, from each folder whose modules the backend compiles with
``cache=True``: numba looks for a cache directory per source folder."""

NO_LOCATOR = "no locator available"
"""What numba's RuntimeError says when it finds no cache directory for a function."""


def numba_cache_problem(advice: Callable[[], str]) -> str | None:
    """What stops numba from caching the backend's kernels, as the message of a
    :class:`CacheUnwritableError`, or None if nothing does. Asks numba's own cache locators,
    in numba's order, as the import of the backend will (the first that can create its
    directory and a file in it wins); None too when numba's API has moved, or the user chose
    the locators (``NUMBA_CACHE_LOCATOR_CLASSES``): the import then says. ``advice()`` ends
    the message (what to set), asked for only when there is one."""
    from numba.core import caching, config

    classes = getattr(getattr(caching, "CacheImpl", None), "_locator_classes", None)
    if (not classes or getattr(config, "CACHE_LOCATOR_CLASSES", None)
            or getattr(config, "DISABLE_JIT", False)):  # nothing compiled, nothing cached
        return None
    package = Path(__file__).resolve().parent.parent
    for name in CACHED_SOURCES:
        source = package / name
        try:
            if any(cls.from_function(numba_cache_problem, str(source)) is not None
                   for cls in classes):
                continue
        except (AttributeError, TypeError, ValueError):  # the API moved: let the import say
            return None
        tried = [f"NUMBA_CACHE_DIR={config.CACHE_DIR}"] if config.CACHE_DIR else []
        tried += [str(source.parent / "__pycache__"), _numba_user_cache()]
        listed = (f"neither {tried[0]} nor {tried[1]} is" if len(tried) == 2 else
                  f"none of {', '.join(tried)} is")
        return f"numba cannot cache the compiled kernels: {listed} writable; {advice()}"
    return None


def _numba_user_cache() -> str:
    """Numba's user-wide cache directory (``$XDG_CACHE_HOME/numba``, default
    ``~/.cache/numba``), where it caches a module whose own ``__pycache__`` is read-only."""
    try:
        from numba.misc.appdirs import AppDirs
        return AppDirs(appname="numba", appauthor=False).user_cache_dir
    except (ImportError, AttributeError, TypeError):
        return "numba's user cache directory"


def cache_error(error: RuntimeError, what: str, advice: str) -> CacheUnwritableError | None:
    """Numba's RuntimeError that it found no cache directory for ``what`` (the backend's
    kernels, a generated kernel), as a :class:`CacheUnwritableError` ending in ``advice``;
    None for any other RuntimeError."""
    if NO_LOCATOR not in str(error):
        return None
    return CacheUnwritableError(f"numba cannot cache {what} ({error}); {advice}")
