"""Signal propagation: measured second moments against the theory, and the reports."""

import math

import numpy as np
import pytest

import tinynet
from tinynet.diagnostics import propagate, stream

# Non-square widths, so that a fan_in/fan_out swap in the theory shows.
SIZES = [100, 150, 80, 120, 90, 110, 100]


@pytest.mark.parametrize("activation", ["identity", "relu"])
@pytest.mark.parametrize("init", ["lecun_normal", "he_normal"])
def test_theory_predicts_the_second_moments(activation, init):
    # At initialization the predictions are exact in expectation over the weights (forward:
    # E[z²] = fan_in Var(w) E[a²] holds given the previous layer, and ReLU keeps exactly half
    # of a symmetric z's second moment). One network's ratio measured/predicted scatters
    # around 1 (sd up to about 0.4 after 6 ReLU layers of width ~100), so we average 30
    # networks and allow 4 standard errors of that mean, estimated from the 30 values.
    X = np.random.default_rng(2024).normal(size=(200, SIZES[0]))
    ratios = {"z": [], "a": [], "grad_a": [], "grad_w": [], "input_gradient": []}
    for seed in range(30):
        net = tinynet.mlp(SIZES, activation=activation, output=activation, init=init, seed=seed)
        report = propagate(net, X, seed=seed)
        deepest, first = report.layers[-1], report.layers[0]
        ratios["z"].append(deepest.z.ratio)
        ratios["a"].append(deepest.a.ratio)
        ratios["grad_a"].append(first.grad_a.ratio)
        ratios["grad_w"].append(first.grad_w.ratio)
        ratios["input_gradient"].append(report.input_gradient.ratio)
    for name, values in ratios.items():
        values = np.array(values)
        standard_error = values.std(ddof=1) / math.sqrt(len(values))
        assert standard_error < 0.1, name
        assert abs(values.mean() - 1) < 4 * standard_error, (name, values.mean(), standard_error)


def test_predictions_follow_the_formulas():
    net = tinynet.mlp([4, 6, 3], activation="leaky_relu", output="identity", init="he_leaky",
                      alpha=0.2, seed=0)
    X = np.full((5, 4), 2.0)  # E[x²] = 4
    report = propagate(net, X, output_gradient=np.ones((5, 3)))
    first, second = report.layers
    var1 = 2 / (1.04 * 4)
    assert first.weight_variance == pytest.approx(var1)
    assert first.z.predicted == pytest.approx(4 * var1 * 4)                 # fan_in Var E[x²]
    assert first.a.predicted == pytest.approx(1.04 / 2 * first.z.predicted)  # leaky keeps (1+α²)/2
    var2 = 2 / (1.0001 * 6)  # he_leaky on the identity output layer: alpha 0.01
    assert second.z.predicted == pytest.approx(6 * var2 * first.a.predicted)
    assert second.grad_a.predicted == 1.0
    assert first.grad_a.predicted == pytest.approx(3 * var2 * 1.0)          # fan_out Var E[g²]
    assert report.input_gradient.predicted == pytest.approx(
        6 * var1 * first.grad_a.predicted * 1.04 / 2)
    assert second.grad_w.predicted == pytest.approx(1.0 * first.a.predicted)


@pytest.mark.parametrize("activation,bias", [("relu", 1.0), ("sigmoid", -2.0), ("tanh", 0.5)])
def test_biases_shift_each_unit(activation, bias):
    # Unit j's z is N(b_j, s²), not N(0, s² + b²): with wide layers (width 300, so one
    # network's ratio is within a few per cent of its expectation) the predictions hold to 10 %.
    X = np.random.default_rng(2024).normal(size=(400, 300))
    net = tinynet.mlp([300, 300, 300], activation=activation, output=activation,
                      init="lecun_normal", bias_init=bias, seed=3)
    for layer in propagate(net, X).layers:
        for moment in (layer.z, layer.a, layer.grad_a):
            assert moment.ratio == pytest.approx(1.0, abs=0.1)


