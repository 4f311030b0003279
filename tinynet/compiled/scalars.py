"""The compiled kernels' exp: ``tinynet.maths.exp`` as the kernels write it, one that
vectorises (:func:`vector_exp`).

The activations and losses themselves are not here: the kernels are written from their one
definition each (:mod:`tinynet.compiled.render`). Every function is compiled with
``error_model="numpy"``: a division by zero gives inf or NaN, as in NumPy, instead of raising,
and without that check in the way, loops of them vectorise.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
from llvmlite import ir
from numba import config, njit, types
from numba.core import cgutils
from numba.extending import intrinsic

from .target import prefer_wide_vectors

prefer_wide_vectors()  # before anything is compiled

__all__ = ["fma", "power_of_two", "vector_exp"]

_LN2_HI = 6.93147180369123816490e-01  # ln 2 split in two (fdlibm): k · _LN2_HI is exact
_LN2_LO = 1.90821492927058770002e-10
_INV_LN2 = 1.44269504088896338700e+00
_C = [1.0 / math.factorial(i) for i in range(14)]  # e^r's Taylor coefficients, r^i / i!
_C2, _C3, _C4, _C5, _C6, _C7, _C8, _C9, _C10, _C11, _C12, _C13 = _C[2:]

_ROUNDING = 6755399441055744.0  # 1.5 · 2^52: k + _ROUNDING holds the integer k in its low bits
_ROUNDING_BITS = 0x4338000000000000  # the bits of _ROUNDING itself
_LOWEST = -746.0  # e^x < 2^-1075 below it: rounds to 0 (NaN lands here too, and is restored)
_HIGHEST = 710.0  # e^x > the largest float64 above it: inf


def _fma_in_python(a: float, b: float, c: float) -> float:
    """a · b + c rounded once, as the compiled :func:`fma`, in plain Python: Python's own from
    3.13, else in exact rational arithmetic (an exact 0 takes a · b + c's sign, an overflow
    ±inf). What ``fma`` is with ``NUMBA_DISABLE_JIT=1``."""
    if hasattr(math, "fma"):
        return math.fma(a, b, c)
    if not all(math.isfinite(v) for v in (a, b, c)):
        return a * b + c
    exact = Fraction(a) * Fraction(b) + Fraction(c)
    if exact == 0:
        return a * b + c  # a · b is exact then, and so is the sign of the sum
    try:
        return float(exact)
    except OverflowError:
        return math.inf if exact > 0 else -math.inf


if config.DISABLE_JIT:  # plain Python, to step through
    def _bits(x: float) -> int:
        """The 64 bits of the float64 ``x``, as an int64."""
        return int(np.float64(x).view(np.int64))

    def _from_bits(bits: int) -> float:
        """The float64 whose 64 bits are ``bits``."""
        return float(np.int64(bits).view(np.float64))

    fma = _fma_in_python

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

    @intrinsic
    def fma(typingctx, a, b, c):
        """a · b + c rounded once (LLVM's ``llvm.fma.f64``): one instruction where the CPU has
        fused multiply-add (x86 with FMA3, ARM), the C library's exact ``fma`` elsewhere, so
        the result is the same on every machine, in scalar and in vector code alike."""
        if not (a == b == c == types.float64):
            return None

        def codegen(context, builder, signature, args):
            double = ir.DoubleType()
            function = cgutils.get_or_insert_function(
                builder.module, ir.FunctionType(double, [double] * 3), "llvm.fma.f64")
            return builder.call(function, args)
        return types.float64(types.float64, types.float64, types.float64), codegen


@njit(cache=True, error_model="numpy")
def power_of_two(k: float) -> float:
    """2^k for an integer-valued float64 k from −1022 to 1023, exactly (outside that range the
    result means nothing).

    Built from its bits: k + 1.5·2^52 holds k in its low bits, and 2^k is (k + 1023) << 52.
    No conversion between float64 and int64, which AVX2 does not have for vectors, so a loop
    of these vectorises.
    """
    return _from_bits((_bits(k + _ROUNDING) - _ROUNDING_BITS + 1023) << 52)


@njit(cache=True, error_model="numpy")
def vector_exp(x: float) -> float:
    """e^x within 1 ulp of the correctly rounded e^x over the whole float64 range, subnormal
    results included (measured: below 0.75 ulp for normal results, up to 0.81 for subnormal
    ones, which are rounded twice); 0 below −745.1332, inf above 709.7827, NaN stays NaN.

    e^x = 2^k · e^r with k = round(x / ln 2) and r = x − k ln 2 (ln 2 in two parts, so that
    r plus what rounding it lost is x − k ln 2 to 2^-60; |r| <= ln(2)/2), and
    e^r = (1 + r) + r² P(r), with P the Taylor series of (e^r − 1 − r) / r² to degree 11
    (truncation error below 5e-18) evaluated by Estrin's scheme: pairs c_i + c_(i+1) r,
    joined with r², r⁴ and r⁸, so the chain of dependent operations is six fused multiply-adds
    (:func:`fma`) long, where the degree-13 Horner chain it replaced was thirteen. What
    rounding loses in r and in 1 + r is carried (Fast2Sum) and added back with r² P(r), so the
    result is rounded about once.
    2^k is one exact multiply where it is a normal number, and 2^(k//2) · 2^(k − k//2), two,
    where it is not (k = 1024 for x up to 709.78, and k down to −1076 for subnormal results);
    both are computed and one is picked, so a loop of them has no branch.

    Hand-written because ``math.exp`` is a call into the C library that the compiler cannot
    vectorise (PyPI's llvmlite has no SVML); this is plain arithmetic, so a loop of them runs
    on a whole SIMD register at once. k stays a float64, rounded by adding and subtracting
    1.5·2^52 (no rounding instruction in the chain): AVX2 has no vector conversion between
    float64 and int64. Measured error: ``tests/test_exp.py``.
    """
    clamped = x if x > _LOWEST else _LOWEST
    clamped = clamped if clamped < _HIGHEST else _HIGHEST
    k = fma(clamped, _INV_LN2, _ROUNDING) - _ROUNDING  # round(x / ln 2), to nearest even
    r_high = fma(-k, _LN2_HI, clamped)  # exact
    r_low = -k * _LN2_LO
    r = r_high + r_low
    r_lost = (r_high - r) + r_low  # what rounding r lost (Fast2Sum): r + r_lost = r_high + r_low
    r2 = r * r
    r4 = r2 * r2
    terms2to5 = fma(fma(_C5, r, _C4), r2, fma(_C3, r, _C2))
    terms6to9 = fma(fma(_C9, r, _C8), r2, fma(_C7, r, _C6))
    terms10to13 = fma(fma(_C13, r, _C12), r2, fma(_C11, r, _C10))
    poly = fma(r4 * r4, terms10to13, fma(r4, terms6to9, terms2to5))
    leading = 1.0 + r
    leading_lost = r - (leading - 1.0)  # leading + leading_lost = 1 + r (Fast2Sum)
    small = fma(r2, poly, leading_lost + fma(r_lost, r, r_lost))  # r² P(r) + the lost parts
    mantissa = leading + small
    half = np.floor(k * 0.5)
    far = mantissa * power_of_two(half) * power_of_two(k - half)  # subnormal or k = 1024
    result = mantissa * power_of_two(k) if -1022.0 <= k <= 1023.0 else far
    return result if x == x else x
