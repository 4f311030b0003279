"""tinynet.dense with a members axis: S networks at once equal S networks one at a time."""

import numpy as np
import pytest

from tinynet import dense
from tinynet.activations import ACTIVATIONS, get_activation


@pytest.mark.parametrize("name", sorted(ACTIVATIONS))
@pytest.mark.parametrize("members,batch,n_in,n_out",
                         [(1, 1, 2, 2), (5, 3, 4, 2), (3, 2, 1, 6), (4, 1, 3, 2)],
                         ids=["one network", "batch of 3", "batch of 2", "one-sample stack"])
def test_a_members_axis_is_the_same_maths_per_member(name, members, batch, n_in, n_out):
    rng = np.random.default_rng(members * 100 + n_in)
    activation = get_activation(name, alpha=0.1)
    X, dA = rng.normal(size=(members, batch, n_in)), rng.normal(size=(members, batch, n_out))
    W, b = rng.normal(size=(members, n_out, n_in)), rng.normal(size=(members, n_out))
    Z, A = dense.forward(X, W, b, activation)
    dW, db = np.empty_like(W), np.empty_like(b)
    dX = dense.backward(dA, X, W, Z, activation, dW, db)
    for s in range(members):
        Z_s, A_s = dense.forward(X[s], W[s], b[s], activation)
        dW_s, db_s = np.empty_like(W[s]), np.empty_like(b[s])
        dX_s = dense.backward(dA[s], X[s], W[s], Z_s, activation, dW_s, db_s)
        # BLAS may sum a stacked product in another order: a few ulps of the largest term
        for stacked, alone in [(Z[s], Z_s), (A[s], A_s), (dW[s], dW_s), (db[s], db_s),
                               (dX[s], dX_s)]:
            np.testing.assert_allclose(stacked, alone, rtol=1e-14, atol=1e-14)
    np.testing.assert_array_equal(Z[0], X[0] @ W[0].T + b[0])  # the formula, written out


def test_the_first_layer_skips_the_input_gradient():
    activation = get_activation("tanh")
    X, W, b = np.ones((2, 3)), np.full((4, 3), 0.1), np.zeros(4)
    Z, _ = dense.forward(X, W, b, activation)
    dW, db = np.empty_like(W), np.empty_like(b)
    assert dense.backward(np.ones((2, 4)), X, W, Z, activation, dW, db,
                          input_gradient=False) is None
    np.testing.assert_allclose(db, 2 * (1 - np.tanh(0.3) ** 2))
