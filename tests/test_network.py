import numpy as np
import pytest

import tinynet
from tinynet import Layer, Network, ShapeError, UnknownNameError

from helpers import Softplus


def test_layer_shapes_follow_torch_linear():
    layer = Layer(3, 5, activation="relu", init="he_normal")
    assert layer.W.shape == (5, 3) and layer.b.shape == (5,)
    assert layer.W.dtype == np.float64 and layer.W.flags.c_contiguous
    assert np.all(layer.b == 0)
    out = layer.forward(np.ones((4, 3)))
    assert out.shape == (4, 5)
    assert layer.backward(np.ones((4, 5))).shape == (4, 3)
    assert layer.dW.shape == (5, 3) and layer.db.shape == (5,)


def test_layer_forward_is_the_formula():
    layer = Layer(2, 3, activation="identity", rng=4)
    layer.b[...] = [1.0, -1.0, 0.5]
    X = np.array([[1.0, 2.0], [-3.0, 0.5]])
    np.testing.assert_allclose(layer.forward(X), X @ layer.W.T + layer.b, rtol=0, atol=0)


def test_layer_repr_shows_shape_activation_init_and_std():
    text = repr(Layer(2, 8, activation="leaky_relu", init="he_leaky"))
    assert text == "Layer(2 -> 8, activation=leaky_relu(alpha=0.01), init=he_leaky, init_std=1.000)"


def test_mlp_builds_the_requested_chain():
    net = tinynet.mlp([2, 4, 3, 1], activation="relu", output="sigmoid", init="he_normal",
                      output_init="xavier_normal", seed=5)
    assert net.sizes == [2, 4, 3, 1]
    assert [layer.shape for layer in net.layers] == [(4, 2), (3, 4), (1, 3)]
    assert [layer.activation.name for layer in net.layers] == ["relu", "relu", "sigmoid"]
    assert [layer.init.name for layer in net.layers] == ["he_normal", "he_normal", "xavier_normal"]
    assert net.n_parameters == 4 * 2 + 4 + 3 * 4 + 3 + 3 + 1
    assert len(net.parameters()) == 6
    assert all(p is q for p, q in zip(net.parameters(),
                                      [a for layer in net.layers for a in (layer.W, layer.b)]))


def test_network_summary_table():
    text = repr(tinynet.mlp([2, 2, 2, 1], init="he_leaky", seed=0))
    lines = text.splitlines()
    assert lines[0] == "Network 2-2-2-1: 15 parameters, seed 0"
    assert lines[1].split() == ["layer", "shape", "(out,", "in)", "activation", "init", "init",
                                "std", "params"]
    assert lines[2].split() == ["0", "(2,", "2)", "leaky_relu(alpha=0.01)", "he_leaky", "1.000", "6"]
    assert lines[4].split() == ["2", "(1,", "2)", "sigmoid", "he_leaky", "1.000", "3"]


def test_auto_init_shows_its_choice():
    net = tinynet.mlp([2, 8, 1], init="auto")
    assert [layer.init_label() for layer in net.layers] == ["auto:he_leaky", "auto:xavier_normal"]
    assert net.layers[1].init_std() == pytest.approx(np.sqrt(2 / (8 + 1)))


def test_same_seed_same_weights_different_seed_different_weights():
    a, b, c = (tinynet.mlp([2, 3, 1], seed=s) for s in (7, 7, 8))
    for p, q in zip(a.parameters(), b.parameters()):
        np.testing.assert_array_equal(p, q)
    assert not np.array_equal(a.layers[0].W, c.layers[0].W)


def test_every_layer_gets_fresh_values():
    # Keras's trap: one initializer reused across layers must not repeat the same draws.
    net = tinynet.mlp([3, 3, 3, 3], init="normal", seed=0)
    assert not np.array_equal(net.layers[0].W, net.layers[1].W)
    assert not np.array_equal(net.layers[1].W, net.layers[2].W)


def test_network_redraws_layers_from_its_own_seed():
    layers = [Layer(2, 3, rng=123), Layer(3, 1, activation="sigmoid", rng=456)]
    net = Network(layers, seed=9)
    twin = Network([Layer(2, 3), Layer(3, 1, activation="sigmoid")], seed=9)
    np.testing.assert_array_equal(net.layers[0].W, twin.layers[0].W)


