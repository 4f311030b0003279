"""The initializer registry: every scheme by name, and room for the user's own.

    >>> import tinynet
    >>> @tinynet.init.register("tiny_normal")
    ... def tiny_normal(shape, rng):
    ...     return rng.normal(0.0, 0.1, size=shape)
    >>> net = tinynet.mlp([2, 2, 1], init="tiny_normal")
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ..errors import UnknownNameError
from .schemes import FunctionInitializer, Initializer

__all__ = ["register", "get", "available"]

_REGISTRY: dict[str, Initializer] = {}


def register(name: str, initializer: Initializer | Callable | None = None, *,
             override: bool = False):
    """Register ``initializer`` under ``name``; without ``initializer``, act as a decorator.

    ``initializer`` is an :class:`Initializer` or a function ``f(shape, rng) -> array``
    (``shape = (n_out, n_in)``, ``rng`` a ``numpy.random.Generator``). Registering a name that
    exists is an error unless ``override=True``.
    """
    if not isinstance(name, str) or not name.isidentifier():
        raise ValueError(f"name must be a Python identifier such as 'my_init', got {name!r}")
    if initializer is None:
        def decorator(function: Callable) -> Callable:
            register(name, function, override=override)
            return function
        return decorator
    if name in _REGISTRY and not override:
        raise ValueError(f"initializer {name!r} is already registered; pass override=True "
                         "to replace it")
    if not isinstance(initializer, Initializer):
        if not callable(initializer):
            raise TypeError(f"initializer must be an Initializer or a function "
                            f"f(shape, rng) -> array, got {initializer!r}")
        initializer = FunctionInitializer(name, initializer)
    _REGISTRY[name] = initializer
    return initializer


def get(spec: str | Initializer | Callable) -> Initializer:
    """Return the initializer named ``spec``; an Initializer or a function is used as it is."""
    if isinstance(spec, Initializer):
        return spec
    if isinstance(spec, str):
        if spec not in _REGISTRY:
            raise UnknownNameError("initializer", spec, _REGISTRY,
                                   "Register your own with tinynet.init.register(name, function)")
        return _REGISTRY[spec]
    if callable(spec):
        return FunctionInitializer(getattr(spec, "__name__", "custom"), spec)
    raise TypeError(f"init must be an initializer name, an Initializer or a function "
                    f"f(shape, rng) -> array, got {spec!r}")


def available() -> list[str]:
    """The registered initializer names, sorted."""
    return sorted(_REGISTRY)


def draw(initializer: Initializer, shape: tuple[int, int], rng: np.random.Generator,
         activation) -> np.ndarray:
    """Call ``initializer`` and check it returned finite numbers of the right shape."""
    weights = np.asarray(initializer(shape, rng, activation))
    if weights.shape != shape:
        raise ValueError(f"initializer {initializer.name!r} returned shape {weights.shape}, "
                         f"expected {shape} (n_out, n_in)")
    if weights.dtype.kind not in "biuf" or not np.all(np.isfinite(weights)):
        raise ValueError(f"initializer {initializer.name!r} must return finite real numbers")
    return np.ascontiguousarray(weights, dtype=np.float64)
