"""tinynet.gradcheck (module tinynet.checking): backward against central differences, kinks
told apart from bugs."""

from dataclasses import dataclass

import numpy as np
import pytest

import tinynet
from tinynet import dense
from tinynet.activations import Sigmoid, Tanh
from tinynet.checking import ArrayCheck, GradcheckReport, gradcheck
from tinynet.losses import BCE, MSE, Huber, mse_gradient
from helpers import ELEMENT_WISE

ARRAYS_221 = ["layer 0 W", "layer 0 b", "layer 1 W", "layer 1 b"]


def random_case(activation: str, depth: int, seed: int = 0):
    """A network of ``depth`` layers with non-zero biases, mostly positive so that ReLU units
    stay alive, and a random batch, all from one seeded generator."""
    rng = np.random.default_rng(seed)
    sizes = [3] + [4] * (depth - 1) + [2]
    net = tinynet.mlp(sizes, activation=activation, output=activation, init="lecun_normal",
                      seed=seed)
    for layer in net.layers:
        layer.b[...] = rng.normal(0.5, 0.5, size=layer.b.shape)
    return net, rng.normal(size=(5, 3)), rng.normal(size=(5, 2))


def tanh_then_identity(seed: int = 0):
    """2-4-2, tanh then identity, with random biases and batch: no kinks anywhere."""
    rng = np.random.default_rng(seed)
    net = tinynet.mlp([2, 4, 2], activation="tanh", output="identity", seed=seed,
                      bias_init="normal")
    return net, rng.normal(size=(6, 2)), rng.normal(size=(6, 2))


@pytest.mark.parametrize("activation", ELEMENT_WISE)
@pytest.mark.parametrize("depth", [1, 2, 3])
def test_passes_on_random_networks(activation, depth):
    net, X, y = random_case(activation, depth, seed=depth)
    report = gradcheck(net, X, y)
    assert isinstance(report, GradcheckReport)
    assert report.kinks == ()  # no sample near a kink: the check is a real one everywhere
    assert report.passed and report.status == "passed" and not report.failed
    assert list(report.arrays) == [f"layer {i} {kind}" for i in range(depth) for kind in "Wb"]
    for check in report.arrays.values():
        assert check.status == "passed" and not check.at_kink.any()
        assert np.any(check.analytic != 0), "a zero gradient would check nothing"
        assert check.max_relative_error < 1e-5 and check.max_absolute_error < 1e-8
    assert report.max_relative_error < 1e-5
    assert "result: passed" in str(report)


def test_reports_the_kink_at_initialization_on_xor():
    X, y = tinynet.data.xor()
    net = tinynet.mlp([2, 2, 2, 1])  # zero biases: sample (0, 0) gives z = 0 in layer 0
    report = gradcheck(net, X, y)

    assert report.status == "kinks" and not report.passed and not report.failed
    first_layer = [kink for kink in report.kinks if kink.layer == 0]
    assert [(k.sample, k.unit, k.z) for k in first_layer] == [(0, 0, 0.0), (0, 1, 0.0)]
    assert all(kink.sample == 0 for kink in report.kinks)
    # a naive check would call this a failure: the biases' steps do disagree with backward
    assert report.arrays["layer 0 b"].max_relative_error > 1e-2
    assert report.arrays["layer 0 b"].status == "kinks"
    assert report.arrays["layer 0 b"].at_kink.all()
    assert report.arrays["layer 0 W"].status == "passed"  # x = 0 there: W's steps miss it
    assert report.arrays["layer 2 W"].status == "passed"

    text = str(report)
    assert "layer 0 (leaky_relu(alpha=0.01)), sample 0, unit 0: z = 0" in text
    assert "mismatch in those steps is expected, not a bug" in text
    assert "result: mismatch only where a kink is straddled (layer 0 b, layer 1 b)" in text
    assert "FAILED" not in text


