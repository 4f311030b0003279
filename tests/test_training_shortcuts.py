"""The NumPy backend's shortcuts compute what the plain formulas compute: φ and φ' from one
call (``Activation.forward_and_derivative``, ``dense.activate``) bit for bit,
and per-sample SGD of many networks stored members fastest in memory (``tinynet.reference``)
to rounding."""

import warnings

import numpy as np
import pytest

import tinynet
from tinynet import dense
from tinynet.activations import get_activation

from helpers import ELEMENT_WISE, Softplus

ACTIVATIONS_AND_OWN = [get_activation(name, alpha=alpha) for name in ELEMENT_WISE
                       for alpha in ((0.1, 0.0, 3.0) if name == "leaky_relu" else (0.1,))]
ACTIVATIONS_AND_OWN.append(Softplus())  # no forward_and_derivative of its own: the default


def same_bits(a, b):
    """Equal bit for bit: the sign of a zero counts, and NaN equals NaN only with equal bits."""
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    assert a.shape == b.shape
    np.testing.assert_array_equal(a.view(np.uint64), b.view(np.uint64))


@pytest.mark.parametrize("act", ACTIVATIONS_AND_OWN, ids=repr)
def test_forward_and_derivative_is_forward_and_derivative(act):
    z = np.concatenate([np.random.default_rng(0).normal(0, 3, size=40),
                        [0.0, -0.0, 1e-300, -1e-300, 30.0, -30.0, 800.0, -800.0, 1e4, -1e4,
                         np.inf, -np.inf, np.nan]]).reshape(-1, 1, 1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # softplus overflows; the built-in ones never warn
        value, slope = act.forward_and_derivative(z)  # a constant slope (identity) as is
        same_bits(np.broadcast_to(value, z.shape), act.forward(z))
        same_bits(np.broadcast_to(slope, z.shape), act.derivative(z))


def test_dense_activate_is_forward_then_derivative():
    rng = np.random.default_rng(3)
    X, W, b = rng.normal(size=(5, 1, 3)), rng.normal(size=(5, 4, 3)), rng.normal(size=(5, 4))
    activation = get_activation("sigmoid")
    Z, A = dense.forward(X, W, b, activation)
    A_too, slope = dense.activate(activation, dense.pre_activation(X, W, b))
    same_bits(A_too, A)
    same_bits(slope, activation.derivative(Z))
    dA = rng.normal(size=A.shape)
    same_bits(dense.backward_activation(dA, slope), dA * activation.derivative(Z))


@pytest.mark.parametrize("update", ["after_backward", "during_backward"])
def test_the_memory_order_changes_at_most_the_rounding(update):
    """Per-sample SGD of at least as many members as the widest layer has units is stored
    members fastest (Fortran order); of fewer, as each member's own arrays (C order). The same
    two networks trained both ways agree to rounding, as the backends do (1e-12): einsum sums
    a dot product of three terms in another order when they lie side by side in memory than
    when they do not (here up to 1.5e-13 apart after 300 epochs)."""
    X, y = tinynet.data.xor()

    def train(count):  # 2-3-1: 3 members or more are stored members fastest, 2 are not
        nets = [tinynet.mlp([2, 3, 1], init="he_leaky", seed=s) for s in range(count)]
        result = tinynet.fit_ensemble(nets, X, y, epochs=300, lr=0.1, backend="numpy",
                                      record_every=1, update=update)
        return nets[:2], result

    (c_order, c_result), (f_order, f_result) = train(2), train(5)
    for net_c, net_f in zip(c_order, f_order):
        for p, q in zip(net_c.parameters(), net_f.parameters()):
            np.testing.assert_allclose(q, p, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(f_result.loss[:2], c_result.loss, rtol=1e-12, atol=1e-12)
    np.testing.assert_array_equal(f_result.last_wrong_epoch[:2], c_result.last_wrong_epoch)
