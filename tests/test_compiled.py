"""The compiled kernels' pieces against their NumPy counterparts. Whole training runs are
compared in test_backends.py.

This module also runs with NUMBA_DISABLE_JIT=1 (see test_backends.py), where the kernels are
plain Python.
"""

import numpy as np
import pytest

import tinynet
from tinynet.activations import get_activation
from tinynet.compiled import kit, lanes, orders, render, scalars, single
from tinynet.losses import MSE
from tinynet.shuffle import epoch_order, epoch_orders
from helpers import ELEMENT_WISE


def compiled(act):
    """The compiled form of ``act``, written from its definition by the kit: z -> (φ, φ')."""
    module = kit.load(kit.Maths([act], MSE()))
    parameters = tuple(value for _, value in render.parameters(act))
    return lambda z: module.activation_0(z, parameters)


def test_vector_exp_is_within_one_ulp_of_numpy():
    x = np.concatenate([-np.random.default_rng(0).exponential(20.0, size=20_000),
                        np.linspace(-745.0, 709.0, 5_000), [0.0, -0.0, -1e-300, 0.5, 2.0]])
    ours = np.array([scalars.vector_exp(v) for v in x])
    reference = np.exp(x)
    assert np.all(np.abs(ours - reference) <= np.spacing(reference))


def test_vector_exp_edges():
    assert scalars.vector_exp(0.0) == 1.0
    assert scalars.vector_exp(-np.inf) == 0.0
    assert scalars.vector_exp(-800.0) == 0.0
    assert scalars.vector_exp(710.0) == np.inf == scalars.vector_exp(np.inf)
    assert np.isnan(scalars.vector_exp(np.nan))


@pytest.mark.parametrize("name", ELEMENT_WISE)
def test_scalar_activations_treat_non_finite_inputs_as_numpy_does(name):
    act = get_activation(name, alpha=0.1)
    z = np.array([np.inf, -np.inf, np.nan])
    scalar = compiled(act)
    with np.errstate(invalid="ignore", over="ignore"):
        np.testing.assert_array_equal([scalar(v)[0] for v in z], act.forward(z))
        np.testing.assert_array_equal([scalar(v)[1] for v in z], act.derivative(z))


@pytest.mark.parametrize("name", ELEMENT_WISE)
def test_scalar_activations_match_the_numpy_ones(name):
    act = get_activation(name, alpha=0.1)
    z = np.concatenate([np.random.default_rng(1).normal(0, 5, 500), [0.0, -0.0, 40.0, -40.0]])
    scalar = compiled(act)
    forward = np.array([scalar(v)[0] for v in z])
    derivative = np.array([scalar(v)[1] for v in z])
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
    Z_k, A_k, D_k = np.empty((batch, n_out)), np.empty((batch, n_out)), np.empty((batch, n_out))
    act = layer.activation
    activate = kit.load(kit.Maths([act], MSE())).activate_pairs
    parameters = np.array([[value for _, value in render.parameters(act)] or [0.0]])
    single.affine(X, layer.W, layer.b, Z_k)          # the words the generic kernel's step is
    activate(0, parameters, 0, Z_k, A_k, D_k)          # written in (tinynet.compiled.looping)
    dZ_k, dW_k, db_k, dX_k = (np.empty((batch, n_out)), np.empty((n_out, n_in)),
                              np.empty(n_out), np.empty((batch, n_in)))
    single.times(dA, D_k, dZ_k)
    single.gradients(dZ_k, X, dW_k, db_k)
    single._matmul_into(dZ_k, layer.W, dX_k)
    # Loops and BLAS may round dot products differently: a few ulps of the largest term.
    for ours, reference in [(A_k, A), (dW_k, layer.dW), (db_k, layer.db), (dX_k, dX)]:
        np.testing.assert_allclose(ours, reference, rtol=1e-13, atol=1e-14)


@pytest.mark.parametrize("n", [1, 2, 3, 4, 5, 33])
def test_epoch_order_kernel_is_the_numpy_order(n):
    keys, order = np.empty(n, dtype=np.uint64), np.empty(n, dtype=np.int64)
    for epoch in range(5):
        orders.epoch_order_into(123, epoch, keys, order)
        np.testing.assert_array_equal(order, epoch_order(123, epoch, n))


@pytest.mark.parametrize("n", [1, 2, 3, 4, 5, 32, 33])
def test_lane_orders_are_the_numpy_orders(n):
    """Each lane of lanes.lane_orders (keys two at a time, ranked by counting up to 32 samples
    and sorted above) is shuffle.epoch_orders of its seed, odd n included."""
    seeds = np.array([0, 7, 123, 2**40 + 5, 2**63 + 1], dtype=np.uint64)
    seed_hashes, keys, rank, order = lanes.order_scratch(seeds, n)
    for epoch in (0, 1, 19_999):
        lanes.lane_orders(seed_hashes, epoch, keys, rank, order)
        np.testing.assert_array_equal(order.T, epoch_orders(seeds, epoch, n))


@pytest.mark.parametrize("update", ["after_backward", "during_backward"])
def test_lanes_train_each_member_as_the_single_kernel_does(update):
    # Small, so that it also runs with the JIT disabled, through the lanes' plain-Python loops.
    X, y = tinynet.data.xor()
    nets = [tinynet.mlp([2, 3, 2, 1], seed=s) for s in (5, 6)]
    result = tinynet.fit_ensemble(nets, X, y, epochs=6, lr=0.1, record_every=2, update=update)
    single_net = tinynet.mlp([2, 3, 2, 1], seed=6)
    history = single_net.fit(X, y, epochs=6, lr=0.1, record_every=2, update=update)
    np.testing.assert_array_equal(result[1].loss, history.loss)
    assert result.final_loss[1] == history.final_loss
    for p, q in zip(nets[1].parameters(), single_net.parameters()):
        np.testing.assert_array_equal(p, q)
