"""Weight initializers by name: ``get("he_leaky")``, ``get("normal(std=0.5)")``, ``available()``,
``distinct()`` (each scheme once, aliases folded), ``register(name, function)``, and
``describe``-able for every layer.

Every scheme draws zero-mean weights with a variance chosen to keep the signal's second moment
E[x²] steady through a layer: Var(w) = gain² / fan (see :mod:`tinynet.init.gains`,
:mod:`tinynet.init.fans` and :mod:`tinynet.init.distributions`).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ..validation import check_float
from .catalog import register_builtins
from .distributions import TRUNCATED_VARIANCE_FACTOR, get_distribution
from .fans import FAN_MODES, fan, fans
from .gains import NONLINEARITIES, calculate_gain, second_moment_gain
from .keras import KERAS_NAMES
from .registry import (Entry, InitError, available, check_name, distinct, draw, entries, get,
                       parse_spec, register)
from .schemes import (Auto, Constant, Description, FixedStd, FunctionInitializer, Initializer,
                      LeakyHe, Orthogonal, TorchLinearDefault, VarianceScaling)

__all__ = ["Initializer", "Description", "FixedStd", "VarianceScaling", "LeakyHe", "Orthogonal",
           "Constant", "Auto", "FunctionInitializer", "TorchLinearDefault", "Entry", "InitError",
           "available",
           "entries", "distinct", "get", "register", "check_name", "parse_spec", "draw", "fans",
           "fan", "FAN_MODES", "calculate_gain", "NONLINEARITIES", "second_moment_gain",
           "get_distribution", "TRUNCATED_VARIANCE_FACTOR", "variance_scaling", "InitSpec",
           "KERAS_NAMES"]

InitSpec = str | Initializer | Callable[..., np.ndarray]
"""What ``init=`` accepts: a registered name (optionally ``"name(key=value)"``), an
:class:`Initializer`, or a function ``f(shape, rng) -> array``."""


def variance_scaling(scale: float = 1.0, mode: str = "fan_in",
                     distribution: str = "normal") -> Initializer:
    """The generic scheme every named one is built from: w ~ D(0, scale / fan(mode)).

    ``mode``: fan_in, fan_out, fan_avg, fan_geo_avg or fan_contraharmonic.
    ``distribution``: normal, uniform or truncated_normal (all realise the same variance).
    """
    scale = check_float("scale", scale, minimum=0.0, inclusive=False)
    return VarianceScaling("variance_scaling", scale, mode, distribution)


register_builtins()
