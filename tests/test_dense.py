"""tinynet.dense with a members axis: S networks at once equal S networks one at a time, a
layer's forward and backward (tinynet.step.Dense, in NumPy's words) included."""

import numpy as np
import pytest

from tinynet import dense
from tinynet.activations import get_activation
from tinynet.step import Dense
from helpers import ELEMENT_WISE


def forward_backward(X, W, b, activation, dA, input_gradient=True):
    """Z, A, dW, db and dX of one Dense layer's forward and backward pass."""
    layer = Dense(W, b, np.empty_like(W), np.empty_like(b), activation)
    A = layer.forward(X)
    dX = layer.backward(dA, input_gradient=input_gradient)
    return layer._Z, A, layer.dW, layer.db, dX


@pytest.mark.parametrize("name", ELEMENT_WISE)
@pytest.mark.parametrize("members,batch,n_in,n_out",
                         [(1, 1, 2, 2), (5, 3, 4, 2), (3, 2, 1, 6), (4, 1, 3, 2)],
                         ids=["one network", "batch of 3", "batch of 2", "one-sample stack"])
def test_a_members_axis_is_the_same_maths_per_member(name, members, batch, n_in, n_out):
    rng = np.random.default_rng(members * 100 + n_in)
    activation = get_activation(name, alpha=0.1)
    X, dA = rng.normal(size=(members, batch, n_in)), rng.normal(size=(members, batch, n_out))
    W, b = rng.normal(size=(members, n_out, n_in)), rng.normal(size=(members, n_out))
    Z, A, dW, db, dX = forward_backward(X, W, b, activation, dA)
    for s in range(members):
        Z_s, A_s, dW_s, db_s, dX_s = forward_backward(X[s], W[s], b[s], activation, dA[s])
        # short sums are added in order, term by term: the same bits with or without the axis
        for stacked, alone in [(Z[s], Z_s), (A[s], A_s), (dW[s], dW_s), (db[s], db_s),
                               (dX[s], dX_s)]:
            np.testing.assert_array_equal(stacked, alone)
    written_out = np.zeros((batch, n_out))  # the formula, summed from the first input on
    for i in range(n_in):
        written_out += X[0][:, i, None] * W[0][None, :, i]
    np.testing.assert_array_equal(Z[0], written_out + b[0])
    np.testing.assert_allclose(Z[0], X[0] @ W[0].T + b[0], rtol=1e-14, atol=1e-14)  # BLAS's


@pytest.mark.parametrize("order", ["C", "F"])
def test_long_sums_go_to_blas_and_agree_to_rounding(order):
    """Above dense.ORDERED_MAX terms a product is one matmul (or einsum) call: a stacked member
    agrees with its network alone to rounding, in either memory order."""
    rng = np.random.default_rng(5)
    n = dense.ORDERED_MAX + 1
    X = np.array(rng.normal(size=(6, 1, n)), order=order)
    W, b = np.array(rng.normal(size=(6, n, n)), order=order), rng.normal(size=(6, n))
    Z = dense.pre_activation(X, W, b)
    for s in range(6):
        np.testing.assert_allclose(Z[s], dense.pre_activation(X[s], W[s], b[s]), rtol=1e-13,
                                   atol=1e-13)


def test_the_first_layer_skips_the_input_gradient():
    activation = get_activation("tanh")
    X, W, b = np.ones((2, 3)), np.full((4, 3), 0.1), np.zeros(4)
    _, _, _, db, dX = forward_backward(X, W, b, activation, np.ones((2, 4)),
                                       input_gradient=False)
    assert dX is None
    np.testing.assert_allclose(db, 2 * (1 - np.tanh(0.3) ** 2))
