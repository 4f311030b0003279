"""The compiled kernels' exp (:func:`tinynet.compiled.scalars.vector_exp`) against the
correctly rounded e^x, over the whole float64 range.

The reference is e^x in x87 extended precision (``np.longdouble``: a 64-bit significand, so
its own error is about 2^-11 of a float64 ulp); the error is measured in ulps of the float64
result, |ours − e^x| / ulp(e^x), in that precision. A correctly rounded exp has at most 0.5;
the bound the kernels promise is 1 (the issue that asked for this exp). Measured: below 0.75
for normal results and up to 0.81 for subnormal ones (rounded twice), so the tests hold the
error to ``MEASURED_BOUND`` = 0.85, which a lost compensation breaks (without the two Fast2Sum
corrections the maximum is 1.015). Deterministic: fixed seeds.
"""

import math

import numpy as np
import pytest
from numba import njit

from tinynet.compiled import scalars

pytestmark = pytest.mark.skipif(
    np.finfo(np.longdouble).nmant < 63,
    reason="the reference needs an extended-precision long double (x86); here it is "
           f"{np.finfo(np.longdouble).dtype}")

MEASURED_BOUND = 0.85
SMALLEST_SUBNORMAL = 5e-324
LARGEST_FINITE_INPUT = 709.782712893384   # about the largest x whose e^x is finite
HALF_SMALLEST_SUBNORMAL_INPUT = -745.1332191019412  # −1075 ln 2 to 2^-46: e^x rounds to 0


@njit(error_model="numpy")
def _exp_all(x, out):
    for i in range(x.size):
        out[i] = scalars.vector_exp(x[i])


def ours(x: np.ndarray) -> np.ndarray:
    out = np.empty_like(x)
    _exp_all(x, out)
    return out


def ulp_errors(x: np.ndarray) -> np.ndarray:
    """|vector_exp(x) − e^x| in ulps of the float64 nearest e^x (e^x in extended precision)."""
    exact = np.exp(x.astype(np.longdouble))
    ulp = np.spacing(exact.astype(np.float64)).astype(np.longdouble)
    return (np.abs(ours(x).astype(np.longdouble) - exact) / ulp).astype(np.float64)


@pytest.mark.slow
def test_within_one_ulp_of_the_correctly_rounded_exp_at_ten_million_points():
    x = np.random.default_rng(27).uniform(-745.2, LARGEST_FINITE_INPUT, 10_000_000)
    errors = ulp_errors(x)
    assert errors.max() <= MEASURED_BOUND, x[errors.argmax()]
    assert errors.mean() < 0.3  # a correctly rounded exp: 0.25 on average


@pytest.mark.parametrize("low,high", [(-0.35, 0.35), (-1e-6, 1e-6), (-40.0, 0.0),
                                      (-745.2, -708.4), (-709.0, -708.3)],
                         ids=["one-step range", "tiny", "sigmoid's", "subnormal results",
                              "the normal range's edge"])
def test_within_one_ulp_where_the_kernels_call_it(low, high):
    x = np.random.default_rng(int(-low)).uniform(low, high, 1_000_000)
    assert ulp_errors(x).max() <= MEASURED_BOUND


def test_edges():
    x = np.array([0.0, -0.0, 1e-300, -1e-300, SMALLEST_SUBNORMAL, 1.0, -1.0,
                  LARGEST_FINITE_INPUT, np.nextafter(LARGEST_FINITE_INPUT, 0),
                  -708.3964185322641,  # e^x near the smallest normal, 2^-1022
                  -745.13, HALF_SMALLEST_SUBNORMAL_INPUT + 1e-12])
    assert ulp_errors(x).max() <= MEASURED_BOUND
    assert scalars.vector_exp(0.0) == 1.0 == scalars.vector_exp(-0.0)
    assert scalars.vector_exp(LARGEST_FINITE_INPUT) == pytest.approx(np.finfo(float).max,
                                                                    rel=1e-13)
    assert math.isfinite(scalars.vector_exp(LARGEST_FINITE_INPUT))
    assert scalars.vector_exp(np.nextafter(LARGEST_FINITE_INPUT, 800)) == math.inf
    assert scalars.vector_exp(710.0) == math.inf == scalars.vector_exp(1e308)
    assert scalars.vector_exp(math.inf) == math.inf
    assert scalars.vector_exp(HALF_SMALLEST_SUBNORMAL_INPUT + 1e-12) == SMALLEST_SUBNORMAL
    assert scalars.vector_exp(-746.0) == 0.0 == scalars.vector_exp(-1e308)
    assert scalars.vector_exp(-math.inf) == 0.0
    assert math.isnan(scalars.vector_exp(math.nan))


@njit
def _compiled_fma(a, b, c):
    return scalars.fma(a, b, c)


@pytest.mark.parametrize("a,b,c,expected", [
    (1.0 + 2.0 ** -30, 1.0 - 2.0 ** -30, -1.0, -(2.0 ** -60)),  # a·b then + rounds to 0
    (1e308, 10.0, 0.0, math.inf),
    (-1e308, 10.0, 0.0, -math.inf),
    (-0.0, 1.0, -0.0, -0.0),
    (2.0, 3.0, math.nan, math.nan),
])
def test_fma_rounds_once_in_compiled_and_plain_python(a, b, c, expected):
    """fma(a, b, c) is a·b + c rounded once, compiled (LLVM's fma) and in the plain-Python
    fallback that NUMBA_DISABLE_JIT runs (exact rational arithmetic before Python 3.13)."""
    for result in (_compiled_fma(a, b, c), scalars._fma_in_python(a, b, c)):
        assert (math.isnan(result) and math.isnan(expected)) or (
            result == expected and math.copysign(1, result) == math.copysign(1, expected))
