"""Property-based tests (hypothesis): gradients, backend parity, initializer variance and
save/load, on networks and shapes drawn at random. ``derandomize=True`` makes every run draw
the same examples, so CI is reproducible."""

import math

import numpy as np
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import tinynet
from tinynet.activations import ACTIVATIONS, get_activation
from tinynet.losses import mse, mse_gradient

from helpers import central_difference, relative_error

SETTINGS = settings(max_examples=25, deadline=None, derandomize=True)
architectures = st.lists(st.integers(1, 6), min_size=2, max_size=5)
activation_names = st.sampled_from(sorted(ACTIVATIONS))


@SETTINGS
@given(sizes=architectures, hidden=activation_names, output=activation_names,
       batch=st.integers(1, 5), seed=st.integers(0, 2**32))
def test_backward_matches_central_differences(sizes, hidden, output, batch, seed):
    rng = np.random.default_rng(seed)
    net = tinynet.mlp(sizes, activation=hidden, output=output, init="lecun_normal", alpha=0.1,
                      seed=seed)
    for layer in net.layers:
        layer.b[...] = rng.normal(0.3, 0.5, size=layer.b.shape)
    X, y = rng.normal(size=(batch, sizes[0])), rng.normal(size=(batch, sizes[-1]))
    net.forward(X)
    # central differences need the kinks of relu/leaky_relu to be further than h = 1e-6 away
    assume(all(np.min(np.abs(layer.pre_activation)) > 1e-4 for layer in net.layers))
    dX = net.backward(mse_gradient(net.forward(X), y))
    grads = [g.copy() for g in net.gradients()]
    loss = lambda: mse(net.forward(X), y)  # noqa: E731
    for param, grad in zip(net.parameters(), grads):
        numeric = central_difference(loss, param)
        assert relative_error(grad, numeric) < 1e-6 or np.max(np.abs(grad - numeric)) < 1e-9
    numeric = central_difference(loss, X)
    assert relative_error(dX, numeric) < 1e-6 or np.max(np.abs(dX - numeric)) < 1e-9


@SETTINGS
@given(sizes=architectures, hidden=activation_names, output=activation_names,
       samples=st.integers(1, 8), shuffle=st.booleans(), seed=st.integers(0, 2**32))
def test_numba_and_numpy_backends_agree(sizes, hidden, output, samples, shuffle, seed):
    rng = np.random.default_rng(seed)
    X, y = rng.normal(size=(samples, sizes[0])), rng.uniform(-1, 1, size=(samples, sizes[-1]))
    batch = int(rng.integers(1, samples + 1))
    nets = [tinynet.mlp(sizes, activation=hidden, output=output, init="lecun_normal",
                        alpha=0.2, seed=seed) for _ in range(2)]
    histories = [net.fit(X, y, epochs=15, lr=0.05, batch_size=batch, shuffle=shuffle,
                         backend=backend) for net, backend in zip(nets, ["numba", "numpy"])]
    # As in test_backends: 1e-12 relative to the size of the numbers.
    np.testing.assert_allclose(histories[0].loss, histories[1].loss, rtol=1e-12, atol=1e-12)
    for p, q in zip(nets[0].parameters(), nets[1].parameters()):
        np.testing.assert_allclose(p, q, rtol=1e-12, atol=1e-12)


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
