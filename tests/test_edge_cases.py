"""Edges: overflow without damage, width-1 layers, one-sample data sets."""

import warnings

import numpy as np
import pytest

import tinynet

X, Y = tinynet.data.xor()


def wild(seed=0):
    """The issue's overflow: normal(std=10) weights, 20 ReLU layers, trained at lr 1. (Each
    layer multiplies E[z²] by 16 · 100 / 2 = 800; with a linear output nothing saturates.)"""
    return tinynet.mlp([2] + [16] * 20 + [1], activation="relu", output="identity",
                       init="normal(std=10)", seed=seed)


@pytest.mark.parametrize("backend", ["numba", "numpy"])
def test_overflowing_fit_finishes_marked_and_silent(backend):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a single RuntimeWarning would fail the test
        history = wild().fit(X, Y, epochs=50, lr=1.0, backend=backend)
    assert history.diverged and history.epochs < 50


@pytest.mark.parametrize("backend", ["numba", "numpy"])
def test_overflowing_ensemble_marks_members_and_stays_silent(backend):
    # and one member that cannot blow up: zero weights pass no gradient to the hidden layers,
    # and the output bias only oscillates at lr 1
    nets = [wild(s) for s in range(3)] + [tinynet.mlp([2] + [16] * 20 + [1], activation="relu",
                                                      output="identity", init="zeros", seed=9)]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        result = tinynet.fit_ensemble(nets, X, Y, epochs=50, lr=1.0, backend=backend)
    assert result.diverged[:3].all() and not result.diverged[3]
    assert np.all(result.diverged_epoch[:3] >= 0) and result[3].epochs == 50


@pytest.mark.parametrize("backend", ["numba", "numpy"])
def test_width_one_layers(backend):
    net = tinynet.mlp([1, 1, 1, 1], activation="tanh", output="identity", seed=3)
    history = net.fit([[0.5], [-1.0]], [[0.2], [-0.3]], epochs=200, lr=0.1, backend=backend)
    assert not history.diverged and history.loss[-1] < history.loss[0]
    result = tinynet.fit_ensemble([tinynet.mlp([1, 1, 1, 1], activation="tanh",
                                               output="identity", seed=s) for s in (3, 4, 5)],
                                  [[0.5], [-1.0]], [[0.2], [-0.3]], epochs=200, lr=0.1,
                                  backend=backend)
    assert result.final_loss[0] < history.loss[0]
    assert result.final_loss[0] == pytest.approx(history.loss[-1], rel=1e-12)


@pytest.mark.parametrize("backend", ["numba", "numpy"])
def test_one_sample_data_set(backend):
    net = tinynet.mlp([3, 4, 2], output="identity", seed=0)
    history = net.fit([[1.0, 2.0, 3.0]], [[0.5, -0.5]], epochs=300, lr=0.01, backend=backend)
    assert history.loss[-1] < 1e-3
    np.testing.assert_allclose(net.predict([[1.0, 2.0, 3.0]]), [[0.5, -0.5]], atol=0.05)
    result = tinynet.fit_ensemble([tinynet.mlp([3, 4, 2], output="identity", seed=s)
                                   for s in range(2)], [[1.0, 2.0, 3.0]], [[0.5, -0.5]],
                                  epochs=300, lr=0.01, backend=backend)
    assert np.all(result.final_loss < 1e-3)


def test_sigmoid_limits_in_a_whole_network():
    net = tinynet.mlp([1, 1], output="sigmoid", init="constant(value=1.0)")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = net.predict([[-1e4], [1e4]], backend="numpy")
        compiled = net.predict([[-1e4], [1e4]], backend="numba")
    np.testing.assert_array_equal(out, [[0.0], [1.0]])
    np.testing.assert_array_equal(compiled, [[0.0], [1.0]])
