"""The compiled kernels against the NumPy reference, piece by piece.

This module also runs with NUMBA_DISABLE_JIT=1 (see test_backends.py), where the kernels are
plain Python.
"""

import numpy as np
import pytest

import tinynet
from tinynet import kernels
from tinynet.activations import ACTIVATIONS, get_activation
from tinynet.shuffle import epoch_order


def test_vector_exp_is_within_one_ulp_of_numpy():
    x = np.concatenate([-np.random.default_rng(0).exponential(20.0, size=20_000),
                        np.linspace(-745.0, 709.0, 5_000), [0.0, -0.0, -1e-300, 0.5, 2.0]])
    ours = np.array([kernels.vector_exp(v) for v in x])
    reference = np.exp(x)
    assert np.all(np.abs(ours - reference) <= np.spacing(reference))


def test_vector_exp_edges():
    assert kernels.vector_exp(0.0) == 1.0
    assert kernels.vector_exp(-np.inf) == 0.0
    assert kernels.vector_exp(-800.0) == 0.0
    assert kernels.vector_exp(710.0) == np.inf == kernels.vector_exp(np.inf)
    assert np.isnan(kernels.vector_exp(np.nan))


@pytest.mark.parametrize("name", sorted(ACTIVATIONS))
def test_scalar_activations_treat_non_finite_inputs_as_numpy_does(name):
    act = get_activation(name, alpha=0.1)
    z = np.array([np.inf, -np.inf, np.nan])
    with np.errstate(invalid="ignore", over="ignore"):
        np.testing.assert_array_equal([kernels.activate(act.code, act.alpha, v) for v in z],
                                      act.forward(z))
        np.testing.assert_array_equal(
            [kernels.activate_derivative(act.code, act.alpha, v) for v in z], act.derivative(z))


@pytest.mark.parametrize("name", sorted(ACTIVATIONS))
def test_scalar_activations_match_the_numpy_ones(name):
    act = get_activation(name, alpha=0.1)
    z = np.concatenate([np.random.default_rng(1).normal(0, 5, 500), [0.0, -0.0, 40.0, -40.0]])
    forward = np.array([kernels.activate(act.code, act.alpha, v) for v in z])
    derivative = np.array([kernels.activate_derivative(act.code, act.alpha, v) for v in z])
    # vector_exp and np.exp (and libm's and NumPy's tanh) may differ by 1 ulp, which carries
    # into a few ulps; 1 − tanh² loses relative precision near tanh = ±1, so allow one ulp of 1.
    np.testing.assert_allclose(forward, act.forward(z), rtol=1e-15, atol=0)
    np.testing.assert_allclose(derivative, act.derivative(z), rtol=1e-15, atol=2.3e-16)


@pytest.mark.parametrize("batch,n_in,n_out", [(1, 2, 2), (5, 3, 7), (16, 64, 64)],
                         ids=["tiny", "small", "blas"])
@pytest.mark.parametrize("name", ["sigmoid", "leaky_relu", "tanh"])
def test_dense_kernels_match_the_layer(batch, n_in, n_out, name):
    rng = np.random.default_rng(batch)
    layer = tinynet.Layer(n_in, n_out, activation=name, init="lecun_normal", rng=2)
    layer.b[...] = rng.normal(size=n_out)
    X, dA = rng.normal(size=(batch, n_in)), rng.normal(size=(batch, n_out))
    A = layer.forward(X)
    dX = layer.backward(dA)
    Z_k, A_k = np.empty((batch, n_out)), np.empty((batch, n_out))
    act = layer.activation
    kernels.dense_forward(X, layer.W, layer.b, act.code, act.alpha, Z_k, A_k)
    dZ_k, dW_k, db_k, dX_k = (np.empty((batch, n_out)), np.empty((n_out, n_in)),
                              np.empty(n_out), np.empty((batch, n_in)))
    kernels.dense_backward(dA, X, layer.W, Z_k, act.code, act.alpha, dZ_k, dW_k, db_k, dX_k, True)
    # Loops and BLAS may round dot products differently: a few ulps of the largest term.
    for ours, reference in [(A_k, A), (dW_k, layer.dW), (db_k, layer.db), (dX_k, dX)]:
        np.testing.assert_allclose(ours, reference, rtol=1e-13, atol=1e-14)


def test_sgd_update():
    theta, grad = np.array([1.0, 2.0, 3.0]), np.array([0.5, -1.0, 0.0])
    kernels.sgd_update(theta, grad, 0.1)
    np.testing.assert_array_equal(theta, [1.0 - 0.1 * 0.5, 2.0 + 0.1, 3.0])


@pytest.mark.parametrize("n", [1, 4, 33])
def test_epoch_order_kernel_is_the_numpy_order(n):
    keys, order = np.empty(n, dtype=np.uint64), np.empty(n, dtype=np.int64)
    for epoch in range(5):
        kernels.epoch_order_into(123, epoch, keys, order)
        np.testing.assert_array_equal(order, epoch_order(123, epoch, n))


def test_ensemble_member_is_the_single_fit():
    # Also runs with the JIT disabled, through the lanes' plain-Python loops.
    X, y = tinynet.data.xor()
    nets = [tinynet.mlp([2, 3, 1], seed=s) for s in (5, 6)]
    result = tinynet.fit_ensemble(nets, X, y, epochs=6, lr=0.1)
    single = tinynet.mlp([2, 3, 1], seed=6)
    history = single.fit(X, y, epochs=6, lr=0.1)
    assert result.final_loss[1] == history.loss[-1]
    for p, q in zip(nets[1].parameters(), single.parameters()):
        np.testing.assert_array_equal(p, q)


def test_fused_fit_matches_numpy_fit_on_xor():
    X, y = tinynet.data.xor()
    a = tinynet.mlp([2, 2, 2, 1], seed=4)
    b = tinynet.mlp([2, 2, 2, 1], seed=4)
    history_a = a.fit(X, y, epochs=300, lr=0.05, backend="numba")
    history_b = b.fit(X, y, epochs=300, lr=0.05, backend="numpy")
    np.testing.assert_allclose(history_a.loss, history_b.loss, rtol=1e-12)
    for p, q in zip(a.parameters(), b.parameters()):
        np.testing.assert_allclose(p, q, rtol=0, atol=1e-12)