def test_quadrature_holds_for_any_variance():
    from tinynet.init.gains import gaussian_mean
    tanh, relu = tinynet.get_activation("tanh"), tinynet.get_activation("relu")

    def brute(f, variance, mean=0.0):  # a fine trapezoid over ±12 standard deviations
        std = math.sqrt(variance)
        z = np.linspace(mean - 12 * std, mean + 12 * std, 2_000_001)
        density = np.exp(-0.5 * ((z - mean) / std) ** 2) / (std * math.sqrt(2 * math.pi))
        return np.trapezoid(f(z) * density, z)

    slope = lambda z: tanh.derivative(z) ** 2  # a peak of width 1 on a wide Gaussian
    for variance in [0.01, 1.0, 100.0, 1e6]:
        assert gaussian_mean(slope, variance) == pytest.approx(brute(slope, variance), rel=1e-6)
    # the peak's area over the Gaussian's height, for a variance far beyond any grid
    assert gaussian_mean(slope, 1e60) == pytest.approx((4 / 3) / math.sqrt(2 * math.pi * 1e60),
                                                       rel=1e-8)
    assert gaussian_mean(lambda z: relu.forward(z) ** 2, 1e-6, mean=50.0) == pytest.approx(2500.0)
    assert gaussian_mean(lambda z: relu.forward(z) ** 2, 3.0) == pytest.approx(1.5, rel=1e-12)
    assert math.isnan(gaussian_mean(slope, math.inf))


def test_weight_gradient_second_moment_is_the_per_sample_mean():
    net = tinynet.mlp([5, 4, 3], activation="tanh", output="identity", seed=1)
    X = np.random.default_rng(9).normal(size=(7, 5))
    gradient = np.random.default_rng(10).normal(size=(7, 3))
    report = propagate(net, X, output_gradient=gradient)
    brute = []
    for b in range(7):  # each sample's own backward pass, dW squared and averaged
        net.forward(X[b:b + 1])
        net.backward(gradient[b:b + 1])
        brute.append([np.mean(layer.dW ** 2) for layer in net.layers])
    np.testing.assert_allclose([layer.grad_w.measured for layer in report.layers],
                               np.mean(brute, axis=0), rtol=1e-12)


def test_sigmoid_saturation_and_dead_relu_fractions():
    X = np.random.default_rng(1).normal(size=(300, 50))
    wild = propagate(tinynet.mlp([50, 50, 50], activation="sigmoid", output="sigmoid",
                                 init="normal(std=3.0)", seed=0), X)
    calm = propagate(tinynet.mlp([50, 50, 50], activation="sigmoid", output="sigmoid",
                                 init="xavier_normal", seed=0), X)
    assert wild.layers[0].saturated > 0.5 > calm.layers[0].saturated
    assert wild.layers[0].dead is None
    dead = tinynet.mlp([50, 50, 1], activation="relu", output="identity", init="he_normal",
                       bias_init=-100.0, seed=0)
    assert propagate(dead, X).layers[0].dead == 1.0


def test_user_initializer_works_without_extra_code(restore_registry):
    @tinynet.init.register("quarter_normal")
    def quarter_normal(shape, rng):
        return rng.normal(0.0, 0.25, size=shape)

    # (data from another seed than the weights: the same stream would make W a copy of X)
    net = tinynet.mlp([80, 80, 80], activation="identity", output="identity",
                      init="quarter_normal", seed=0)
    report = propagate(net, np.random.default_rng(2024).normal(size=(100, 80)))
    assert report.layers[0].weight_variance == pytest.approx(np.mean(net.layers[0].W ** 2))
    assert report.layers[0].z.ratio == pytest.approx(1.0, abs=0.2)
    assert report.layers[1].grad_a.ratio == pytest.approx(1.0, abs=0.2)


def test_report_and_plots_are_produced_headless(tmp_path):
    X = np.random.default_rng(0).normal(size=(64, 20))
    reports = {init: propagate(tinynet.mlp([20] * 6, activation="tanh", output="tanh",
                                           init=init, seed=0), X)
               for init in ["normal", "xavier_normal"]}
    text = str(reports["normal"])
    assert len(text.splitlines()) == 2 + 5 and "tanh" in text
    tinynet.plots.signal(reports, tmp_path / "signal.png", "tanh")
    tinynet.plots.histograms({"normal": [np.random.default_rng(0).normal(size=100)] * 3},
                             tmp_path / "hist.png", "histograms")
    for name in ["signal.png", "hist.png"]:
        assert (tmp_path / name).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


# --- the residual stream (issue 43) ---------------------------------------------------------

def _stream(seeds=100, blocks=4, branch=1, **arguments):
    from tinynet.diagnostics import stream
    X = np.random.default_rng(0).normal(size=(128, 2))
    return stream([tinynet.mlp([2, *[16] * (blocks + 1), 1], activation="relu",
                               init="he_normal", seed=s, branch=branch, **arguments)
                   for s in range(seeds)], X)


def _within(moment, error, allowance):
    """Measured within 4 standard errors (of the mean over the seeds: a deviation that
    sampling alone makes about once in 16,000) of the prediction, give or take ``allowance``
    of it: what the theory leaves out at width 16, stated with each use."""
    return abs(moment.measured - moment.predicted) <= 4 * error + allowance * moment.predicted


