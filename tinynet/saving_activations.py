"""Activations of your own in a network file: saved as their class and fields, loaded as that
class again, never as a built-in of the same name (format 4 of :mod:`tinynet.saving`).

A built-in activation (the classes of :data:`tinynet.activations.BUILT_IN`, exactly) is saved
by name, as it always was. Any other, even a class named ``"tanh"`` or a subclass of LeakyReLU,
is saved as

* its class, ``module:QualifiedName``, in entry ``activation_classes`` ("" for a built-in);
* the digest of its definition (below), in entry ``activation_digests`` ("" for a built-in);
* each field its constructor takes, as one int64 or float64 (member ``activation<i>.<field>``):
  fields are an activation's numeric parameters, so a field that is no finite real number
  is refused at save time, as is an activation that its class, rebuilt from those fields,
  would not give back (a constructor that changes its arguments, a parameter kept outside
  the dataclass fields), a class that loading could not find by its name (one defined in
  a function), or one whose definition's source cannot be read.

Loading finds the class only among the modules already imported, ``sys.modules``: importing a
module a file names would run code the file chose, and a file must never run code. The lookup
reads the module's and classes' namespaces (``vars``), so it runs nothing either: no import,
no module ``__getattr__``, no descriptor. Only then, and only if it is a subclass of
:class:`~tinynet.activations.Activation`, is the class called, with the file's fields, which
must be the ones its constructor takes, each a finite number. Import your activation's module
before :func:`tinynet.load` (the error says which); a class in a script is found if the script
that loads defines it too (module ``__main__``).

A name is not a definition: the script or notebook that loads may call another class ``Act``
(``__main__:Act``), with the same fields and other maths, and a module's class may have been
edited since the network was saved. Either would load silently and compute something other
than what the network was trained with. So the file also holds, in entry ``activation_digests``, a
digest of the definition that computes: the source of the methods the class resolves
(``forward_and_derivative``, or NumPy's ``forward`` and ``derivative``; whichever class of its
MRO defines them), each parsed and dumped as its syntax tree (``ast.dump``) without its
docstring, so that whitespace, comments and documentation do not count, hashed with SHA-256
(16 hex digits). Loading digests the class it finds the same way and refuses a file whose
digest differs. An activation whose source cannot be read (a class typed at a prompt or in
``python -c``) is refused at save time: loading could not check it. The digest covers those
methods' text, not what they call (a helper function, a module's global), which a class
written with :mod:`tinynet.maths` does not need.
"""

from __future__ import annotations

import ast
import dataclasses
import hashlib
import inspect
import numbers
import sys
import textwrap
import types
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from .activations import BUILT_IN, Activation
from .validation import FileFormatError, shorten, summarised

__all__ = ["entries", "digest", "rebuilt"]


def entries(activations: Sequence[Activation]) -> dict[str, np.ndarray]:
    """The file entries of the layers' ``activations`` that are not built-in ones (none if all
    are): ``activation_classes``, each layer's class as ``module:QualifiedName`` ("" for a
    built-in), ``activation_digests``, the digest of each one's definition ("" for a
    built-in), and each field of those activations as one number (``activation<i>.<field>``).
    Raise ValueError, in one line, for an activation that would not load as it is."""
    classes = ["" if type(activation) in BUILT_IN else
               _class_path(type(activation), f"layer {i}'s activation")
               for i, activation in enumerate(activations)]
    if not any(classes):
        return {}
    digests = []
    for i, (activation, qualified) in enumerate(zip(activations, classes)):
        try:
            digests.append(digest(type(activation)) if qualified else "")
        except LookupError as error:
            raise ValueError(f"layer {i}'s activation {qualified} cannot be saved: {error}, so "
                             "loading could not check that the class it finds computes what "
                             "the network was trained with; define it in a module or script "
                             "file") from None
    entries = {"activation_classes": np.array(classes), "activation_digests": np.array(digests)}
    for i, (activation, qualified) in enumerate(zip(activations, classes)):
        if qualified:
            fields = _field_entries(activation, f"layer {i}'s activation {qualified}")
            entries.update({f"activation{i}.{name}": value for name, value in fields.items()})
    return entries


