import ast
import math
import warnings
from dataclasses import dataclass

import numpy as np
import pytest

import tinynet
from tinynet.activations import Activation, LeakyReLU, evaluate, get_activation
from tinynet.compiled import kit
from tinynet.losses import get_loss
from tinynet.packing import layout
from tinynet.validation import UnknownNameError

from helpers import ELEMENT_WISE, Scaled, relative_error

ALL = [get_activation(name, alpha=0.1) for name in ELEMENT_WISE]


@pytest.mark.parametrize("act", ALL, ids=repr)
def test_derivative_matches_central_difference(act):
    z = np.random.default_rng(0).normal(0, 2, size=50)
    z = z[np.abs(z) > 1e-3]  # away from the ReLU kink
    h = 1e-6
    numeric = (act.forward(z + h) - act.forward(z - h)) / (2 * h)
    assert relative_error(act.derivative(z), numeric) < 1e-8


@pytest.mark.parametrize("act", ALL, ids=repr)
def test_forward_shape_and_dtype(act):
    z = np.arange(-6, 6, dtype=np.float64).reshape(3, 4)
    assert act.forward(z).shape == (3, 4) and act.forward(z).dtype == np.float64
    assert act.derivative(z).shape == (3, 4)


def test_known_values():
    z = np.array([-2.0, 0.0, 3.0])
    np.testing.assert_array_equal(get_activation("relu").forward(z), [0.0, 0.0, 3.0])
    np.testing.assert_array_equal(get_activation("leaky_relu").forward(z), [-0.02, 0.0, 3.0])
    np.testing.assert_array_equal(get_activation("identity").forward(z), z)
    np.testing.assert_allclose(get_activation("tanh").forward(z), np.tanh(z))
    np.testing.assert_allclose(get_activation("sigmoid").forward(z), 1 / (1 + np.exp(-z)),
                               rtol=1e-15)


def test_derivative_conventions_at_zero():
    zero = np.array([0.0])
    assert get_activation("relu").derivative(zero)[0] == 0.0
    assert get_activation("leaky_relu", alpha=0.3).derivative(zero)[0] == 0.3
    assert get_activation("sigmoid").derivative(zero)[0] == 0.25
    assert get_activation("tanh").derivative(zero)[0] == 1.0


def test_sigmoid_is_overflow_safe_with_exact_limits():
    sigmoid = get_activation("sigmoid")
    z = np.array([-1e4, -800.0, 800.0, 1e4])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = sigmoid.forward(z)
        slope = sigmoid.derivative(z)
    assert out[0] == 0.0 and out[-1] == 1.0
    assert np.all(slope == 0.0)


def test_leaky_relu_with_alpha_zero_is_relu():
    z = np.random.default_rng(1).normal(size=100)
    np.testing.assert_array_equal(LeakyReLU(0.0).forward(z), get_activation("relu").forward(z))
    np.testing.assert_array_equal(LeakyReLU(0.0).derivative(z),
                                  get_activation("relu").derivative(z))


def test_unknown_name_lists_valid_names_and_suggests():
    with pytest.raises(UnknownNameError, match=r"'leaky_rlu'.*identity.*did you mean 'leaky_relu'"):
        get_activation("leaky_rlu")


def test_repr_and_equality():
    assert repr(get_activation("leaky_relu", alpha=0.2)) == "leaky_relu(alpha=0.2)"
    assert repr(get_activation("sigmoid")) == "sigmoid"
    assert get_activation("leaky_relu", 0.2) == LeakyReLU(0.2) != LeakyReLU(0.3)


def test_sigmoid_derivative_keeps_precision_in_the_tails():
    z = np.array([30.0, -40.0])
    exact = np.exp(-np.abs(z)) / (1 + np.exp(-np.abs(z))) ** 2
    np.testing.assert_allclose(get_activation("sigmoid").derivative(z), exact, rtol=1e-14)
    assert get_activation("sigmoid").derivative(np.array([40.0]))[0] > 0