def test_global_random_state_is_untouched():
    np.random.seed(1234)
    before = np.random.get_state()[1].copy()
    X, y = tinynet.data.xor()
    net = tinynet.mlp([2, 3, 1], seed=0)
    net.fit(X, y, epochs=3, lr=0.1)
    after = np.random.get_state()[1]
    np.testing.assert_array_equal(before, after)


def test_user_function_as_init():
    layer = Layer(2, 3, init=lambda shape, rng: np.full(shape, 0.5))
    assert np.all(layer.W == 0.5) and layer.init_std() is None
    assert "init_std=?" in repr(layer)


# --- bad input -------------------------------------------------------------------------

def test_layers_that_do_not_chain_name_the_index_and_shapes():
    with pytest.raises(ShapeError, match=r"layers\[1\] takes 4 inputs but layers\[0\] gives 3 "
                                         r"outputs \(weight shapes \(3, 2\) then \(2, 4\)"):
        Network([Layer(2, 3), Layer(4, 2)])


def test_forward_keeps_its_own_copy_of_the_input():
    net = tinynet.mlp([2, 3, 1], seed=0)
    twin = tinynet.mlp([2, 3, 1], seed=0)
    X = np.array([[0.5, -1.0], [1.0, 2.0]])
    y_hat = net.forward(X)
    twin.backward(twin.forward(X.copy()) - 0.0)
    X[...] = 5.0  # the caller changes its array between forward and backward
    net.backward(y_hat - 0.0)
    np.testing.assert_array_equal(net.layers[0].dW, twin.layers[0].dW)


def test_auto_init_with_an_activation_it_does_not_know():
    with pytest.raises(UnknownNameError, match=r"activation for init 'auto' 'softplus'.*"
                                                r"Pass init= explicitly"):
        Layer(2, 2, activation=Softplus())
    assert Layer(2, 2, activation=Softplus(), init="lecun_normal").W.shape == (2, 2)


def test_mlp_accepts_an_array_of_sizes():
    assert tinynet.mlp(np.array([2, 3, 1])).sizes == [2, 3, 1]


def test_bias_initializer_draws_biases_after_every_weight():
    plain = tinynet.mlp([2, 2, 2, 1], init="normal", seed=11)
    drawn = tinynet.mlp([2, 2, 2, 1], init="normal", bias_init="normal", seed=11)
    for a, b in zip(plain.layers, drawn.layers):
        np.testing.assert_array_equal(a.W, b.W)   # the weights do not depend on bias_init
        assert not np.any(a.b) and np.all(b.b != 0)
    # the biases are the generator's next draws: N(0,1) of shape (n_out, 1) per layer, in order
    rng = np.random.default_rng(11)
    for layer in plain.layers:
        rng.normal(0.0, 1.0, size=layer.shape)
    expected = np.concatenate([rng.normal(0.0, 1.0, size=(layer.n_out, 1))[:, 0]
                               for layer in plain.layers])
    np.testing.assert_array_equal(np.concatenate([layer.b for layer in drawn.layers]), expected)
    assert "bias init" in repr(drawn) and "bias init" not in repr(plain)
    assert "bias_init=normal" in repr(drawn.layers[0])


def test_bias_initializer_fans_are_those_of_one_constant_input():
    layer = tinynet.Layer(50, 4000, activation="relu", init="he_normal", bias_init="he_normal",
                          rng=3)
    assert layer.bias_shape == (4000, 1)
    # He with fan_in 1: std sqrt(2); the sample std of 4,000 draws is within ±3.4 % of it at
    # 3 standard errors (relative s.e. of a sample std about 1/sqrt(2n) = 1.1 %)
    assert abs(layer.b.std() / np.sqrt(2.0) - 1.0) < 0.034


@pytest.mark.parametrize("bias_init,error,message", [
    (True, TypeError, "bias_init must be a number or an initializer"),
    ([0.1], TypeError, "bias_init must be a number or an initializer"),
    (float("nan"), ValueError, "bias_init must be a finite number"),
    ("normall", tinynet.UnknownNameError, "did you mean 'normal'"),
])
def test_bad_bias_initializer(bias_init, error, message):
    with pytest.raises(error, match=message):
        tinynet.Layer(2, 2, bias_init=bias_init)


