"""Property-based tests (hypothesis): initializer variance and save/load, on networks and
shapes drawn at random (backend agreement is in test_backends.py, gradients in
test_gradients.py). ``derandomize=True`` makes every run draw the same examples, so CI is
reproducible."""

import math

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import tinynet
from tinynet.activations import get_activation
from helpers import ELEMENT_WISE

SETTINGS = settings(max_examples=25, deadline=None, derandomize=True)
architectures = st.lists(st.integers(1, 6), min_size=2, max_size=5)
activation_names = st.sampled_from(ELEMENT_WISE)


KURTOSIS = {"normal": 3.0, "uniform": 1.8, "truncated_normal": 2.3655, None: 3.0}


@SETTINGS
@given(name=st.sampled_from(tinynet.init.available()), n_out=st.integers(30, 400),
       n_in=st.integers(30, 400), seed=st.integers(0, 2**32))
def test_initializers_hit_their_variance_on_any_shape(name, n_out, n_in, seed):
    # Sample variance within 6 standard errors, sqrt((κ - 1)/N), of the target.
    initializer = tinynet.init.get(name)
    activation = get_activation("leaky_relu")
    w = initializer((n_out, n_in), np.random.default_rng(seed), activation)
    target = initializer.variance((n_out, n_in), activation)
    if target == 0:
        assert np.all(w == initializer.mean((n_out, n_in), activation))
        return
    tolerance = 6 * math.sqrt((KURTOSIS[initializer.distribution] - 1) / w.size)
    assert abs(np.var(w) / target - 1) < tolerance


@SETTINGS
@given(sizes=architectures, hidden=activation_names, output=activation_names,
       init=st.sampled_from(["normal", "he_leaky", "xavier_uniform", "orthogonal(gain=2.0)"]),
       alpha=st.floats(0, 1), seed=st.integers(0, 2**63 - 1))
def test_save_load_round_trip(tmp_path_factory, sizes, hidden, output, init, alpha, seed):
    net = tinynet.mlp(sizes, activation=hidden, output=output, init=init, alpha=alpha, seed=seed)
    path = net.save(tmp_path_factory.mktemp("saved") / "net.npz")
    loaded = tinynet.load(path)
    assert loaded.sizes == net.sizes and loaded.seed == seed
    assert [l.activation for l in loaded.layers] == [l.activation for l in net.layers]
    for p, q in zip(net.parameters(), loaded.parameters()):
        np.testing.assert_array_equal(p, q)