DEFINED_BY = ("forward_and_derivative", "forward", "derivative")
"""The methods an activation's maths is defined by: ``forward_and_derivative``, or (NumPy
only) ``forward`` and ``derivative``; the others are :class:`Activation`'s own, which follow
from them."""


def digest(cls: type) -> str:
    """The digest of the definition ``cls`` computes with: SHA-256 (16 hex digits) of the
    syntax trees (``ast.dump``, docstrings left out) of the methods of :data:`DEFINED_BY`
    that ``cls`` resolves to something other than Activation's, whichever class of its MRO
    defines them. Looked up in the classes' namespaces (``vars``), so no descriptor runs; the
    source is read as :func:`inspect.getsource` reads it (the module's file, or the cache
    IPython keeps of a notebook's cells). Raise LookupError, saying why, if a method's source
    cannot be read and parsed."""
    dumps = []
    for name in DEFINED_BY:
        method = next(vars(base)[name] for base in cls.__mro__ if name in vars(base))
        if method is vars(Activation)[name]:
            continue
        if not isinstance(method, types.FunctionType):
            raise LookupError(f"its {name} is a {type(method).__name__}, not a function "
                              "(def) whose source can be read")
        try:
            tree = ast.parse(textwrap.dedent(inspect.getsource(method)))
        except (OSError, TypeError, SyntaxError) as error:
            raise LookupError(f"the source of its {name} cannot be read (was it typed at a "
                              f"prompt or in python -c?): {type(error).__name__}: "
                              f"{error}") from None
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and \
                    ast.get_docstring(node, clean=False) is not None:
                node.body = node.body[1:]
        dumps.append(ast.dump(tree))
    return hashlib.sha256("\n".join(dumps).encode()).hexdigest()[:16]


def _class_path(cls: type, what: str) -> str:
    """``module:QualifiedName`` of ``cls``, if loading finds ``cls`` again by it."""
    qualified = f"{cls.__module__}:{cls.__qualname__}"
    try:
        found = _imported(qualified)
    except LookupError:
        found = None
    if isinstance(found, type) and found is not cls:  # the name now holds a newer class
        raise ValueError(f"{what} {qualified} cannot be saved: that name now holds another "
                         "class (was its cell or module run again?), which loading would "
                         "find instead; build the network again with the current class")
    if found is not cls:
        raise ValueError(f"{what} {qualified} cannot be saved: loading finds a class by module "
                         "and name among the modules imported, which does not lead back to "
                         "this one; define it at the top level of a module")
    return qualified


def _field_entries(activation: Activation, what: str) -> dict[str, np.ndarray]:
    """The fields ``activation``'s constructor takes, each as one int64 or float64, if they are
    finite real numbers and its class rebuilt from them has the fields it has."""
    values = {}
    for field in dataclasses.fields(activation):
        if not field.init:  # derived by the constructor, as it will be on loading
            continue
        value = getattr(activation, field.name)
        is_number = isinstance(value, numbers.Real) and not isinstance(value, (bool, np.bool_))
        integral = isinstance(value, numbers.Integral)
        try:
            array = np.array(value, dtype=np.int64 if integral else np.float64) \
                if is_number else None
        except OverflowError:
            array = None
        if array is None or not np.isfinite(array):
            raise ValueError(f"{what} cannot be saved: its field {field.name!r} is "
                             f"{shorten(value)} ({type(value).__name__}); fields must be "
                             "finite real numbers (int64 or float64)")
        values[field.name] = array
    cls = type(activation)
    try:
        rebuilt = cls(**{name: array.item() for name, array in values.items()})
    except Exception as error:  # whatever the class's own constructor raises
        raise ValueError(f"{what} cannot be saved: rebuilt from its fields "
                         f"({', '.join(values) or 'none'}) it raises {type(error).__name__}: "
                         f"{error}") from None
    if not all(np.array_equal(getattr(rebuilt, field.name), getattr(activation, field.name))
               for field in dataclasses.fields(activation)):
        raise ValueError(f"{what} cannot be saved: rebuilt from its fields it would be "
                         f"{cls.__name__}({_fields_text(rebuilt)}), not "
                         f"{cls.__name__}({_fields_text(activation)})")
    return values


