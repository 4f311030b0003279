"""tinynet.definitions.check (issue 41): every registered definition against finite differences
and its own contract, on both backends; a wrong φ', a loss gradient without its 1/B and an
optimizer that drops its state each refused in one line by check and by register."""

import doctest
import importlib.util
import re
from dataclasses import dataclass

import numpy as np
import pytest

from tinynet import activations, definitions, losses, optimizers
from tinynet.activations import ACTIVATIONS, Activation, ReLU, get_activation
from tinynet.compiled import render
from tinynet.compiled.render import NotCompilableError
from tinynet.definitions import ACTIVATION_GRID, RTOL, DefinitionError, check
from tinynet.losses import BCE, LOSSES, Loss
from tinynet.maths import exp, where
from tinynet.optimizers import OPTIMIZERS, Optimizer

from helpers import ROOT
from helpers import Softplus as NumpySoftplus


pytestmark = pytest.mark.usefixtures("restore_registries")  # tests/conftest.py


REGISTERED = [*(get_activation(name, alpha=0.1) for name in ACTIVATIONS),
              *(cls() for cls in LOSSES.values()), *(cls() for cls in OPTIMIZERS.values())]


@pytest.mark.slow  # compiles each definition's scalar function with numba
@pytest.mark.parametrize("definition", REGISTERED, ids=repr)
def test_every_registered_definition_passes_on_both_backends(definition):
    report = check(definition)
    assert report.backends == ("numpy", "numba")
    assert report.ulps is not None and report.ulps <= definitions.ULPS
    # no derivative to hold to differences: an optimizer, and a softmax (checked through
    # cross-entropy's gradient_through_softmax)
    assert (report.worst is None) == (isinstance(definition, Optimizer)
                                      or getattr(definition, "over_units", False))
    assert report.worst is None or report.worst <= RTOL
    assert repr(report).startswith(f"check({report.definition}): passed on numpy, numba\n  ")
    assert f"({type(definition).__qualname__})" in report.definition


def test_a_class_is_checked_by_its_default_instance_and_numpy_alone_on_request():
    report = check(losses.Huber, backends=("numpy",))
    assert report.definition == "loss huber(delta=1.0) (Huber)" and report.ulps is None
    assert "numba" not in repr(report)
    with pytest.raises(ValueError, match=r"backends must name 'numpy' and/or 'numba', got "
                                         r"\('cuda',\)"):
        check(losses.Huber, backends=("cuda",))
    with pytest.raises(TypeError, match="subclass of Activation, Loss or Optimizer"):
        check(np.tanh)


def test_the_grid_holds_zero_its_neighbours_and_large_values():
    for z in (0.0, 1e-300, -1e-300, 1e-12, -1e-12, 20.0, -40.0, 700.0, -700.0):
        assert z in ACTIVATION_GRID


@dataclass(frozen=True, repr=False)
class AbsSigmoid(Activation):
    """A sigmoid written with σ(−|z|) as φ' in place of e / (1 + e)²: it trains, on both
    backends alike."""

    name = "abs_sigmoid"

    def forward_and_derivative(self, z):
        e = exp(-abs(z))
        d = 1.0 + e
        return where(z >= 0, 1.0, e) / d, e / d


def one_line(error: pytest.ExceptionInfo, *parts: str) -> str:
    message = str(error.value)
    assert "\n" not in message
    for part in parts:
        assert part in message, message
    return message


@pytest.mark.parametrize("backends", [("numpy",), ("numpy", "numba")])
def test_a_wrong_derivative_is_refused_with_the_point_and_the_numbers(backends):
    with pytest.raises(DefinitionError) as error:
        check(AbsSigmoid(), backends=backends)
    message = one_line(error, "activation abs_sigmoid (AbsSigmoid)",
                       "AbsSigmoid.forward_and_derivative's φ'(z) is 0.4999", "at z = ",
                       "central differences give 0.2499", "relative error 0.5")
    assert "tolerance 1e-06" in message
    with pytest.raises(DefinitionError, match="AbsSigmoid.forward_and_derivative's φ'"):
        activations.register(AbsSigmoid)
    assert "abs_sigmoid" not in ACTIVATIONS


@dataclass(frozen=True, repr=False)
class Unbatched(Loss):
    """The mean squared error with a gradient missing its 1/B."""

    name = "unbatched"

    def value_and_gradient(self, y_hat, y, batch):
        diff = y_hat - y
        return diff * diff, 2.0 * diff


