"""The compiled kernels' exp: ``tinynet.maths.exp`` as the kernels write it, one that
vectorises (:func:`vector_exp`).

The activations and losses themselves are not here: the kernels are written from their one
definition each (:mod:`tinynet.compiled.render`). Every function is compiled with
``error_model="numpy"``: a division by zero gives inf or NaN, as in NumPy, instead of raising,
and without that check in the way, loops of them vectorise.
"""

from __future__ import annotations

import math

import numpy as np
from llvmlite import ir
from numba import config, njit, types
from numba.extending import intrinsic

__all__ = ["power_of_two", "vector_exp"]

_LN2_HI = 6.93147180369123816490e-01  # ln 2 split in two (fdlibm): k · _LN2_HI is exact
_LN2_LO = 1.90821492927058770002e-10
_INV_LN2 = 1.44269504088896338700e+00
_EXP_TAYLOR = np.array([1.0 / math.factorial(i) for i in range(14)])


_ROUNDING = 6755399441055744.0  # 1.5 · 2^52: k + _ROUNDING holds the integer k in its low bits
_ROUNDING_BITS = 0x4338000000000000  # the bits of _ROUNDING itself

if config.DISABLE_JIT:  # plain Python, to step through
    def _bits(x: float) -> int:
        """The 64 bits of the float64 ``x``, as an int64."""
        return int(np.float64(x).view(np.int64))

    def _from_bits(bits: int) -> float:
        """The float64 whose 64 bits are ``bits``."""
        return float(np.int64(bits).view(np.float64))
else:
    @intrinsic
    def _bits(typingctx, x):
        """The 64 bits of the float64 ``x``, as an int64 (one LLVM bitcast, no instruction)."""
        if x != types.float64:
            return None

        def codegen(context, builder, signature, args):
            return builder.bitcast(args[0], ir.IntType(64))
        return types.int64(types.float64), codegen

    @intrinsic
    def _from_bits(typingctx, bits):
        """The float64 whose 64 bits are the int64 ``bits``."""
        if bits != types.int64:
            return None

        def codegen(context, builder, signature, args):
            return builder.bitcast(args[0], ir.DoubleType())
        return types.float64(types.int64), codegen


@njit(cache=True, error_model="numpy")
def power_of_two(k: float) -> float:
    """2^k for an integer-valued k from −1075 to 1024, exactly: normal for k >= −1022,
    subnormal down to 2^−1074, 0 at −1075 (2^−1075 rounds to 0), inf at 1024.

    Built from its bits: k + 1.5·2^52 holds k in its low bits, and 2^k is (k + 1023) << 52,
    or 1 << (k + 1074) below the normal range. No conversion between float64 and int64,
    which AVX2 does not have for vectors, so a loop of these vectorises.
    """
    n = _bits(k + _ROUNDING) - _ROUNDING_BITS
    normal = (n + 1023) << 52
    subnormal = 1 << (n + 1074) if n >= -1074 else 0
    return _from_bits(normal if n >= -1022 else subnormal)


@njit(cache=True, error_model="numpy")
def vector_exp(x: float) -> float:
    """e^x within 1 ulp of ``np.exp`` for x <= 709 (inf above 709.78, NaN stays NaN).

    e^x = 2^k · e^r with k = round(x / ln 2) and |r| <= ln(2)/2; e^r by its Taylor series to
    degree 13 (truncation error < 1e-17), 2^k from its bits (:func:`power_of_two`).
    Hand-written because ``math.exp`` is a call into the C library that the compiler cannot
    vectorise (PyPI's llvmlite has no SVML); this is plain arithmetic, so a loop of them runs
    on a whole SIMD register at once. k stays a float64 (``np.floor``, not ``math.floor``,
    which returns an integer): AVX2 has no vector conversion between float64 and int64.
    Sigmoid only needs x = −|z| <= 0.
    """
    clamped = x if x > -745.2 else -745.2  # below that e^x rounds to 0; NaN lands here too
    clamped = clamped if clamped < 709.8 else 709.8  # above that it is inf
    k = np.floor(clamped * _INV_LN2 + 0.5)
    r = (clamped - k * _LN2_HI) - k * _LN2_LO
    p = _EXP_TAYLOR[13]
    for i in range(12, -1, -1):
        p = p * r + _EXP_TAYLOR[i]
    result = p * power_of_two(k)
    return result if x == x else x
