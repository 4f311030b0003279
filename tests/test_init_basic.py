"""The initializers the core framework relies on (the registry issue adds generic tests)."""

import math

import numpy as np
import pytest

import tinynet
from tinynet.activations import get_activation
from tinynet.init import calculate_gain, fans

LEAKY = get_activation("leaky_relu", alpha=0.01)


def test_gain_values_are_exact():
    assert calculate_gain("identity") == 1.0
    assert calculate_gain("sigmoid") == 1.0
    assert calculate_gain("tanh") == 5.0 / 3.0
    assert calculate_gain("relu") == math.sqrt(2.0)
    # The published bug sqrt(2 / 1 + alpha**2) would give sqrt(2.0001) here, not sqrt(2/1.0001).
    assert calculate_gain("leaky_relu", alpha=0.01) == math.sqrt(2.0 / 1.0001)
    assert calculate_gain("leaky_relu", alpha=0.5) == math.sqrt(2.0 / 1.25)
    assert calculate_gain(get_activation("leaky_relu", alpha=0.2)) == math.sqrt(2.0 / 1.04)


def test_fans_of_an_out_by_in_weight():
    assert fans((5, 3)) == (3, 5)  # (n_out, n_in) -> fan_in = 3, fan_out = 5


@pytest.mark.parametrize("name,variance", [
    ("normal", lambda m, n: 1.0),
    ("lecun_normal", lambda m, n: 1.0 / m),
    ("xavier_normal", lambda m, n: 2.0 / (m + n)),
    ("xavier_uniform", lambda m, n: 2.0 / (m + n)),
    ("he_normal", lambda m, n: 2.0 / m),
    ("he_uniform", lambda m, n: 2.0 / m),
    ("he_leaky", lambda m, n: 2.0 / (1.0001 * m)),
    ("zeros", lambda m, n: 0.0),
])
def test_target_variance_on_non_square_shapes(name, variance):
    initializer = tinynet.init.get(name)
    for n_out, n_in in [(3, 7), (7, 3)]:
        assert initializer.variance((n_out, n_in), LEAKY) == pytest.approx(variance(n_in, n_out),
                                                                          rel=1e-15)


def test_he_at_fan_in_two_is_exactly_standard_normal():
    he = tinynet.init.get("he_normal")
    assert he.std((2, 2), LEAKY) == 1.0 == tinynet.init.get("normal").std((2, 2), LEAKY)


@pytest.mark.parametrize("name", ["normal", "xavier_uniform", "he_normal", "he_leaky"])
def test_samples_have_the_target_variance(name):
    # 300 x 500 draws: the sample variance's relative standard error is sqrt(2/150000) = 0.0037
    # for a normal (sqrt(0.8/150000) = 0.0023 for a uniform); 5 standard errors is 0.019.
    initializer = tinynet.init.get(name)
    for shape in [(300, 500), (500, 300)]:
        w = initializer(shape, np.random.default_rng(0), LEAKY)
        assert w.shape == shape and w.dtype == np.float64
        target = initializer.variance(shape, LEAKY)
        assert abs(np.var(w) / target - 1) < 0.019
        assert abs(np.mean(w)) < 5 * math.sqrt(target / w.size)


def test_register_a_user_initializer():
    @tinynet.init.register("test_tiny_normal")
    def tiny_normal(shape, rng):
        return rng.normal(0.0, 0.01, size=shape)

    assert "test_tiny_normal" in tinynet.init.available()
    net = tinynet.mlp([2, 3, 1], init="test_tiny_normal")
    assert net.layers[0].init.name == "test_tiny_normal"
    assert np.abs(net.layers[0].W).max() < 0.1
    with pytest.raises(ValueError, match="'test_tiny_normal' is already registered"):
        tinynet.init.register("test_tiny_normal", tiny_normal)
    tinynet.init.register("test_tiny_normal", tiny_normal, override=True)
