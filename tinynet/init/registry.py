"""The initializer registry: every scheme by name, with parameters, and room for the user's own.

    >>> import tinynet
    >>> @tinynet.init.register("tiny_normal")
    ... def tiny_normal(shape, rng, std=0.1):
    ...     return rng.normal(0.0, std, size=shape)
    >>> net = tinynet.mlp([2, 2, 1], init="tiny_normal(std=0.05)")

A name may carry keyword parameters, ``"normal(std=0.5)"``; they are read with
``ast.literal_eval``, so a spec string can never run code.

Names mean one thing: a registered name is exactly what ``get`` reads back from a spec. So a
name must be a Python identifier, not a keyword (``None``, ``True``, ``False``, ``lambda``,
``class``...: a spec cannot name them), and in NFKC normal form, because Python's parser
normalises identifiers (``"ﬁ_init(std=1)"`` with the U+FB01 ligature reads as ``fi_init``;
``get`` normalises a spec's name the same way, so either spelling finds ``fi_init``). Soft
keywords (``match``, ``case``, ``type``, ``_``) parse as plain names and are allowed.
"""

from __future__ import annotations

import ast
import contextvars
import inspect
import re
import unicodedata
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, fields, replace
from keyword import iskeyword

import numpy as np

from ..activations import Activation
from ..validation import UnknownNameError, shorten
from .keras import KERAS_NAMES
from .schemes import FunctionInitializer, Initializer

__all__ = ["Entry", "InitError", "register", "get", "available", "entries", "distinct",
           "parse_spec", "from_spec", "draw", "check_name", "snake_case", "replacing"]


@dataclass(frozen=True)
class Entry:
    """A registered name: ``factory(**parameters)`` builds its initializer.

    ``alias_of``: the canonical name when this is the same scheme under another library's name
    (``kaiming_normal`` of ``he_normal``): same parameters, same draws; "" otherwise.
    """

    name: str
    factory: Callable[..., Initializer]
    summary: str = ""
    source: str = ""
    alias_of: str = ""

    @property
    def parameters(self) -> dict[str, object]:
        """The keyword parameters the name accepts, with their defaults."""
        return {name: p.default for name, p in inspect.signature(self.factory).parameters.items()}


_REGISTRY: dict[str, Entry] = {}


def _function_factory(name: str, function: Callable) -> Callable[..., Initializer]:
    """Wrap ``f(shape, rng, **params)`` as a factory of :class:`FunctionInitializer` s."""
    signature = inspect.signature(function)
    extra = list(signature.parameters.values())[2:]

    def factory(**params: object) -> Initializer:
        return FunctionInitializer(name, lambda shape, rng: function(shape, rng, **params))

    factory.__signature__ = signature.replace(parameters=extra)  # type: ignore[attr-defined]
    return factory


def register(name: str, initializer: Initializer | Callable | None = None, *,
             override: bool = False, summary: str = "",
             source: str = "user") -> Initializer | Callable:
    """Register ``initializer`` under ``name``; without ``initializer``, act as a decorator.

    ``initializer`` is an :class:`Initializer` or a function ``f(shape, rng, **params) -> array``
    (``shape = (n_out, n_in)``, ``rng`` a ``numpy.random.Generator``; keyword parameters with
    defaults can then be given by name, ``"my_init(std=0.3)"``). Registering a name that exists
    is an error unless ``override=True``. ``name`` must pass :func:`check_name`. Returns what it
    was given, so it works as a decorator.
    """
    check_name(name)
    if initializer is None:
        def decorator(function: Callable) -> Callable:
            register(name, function, override=override, summary=summary, source=source)
            return function
        return decorator
    if isinstance(initializer, Initializer):
        factory: Callable[..., Initializer] = lambda: initializer  # noqa: E731
    elif callable(initializer):
        parameters = list(inspect.signature(initializer).parameters.values())
        extra_ok = all(p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY) and
                       p.default is not p.empty for p in parameters[2:])
        if len(parameters) < 2 or not extra_ok:
            raise TypeError(f"initializer {name!r} must be f(shape, rng, key=default, ...): "
                            "two positional arguments, then keyword parameters with defaults; "
                            f"got signature {inspect.signature(initializer)}")
        factory = _function_factory(name, initializer)
    else:
        raise TypeError(f"initializer must be an Initializer or a function "
                        f"f(shape, rng) -> array, got {initializer!r}")
    add_entry(Entry(name, factory, summary or (inspect.getdoc(initializer) or "").split("\n")[0],
                    source), override=override)
    return initializer