def test_a_loss_gradient_without_its_one_over_b_is_refused_as_such():
    with pytest.raises(DefinitionError) as error:
        check(Unbatched)
    one_line(error, "loss unbatched (Unbatched): Unbatched.value_and_gradient's gradient "
             "times batch is 4 times the derivative of the term at batch 4",
             "without the 1/B of the batch average")
    with pytest.raises(DefinitionError, match="without the 1/B"):
        losses.register(Unbatched)
    assert "unbatched" not in LOSSES


def test_a_gradient_through_the_sigmoid_without_its_one_over_b_is_refused():
    @dataclass(frozen=True, repr=False)
    class Through(BCE):
        name = "through"

        def value_and_gradient(self, y_hat, y, batch):
            return BCE.value_and_gradient(self, y_hat, y, batch)

        def gradient_through_sigmoid(self, y_hat, y, batch):
            return y_hat - y

    with pytest.raises(DefinitionError) as error:
        check(Through, backends=("numpy",))
    one_line(error, "Through.gradient_through_sigmoid's gradient times batch is 4 times",
             "without the 1/B")


def test_a_term_that_depends_on_the_batch_is_refused():
    @dataclass(frozen=True, repr=False)
    class Averaged(Loss):
        name = "averaged"

        def value_and_gradient(self, y_hat, y, batch):
            diff = y_hat - y
            return diff * diff / batch, 2.0 * diff / batch

    with pytest.raises(DefinitionError) as error:
        check(Averaged, backends=("numpy",))
    one_line(error, "Averaged.value_and_gradient's term depends on batch: at y_hat = -5.0, "
             "y = -1.0 it is 16.0 at batch 1 and 4.0 at batch 4")


def test_a_wrong_gradient_away_from_the_batch_is_refused_at_a_point():
    @dataclass(frozen=True, repr=False)
    class Halved(Loss):
        name = "halved"

        def value_and_gradient(self, y_hat, y, batch):
            diff = y_hat - y
            return diff * diff, diff / batch

    with pytest.raises(DefinitionError) as error:
        check(Halved, backends=("numpy",))
    one_line(error, "gradient × batch (batch 1) is", "at y_hat = ", ", y = ",
             "relative error 0.5")


@dataclass(frozen=True, repr=False)
class Forgetful(Optimizer):
    """Momentum that returns the velocity it was given, not the new one: the state stays 0,
    and it trains as plain SGD."""

    name = "forgetful"
    state = ("velocity",)
    momentum: float = 0.9

    def update(self, p, g, lr, velocity):
        velocity_next = self.momentum * velocity + g
        return p - lr * velocity_next, velocity


@dataclass(frozen=True, repr=False)
class Stateless(Optimizer):
    """Momentum whose update forgets to return its state at all."""

    name = "stateless"
    state = ("velocity",)
    momentum: float = 0.9

    def update(self, p, g, lr, velocity):
        return p - lr * (self.momentum * velocity + g)


def test_an_optimizer_that_drops_its_state_is_refused():
    with pytest.raises(DefinitionError) as error:
        check(Forgetful)
    one_line(error, "optimizer forgetful(momentum=0.9) (Forgetful): Forgetful.update returns "
             "its state velocity as it came in three steps from 0", "stay 0")
    with pytest.raises(DefinitionError) as error:
        optimizers.register(Stateless)
    one_line(error, "Stateless.update must return 2 value(s) (p, velocity), got 1")
    assert "forgetful" not in OPTIMIZERS and "stateless" not in OPTIMIZERS


def test_an_ascent_and_a_step_without_learning_rate_are_refused():
    @dataclass(frozen=True, repr=False)
    class Ascent(Optimizer):
        name = "ascent"

        def update(self, p, g, lr):
            return p + lr * g

    @dataclass(frozen=True, repr=False)
    class Drifting(Optimizer):
        name = "drifting"

        def update(self, p, g, lr):
            return p - (lr + 1e-9) * g

    with pytest.raises(DefinitionError) as error:
        check(Ascent, backends=("numpy",))
    one_line(error, "Ascent.update step 1 (lr = 0.001) moves p = -1.5, g = 0.5 by 0.0004999",
             "a descent step moves p against its gradient")
    with pytest.raises(DefinitionError) as error:
        check(Drifting, backends=("numpy",))
    one_line(error, "Drifting.update moves p = ", "at lr = 0")


@dataclass(frozen=True, repr=False)
class Alone(Activation):
    """Returns φ alone: on a 2-member ensemble's (2, B, n) the members axis unpacks as a pair."""

    name = "alone"

    def forward_and_derivative(self, z):
        return 2.0 * z