@pytest.mark.parametrize("make,message", [
    (lambda: Scaled(True), r"^Scaled's beta must be a finite number, got True of type bool$"),
    (lambda: LeakyReLU(math.nan), r"^LeakyReLU's alpha must be a finite number, got nan$"),
    (lambda: LeakyReLU(-0.5), r"^LeakyReLU's alpha must be a finite number >= 0.0, got -0.5$"),
], ids=["bool", "leaky nan", "leaky negative"])
def test_an_activation_parameter_must_be_a_finite_number(make, message):
    """Refused when the activation is made: NaN would train to NaN, a bool is no slope (nan,
    inf, text and 10**400 are rows of tests/test_bad_inputs.py's catalogue)."""
    with pytest.raises(ValueError, match=message):
        make()
    assert Scaled(2).beta == 2 and Scaled(np.float32(0.5)).beta == 0.5  # numbers as given


def test_leaky_relu_is_written_as_a_choice_between_z_and_alpha_z():
    """φ(z) picks z or α z, the product computed beside the comparison, rather than z times
    the slope, which waits on the comparison: a single fit's steps are one chain of dependent
    operations, and this was a multiply of it per hidden layer (the same numbers either way:
    z · 1 is z)."""
    net = tinynet.mlp([2, 2, 1], seed=0)
    maths = kit.maths_of(net, get_loss("mse"))
    lines, value, slope = kit.activation_lines(maths, int(layout(net).kinds[0]), "z", ["alpha"],
                                               "")
    chosen = ast.parse(value, mode="eval").body
    assert isinstance(chosen, ast.IfExp)
    assert {ast.unparse(chosen.body), ast.unparse(chosen.orelse)} == {"z", "alpha * z"}


@dataclass(frozen=True, repr=False)
class PhiAlone(Activation):
    """A forward_and_derivative that returns φ alone: on a 2-member ensemble's Z (2, B, n)
    the NumPy backend unpacked the members axis as (φ, φ') and trained on it (issue 41)."""

    name = "phi_alone"

    def forward_and_derivative(self, z):
        return 2.0 * z


def test_evaluate_passes_pairs_through_and_refuses_anything_else():
    z = np.linspace(-2.0, 2.0, 12).reshape(2, 3, 2)  # a 2-member ensemble's Z
    for act in ALL:
        A, D = evaluate(act, z)
        np.testing.assert_array_equal(A, act.forward(z))
        np.testing.assert_array_equal(np.broadcast_to(D, z.shape), act.derivative(z))
    assert evaluate(get_activation("identity"), z)[1] == 1.0  # a constant stays a number
    with pytest.raises(ValueError, match=r"^activation PhiAlone's forward_and_derivative must "
                                         r"return \(φ\(z\), φ'\(z\)\), two values each "
                                         r"broadcastable to z's shape \(2, 3, 2\), got 1 value "
                                         r"\(shape \(2, 3, 2\)\)$"):
        evaluate(PhiAlone(), z)
    wide = Scaled(2.0)
    object.__setattr__(wide, "beta", np.ones(5))  # a derivative of the wrong shape
    with pytest.raises(ValueError, match=r"got 2 values \(shape \(2, 3, 5\), shape \(5,\)\)"):
        evaluate(wide, z[..., :1])


@pytest.mark.parametrize("backend", ["numpy", "numba"])
def test_an_activation_returning_phi_alone_is_refused_on_both_backends(backend):
    X, y = tinynet.data.xor()
    members = [tinynet.mlp([2, 3, 1], activation=PhiAlone(), init="lecun_normal", seed=seed)
               for seed in (0, 1)]
    before = [layer.W.copy() for net in members for layer in net.layers]
    expected = {"numpy": r"activation PhiAlone's forward_and_derivative must return \(φ\(z\), "
                         r"φ'\(z\)\), two values .* got 1 value \(shape \(2, 1, 3\)\)",
                "numba": r"backend 'numba' cannot run .*PhiAlone.*return 2 values, not 1 and 1"
                }[backend]
    with pytest.raises(ValueError, match=expected):
        tinynet.fit_ensemble(members, X, y, epochs=2, lr=0.1, backend=backend)
    after = [layer.W for net in members for layer in net.layers]
    assert all(np.array_equal(a, b) for a, b in zip(before, after))
