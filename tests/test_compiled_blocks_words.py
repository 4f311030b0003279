"""The compiled words of a residual block and its LayerNorm compute what NumPy's
(tinynet.blocks) compute, bit for bit: the same sums in the same order."""

import numpy as np
import pytest

from tinynet import blocks
from tinynet.compiled import single


@pytest.mark.parametrize("rows,units", [(1, 2), (3, 5), (32, 16)])
def test_the_words_are_numpys_bit_for_bit(rows, units):
    rng = np.random.default_rng(rows * units)
    X, F, dY = (rng.normal(size=(rows, units)) for _ in range(3))
    gain, bias = rng.normal(size=units), rng.normal(size=units)
    normalized, inverse_std = blocks.normalize(X, 1e-5)
    ours, ours_inverse = np.empty_like(X), np.empty(rows)
    single.normalize(X, 1e-5, ours, ours_inverse)
    assert ours.tobytes() == normalized.tobytes()
    assert ours_inverse.tobytes() == inverse_std[:, 0].tobytes()
    Y = np.empty_like(X)
    single.scale_shift(ours, gain, bias, Y)
    assert Y.tobytes() == blocks.scale_shift(normalized, gain, bias).tobytes()
    dgain, dbias, their_dgain, their_dbias = (np.empty(units) for _ in range(4))
    single.norm_gradients(dY, ours, dgain, dbias)
    blocks.norm_gradients(dY, normalized, their_dgain, their_dbias)
    assert dgain.tobytes() == their_dgain.tobytes() and dbias.tobytes() == their_dbias.tobytes()
    dX = np.empty_like(X)
    single.normalize_backward(dY, gain, ours, ours_inverse, dX)
    assert dX.tobytes() == blocks.normalize_backward(dY, gain, normalized,
                                                     inverse_std).tobytes()
    S = np.empty_like(X)
    single.skip_sum(1.7, X, 0.3, F, S)
    assert S.tobytes() == blocks.skip_sum(1.7, X, np.array([0.3]), F).tobytes()
    dscale = np.empty(1)
    blocks.scale_gradient(dY, F, dscale)
    assert single.scale_gradient(dY, F) == dscale[0]


def test_the_words_the_kernels_call_in_place_are_numpys_too():
    """The kernels write dX over dY (normalize_backward) and s·dS + dX over dX (skip_sum)."""
    rng = np.random.default_rng(7)
    X, dY, dS = (rng.normal(size=(5, 6)) for _ in range(3))
    gain = rng.normal(size=6)
    normalized, inverse_std = blocks.normalize(X, 1e-5)
    expected = blocks.normalize_backward(dY, gain, normalized, inverse_std)
    single.normalize_backward(dY, gain, normalized, inverse_std[:, 0].copy(), dY)
    assert dY.tobytes() == expected.tobytes()
    expected = blocks.skip_sum(1.3, dS, 1.0, dY)
    single.skip_sum(1.3, dS, 1.0, dY, dY)
    assert dY.tobytes() == expected.tobytes()
    dF, copied = np.empty_like(dS), np.empty_like(dS)
    single.scaled(0.7, dS, dF)
    assert dF.tobytes() == blocks.scaled(np.array([0.7]), dS).tobytes()
    single.copy_rows(dS, copied)
    assert copied.tobytes() == dS.tobytes()
