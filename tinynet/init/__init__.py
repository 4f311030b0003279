"""Weight initializers, by name: ``tinynet.init.get("he_leaky")``, ``available()``, ``register``.

Every scheme draws zero-mean weights with a variance chosen to keep the signal's second moment
E[x²] steady through a layer (see :mod:`tinynet.init.gains` and :mod:`tinynet.init.fans`).
"""

from __future__ import annotations

from .fans import fans
from .gains import calculate_gain
from .registry import available, draw, get, register
from .schemes import (Auto, Constant, FixedStd, FunctionInitializer, Initializer, LeakyHe,
                      VarianceScaling)

__all__ = ["Initializer", "FixedStd", "VarianceScaling", "LeakyHe", "Auto", "Constant",
           "FunctionInitializer", "available", "get", "register", "draw", "fans",
           "calculate_gain"]


def _register_builtins() -> None:
    xavier = VarianceScaling("xavier_normal", 1.0, "fan_avg", "normal")
    he = VarianceScaling("he_normal", 2.0, "fan_in", "normal")
    he_leaky = LeakyHe("he_leaky")
    builtins = [
        FixedStd("normal", 1.0, "normal"),
        VarianceScaling("lecun_normal", 1.0, "fan_in", "normal"),
        xavier,
        VarianceScaling("xavier_uniform", 1.0, "fan_avg", "uniform"),
        he,
        VarianceScaling("he_uniform", 2.0, "fan_in", "uniform"),
        he_leaky,
        Constant("zeros", 0.0),
        Auto("auto", {"identity": xavier, "sigmoid": xavier, "tanh": xavier,
                      "relu": he, "leaky_relu": he_leaky}),
    ]
    for initializer in builtins:
        register(initializer.name, initializer)


_register_builtins()
