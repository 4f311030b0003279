"""``--import``: a user's own definitions brought in by name before anything is parsed.

A module given to ``--import`` (the command's and the playground's) registers what it
defines: initializers (:func:`tinynet.init.register`), activations, losses and optimizers
(``tinynet.activations.register`` and the like). Imported first, they are names like the
built-in ones: in the flags' choices, in ``--help``, in the hyperparameter flags
(:mod:`~tinynet.xor.hyperparameters`), in every arm and setup, and on a cluster's workers,
which are sent the module's source (:mod:`~tinynet.xor.cluster`).

An argument is either a module name, imported as ``import`` would (``mydefs``,
``package.mydefs``; the working folder is searched first, as ``python -m`` does), or the
path of a Python file (``mydefs.py``, ``./lib/mydefs.py``), imported under its file name's
stem (``mydefs``), so that the workers, the playground's trainer and pickles name it the
same way.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import sys
from collections.abc import Iterable
from pathlib import Path
from types import ModuleType

__all__ = ["import_user_module", "import_user_modules", "is_path"]


def is_path(argument: str) -> bool:
    """Whether an ``--import`` argument names a file (it ends in ``.py`` or holds a path
    separator) rather than a module."""
    return argument.endswith(".py") or "/" in argument or os.sep in argument


def import_user_module(argument: str) -> ModuleType:
    """Import the module ``argument`` names (a module name or a ``.py`` file's path) and
    return it; a module already imported from that very file is returned as it is.

    Raises ``ImportError`` (a file or module that is not there, a file name that is no
    module name) or whatever the module itself raises while it runs, with the message
    naming what was asked for; the caller adds ``--import ARGUMENT``."""
    if not isinstance(argument, str) or not argument.strip():
        raise ImportError(f"expected a module name such as mydefs or a file such as "
                          f"mydefs.py, got {argument!r}")
    if not is_path(argument):
        if os.getcwd() not in sys.path and "" not in sys.path:
            sys.path.insert(0, os.getcwd())  # as `python -m` would: a module beside the user
        return importlib.import_module(argument)
    path = Path(argument).expanduser()
    if not path.is_file():
        raise ImportError(f"no such file {str(path)!r}; expected a Python file such as "
                          f"mydefs.py, or a module name")
    name = path.stem
    if not name.isidentifier():
        raise ImportError(f"the file name {path.name!r} is not a module name (a Python "
                          f"identifier followed by .py, such as mydefs.py); rename it")
    loaded = sys.modules.get(name)
    if loaded is not None:
        source = getattr(loaded, "__file__", None)
        if source is not None and Path(source).resolve() == path.resolve():
            return loaded
        raise ImportError(f"a module {name!r} is already imported from "
                          f"{source or 'elsewhere'}, not from {str(path)!r}; rename the file")
    spec = importlib.util.spec_from_file_location(name, path.resolve())
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # as import does: the module may import itself, or pickle
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[name]
        raise
    return module


def import_user_modules(arguments: Iterable[str]) -> list[str]:
    """Import every ``--import`` argument in turn (:func:`import_user_module`) and return
    the imported modules' names, in order. The first that fails raises ``ValueError``, one
    line: ``--import ARGUMENT: ErrorType: message``."""
    names = []
    for argument in arguments:
        try:
            names.append(import_user_module(argument).__name__)
        except Exception as error:  # noqa: BLE001  (whatever the module raises, one line)
            text = (str(error).splitlines() or [""])[0]
            raise ValueError(f"--import {argument}: {type(error).__name__}: {text}") from None
    return names
