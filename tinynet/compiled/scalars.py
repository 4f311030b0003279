"""Scalar functions of the compiled kernels: a vectorisable exp, and every activation's value
and derivative, side by side, chosen by activation code (:mod:`tinynet.activations`).

They compute what :mod:`tinynet.activations` computes with NumPy, element by element, with the
same conventions (relu'(0) = 0, leaky_relu'(0) = alpha, sigmoid that never overflows). Every
function is compiled with ``error_model="numpy"``: a division by zero gives inf or NaN, as in
NumPy, instead of raising, and without that check in the way, loops of them vectorise.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from ..activations import LEAKY_RELU, RELU, SIGMOID, TANH

__all__ = ["vector_exp", "sigmoid", "sigmoid_derivative", "activate", "activate_derivative"]

_LN2_HI = 6.93147180369123816490e-01  # ln 2 split in two (fdlibm): k · _LN2_HI is exact
_LN2_LO = 1.90821492927058770002e-10
_INV_LN2 = 1.44269504088896338700e+00
_EXP_TAYLOR = np.array([1.0 / math.factorial(i) for i in range(14)])
with np.errstate(over="ignore"):
    _TWO_POW = np.ldexp(1.0, np.arange(-1075, 1025))  # _TWO_POW[k + 1075] = 2**k; 2**1024 = inf


@njit(cache=True, error_model="numpy")
def vector_exp(x: float) -> float:
    """e^x within 1 ulp of ``np.exp`` for x <= 709 (inf above 709.78, NaN stays NaN).

    e^x = 2^k · e^r with k = round(x / ln 2) and |r| <= ln(2)/2; e^r by its Taylor series to
    degree 13 (truncation error < 1e-17), 2^k from a table. Hand-written because ``math.exp``
    is a call into the C library that the compiler cannot vectorise (PyPI's llvmlite has no
    SVML); this is plain arithmetic and a table lookup, so a loop of them runs on a whole SIMD
    register at once. Sigmoid only needs x = −|z| <= 0.
    """
    clamped = x if x > -745.2 else -745.2  # below that e^x rounds to 0; NaN lands here too
    clamped = clamped if clamped < 709.8 else 709.8  # above that it is inf
    k = math.floor(clamped * _INV_LN2 + 0.5)
    r = (clamped - k * _LN2_HI) - k * _LN2_LO
    p = _EXP_TAYLOR[13]
    for i in range(12, -1, -1):
        p = p * r + _EXP_TAYLOR[i]
    result = p * _TWO_POW[int(k) + 1075]
    return result if x == x else x


@njit(cache=True, error_model="numpy")
def sigmoid(z: float) -> float:
    """1 / (1 + e^(−z)) as 1/(1 + e) or e/(1 + e), e = exp(−|z|) <= 1: never overflows.

    Written with one division of a chosen numerator, so that a loop of them has no branch.
    """
    e = vector_exp(-abs(z))
    return (1.0 if z >= 0 else e) / (1.0 + e)


@njit(cache=True, error_model="numpy")
def sigmoid_derivative(z: float) -> float:
    """σ'(z) = e / (1 + e)², e = exp(−|z|)."""
    e = vector_exp(-abs(z))
    return e / ((1.0 + e) * (1.0 + e))


@njit(cache=True, error_model="numpy")
def activate(code: int, alpha: float, z: float) -> float:
    """φ(z) for the activation ``code``; relu and leaky_relu send NaN and −inf to 0 and α·z,
    as NumPy's ``where(z > 0, z, ...)`` does."""
    if code == SIGMOID:
        return sigmoid(z)
    if code == TANH:
        return math.tanh(z)
    if code == RELU:
        return z if z > 0 else 0.0
    if code == LEAKY_RELU:
        return z if z > 0 else alpha * z
    return z  # identity


@njit(cache=True, error_model="numpy")
def activate_derivative(code: int, alpha: float, z: float) -> float:
    """φ'(z) for the activation ``code``; relu'(0) = 0 and leaky_relu'(0) = alpha."""
    if code == SIGMOID:
        return sigmoid_derivative(z)
    if code == TANH:
        t = math.tanh(z)
        return 1.0 - t * t
    if code == RELU:
        return 1.0 if z > 0 else 0.0
    if code == LEAKY_RELU:
        return 1.0 if z > 0 else alpha
    return 1.0  # identity

