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
"""

from __future__ import annotations

import numpy as np

__all__ = ["exp", "log", "log1p", "sqrt", "tanh", "where", "VOCABULARY"]

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

VOCABULARY = {"exp": exp, "log": log, "log1p": log1p, "sqrt": sqrt, "tanh": tanh,
              "where": where, "abs": abs}
"""Every function a definition may call, by the name it is called by."""