# --- a layer belongs to one network; parameters given are not drawn -------------------------

def test_a_layer_of_a_live_network_cannot_build_another():
    layers = [Layer(2, 2), Layer(2, 1, activation="sigmoid")]
    first = Network(layers, seed=1)
    weights = first.layers[0].W.copy()
    with pytest.raises(ValueError, match=r"layers\[0\] .* already belongs to a Network \(seed 1\)"):
        Network(layers, seed=2)
    np.testing.assert_array_equal(first.layers[0].W, weights)  # not redrawn


def test_a_layer_whose_network_is_gone_can_be_used_again():
    import gc

    layers = [Layer(2, 1)]
    Network(layers, seed=1)
    gc.collect()
    assert Network(layers, seed=2).layers[0] is layers[0]


def test_copies_and_pickles_own_their_own_layers():
    import copy
    import pickle

    net = tinynet.mlp([2, 3, 1], seed=4)
    for twin in (copy.deepcopy(net), pickle.loads(pickle.dumps(net))):
        assert all(layer._network() is twin for layer in twin.layers)
        assert all(layer._network() is net for layer in net.layers)
        np.testing.assert_array_equal(tinynet.packing.pack(twin), tinynet.packing.pack(net))
        with pytest.raises(ValueError, match="already belongs to a Network"):
            Network(twin.layers, seed=0)


def test_given_parameters_are_copied_and_no_initializer_runs():
    calls = []

    def counted(shape, rng):
        calls.append(shape)
        return rng.normal(size=shape)

    layers = [Layer(2, 3, init=counted, rng=None), Layer(3, 1, init=counted, rng=None)]
    source = tinynet.mlp([2, 3, 1], seed=9)
    net = Network(layers, seed=9, parameters=source.parameters())
    assert calls == []
    np.testing.assert_array_equal(tinynet.packing.pack(net), tinynet.packing.pack(source))
    assert all(mine is not theirs for mine, theirs in zip(net.parameters(), source.parameters()))


def test_huge_but_finite_initializer_parameters_build_and_state_their_std():
    assert Layer(2, 2, init="normal(std=1e155)").init_std() == 1e155  # std² overflows
    assert Layer(2, 2, init="orthogonal(gain=1e308)").init_std() == 1e308 / np.sqrt(2)
    assert Layer(2, 2, init="he_leaky(alpha=1e200)").init_std() == 0.0  # 2 / (1 + α²)


def test_a_shallow_copy_shares_nothing():
    import copy

    net = tinynet.mlp([2, 3, 1], seed=4)
    before = tinynet.packing.pack(net)
    twin = copy.copy(net)
    layer = copy.copy(net.layers[0])
    assert all(a is not b for a, b in zip(twin.parameters(), net.parameters()))
    assert layer.W is not net.layers[0].W and layer._network is None
    Network([layer, copy.copy(net.layers[1])], seed=99)  # new layers: net is not redrawn
    np.testing.assert_array_equal(tinynet.packing.pack(net), before)


def test_an_ensemble_refuses_members_that_share_a_layer():
    a, b = tinynet.mlp([2, 2, 1], seed=1), tinynet.mlp([2, 2, 1], seed=2)
    b.layers = [b.layers[0], a.layers[1]]  # by hand, past the constructor's check
    X, y = tinynet.data.xor()
    with pytest.raises(ValueError, match=r"networks\[1\].layers\[1\] is also a layer of "
                                         r"networks\[0\]"):
        tinynet.fit_ensemble([a, b], X, y, epochs=1, lr=0.1)


def test_a_network_whose_initializer_failed_leaves_its_layers_free():
    def failing(shape, rng):
        raise RuntimeError("no")

    layers = [Layer(2, 1, init="normal")]
    layers[0].init = tinynet.init.get(failing)
    with pytest.raises(tinynet.init.InitError):
        Network(layers)
    layers[0].init = tinynet.init.get("normal")
    assert Network(layers).layers[0] is layers[0]
