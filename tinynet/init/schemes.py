"""Initializer schemes: the contract every initializer meets, and the families built on it.

An initializer takes a weight shape ``(n_out, n_in)`` (fan_in = n_in, fan_out = n_out), a
``numpy.random.Generator`` and the layer's activation, and returns a float64 array of that
shape. Without sampling, it can state the variance it targets for a shape and describe itself:
formula, fans, gain, std and the numbers its sampler is called with.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ..activations import Activation, LeakyReLU
from .distributions import TRUNCATED_VARIANCE_FACTOR, get_distribution
from .fans import FAN_MODES, fan, fans
from .gains import squared_gain
from ..validation import UnknownNameError

__all__ = ["Description", "Initializer", "FixedStd", "VarianceScaling", "LeakyHe",
           "TorchLinearDefault", "Orthogonal", "Constant", "Auto", "FunctionInitializer"]

Shape = tuple[int, int]


@dataclass(frozen=True)
class Description:
    """What an initializer does for one layer; ``str()`` gives a readable block."""

    name: str
    formula: str
    fan_in: int
    fan_out: int
    fan_rule: str | None = None
    fan: float | None = None
    gain: float | None = None
    variance: float | None = None
    std: float | None = None
    sampler: str = ""

    def __str__(self) -> str:
        def number(value: float | None) -> str:
            return "unknown" if value is None else f"{value:.6g}"
        lines = [f"{self.name}: {self.formula}",
                 f"  fan_in = {self.fan_in}, fan_out = {self.fan_out}"]
        if self.fan_rule is not None:
            lines.append(f"  fan = {self.fan_rule} = {number(self.fan)}")
        if self.gain is not None:
            lines.append(f"  gain = {number(self.gain)}")
        lines.append(f"  variance = {number(self.variance)}, std = {number(self.std)}")
        lines.append(f"  sampler: {self.sampler}")
        return "\n".join(lines)


def _sampler_text(distribution: str, std: float) -> str:
    parameters = get_distribution(distribution).parameters(std)
    if distribution == "uniform":
        return f"uniform on [-{parameters['bound']:.6g}, {parameters['bound']:.6g}]"
    if distribution == "truncated_normal":
        return (f"normal with sigma = {parameters['sigma']:.6g} (= std / sqrt("
                f"{TRUNCATED_VARIANCE_FACTOR:.7f})), redrawn outside ±{parameters['cut']:.6g}")
    return f"normal with sigma = {parameters['sigma']:.6g}"


class Initializer:
    """Base class. Subclasses implement :meth:`variance` and :meth:`__call__`.

    ``distribution`` names the family the weights are drawn from (None when they are not
    i.i.d. draws from one of :data:`tinynet.init.distributions.DISTRIBUTIONS`).
    """

    name: str = ""
    distribution: str | None = None

    def variance(self, shape: Shape, activation: Activation) -> float | None:
        """Target Var(w) for a weight of ``shape`` feeding ``activation`` (None if unknown)."""
        raise NotImplementedError

    def mean(self, shape: Shape, activation: Activation) -> float:
        """Target mean of the weights (0 for every random scheme)."""
        return 0.0

    def std(self, shape: Shape, activation: Activation) -> float | None:
        """Target std of the weights: sqrt(variance), or None if unknown."""
        variance = self.variance(shape, activation)
        return None if variance is None else math.sqrt(variance)

    def describe(self, shape: Shape, activation: Activation) -> Description:
        """Formula, fans, gain, target variance and std, and sampler parameters for ``shape``."""
        fan_in, fan_out = fans(shape)
        return Description(self.name, "unknown (a user function)", fan_in, fan_out,
                           variance=self.variance(shape, activation),
                           std=self.std(shape, activation), sampler="the function itself")

    def __call__(self, shape: Shape, rng: np.random.Generator,
                 activation: Activation) -> np.ndarray:
        raise NotImplementedError

    def __repr__(self) -> str:
        return self.name


class FixedStd(Initializer):
    """w ~ D(0, std²) whatever the shape: ``normal`` is N(0, 1), the learner's
    ``np.random.randn``."""

    def __init__(self, name: str, std: float, distribution: str) -> None:
        self.name, self.fixed_std = name, float(std)
        self.distribution = get_distribution(distribution).name

    def variance(self, shape: Shape, activation: Activation) -> float:
        return self.fixed_std * self.fixed_std  # inf, not OverflowError, past 1.3e154

    def std(self, shape: Shape, activation: Activation) -> float:
        return self.fixed_std

    def describe(self, shape: Shape, activation: Activation) -> Description:
        fan_in, fan_out = fans(shape)
        return Description(self.name, f"Var(w) = {self.fixed_std:g}² (whatever the fans)",
                           fan_in, fan_out, variance=self.variance(shape, activation),
                           std=self.fixed_std, sampler=_sampler_text(self.distribution,
                                                                     self.fixed_std))

    def __call__(self, shape: Shape, rng: np.random.Generator,
                 activation: Activation) -> np.ndarray:
        return get_distribution(self.distribution).sample(rng, shape, self.fixed_std)


class VarianceScaling(Initializer):
    """w ~ D(0, scale / fan), with ``fan`` chosen by ``mode`` (see :mod:`tinynet.init.fans`).

    LeCun: scale 1, fan_in. Glorot/Xavier: scale 1, fan_avg = (fan_in + fan_out)/2.
    He/Kaiming: scale 2, fan_in. The gain is sqrt(scale).
    """

    def __init__(self, name: str, scale: float, mode: str, distribution: str) -> None:
        fan(mode, (1, 1))  # raises UnknownNameError for an unknown mode
        self.name, self.scale, self.mode = name, float(scale), mode
        self.distribution = get_distribution(distribution).name

    def scale_for(self, activation: Activation) -> float:
        """The numerator of Var(w) = scale / fan."""
        return self.scale

    def scale_text(self, activation: Activation) -> str:
        """``scale`` as the formula shows it."""
        return f"{self.scale:g}"

    def variance(self, shape: Shape, activation: Activation) -> float:
        return self.scale_for(activation) / fan(self.mode, shape)

    def describe(self, shape: Shape, activation: Activation) -> Description:
        fan_in, fan_out = fans(shape)
        rule = FAN_MODES[self.mode]
        std = self.std(shape, activation)
        plain = rule.formula == rule.name
        denominator = rule.formula if plain else f"({rule.formula})"
        return Description(
            self.name, f"Var(w) = {self.scale_text(activation)} / {denominator}", fan_in, fan_out,
            fan_rule=rule.name if plain else f"{rule.name} = {rule.formula}",
            fan=fan(self.mode, shape),
            gain=math.sqrt(self.scale_for(activation)), variance=self.variance(shape, activation),
            std=std, sampler=_sampler_text(self.distribution, std))

    def __call__(self, shape: Shape, rng: np.random.Generator,
                 activation: Activation) -> np.ndarray:
        return get_distribution(self.distribution).sample(rng, shape, self.std(shape, activation))


class LeakyHe(VarianceScaling):
    """He for LeakyReLU: w ~ D(0, 2 / ((1 + α²) · fan_in)).

    α is ``alpha`` if given, otherwise the layer's own slope. A layer that is not a LeakyReLU
    (a sigmoid output given the hidden layers' init, as in the notes' first He experiment) has
    no slope of its own and gets α = 0.01, the notes' value; pass ``he_leaky(alpha=...)`` to
    choose another.
    """

    default_alpha = 0.01

    def __init__(self, name: str, distribution: str, alpha: float | None = None) -> None:
        super().__init__(name, 2.0, "fan_in", distribution)
        self.alpha = alpha

    def alpha_for(self, activation: Activation) -> float:
        """The negative slope α used for a layer with ``activation``."""
        if self.alpha is not None:
            return self.alpha
        return activation.alpha if isinstance(activation, LeakyReLU) else self.default_alpha

    def scale_for(self, activation: Activation) -> float:
        return squared_gain("leaky_relu", self.alpha_for(activation))  # as kaiming_*(a=α)

    def scale_text(self, activation: Activation) -> str:
        return f"2/(1 + α²) [α = {self.alpha_for(activation):g}]"


class TorchLinearDefault(Initializer):
    """What ``torch.nn.Linear`` does to its weight: ``kaiming_uniform_(a=sqrt(5))``.

    The gain is sqrt(2 / (1 + 5)) = sqrt(1/3), so the bound sqrt(3) · gain / sqrt(fan_in) is
    1 / sqrt(fan_in): w ~ U(−1/sqrt(fan_in), 1/sqrt(fan_in)), Var(w) = 1 / (3 · fan_in), a third
    of LeCun's. tinynet draws with that bound as written (PyTorch's float arithmetic reaches it
    through sqrt(5)² = 5.000000000000001, a relative difference below 1e-15).
    """

    distribution = "uniform"

    def __init__(self, name: str) -> None:
        self.name = name

    @staticmethod
    def bound(shape: Shape) -> float:
        """1 / sqrt(fan_in): the weights lie in [−bound, bound)."""
        return 1.0 / math.sqrt(fans(shape)[0])

    def variance(self, shape: Shape, activation: Activation) -> float:
        return 1.0 / (3.0 * fans(shape)[0])

    def describe(self, shape: Shape, activation: Activation) -> Description:
        fan_in, fan_out = fans(shape)
        bound = self.bound(shape)
        return Description(self.name, "Var(w) = 1 / (3·fan_in)", fan_in, fan_out,
                           fan_rule="fan_in", fan=float(fan_in), gain=math.sqrt(1.0 / 3.0),
                           variance=self.variance(shape, activation),
                           std=self.std(shape, activation),
                           sampler=f"uniform on [-{bound:.6g}, {bound:.6g}] (±1/sqrt(fan_in))")

    def __call__(self, shape: Shape, rng: np.random.Generator,
                 activation: Activation) -> np.ndarray:
        bound = self.bound(shape)
        return rng.uniform(-bound, bound, size=shape)


class Orthogonal(Initializer):
    """A random (semi-)orthogonal matrix times ``gain`` (Saxe et al. 2014).

    Draw A ~ N(0, 1) of shape (max, min), factor A = QR, flip each column of Q by the sign of
    R's diagonal (without the fix Q is not uniform over orthogonal matrices), and transpose to
    (n_out, n_in). Rows are orthonormal when n_out <= n_in (W Wᵀ = gain² I), columns otherwise,
    so each weight has second moment gain² / max(fan_in, fan_out).
    """

    def __init__(self, name: str, gain: float = 1.0) -> None:
        self.name, self.gain = name, float(gain)

    def variance(self, shape: Shape, activation: Activation) -> float:
        return self.gain * self.gain / max(shape)

    def std(self, shape: Shape, activation: Activation) -> float:
        return self.gain / math.sqrt(max(shape))  # finite where gain² overflows

    def describe(self, shape: Shape, activation: Activation) -> Description:
        fan_in, fan_out = fans(shape)
        return Description(self.name, "W = gain · Q, Q with orthonormal rows or columns: "
                           "Var(w) = gain² / max(fan_in, fan_out)",
                           fan_in, fan_out, fan_rule="max(fan_in, fan_out)", fan=float(max(shape)),
                           gain=self.gain, variance=self.variance(shape, activation),
                           std=self.std(shape, activation),
                           sampler="QR of a standard normal matrix, signs fixed by diag(R)")

    def __call__(self, shape: Shape, rng: np.random.Generator,
                 activation: Activation) -> np.ndarray:
        n_out, n_in = shape
        tall = rng.normal(size=(max(shape), min(shape)))
        q, r = np.linalg.qr(tall)
        q *= np.sign(np.diag(r))
        return self.gain * (q if n_out >= n_in else q.T)


class Constant(Initializer):
    """Every weight equal to ``value``: ``zeros`` gives a network that cannot break symmetry."""

    def __init__(self, name: str, value: float) -> None:
        self.name, self.value = name, float(value)

    def variance(self, shape: Shape, activation: Activation) -> float:
        return 0.0

    def mean(self, shape: Shape, activation: Activation) -> float:
        return self.value

    def describe(self, shape: Shape, activation: Activation) -> Description:
        fan_in, fan_out = fans(shape)
        return Description(self.name, f"w = {self.value:g}", fan_in, fan_out, variance=0.0,
                           std=0.0, sampler=f"every weight {self.value:g}")

    def __call__(self, shape: Shape, rng: np.random.Generator,
                 activation: Activation) -> np.ndarray:
        return np.full(shape, self.value, dtype=np.float64)


class Auto(Initializer):
    """Pick by the layer's activation, as the notes finally did.

    sigmoid, tanh, identity and softmax get Xavier (normal); relu gets He (normal);
    leaky_relu gets He-leaky with the layer's alpha.
    """

    def __init__(self, name: str, by_activation: dict[str, Initializer]) -> None:
        self.name, self.by_activation = name, by_activation
        chosen = {initializer.distribution for initializer in by_activation.values()}
        self.distribution = chosen.pop() if len(chosen) == 1 else None

    def choice(self, activation: Activation) -> Initializer:
        """The initializer used for a layer with ``activation``."""
        if activation.name not in self.by_activation:
            raise UnknownNameError(f"activation for init {self.name!r}", activation.name,
                                   self.by_activation, "Pass init= explicitly for this layer")
        return self.by_activation[activation.name]

    def variance(self, shape: Shape, activation: Activation) -> float | None:
        return self.choice(activation).variance(shape, activation)

    def describe(self, shape: Shape, activation: Activation) -> Description:
        chosen = self.choice(activation).describe(shape, activation)
        return Description(**{**vars(chosen), "name": f"{self.name}:{chosen.name}"})

    def __call__(self, shape: Shape, rng: np.random.Generator,
                 activation: Activation) -> np.ndarray:
        return self.choice(activation)(shape, rng, activation)


class FunctionInitializer(Initializer):
    """A user's function ``f(shape, rng) -> array`` used as an initializer (variance unknown)."""

    def __init__(self, name: str,
                 function: Callable[[Shape, np.random.Generator], np.ndarray]) -> None:
        self.name, self.function = name, function

    def variance(self, shape: Shape, activation: Activation) -> None:
        return None

    def __call__(self, shape: Shape, rng: np.random.Generator,
                 activation: Activation) -> np.ndarray:
        return self.function(shape, rng)