def test_a_unit_within_a_step_of_the_kink_is_reported_and_none_further_away():
    rng = np.random.default_rng(5)
    net = tinynet.mlp([2, 3, 1], activation="relu", output="identity", seed=5)
    X, y = rng.normal(size=(4, 2)), rng.normal(size=(4, 1))
    first = net.layers[0]
    first.b[...] = rng.normal(0.5, 0.5, size=3)
    first.b[2] = 4e-7 - X[1] @ first.W[2]  # sample 1, unit 2: z = 4e-7, a step of 1e-6 crosses
    report = gradcheck(net, X, y)

    z = first.pre_activation
    assert z[1, 2] == pytest.approx(4e-7, rel=1e-6)
    assert np.delete(np.abs(z), 1 * 3 + 2).min() > 1e-2  # every other z far from the kink
    assert [(k.layer, k.sample, k.unit) for k in report.kinks] == [(0, 1, 2)]
    assert report.kinks[0].z == z[1, 2] and report.kinks[0].reach == pytest.approx(1e-6)
    assert report.arrays["layer 0 b"].at_kink.tolist() == [False, False, True]
    assert not report.arrays["layer 1 W"].at_kink.any()
    assert report.status == "kinks"  # b[2]'s step crosses the kink, and disagrees


def test_a_wrong_activation_derivative_fails_its_layer_and_those_before(monkeypatch):
    net, X, y = tanh_then_identity()
    right = Tanh.forward_and_derivative  # φ right, φ' 1.5 times too big
    monkeypatch.setattr(Tanh, "forward_and_derivative",
                        lambda self, z: (right(self, z)[0], 1.5 * right(self, z)[1]))
    report = gradcheck(net, X, y)

    assert report.status == "failed" and report.failed and report.kinks == ()
    assert {name: check.status for name, check in report.arrays.items()} == {
        "layer 0 W": "failed", "layer 0 b": "failed",  # tanh's layer: dZ is 1.5 times too big
        "layer 1 W": "passed", "layer 1 b": "passed"}  # identity output: untouched
    b = report.arrays["layer 0 b"]
    assert np.allclose(b.analytic, 1.5 * b.numerical, rtol=1e-6)
    text = str(report)
    assert "result: FAILED in layer 0 W, layer 0 b, away from any kink" in text
    assert "not a bug" not in text


def test_a_wrong_bias_gradient_fails_only_the_biases(monkeypatch):
    net, X, y = tanh_then_identity(seed=1)
    right = dense.backward_parameters

    def db_doubled(dZ, X, dW, db):
        right(dZ, X, dW, db)
        db *= 2

    monkeypatch.setattr(dense, "backward_parameters", db_doubled)
    report = gradcheck(net, X, y)
    assert [name for name, check in report.arrays.items() if check.status == "failed"] == \
        ["layer 0 b", "layer 1 b"]
    assert report.failed


def test_a_bug_is_not_excused_by_a_kink(monkeypatch):
    X, y = tinynet.data.xor()
    right = Sigmoid.forward_and_derivative  # σ right, σ' twice too big
    monkeypatch.setattr(Sigmoid, "forward_and_derivative",
                        lambda self, z: (right(self, z)[0], 2.0 * right(self, z)[1]))
    report = gradcheck(tinynet.mlp([2, 2, 2, 1]), X, y)

    assert report.kinks  # the same kinks as without the bug ...
    assert report.status == "failed"  # ... but mismatches away from them too
    assert report.arrays["layer 0 W"].status == "failed"
    assert report.arrays["layer 2 b"].status == "failed"
    assert "result: FAILED in layer 0 W, layer 1 W, layer 2 W, layer 2 b" in str(report)


def test_the_network_is_unchanged_bit_for_bit():
    for net, X, y in [random_case("relu", 3), (tinynet.mlp([2, 2, 2, 1]), *tinynet.data.xor())]:
        arrays = net.parameters()
        before = [p.copy() for p in arrays]
        output = net.forward(X)
        report = gradcheck(net, X, y)

        after = net.parameters()
        assert all(p is q for p, q in zip(after, arrays))  # the same arrays, changed in place
        assert [p.tobytes() for p in after] == [p.tobytes() for p in before]
        assert net.forward(X).tobytes() == output.tobytes()
        # the layers are left as after a forward and backward pass at the unchanged parameters
        net.backward(mse_gradient(net.forward(X), y))
        for check, gradient in zip(report.arrays.values(), net.gradients()):
            assert check.analytic.tobytes() == gradient.tobytes()
            assert check.analytic is not gradient


