"""The initializer registry: every scheme by name, with parameters, and room for the user's own.

    >>> import tinynet
    >>> @tinynet.init.register("tiny_normal")
    ... def tiny_normal(shape, rng, std=0.1):
    ...     return rng.normal(0.0, std, size=shape)
    >>> net = tinynet.mlp([2, 2, 1], init="tiny_normal(std=0.05)")

A name may carry keyword parameters, ``"normal(std=0.5)"``; they are read with
``ast.literal_eval``, so a spec string can never run code.
"""

from __future__ import annotations

import ast
import inspect
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ..activations import Activation
from ..validation import UnknownNameError
from .schemes import FunctionInitializer, Initializer

__all__ = ["Entry", "register", "get", "available", "entries", "parse_spec", "draw"]


@dataclass(frozen=True)
class Entry:
    """A registered name: ``factory(**parameters)`` builds its initializer."""

    name: str
    factory: Callable[..., Initializer]
    summary: str = ""
    source: str = ""

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
    is an error unless ``override=True``. Returns what it was given, so it works as a decorator.
    """
    if not isinstance(name, str) or not name.isidentifier():
        raise ValueError(f"name must be a Python identifier such as 'my_init', got {name!r}")
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


def add_entry(entry: Entry, override: bool = False) -> None:
    """Put ``entry`` in the registry (used by :func:`register` and the built-in catalogue)."""
    if entry.name in _REGISTRY and not override:
        raise ValueError(f"initializer {entry.name!r} is already registered; pass "
                         "override=True to replace it")
    _REGISTRY[entry.name] = entry


def parse_spec(spec: str) -> tuple[str, dict[str, object]]:
    """Split ``"name(key=value, ...)"`` into the name and its literal keyword parameters."""
    try:
        tree = ast.parse(spec.strip(), mode="eval").body
    except SyntaxError:
        raise ValueError(f"initializer spec {spec!r} is not of the form name or "
                         "name(key=value, ...)") from None
    if isinstance(tree, ast.Name):
        return tree.id, {}
    if not (isinstance(tree, ast.Call) and isinstance(tree.func, ast.Name)) or tree.args:
        raise ValueError(f"initializer spec {spec!r} is not of the form name or "
                         "name(key=value, ...) with keyword parameters only")
    params = {}
    for keyword in tree.keywords:
        if keyword.arg is None or keyword.arg in params:
            raise ValueError(f"initializer spec {spec!r} must name each parameter once, "
                             "as key=value")
        try:
            value = ast.literal_eval(keyword.value)
        except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
            value = parse_spec  # not a literal: refused just below
        if not isinstance(value, (int, float, str, type(None))) or isinstance(value, bool):
            raise ValueError(f"parameter {keyword.arg!r} in initializer spec {spec!r} must be "
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
            raise UnknownNameError("initializer", name, _REGISTRY,
                                   "Register your own with tinynet.init.register(name, function)")
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


def available() -> list[str]:
    """The registered initializer names, sorted."""
    return sorted(_REGISTRY)


def entries() -> list[Entry]:
    """The registry's entries, sorted by name."""
    return [_REGISTRY[name] for name in available()]


def draw(initializer: Initializer, shape: tuple[int, int], rng: np.random.Generator,
         activation: Activation) -> np.ndarray:
    """Call ``initializer`` and check that it returned finite real numbers of ``shape``."""
    weights = np.asarray(initializer(shape, rng, activation))
    if weights.shape != shape:
        raise ValueError(f"initializer {initializer.name!r} returned shape {weights.shape}, "
                         f"expected {shape} (n_out, n_in)")
    if weights.dtype.kind not in "biuf" or not np.all(np.isfinite(weights)):
        raise ValueError(f"initializer {initializer.name!r} must return finite real numbers")
    return np.ascontiguousarray(weights, dtype=np.float64)