def test_the_predictions_closed_form_for_hes_relu_branch():
    """One ReLU layer of He's weights: q = m, μ_F = √(m/π) (the half-normal's mean), r = 1,
    so E[S²] = 2m + 2μ√(m/π) and the gradient doubles a block."""
    block = tinynet.Residual([tinynet.Layer(16, 16, "relu", init="he_normal")])
    moments, gradients = tinynet.diagnostics.predicted_stream(block, 2, 1.0, 0.5, 3.0)
    first = 2.0 + 2 * 0.5 * np.sqrt(1 / np.pi)
    mean = 0.5 + np.sqrt(1 / np.pi)
    assert moments[1] == pytest.approx(first, rel=1e-9)
    assert moments[2] == pytest.approx(2 * first + 2 * mean * np.sqrt(first / np.pi), rel=1e-9)
    assert gradients == pytest.approx([12.0, 6.0, 3.0], rel=1e-9)


# allowances: x + F(x) 15 % (the cross term as a product of means, exact only for wide
# layers); the pre-norm 3 % (a branch's pre-activation taken as Gaussian overstates a ReLU's
# mean); post-norm and DeepNet 1e-4 (a LayerNorm's output, 1 up to ε)
@pytest.mark.parametrize("arguments,allowance", [(dict(residual=True), 0.15),
                                                 (dict(residual=True, norm="pre"), 0.03),
                                                 (dict(residual=True, norm="post"), 1e-4),
                                                 (dict(residual="deepnet", norm="post",
                                                       branch=2), 1e-4)])
def test_the_streams_second_moment_is_predicted(arguments, allowance):
    report = _stream(**arguments)
    assert len(report.positions) == 5 and report.seeds == 100
    for position in report.positions[1:]:       # position 0 is where the prediction starts
        assert _within(position.x, position.x_error, allowance), position


def test_rezero_and_fixup_start_as_the_identity():
    rezero, fixup = _stream(residual="rezero"), _stream(residual="fixup", branch=2)
    for report in (rezero, fixup):
        for position in report.positions:
            assert position.x.measured == report.positions[0].x.measured == position.x.predicted
            assert position.grad.measured == report.positions[-1].grad.measured


@pytest.mark.parametrize("arguments,allowance,positions", [
    (dict(residual="deepnet", norm="post", branch=2), 0.01, slice(1, None)),
    (dict(residual=True), 0.1, slice(-3, -1))])
def test_the_gradient_is_predicted_where_the_theory_holds(arguments, allowance, positions):
    """DeepNet's below the first block (1 %: the LayerNorm's (n − 2)/n is exact for a random
    gradient); x + F(x)'s through the last two blocks only (10 %: the theory leaves out the
    correlation between the skip's gradient and the branch's, which compounds with depth)."""
    report = _stream(blocks=8, **arguments)
    for position in report.positions[positions]:
        assert _within(position.grad, position.grad_error, allowance), position


def test_the_stream_refuses_what_its_theory_does_not_cover():
    from tinynet.diagnostics import stream
    with pytest.raises(ValueError, match="stream follows residual blocks, and networks"):
        stream([tinynet.mlp([2, 4, 1])], np.zeros((2, 2)))
    biased = tinynet.mlp([2, 4, 4, 1], residual=True, bias_init=0.5)
    with pytest.raises(ValueError, match="block 0 has biases other than 0"):
        stream([biased], np.ones((2, 2)))
    mixed = tinynet.Network([tinynet.Layer(2, 4), tinynet.Residual([tinynet.Layer(4, 4)]),
                             tinynet.Residual([tinynet.Layer(4, 4)], norm="pre"),
                             tinynet.Layer(4, 1)])
    with pytest.raises(ValueError, match="stream predicts a run of alike blocks"):
        stream([mixed], np.ones((2, 2)))


def test_a_layernorm_given_constant_rows_has_no_predicted_gradient_and_does_not_raise():
    """Zero weights make every row entering the blocks constant: the theory divides by its
    variance, so the gradient's prediction is NaN, and the stream is still measured."""
    X = np.random.default_rng(0).normal(size=(16, 2))
    for norm in ("pre", "post"):
        net = tinynet.mlp([2, 4, 4, 4, 1], residual=True, norm=norm, init="zeros", seed=0)
        report = stream([net], X)
        assert math.isnan(report.positions[0].grad.predicted)
        assert report.positions[-1].x.measured == 0.0