def test_an_interrupted_check_restores_the_parameter():
    net, X, y = tanh_then_identity()
    before = [p.copy() for p in net.parameters()]
    calls = []

    @dataclass(frozen=True, repr=False)
    class Interrupted(MSE):
        def value_and_gradient(self, y_hat, y, batch):
            calls.append(1)
            if len(calls) == 6:  # after the loss at θ and W[0, 0]'s four steps: W[0, 1] + eps
                raise KeyboardInterrupt
            return super().value_and_gradient(y_hat, y, batch)

    with pytest.raises(KeyboardInterrupt):
        gradcheck(net, X, y, loss=Interrupted())
    assert len(calls) == 6
    assert all(np.array_equal(p, q) for p, q in zip(net.parameters(), before))


def test_an_exact_fit_is_inconclusive_not_a_false_alarm():
    """At y = net(X) every gradient is 0 and n is all truncation and rounding error: the
    relative error alone would be 1, a false alarm, without ``tiny``; and n, being noise,
    can pass nothing either."""
    net, X, _ = tanh_then_identity(seed=2)
    y = net.forward(X)
    report = gradcheck(net, X, y)
    assert report.loss == 0.0
    assert all(np.all(check.analytic == 0) for check in report.arrays.values())
    assert any(np.any(check.numerical != 0) for check in report.arrays.values())
    assert report.status == "inconclusive" and not report.passed and not report.failed
    assert "result: inconclusive: in 22 element(s)" in " ".join(str(report).split())


@pytest.mark.parametrize("eps", [1e-16, 1e-30, 1e-300])
def test_an_eps_that_rounds_away_is_refused(eps):
    net, X, y = tanh_then_identity()
    with pytest.raises(ValueError, match=rf"^eps must move every parameter, got eps={eps:g}: "
                                         r"layer 0 W\[\d, \d\] = .* rounds back to itself; "
                                         r"expected eps > "):
        gradcheck(net, X, y, eps=eps)


def test_an_eps_too_large_for_the_parameters_is_refused_not_called_a_bug():
    """At eps = 1000 the central difference measures the loss far from the parameters: a
    correct 2-3-1 on XOR was reported "FAILED ... the backward pass has a bug"."""
    X, y = tinynet.data.xor()
    net = tinynet.mlp([2, 3, 1], seed=0)
    before = [p.copy() for p in net.parameters()]
    with pytest.raises(ValueError, match=r"^eps must be small beside the parameters' scale, "
                                         r"got eps=1000: expected eps <= 0\.01 \(0\.01 x "
                                         r"max\(1, largest \|parameter\| 0\.922\d*\)\); "
                                         r"[^\n]*$"):
        gradcheck(net, X, y, eps=1000.0)
    for p, q in zip(net.parameters(), before):
        np.testing.assert_array_equal(p, q)
    assert not gradcheck(net, X, y).failed  # the default eps checks it as before


def test_the_largest_eps_grows_with_the_parameters():
    """Parameters of order 100 bend the loss over steps of order 100: eps = 0.5 is small
    there, and refused beside parameters of order 1."""
    net, X, y = tanh_then_identity()
    with pytest.raises(ValueError, match=r"got eps=0\.5: expected eps <= 0\.01366"):
        gradcheck(net, X, y, eps=0.5)
    for p in net.parameters():
        p *= 100.0
    assert gradcheck(net, X, y, eps=0.5).eps == 0.5
    assert gradcheck(net, X, y, eps=1e-4).passed


@pytest.fixture
def doubled_dW(monkeypatch):
    """A broken backward pass: every dW doubled (db right)."""
    real = dense.backward_parameters

    def doubled(dZ, X, dW, db):
        real(dZ, X, dW, db)
        dW *= 2.0

    monkeypatch.setattr(dense, "backward_parameters", doubled)