def check_name(name: object) -> str:
    """Return ``name`` if it can be registered: a string that ``get`` reads back unchanged.

    That is a Python identifier, not a keyword (``None``, ``True`` and ``False`` are keywords),
    and in NFKC normal form (Python's parser NFKC-normalises identifiers, so ``get`` could not
    find ``"ﬁ_init"``: it reads ``fi_init``). Soft keywords (``match``, ``case``, ``type``,
    ``_``) parse as names and are allowed. Raises TypeError or ValueError, naming the rule.
    """
    if not isinstance(name, str):
        raise TypeError(f"name must be a string, a Python identifier such as 'my_init', got "
                        f"{name!r} of type {type(name).__name__}")
    if not name.isidentifier():
        raise ValueError(f"name must be a Python identifier such as 'my_init', got {name!r}")
    if iskeyword(name):
        raise ValueError(f"name must be a Python identifier such as 'my_init' that is not a "
                         f"Python keyword (a spec cannot name it), got {name!r}")
    normal = unicodedata.normalize("NFKC", name)
    if normal != name:
        changed = [f"U+{ord(c):04X} {unicodedata.name(c, '?')}" for c in name
                   if unicodedata.normalize("NFKC", c) != c]
        why = f" ({', '.join(changed)})" if changed else ""
        raise ValueError(f"name must be a Python identifier in NFKC normal form, as Python "
                         f"reads identifiers, got {name!r}{why}, which Python reads as "
                         f"{normal!r}; register {normal!r} instead")
    return name


def add_entry(entry: Entry, override: bool = False) -> None:
    """Put ``entry`` in the registry (used by :func:`register` and the built-in catalogue).

    Replacing an entry (``override=True``) makes its aliases entries of their own: they keep
    drawing what they drew, which is no longer what the replaced name draws.
    """
    check_name(entry.name)
    if entry.name in _REGISTRY:
        if not (override or _REPLACING.get()):
            raise ValueError(f"initializer {entry.name!r} is already registered; pass "
                             "override=True to replace it")
        for other in list(_REGISTRY.values()):
            if other.alias_of == entry.name:
                _REGISTRY[other.name] = replace(other, alias_of="")
    _REGISTRY[entry.name] = entry


_REPLACING: contextvars.ContextVar[bool] = contextvars.ContextVar("replacing", default=False)


@contextmanager
def replacing() -> Iterator[None]:
    """Within the block, registering a name that exists replaces it, as ``override=True``
    would: how a changed ``--import`` module runs again on a cluster's workers over what its
    older copy registered."""
    token = _REPLACING.set(True)
    try:
        yield
    finally:
        _REPLACING.reset(token)


MAX_SPEC_LENGTH = 1000
"""The longest initializer spec read: longer ones are refused before Python's parser sees them
(a deeply nested one would exhaust its recursion)."""


def from_spec(spec: str, what: str, classes: dict[str, type], example: str,
              word: str = "parameter") -> object:
    """An instance of the class of ``classes`` that ``spec`` names, ``"name"`` or
    ``"name(key=value, ...)"`` (:func:`parse_spec`), made with those fields: a loss or an
    optimizer from a spec as its ``repr`` writes it. An unknown name raises
    :class:`~tinynet.validation.UnknownNameError`; a field the class has not, a TypeError
    naming ``what`` and the ``word`` for its fields (``"hyperparameter"``)."""
    name, values = parse_spec(spec, what, example)
    if name not in classes:
        raise UnknownNameError(what, name, classes)
    cls = classes[name]
    accepted = [field.name for field in fields(cls)]
    unknown = sorted(set(values) - set(accepted))
    if unknown:
        raise TypeError(f"{what} {name!r} got unknown {word}(s) {', '.join(unknown)}; it "
                        f"accepts {', '.join(accepted) or 'none'}")
    return cls(**values)


def parse_spec(spec: str, what: str = "initializer",
               example: str = "normal(std=0.5)") -> tuple[str, dict[str, object]]:
    """Split ``"name(key=value, ...)"`` into the name and its literal keyword parameters
    (``what``: what the spec names, and ``example`` one, for the error messages).

    Names are read as Python reads them, NFKC-normalised: ``"ﬁ_init"`` gives ``fi_init``.
    """
    if not isinstance(spec, str):
        raise TypeError(f"{what} spec must be a string such as {example!r}, got "
                        f"{spec!r} of type {type(spec).__name__}")
    head = spec.strip().split("(")[0].strip()
    why = f"; {head!r} is a Python keyword, which cannot name an {what}" \
        if iskeyword(head) else ""
    if len(spec) > MAX_SPEC_LENGTH:
        raise ValueError(f"{what} spec must be at most {MAX_SPEC_LENGTH} characters, got "
                         f"{len(spec)}: {shorten(spec)}")
    try:
        tree = ast.parse(spec.strip(), mode="eval").body
    except (SyntaxError, MemoryError, RecursionError):  # nested too deep for the parser
        raise ValueError(f"{what} spec {shorten(spec)} is not of the form name or "
                         f"name(key=value, ...){why}") from None
    if isinstance(tree, ast.Name):
        return tree.id, {}
    if not (isinstance(tree, ast.Call) and isinstance(tree.func, ast.Name)) or tree.args:
        raise ValueError(f"{what} spec {spec!r} is not of the form name or "
                         f"name(key=value, ...) with keyword parameters only{why}")
    params = {}
    for keyword in tree.keywords:
        if keyword.arg is None or keyword.arg in params:
            raise ValueError(f"{what} spec {spec!r} must name each parameter once, "
                             "as key=value")
        try:
            value = ast.literal_eval(keyword.value)
        except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
            value = parse_spec  # not a literal: refused just below
        if not isinstance(value, (int, float, str, type(None))) or isinstance(value, bool):
            raise ValueError(f"parameter {keyword.arg!r} in {what} spec {spec!r} must be "
                             f"a literal number or string, got {ast.unparse(keyword.value)!r}")
        params[keyword.arg] = value
    return tree.func.id, params


