"""The words every activation, loss and optimizer is written in, once for every backend.

A definition in tinynet is a short Python method over arrays: arithmetic (``+ - * / **``),
comparisons, numbers, its own parameters (``self.alpha``) and the functions of this module::

    def forward_and_derivative(self, z):         # tinynet.activations.Sigmoid
        e = exp(-abs(z))
        d = 1.0 + e
        return where(z >= 0, 1.0, e) / d, e / (d * d)

The NumPy backend calls the method as it is, with these functions, which are NumPy's. The
compiled backend reads the same method's source and writes it into its kernels, one number at
a time (:mod:`tinynet.compiled.render`): ``exp`` becomes the kernels' vectorisable exp,
``where(c, a, b)`` becomes ``a if c else b``, ``tanh`` the C library's. A method that uses
anything else (``np.logaddexp``, a loop, a call of its own) runs on NumPy, and the compiled
backend refuses it by name instead of guessing.

``abs`` is Python's own, which works on arrays and numbers alike.

Two words reduce over a layer's units (the last axis) and keep that axis, so that the result
broadcasts against every unit: :func:`unit_max` and :func:`unit_sum`. An activation that
uses them is defined over a whole layer (:class:`tinynet.activations.Softmax`, whose
``forward_over_units`` subtracts the row's largest z before its exps); the compiled backend
writes each as a loop over the layer's units (:mod:`tinynet.compiled.reducing`), summing in
the same order as :func:`unit_sum` does here: the first unit, then the next, to the last.
"""

from __future__ import annotations

import numpy as np

__all__ = ["exp", "log", "log1p", "sqrt", "tanh", "where", "unit_max", "unit_sum",
           "VOCABULARY", "REDUCTIONS"]

exp = np.exp
"""e^x, element-wise."""

log = np.log
"""The natural logarithm, element-wise."""

log1p = np.log1p
"""log(1 + x), accurate for small x, element-wise."""

sqrt = np.sqrt
"""The square root, element-wise."""

tanh = np.tanh
"""The hyperbolic tangent, element-wise."""

where = np.where
"""``where(condition, a, b)``: a where the condition holds, b elsewhere (both are computed)."""


def unit_max(x: np.ndarray) -> np.ndarray:
    """The largest of a layer's units, one per row: ``max_j x[..., j]``, the last axis kept
    (length 1)."""
    return np.max(x, axis=-1, keepdims=True)


def unit_sum(x: np.ndarray) -> np.ndarray:
    """The sum of a layer's units, one per row, added one after the other from the first
    (``np.add.accumulate``, in order by definition; ``np.sum`` adds in pairs of blocks, which
    rounds otherwise): ``x[..., 0] + x[..., 1] + ...``, the last axis kept (length 1)."""
    return np.add.accumulate(x, axis=-1)[..., -1:]


REDUCTIONS = {"unit_max": unit_max, "unit_sum": unit_sum}
"""The words that reduce over a layer's units, by name."""

VOCABULARY = {"exp": exp, "log": log, "log1p": log1p, "sqrt": sqrt, "tanh": tanh,
              "where": where, "abs": abs, **REDUCTIONS}
"""Every function a definition may call, by the name it is called by."""