@pytest.mark.parametrize("eps", [1e-14, 1e-12, 1e-10])
def test_a_broken_backward_never_passes_at_a_tiny_eps(doubled_dW, eps):
    """Every dW doubled: at these eps n is noise beside the gradients, so the elements a
    comparison cannot judge are inconclusive, and the others fail; none passes."""
    net, X, y = tanh_then_identity()
    report = gradcheck(net, X, y, eps=eps)
    assert report.status in ("inconclusive", "failed") and not report.passed
    for check in report.arrays.values():
        judged = ~check.inconclusive
        assert not (judged & (check.relative_error < check.tolerance)
                    & (np.abs(check.analytic - check.numerical) > 1e-3)).any()


def test_a_broken_backward_fails_at_the_default_eps(doubled_dW):
    net, X, y = tanh_then_identity()
    report = gradcheck(net, X, y)
    assert report.failed and not any(check.inconclusive.any()
                                     for check in report.arrays.values())


def test_relative_error_is_the_documented_formula():
    net, X, y = random_case("sigmoid", 3, seed=7)
    for check in gradcheck(net, X, y, tolerance=1e-6).arrays.values():
        assert isinstance(check, ArrayCheck)
        tiny = 10 * check.numerical_error / 1e-6
        expected = np.abs(check.analytic - check.numerical) / np.maximum(
            np.abs(check.analytic) + np.abs(check.numerical), tiny)
        assert np.array_equal(check.relative_error, expected)
        assert check.max_relative_error == expected.max()
        assert np.all(check.numerical_error > 0)


def nan_weight():
    net = tinynet.mlp([2, 2, 2, 1])
    net.layers[1].W[0, 1] = np.nan
    return net


XOR_X, XOR_Y = tinynet.data.xor()


@pytest.mark.parametrize("arguments, error, message", [
    ((["not", "a", "net"], XOR_X, XOR_Y), TypeError,
     r"net must be a tinynet Network, got \['not', 'a', 'net'\] of type list"),
    ((None, XOR_X, XOR_Y), TypeError, r"net must be a tinynet Network, got None"),
    (("net", XOR_X[:, :1], XOR_Y), tinynet.ShapeError,
     r"X must have 2 columns \(the network's input size\), got shape \(4, 1\)"),
    (("net", XOR_X, XOR_Y[:3]), tinynet.ShapeError,
     r"X and y must have the same number of samples, got X \(4, 2\) and y \(3, 1\)"),
    (("net", [[0.0, np.inf]], [[1.0]]), ValueError, r"X must be finite, got inf at index \(0, 1\)"),
    (("net", XOR_X, XOR_Y, 0.0), ValueError, r"eps must be a finite number > 0.0, got 0.0"),
    (("net", XOR_X, XOR_Y, "1e-6"), TypeError, r"eps must be a real number, got '1e-6' of type str"),
    (("net", XOR_X, XOR_Y, 1e-6, -1), ValueError,
     r"tolerance must be a finite number > 0.0, got -1.0"),
    ((nan_weight(), XOR_X, XOR_Y), ValueError,
     r"net's parameters must be finite, got layer 1 W\[0, 1\] = nan"),
], ids=["list", "None", "X columns", "y rows", "X inf", "eps 0", "eps str", "tolerance", "nan W"])
def test_bad_inputs_name_the_argument(arguments, error, message):
    if isinstance(arguments[0], str):
        arguments = (tinynet.mlp([2, 2, 2, 1]), *arguments[1:])
    with pytest.raises(error, match=message):
        gradcheck(*arguments)


@pytest.mark.parametrize("loss, output", [("mse", "sigmoid"), ("bce", "sigmoid"),
                                          ("huber(delta=0.3)", "identity"), (BCE(), "tanh01")])
