"""register() for activations, losses and optimizers (issue 41): a user's class, registered,
is found by name wherever a name is read (get_*, specs, fit), and what would train wrongly or
not at all is refused in one line naming the class."""

from dataclasses import dataclass

import numpy as np
import pytest

import tinynet
from tinynet import activations, losses, optimizers
from tinynet.activations import Activation, LeakyReLU, Sigmoid, get_activation
from tinynet.definitions import DefinitionError
from tinynet.init.registry import replacing
from tinynet.losses import Loss, get_loss
from tinynet.maths import exp, log1p, sqrt, where
from tinynet.optimizers import Optimizer, get_optimizer


pytestmark = pytest.mark.usefixtures("restore_registries")  # tests/conftest.py


@dataclass(frozen=True, repr=False)
class Softplus(Activation):
    """φ(z) = log(1 + e^(βz)) / β,  φ'(z) = σ(βz)."""

    name = "softplus"
    beta: float = 1.0

    def forward_and_derivative(self, z):
        e = exp(-abs(self.beta * z))
        value = (where(z > 0, self.beta * z, 0.0) + log1p(e)) / self.beta
        return value, where(z >= 0, 1.0, e) / (1.0 + e)


@dataclass(frozen=True, repr=False)
class Quartic(Loss):
    """ℓ = scale (ŷ − y)⁴, dL/dŷ = 4 scale (ŷ − y)³ / B."""

    name = "quartic"
    scale: float = 1.0

    def value_and_gradient(self, y_hat, y, batch):
        d = y_hat - y
        return self.scale * d * d * d * d, 4.0 * self.scale * d * d * d / batch


@dataclass(frozen=True, repr=False)
class RMSprop(Optimizer):
    """PyTorch's RMSprop: v ← α v + (1 − α) g²,  p ← p − lr g / (√v + ε)."""

    name = "rmsprop"
    state = ("square_average",)
    ranges = {"alpha": (0.0, 1.0), "eps": (0.0, float("inf"))}
    alpha: float = 0.99
    eps: float = 1e-8

    def update(self, p, g, lr, square_average):
        average = self.alpha * square_average + (1.0 - self.alpha) * g * g
        return p - lr * g / (sqrt(average) + self.eps), average


def test_registered_classes_are_found_by_name_and_by_spec():
    assert activations.register(Softplus) is Softplus  # unchanged: works as a decorator
    assert losses.register(Quartic) is Quartic
    assert optimizers.register(RMSprop) is RMSprop
    assert get_activation("softplus") == Softplus()  # by name: its defaults
    assert get_loss("quartic") == Quartic() and get_loss("quartic(scale=2.5)") == Quartic(2.5)
    assert get_optimizer("rmsprop(alpha=0.9)") == RMSprop(alpha=0.9)
    assert get_optimizer(repr(RMSprop(eps=1e-6))) == RMSprop(eps=1e-6)  # repr reads back
    with pytest.raises(TypeError, match="optimizer 'rmsprop' got unknown hyperparameter.*beta"):
        get_optimizer("rmsprop(beta=0.9)")


def test_a_registered_activation_loss_and_optimizer_train_by_name():
    for register, cls in ((activations.register, Softplus), (losses.register, Quartic),
                          (optimizers.register, RMSprop)):
        register(cls)
    X, y = tinynet.data.xor()
    trained = {}
    for spelling in ("names", "instances"):
        net = tinynet.mlp([2, 3, 1], activation="softplus" if spelling == "names" else
                          Softplus(), init="lecun_normal", seed=0)
        history = net.fit(X, y, epochs=20, lr=0.05, backend="numpy",
                          loss="quartic(scale=2)" if spelling == "names" else Quartic(2.0),
                          optimizer="rmsprop" if spelling == "names" else RMSprop())
        trained[spelling] = (history.loss, net.layers[0].W)
    np.testing.assert_array_equal(trained["names"][0], trained["instances"][0])
    np.testing.assert_array_equal(trained["names"][1], trained["instances"][1])


def test_a_decorator_registers_the_class_it_decorates():
    @activations.register
    @dataclass(frozen=True, repr=False)
    class Doubled(Activation):
        name = "doubled"

        def forward_and_derivative(self, z):
            return 2.0 * z, 2.0

    assert isinstance(get_activation("doubled"), Doubled)