def _fields_text(activation: Activation) -> str:
    """Every field of ``activation``, as ``name=value, ...``."""
    return ", ".join(f"{field.name}={getattr(activation, field.name)!r}"
                     for field in dataclasses.fields(activation))


def _imported(qualified: str) -> object:
    """What ``qualified`` (``module:QualifiedName``) names in a module already imported, looked
    up in the module's and classes' namespaces (``vars``), so that nothing runs: no import, no
    module ``__getattr__``, no descriptor. Raise LookupError saying what is missing."""
    module, _, qualname = qualified.partition(":")
    if not all(part.isidentifier() for part in [*module.split("."), *qualname.split(".")]):
        raise LookupError("is not of the form module:ClassName")
    found = sys.modules.get(module)
    if found is None:
        raise LookupError(f"is not loaded: loading imports no module a file names; import "
                          f"{module} before loading")
    for part in qualname.split("."):
        namespace = vars(found) if issubclass(type(found), (types.ModuleType, type)) else {}
        if part not in namespace:
            raise LookupError(f"is not loaded: module {module} has no {qualname}")
        found = namespace[part]
    return found


def rebuilt(qualified: str, saved_digest: str, arrays: dict[str, np.ndarray], i: int,
            path: Path) -> Activation:
    """Layer ``i``'s activation of its own, from the ``arrays`` of the file at ``path``: the
    class ``qualified`` names, if it is an Activation subclass already imported whose
    definition has the digest ``saved_digest`` the file holds, built from its fields. Raise
    FileFormatError, in one line, otherwise."""
    what = f"{path}: layer {i}'s activation class {qualified!r}"
    try:
        cls = _imported(qualified)
    except LookupError as error:
        raise FileFormatError(f"{what} {error}") from None
    if not issubclass(type(cls), type):
        raise FileFormatError(f"{what} names a {type(cls).__name__}, not a class")
    if not issubclass(cls, Activation) or cls is Activation:
        raise FileFormatError(f"{what} is not a subclass of tinynet.activations.Activation")
    try:
        found = digest(cls)
    except LookupError as error:
        raise FileFormatError(f"{what} cannot be checked against the definition the network "
                              f"was saved with: {error}") from None
    if found != saved_digest:
        raise FileFormatError(f"{what}: the class of that name here has a definition that "
                              f"differs from the one the network was saved with (digest "
                              f"{found}, the file's {shorten(saved_digest)}): another class "
                              "of the same name, or the class was edited since; load it with "
                              "the class it was saved with")
    names = [field.name for field in dataclasses.fields(cls) if field.init]
    prefix = f"activation{i}."
    held = sorted(key.removeprefix(prefix) for key in arrays if key.startswith(prefix))
    if held != sorted(names):
        raise FileFormatError(f"{what} takes the fields ({', '.join(names)}) but the file "
                              f"holds ({summarised(held)}): the class or the file changed "
                              "since it was saved")
    values = {}
    for name in names:
        value = arrays[prefix + name]
        if value.shape != () or value.dtype.kind not in "iuf" or not np.isfinite(value):
            raise FileFormatError(f"{what}: its field {name!r} must be one finite real "
                                  f"number, got {shorten(value)}")
        values[name] = value.item()
    try:
        return cls(**values)
    except Exception as error:  # whatever the class's own constructor raises
        raise FileFormatError(f"{what} cannot be rebuilt from its fields: "
                              f"{type(error).__name__}: {error}") from None