def test_an_activation_returning_phi_alone_is_refused():
    with pytest.raises(DefinitionError) as error:
        check(Alone)
    one_line(error, "Alone.forward_and_derivative must return 2 value(s) (φ(z), φ'(z)), got 1")


def test_kinks_are_told_by_their_one_sided_slopes():
    @dataclass(frozen=True, repr=False)
    class HardTanh(Activation):  # kinks at ±1, on the grid: 2
        name = "hard_tanh"

        def forward_and_derivative(self, z):
            inside = abs(z) < 1.0
            return where(inside, z, where(z > 0, 1.0, -1.0)), where(inside, 1.0, 0.0)

    @dataclass(frozen=True, repr=False)
    class HalfReLU(ReLU):  # relu'(0) = 1/2: a subgradient, as good as the left slope
        name = "half_relu"

        def forward_and_derivative(self, z):
            return where(z > 0, z, 0.0), where(z > 0, 1.0, where(z < 0, 0.0, 0.5))

    @dataclass(frozen=True, repr=False)
    class SteepReLU(ReLU):  # relu'(0) = 2: no slope of relu's
        name = "steep_relu"

        def forward_and_derivative(self, z):
            return where(z > 0, z, 0.0), where(z > 0, 1.0, where(z < 0, 0.0, 2.0))

    assert "at 2 kink(s)" in repr(check(HardTanh, backends=("numpy",)))
    check(HalfReLU, backends=("numpy",))
    with pytest.raises(DefinitionError) as error:
        check(SteepReLU, backends=("numpy",))
    one_line(error, "φ'(z) is 2 at z = 0.0, a kink (one-sided differences 0 and 1)")


def test_what_is_not_element_wise_or_finite_is_refused():
    @dataclass(frozen=True, repr=False)
    class Centred(Activation):  # subtracts the mean of whatever it is given
        name = "centred"

        def forward(self, z):
            return z - np.mean(z)

        def derivative(self, z):
            return np.ones_like(z)

    @dataclass(frozen=True, repr=False)
    class Exploding(Activation):
        name = "exploding"

        def forward_and_derivative(self, z):
            e = exp(2.0 * z)
            return e, 2.0 * e

    with pytest.raises(DefinitionError) as error:
        check(Centred, backends=("numpy",))
    one_line(error, "Centred.forward_and_derivative is not element-wise")
    with pytest.raises(DefinitionError) as error:
        check(Exploding, backends=("numpy",))
    one_line(error, "value 1 is inf at z = 700.0: it must stay finite")


def test_numpy_only_definitions_pass_on_numpy_and_are_refused_by_name_on_numba():
    report = check(NumpySoftplus, backends=("numpy",))
    assert report.worst <= RTOL
    with pytest.raises(NotCompilableError, match=r"backend 'numba' cannot run activation "
                                                 r"softplus \(Softplus\)"):
        check(NumpySoftplus)
    assert activations.register(NumpySoftplus) is NumpySoftplus  # register checks on NumPy


def test_the_compiled_values_are_held_to_numpys(monkeypatch):
    compiled = render.scalar_function

    def off_by_a_little(definition, names):
        function = compiled(definition, names)
        return lambda *arguments: tuple(value * (1 + 1e-12) if i == 1 else value
                                        for i, value in enumerate(function(*arguments)))

    monkeypatch.setattr(render, "scalar_function", off_by_a_little)
    with pytest.raises(DefinitionError) as error:
        check(get_activation("tanh"))
    one_line(error, "Tanh.forward_and_derivative compiled gives", "for value 2 at (",
             "where NumPy gives", "ulp apart (allowed 4)")


def test_the_contributing_page_checks_and_registers_its_definitions(tmp_path):
    """docs/contributing.md's ``pycon`` blocks, as doctests, after its ``python`` blocks (as a
    module: the compiled backend reads a definition's source from its file)."""
    text = (ROOT / "docs" / "contributing.md").read_text()
    (tmp_path / "contributing_page.py").write_text(
        "\n\n".join(re.findall(r"```python\n(.*?)```", text, re.DOTALL)))
    spec = importlib.util.spec_from_file_location("contributing_page",
                                                  tmp_path / "contributing_page.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    examples = "\n".join(re.findall(r"```pycon\n(.*?)```", text, re.DOTALL))
    test = doctest.DocTestParser().get_doctest(examples, dict(vars(module)), "contributing.md",
                                               "docs/contributing.md", 0)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    failures, tried = runner.run(test, out=lambda text: pytest.fail(text))
    assert failures == 0 and tried >= 8
    assert ACTIVATIONS["softplus"] is module.Softplus and OPTIMIZERS["rmsprop"] is module.RMSprop