def test_leaky_relu_keeps_its_alpha_by_name_and_others_their_defaults():
    activations.register(Softplus)
    assert get_activation("leaky_relu", alpha=0.2) == LeakyReLU(0.2)
    assert get_activation("softplus", alpha=0.2) == Softplus()


def test_a_name_held_by_another_class_is_refused_unless_replaced():
    activations.register(Softplus)
    activations.register(Softplus)  # the class that holds it: nothing changes

    @dataclass(frozen=True, repr=False)
    class Other(Softplus):
        name = "softplus"

    with pytest.raises(ValueError, match=r"^activation 'softplus' is already registered \(class "
                       r".*Softplus\); pass replace=True to replace it with .*Other$"):
        activations.register(Other)
    assert activations.register(Other, replace=True) is Other
    assert type(get_activation("softplus")) is Other
    with replacing():  # as a cluster's worker imports a user's module again
        activations.register(Softplus)
    assert type(get_activation("softplus")) is Softplus
    with pytest.raises(ValueError, match="optimizer 'sgd' is already registered"):
        optimizers.register(type("SGD", (RMSprop,), {"name": "sgd"}))


@pytest.mark.parametrize("register, given, expected", [
    (activations.register, Sigmoid(), "takes a subclass of Activation .* got sigmoid"),
    (activations.register, Activation, "takes a subclass of Activation"),
    (losses.register, Softplus, "takes a subclass of Loss"),
    (optimizers.register, "rmsprop", "takes a subclass of Optimizer"),
], ids=["instance", "base", "wrong-kind", "text"])
def test_what_is_not_such_a_class_is_a_type_error(register, given, expected):
    with pytest.raises(TypeError, match=expected):
        register(given)


def refusal(register, cls) -> str:
    """The one-line message ``register`` refuses ``cls`` with."""
    with pytest.raises(DefinitionError) as caught:
        register(cls)
    message = str(caught.value)
    assert "\n" not in message and cls.__qualname__ in message
    return message


def test_a_class_without_a_readable_name_is_refused():
    @dataclass(frozen=True, repr=False)
    class Nameless(Softplus):
        name = ""

    @dataclass(frozen=True, repr=False)
    class Spaced(Softplus):
        name = "soft plus"

    @dataclass(frozen=True, repr=False)
    class Keyword(Softplus):
        name = "lambda"

    assert "has no name" in refusal(activations.register, Nameless)
    assert "Python identifier" in refusal(activations.register, Spaced)
    assert "keyword" in refusal(activations.register, Keyword)


def test_parameters_that_are_not_fields_are_refused():
    class Loose(Activation):  # no @dataclass: its beta is a class attribute
        name = "loose"
        beta: float = 2.0

        def forward_and_derivative(self, z):
            return self.beta * z, self.beta

    assert "not a dataclass of its own" in refusal(activations.register, Loose)


def test_a_class_that_cannot_be_made_by_its_name_alone_is_refused():
    @dataclass(frozen=True, repr=False)
    class Needy(Loss):
        name = "needy"
        scale: float  # no default

        def value_and_gradient(self, y_hat, y, batch):
            return self.scale * y_hat, self.scale / batch

    assert "cannot be made by its name alone" in refusal(losses.register, Needy)


def test_methods_missing_or_of_the_wrong_arity_are_refused():
    @dataclass(frozen=True, repr=False)
    class Empty(Loss):
        name = "empty"

    @dataclass(frozen=True, repr=False)
    class Unbatched(Loss):
        name = "unbatched"

        def value_and_gradient(self, y_hat, y):
            return (y_hat - y) ** 2, 2.0 * (y_hat - y)

    @dataclass(frozen=True, repr=False)
    class Stateless(Optimizer):  # names a state its update does not take
        name = "stateless"
        state = ("velocity",)

        def update(self, p, g, lr):
            return p - lr * g

    @dataclass(frozen=True, repr=False)
    class Twice(Optimizer):
        name = "twice"
        state = ("v", "v")

        def update(self, p, g, lr, v, w):
            return p - lr * g, v, w

    assert "does not define value_and_gradient" in refusal(losses.register, Empty)
    assert "must take 3 argument(s)" in refusal(losses.register, Unbatched)
    assert "must take 4 argument(s) after self (p, g, lr, velocity)" in \
        refusal(optimizers.register, Stateless)
    assert "tuple of distinct names" in refusal(optimizers.register, Twice)
