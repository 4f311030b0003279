"""Backpropagation against central differences, for every activation and several depths."""

import numpy as np
import pytest

import tinynet
from tinynet.losses import mse, mse_gradient

from helpers import ELEMENT_WISE, central_difference, relative_error


@pytest.mark.parametrize("activation", ELEMENT_WISE)
@pytest.mark.parametrize("sizes", [[3, 2], [2, 4, 3], [3, 5, 4, 2]], ids=lambda s: "-".join(map(str, s)))
@pytest.mark.parametrize("batch", [1, 5])
def test_backward_matches_central_difference(activation, sizes, batch):
    rng = np.random.default_rng(len(sizes) * 10 + batch)
    net = tinynet.mlp(sizes, activation=activation, output=activation, init="lecun_normal",
                      alpha=0.1, seed=3)
    for layer in net.layers:  # non-zero biases, mostly positive so that ReLU units stay alive
        layer.b[...] = rng.normal(0.5, 0.5, size=layer.b.shape)
    X = rng.normal(size=(batch, sizes[0]))
    y = rng.normal(size=(batch, sizes[-1]))

    def loss() -> float:
        return mse(net.forward(X), y)

    dX = net.backward(mse_gradient(net.forward(X), y))
    assert np.any(dX != 0), "no gradient reaches the input: this case would check nothing"
    for param, grad in zip(net.parameters(), net.gradients()):
        analytic = grad.copy()
        assert np.any(analytic != 0)
        assert relative_error(analytic, central_difference(loss, param)) < 1e-6
    assert relative_error(dX, central_difference(loss, X)) < 1e-6