def get(spec: str | Initializer | Callable) -> Initializer:
    """Return the initializer for ``spec``: a name, ``"name(key=value)"``, an Initializer, or a
    function ``f(shape, rng) -> array``."""
    if isinstance(spec, Initializer):
        return spec
    if isinstance(spec, str):
        name, params = parse_spec(spec)
        if name not in _REGISTRY:
            raise _unknown(name, spec)
        entry = _REGISTRY[name]
        unknown = sorted(set(params) - set(entry.parameters))
        if unknown:
            accepted = ", ".join(entry.parameters) or "no parameters"
            raise TypeError(f"initializer {name!r} got unknown parameter(s) {', '.join(unknown)}; "
                            f"it accepts {accepted}")
        initializer = entry.factory(**params)
        if params:
            initializer.name = f"{name}({', '.join(f'{k}={v!r}' for k, v in params.items())})"
        return initializer
    if callable(spec):
        return FunctionInitializer(getattr(spec, "__name__", "custom"), spec)
    raise TypeError(f"init must be an initializer name, an Initializer or a function "
                    f"f(shape, rng) -> array, got {spec!r}")


def snake_case(name: str) -> str:
    """``HeNormal`` -> ``he_normal``, ``VarianceScaling`` -> ``variance_scaling``: Keras's class
    names as its snake_case functions (and tinynet's entries) spell them."""
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])", "_", name).lower()


def _unknown(name: str, spec: str) -> UnknownNameError:
    """The error for a spec naming no registered initializer: a Keras name (CamelCase, or
    Keras's snake_case where tinynet's differs) gets its tinynet namesake as the suggestion,
    and what differs between the two as the hint."""
    hints = []
    written = spec.strip().split("(")[0].strip()
    if written != name:
        hints.append(f"{written!r} reads as {name!r}: Python NFKC-normalises identifiers")
    key = snake_case(name)
    target, note = KERAS_NAMES.get(key, (key, ""))
    suggestion = target if target in _REGISTRY and target != name else None
    if suggestion is not None and note:
        hints.append(note)
    hints.append("tinynet.init.available() lists them all (python -m tinynet.init describes "
                 "them); register your own with tinynet.init.register(name, function)")
    return UnknownNameError("initializer", name, _REGISTRY, ". ".join(hints),
                            suggestion=suggestion)


def available() -> list[str]:
    """The registered initializer names, sorted."""
    return sorted(_REGISTRY)


def entries() -> list[Entry]:
    """The registry's entries, sorted by name."""
    return [_REGISTRY[name] for name in available()]


def distinct() -> dict[str, list[str]]:
    """Every distinct registered initializer once: ``{name: [its aliases]}``, sorted by name.

    Aliases (``Entry.alias_of``: ``glorot_*`` of ``xavier_*``, ``kaiming_*`` of ``he_*``) are the
    same scheme under another name and draw the same weights, so running each key once runs
    every scheme once. Every other entry is a key with no aliases, ``auto`` included (it picks
    ``xavier_normal``, ``he_normal`` or ``he_leaky`` by the layer's activation), and so are
    entries whose defaults happen to coincide (``variance_scaling``'s defaults are
    ``lecun_normal``; ``constant``'s is ``zeros``), since their parameters differ.
    """
    folded: dict[str, list[str]] = {}
    for entry in entries():
        canonical = entry.alias_of if entry.alias_of in _REGISTRY else entry.name
        folded.setdefault(canonical, [])
        if canonical != entry.name:
            folded[canonical].append(entry.name)
    return dict(sorted(folded.items()))


class InitError(ValueError):
    """An initializer failed while drawing (see :func:`draw`)."""


def draw(initializer: Initializer, shape: tuple[int, int], rng: np.random.Generator,
         activation: Activation) -> np.ndarray:
    """Call ``initializer`` and check that it returned finite real numbers of ``shape``.

    An initializer that fails with anything but a ValueError or TypeError (a parameter so large
    that its variance overflows, a user's function that raises) raises :class:`InitError`,
    a ValueError naming it, with the original exception as its cause."""
    try:
        weights = np.asarray(initializer(shape, rng, activation))
    except (ValueError, TypeError):
        raise
    except Exception as error:  # noqa: BLE001  (whatever it raises, named in one line)
        raise InitError(f"initializer {initializer.name!r} failed to draw a {shape} weight "
                        f"matrix for a {activation!r} layer: {type(error).__name__}: "
                        f"{error}") from error
    if weights.shape != shape:
        raise ValueError(f"initializer {initializer.name!r} returned shape {weights.shape}, "
                         f"expected {shape} (n_out, n_in)")
    if weights.dtype.kind not in "biuf" or not np.all(np.isfinite(weights)):
        raise ValueError(f"initializer {initializer.name!r} must return finite real numbers")
    return np.ascontiguousarray(weights, dtype=np.float64)