def test_every_built_in_loss_checks_through_its_own_gradient(loss, output):
    """BCE on a sigmoid output starts backward from dL/dz (gradient_through_sigmoid); on any
    other output in [0, 1] from dL/dŷ."""
    rng = np.random.default_rng(3)
    net = tinynet.mlp([2, 3, 1], activation="tanh", output="sigmoid", seed=3, bias_init="normal")
    if output == "tanh01":
        net.layers[-1].activation = HalfTanh()
    elif output == "identity":
        net = tinynet.mlp([2, 3, 1], activation="tanh", output="identity", seed=3)
    X, y = rng.normal(size=(5, 2)), rng.uniform(size=(5, 1))
    report = gradcheck(net, X, y, loss=loss)
    assert report.passed, str(report)
    name = loss if isinstance(loss, str) else repr(loss)
    assert report.objective == name and f"loss {name} " in str(report).splitlines()[0]
    assert report.loss == tinynet.losses.get_loss(loss).value(net.forward(X), y)


@dataclass(frozen=True, repr=False)
class HalfTanh(Tanh):
    """(1 + tanh z) / 2, a sigmoid in all but name: BCE reaches it through dL/dŷ."""

    name = "half_tanh"
    bounds = (0.0, 1.0)

    def forward_and_derivative(self, z):
        t = np.tanh(z)
        return 0.5 + 0.5 * t, 0.5 * (1.0 - t * t)


@dataclass(frozen=True, repr=False)
class BatchlessBCE(BCE):
    """BCE whose gradient through the sigmoid misses its 1/B."""

    name = "batchless_bce"

    def value_and_gradient(self, y_hat, y, batch):
        return BCE.value_and_gradient(self, y_hat, y, batch)

    def gradient_through_sigmoid(self, y_hat, y, batch):
        return y_hat - y


@dataclass(frozen=True, repr=False)
class DoubledHuber(Huber):
    """A Huber loss whose gradient is twice its value's slope."""

    name = "doubled_huber"

    def value_and_gradient(self, y_hat, y, batch):
        term, gradient = Huber.value_and_gradient(self, y_hat, y, batch)
        return term, 2.0 * gradient


@pytest.mark.parametrize("loss", [BatchlessBCE(), DoubledHuber()], ids=repr)
def test_a_loss_gradient_that_disagrees_with_its_value_fails(loss):
    X, y = tinynet.data.xor()
    net = tinynet.mlp([2, 3, 1], activation="tanh", output="sigmoid", seed=1)
    report = gradcheck(net, X, y, loss=loss)
    assert report.failed and "result: FAILED" in str(report)
    assert not gradcheck(net, X, y, loss=type(loss).__mro__[1]()).failed  # its parent passes


def test_a_loss_outside_its_bounds_is_refused_as_in_training():
    X, y = tinynet.data.xor()
    with pytest.raises(ValueError, match="loss 'bce' needs outputs in \\[0, 1\\], but the output "
                                         "layer's activation identity"):
        gradcheck(tinynet.mlp([2, 2, 1], output="identity"), X, y, loss="bce")
    with pytest.raises(ValueError, match="unknown loss 'mae'"):
        gradcheck(tinynet.mlp([2, 2, 1]), X, y, loss="mae")


def test_the_rounding_estimate_is_the_documented_one_for_mse():
    """S = (1/B) Σ |ℓ| + Σ |dL/dŷ| |ŷ| is, for MSE, L + (2/B) Σ |ŷ - y| |ŷ|, as before."""
    net, X, y = tanh_then_identity()
    report = gradcheck(net, X, y)
    eps, u = report.eps, np.finfo(np.float64).eps
    W = net.layers[0].W
    saved = W[0, 0]

    def output_at(value):
        W[0, 0] = value
        y_hat = net.forward(X)
        W[0, 0] = saved
        return y_hat

    def s_at(value):
        y_hat = output_at(value)
        return tinynet.losses.mse(y_hat, y) + 2.0 * float(np.sum(np.abs(y_hat - y) *
                                                                 np.abs(y_hat))) / len(y)

    n = report.arrays["layer 0 W"].numerical[0, 0]
    half = (tinynet.losses.mse(output_at(saved + eps / 2), y) -
            tinynet.losses.mse(output_at(saved - eps / 2), y)) / eps
    expected = 4.0 / 3.0 * abs(n - half) + u * (s_at(saved + eps) + s_at(saved - eps)) / (2 * eps)
    np.testing.assert_allclose(report.arrays["layer 0 W"].numerical_error[0, 0], expected,
                               rtol=1e-9)
