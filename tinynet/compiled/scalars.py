"""The compiled kernels' exp, log and log1p: ``tinynet.maths.exp``, ``log`` and ``log1p`` as
the kernels write them, ones that vectorise (:func:`vector_exp`, :func:`vector_log`,
:func:`vector_log1p`).

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

__all__ = ["fma", "power_of_two", "vector_exp", "vector_log", "vector_log1p"]

_LN2_HI = 6.93147180369123816490e-01  # ln 2 split in two (fdlibm): k · _LN2_HI is exact
_LN2_LO = 1.90821492927058770002e-10
_INV_LN2 = 1.44269504088896338700e+00
_C = [1.0 / math.factorial(i) for i in range(14)]  # e^r's Taylor coefficients, r^i / i!
_C2, _C3, _C4, _C5, _C6, _C7, _C8, _C9, _C10, _C11, _C12, _C13 = _C[2:]

_ROUNDING = 6755399441055744.0  # 1.5 · 2^52: k + _ROUNDING holds the integer k in its low bits
_ROUNDING_BITS = 0x4338000000000000  # the bits of _ROUNDING itself
_LOWEST = -746.0  # e^x < 2^-1075 below it: rounds to 0 (NaN lands here too, and is restored)
_HIGHEST = 710.0  # e^x > the largest float64 above it: inf

_LG1 = 6.666666666666735130e-01  # fdlibm's minimax R(s) ≈ Lg1 s² + … + Lg7 s¹⁴ (e_log.c)
_LG2 = 3.999999999940941908e-01
_LG3 = 2.857142874366239149e-01
_LG4 = 2.222219843214978396e-01
_LG5 = 1.818357216161805012e-01
_LG6 = 1.531383769920937332e-01
_LG7 = 1.479819860511658591e-01
_TO_SQRT2 = (0x3FF00000 - 0x3FE6A09E) << 32  # x's bits + this: k + 1023 in the exponent ...
_REDUCED = 0x3FE6A09E << 32  # ... and that sum's mantissa bits + this: m's bits (vector_log)
_MANTISSA = (1 << 52) - 1
_TWO_52_BITS = 0x4330000000000000  # the bits of 2^52: OR an integer e < 2^52 in for 2^52 + e
_TWO_52_PLUS_BIAS = 2.0 ** 52 + 1023.0
_SMALLEST_NORMAL = 2.0 ** -1022
_TWO_54 = 2.0 ** 54  # a subnormal x times this is normal
_LOG1P_LOW = -float.fromhex("0x1.2bec5p-2")  # log1p's x from about sqrt(2)/2 − 1 ...
_LOG1P_HIGH = float.fromhex("0x1.a827ap-2")  # ... to about sqrt(2) − 1 is f itself (fdlibm's)
_LOG1P_TINY = 2.0 ** -53  # below it in magnitude, log1p(x) rounds to x


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


@njit(cache=True, error_model="numpy")
def _log_reduced(f: float, k: float, c: float) -> float:
    """log(1 + f) + k ln 2 + c for f from about sqrt(2)/2 − 1 to sqrt(2) − 1, an integer-valued
    k and a small correction c, to within 1 ulp: fdlibm's ``__ieee754_log`` (e_log.c; musl's
    log.c and log1p.c before their table-driven rewrite) from its reduction on.

    With s = f / (2 + f), 1 + f = (1 + s) / (1 − s), so
    log(1 + f) = log(1 + s) − log(1 − s) = 2s + 2s³/3 + 2s⁵/5 + … = 2s + s R(s²),
    with |s| <= 0.1716 and R fdlibm's minimax polynomial Lg1 s² + … + Lg7 s¹⁴ (error below
    2^-58.45), in two halves of even and odd powers of s² (Horner on s⁴, :func:`fma`). As
    2s = f − s f = f − hfsq + s hfsq with hfsq = f²/2,
    log(1 + f) + k ln 2 + c = s (hfsq + R) + (k ln2_lo + c) − hfsq + f + k ln2_hi,
    summed in that order, smallest terms first, with ln 2 split in two so that k ln2_hi is
    exact (:data:`_LN2_HI`) and k ln2_lo joins the small terms.
    """
    hfsq = 0.5 * f * f
    s = f / (2.0 + f)
    z = s * s
    w = z * z
    even = w * fma(w, fma(w, _LG6, _LG4), _LG2)
    odd = z * fma(w, fma(w, fma(w, _LG7, _LG5), _LG3), _LG1)
    return s * (hfsq + (odd + even)) + (k * _LN2_LO + c) - hfsq + f + k * _LN2_HI


@njit(cache=True, error_model="numpy")
def vector_log(x: float) -> float:
    """The natural logarithm of x, within 1 ulp of the exact log(x) (so at most one float64
    step from ``math.log``, which rounds correctly or nearly), and exactly 0 at 1; −inf at
    ±0, NaN below 0 and at NaN, inf at inf, as ``np.log``; subnormal x too.

    fdlibm's ``__ieee754_log`` (Sun, 1993; musl's older log.c): x = 2^k m with m from
    sqrt(2)/2 to sqrt(2), f = m − 1, and log x = k ln 2 + log(1 + f)
    (:func:`_log_reduced`, with the formula). k and m come from x's bits: adding
    0x3ff00000 − 0x3fe6a09e to its upper word carries into the exponent exactly when the
    mantissa is at least sqrt(2)'s (upper word 0x3ff6a09e), and the mantissa plus 0x3fe6a09e
    (upper word) is then m, in [sqrt(2)/2, 1) or [1, sqrt(2)). A subnormal x is first
    multiplied by 2^54 (exact) and k lowered by 54.

    Hand-written because ``math.log`` is a call into the C library that the compiler cannot
    vectorise (PyPI's llvmlite has no SVML). fdlibm's branches are selects here: every case
    is computed and one picked, so a loop of these has no branch. k stays a float64, read
    from the exponent's bits ORed into 2^52's (AVX2 has no vector conversion from int64).
    Measured error: ``tests/test_log.py``.
    """
    tiny = x < _SMALLEST_NORMAL
    bits = _bits(x * _TWO_54 if tiny else x) + _TO_SQRT2
    exponent = _from_bits((bits >> 52) | _TWO_52_BITS)  # 2^52 + k + 1023 (+ 54 if tiny)
    k = exponent - (_TWO_52_PLUS_BIAS + (54.0 if tiny else 0.0))
    m = _from_bits((bits & _MANTISSA) + _REDUCED)
    result = _log_reduced(m - 1.0, k, 0.0)
    result = result if x < math.inf else x  # inf stays inf, NaN NaN
    return result if x > 0.0 else (-math.inf if x == 0.0 else math.nan)


@njit(cache=True, error_model="numpy")
def vector_log1p(x: float) -> float:
    """log(1 + x), within 1 ulp of the exact value for every x > −1 (tiny x included, where
    log(1 + x) rounds to x); −inf at −1, NaN below −1 and at NaN, inf at inf, as ``np.log1p``.

    fdlibm's ``log1p`` (s_log1p.c; musl's older log1p.c): for x from about
    sqrt(2)/2 − 1 to sqrt(2) − 1, log1p(x) = log(1 + f) with f = x itself, k = 0; elsewhere
    u = 1 + x (rounded) = 2^k m as in :func:`vector_log`, f = m − 1, and what rounding u lost,
    c = (1 + x − u) / u (to first order log(1 + x) − log(u)), computed exactly as
    x − (u − 1) for k < 2 and 1 − (u − x) from 2 on, added back (0 from k = 54 on, where
    it is below the result's last bit): log1p(x) = k ln 2 + log(1 + f) + c
    (:func:`_log_reduced`). Branch-free as :func:`vector_log`.
    """
    u = 1.0 + x
    bits = _bits(u) + _TO_SQRT2
    k = _from_bits((bits >> 52) | _TWO_52_BITS) - _TWO_52_PLUS_BIAS
    lost = 1.0 - (u - x) if k >= 2.0 else x - (u - 1.0)
    positive_u = u if u > 0.0 else 1.0  # x <= −1 (picked out below): no division by zero
    c = lost / positive_u if k < 54.0 else 0.0
    near = _LOG1P_LOW < x < _LOG1P_HIGH
    f = x if near else _from_bits((bits & _MANTISSA) + _REDUCED) - 1.0
    result = _log_reduced(f, 0.0 if near else k, 0.0 if near else c)
    result = result if abs(x) >= _LOG1P_TINY else x  # −0 stays −0, NaN NaN
    result = result if x < math.inf else x
    return result if x > -1.0 else (-math.inf if x == -1.0 else math.nan)
