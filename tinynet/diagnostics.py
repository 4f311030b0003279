"""Signal propagation: second moments through a network, measured beside what theory predicts.

For a dense layer z = a_prev Wᵀ + b with zero-mean weights independent of its input, unit j's
pre-activation is about N(b_j, s²) with s² = fan_in · E[w²] · E[a_prev²], and

    forward    E[z²]          = s² + mean_j b_j²
               E[a²]          = mean_j E[φ(z_j)²]             z_j ~ N(b_j, s²)
    backward   E[(dL/dz)²]    = E[(dL/da)²] · mean_j E[φ'(z_j)²]
               E[(dL/da_prev)²] = fan_out · E[w²] · E[(dL/dz)²]
               E[(dL/dW)²]    = E[(dL/dz)²] · E[a_prev²]      (one sample's gradient)

With zero biases E[φ(z)²] is E[z²] for identity, half of it for ReLU, (1 + α²)/2 of it for
LeakyReLU; in general (sigmoid, tanh, biases) it is computed by adaptive quadrature. Weights
with a non-zero mean (``constant``) break the independence the theory rests on; their
predictions use E[w²] and are only indicative. :func:`propagate` measures each quantity on a
batch and predicts it from the input's second moment and each layer's weight variance alone,
so a table shows where the theory holds (wide layers at initialization) and where it drifts.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .validation import as_float_matrix, check_choice, check_seed
from .init.gains import gaussian_mean
from .network import Network

__all__ = ["Moment", "LayerSignal", "SignalReport", "propagate"]


@dataclass(frozen=True)
class Moment:
    """A second moment measured on the batch and predicted by the theory."""

    measured: float
    predicted: float

    @property
    def ratio(self) -> float:
        """measured / predicted (nan when the prediction is 0)."""
        return self.measured / self.predicted if self.predicted else math.nan


@dataclass(frozen=True)
class LayerSignal:
    """One layer's second moments: pre-activation ``z``, output ``a``, the gradient reaching
    its output ``grad_a`` and one sample's weight gradient ``grad_w``; ``saturated`` (sigmoid:
    outputs below 0.01 or above 0.99) and ``dead`` (relu, leaky_relu: units never positive on
    the batch) are fractions, None where they do not apply."""

    index: int
    activation: str
    fan_in: int
    fan_out: int
    weight_variance: float
    z: Moment
    a: Moment
    grad_a: Moment
    grad_w: Moment
    saturated: float | None
    dead: float | None


@dataclass(frozen=True)
class SignalReport:
    """:func:`propagate`'s result: the input's second moment, the gradient's at the input
    (after the whole backward pass), and one entry per layer."""

    input_second_moment: float
    input_gradient: Moment
    layers: list[LayerSignal]

    def __str__(self) -> str:
        def pair(m: Moment) -> str:
            return f"{m.measured:9.3g} {m.predicted:9.3g}"
        lines = [f"input E[x²] = {self.input_second_moment:.4g}, E[(dL/dx)²] = "
                 f"{self.input_gradient.measured:.4g} (theory {self.input_gradient.predicted:.4g})"
                 "; each pair: measured, predicted",
                 f"{'layer':>5}  {'activation':<12}{'Var(w)':>9}  {'E[z²]':^19}  {'E[a²]':^19}  "
                 f"{'E[(dL/da)²]':^19}  {'E[(dL/dW)²]':^19}  saturated/dead"]
        for s in self.layers:
            extra = (f"{s.saturated:.1%} saturated" if s.saturated is not None else
                     f"{s.dead:.1%} dead" if s.dead is not None else "")
            lines.append(f"{s.index:>5}  {s.activation:<12}{s.weight_variance:9.3g}  "
                         f"{pair(s.z)}  {pair(s.a)}  {pair(s.grad_a)}  {pair(s.grad_w)}  {extra}")
        return "\n".join(lines)


def _mean_square(values: np.ndarray) -> float:
    return float(np.mean(values * values))


def propagate(net: Network, X: object, output_gradient: object | None = None, seed: int = 0,
              weight_variance: str = "init") -> SignalReport:
    """Measure and predict second moments through ``net`` for the batch ``X`` (B, n_in).

    The backward pass starts from ``output_gradient`` (B, n_out), by default N(0, 1) drawn
    with ``seed``. ``weight_variance`` is ``"init"`` (each layer's initializer's target second
    moment E[w²] = Var + mean², or the realised mean of W² for an initializer that does not
    state one) or ``"actual"`` (the realised mean of W², e.g. for a trained network).
    Overflowing signals are reported as inf, without warnings.
    """
    with np.errstate(over="ignore", invalid="ignore", under="ignore", divide="ignore"):
        return _propagate(net, X, output_gradient, seed, weight_variance)


def _per_unit_mean(function, variance: float, biases: np.ndarray) -> float:
    """mean over units j of E[f(z_j)], z_j ~ N(b_j, variance); one integral per distinct b_j."""
    values, counts = np.unique(biases, return_counts=True)
    return float(sum(count * gaussian_mean(function, variance, mean=float(value))
                     for value, count in zip(values, counts)) / len(biases))


def _propagate(net: Network, X: object, output_gradient: object | None, seed: int,
               weight_variance: str) -> SignalReport:
    check_choice("weight_variance", weight_variance, ("init", "actual"))
    if net.residuals:
        raise ValueError(f"propagate follows a chain of layers; it does not follow residual "
                         f"blocks yet (layers[{net.blocks.index(net.residuals[0])}] is "
                         f"{net.residuals[0]!r})")
    X = as_float_matrix("X", X, columns=net.n_in)
    if output_gradient is None:
        output_gradient = np.random.default_rng(check_seed("seed", seed)).normal(
            size=(len(X), net.n_out))
    output_gradient = as_float_matrix("output_gradient", output_gradient, columns=net.n_out)
    if len(output_gradient) != len(X):
        raise ValueError(f"output_gradient must have one row per sample of X ({len(X)}), got "
                         f"{len(output_gradient)}")

    inputs, outputs = [X], []
    for layer in net.layers:
        outputs.append(layer.forward(inputs[-1]))
        inputs.append(outputs[-1])
    grads_a = [output_gradient]
    for layer in reversed(net.layers):
        grads_a.append(layer.backward(grads_a[-1]))
    grads_a = grads_a[::-1]  # grads_a[i]: dL/d(input of layer i); grads_a[-1]: output gradient

    variances = []  # E[w²] per layer
    for layer in net.layers:
        target = layer.init.variance(layer.shape, layer.activation)
        variances.append(_mean_square(layer.W) if weight_variance == "actual" or target is None
                         else target + layer.init.mean(layer.shape, layer.activation) ** 2)

    # forward predictions, from the input's second moment alone
    predicted_a, predicted_z, spreads = [_mean_square(X)], [], []
    for layer, variance in zip(net.layers, variances):
        spread = layer.n_in * variance * predicted_a[-1]   # s², the variance of each z_j
        spreads.append(spread)
        predicted_z.append(spread + _mean_square(layer.b))
        predicted_a.append(_per_unit_mean(lambda z: layer.activation.forward(z) ** 2, spread,
                                          layer.b))
    # backward predictions, from the output gradient's second moment
    predicted_grad_a = [_mean_square(output_gradient)]
    predicted_grad_z = []
    for layer, variance, spread in zip(reversed(net.layers), reversed(variances),
                                       reversed(spreads)):
        slope = _per_unit_mean(lambda z: layer.activation.derivative(z) ** 2, spread, layer.b)
        predicted_grad_z.append(predicted_grad_a[-1] * slope)
        predicted_grad_a.append(layer.n_out * variance * predicted_grad_z[-1])
    predicted_grad_a, predicted_grad_z = predicted_grad_a[::-1], predicted_grad_z[::-1]

    signals = []
    for i, (layer, variance) in enumerate(zip(net.layers, variances)):
        z = layer.pre_activation
        dz = grads_a[i + 1] * layer.activation.derivative(z)
        # one sample's dW is the outer product dz_b a_bᵀ: its mean square factorises
        per_sample_dw = np.mean(np.sum(dz * dz, axis=1) * np.sum(inputs[i] * inputs[i], axis=1)
                                ) / (layer.n_out * layer.n_in)
        a = outputs[i]
        name = layer.activation.name
        saturated = float(np.mean((a < 0.01) | (a > 0.99))) if name == "sigmoid" else None
        dead = (float(np.mean(np.all(z <= 0, axis=0))) if name in ("relu", "leaky_relu")
                else None)
        signals.append(LayerSignal(
            index=i, activation=repr(layer.activation), fan_in=layer.n_in, fan_out=layer.n_out,
            weight_variance=variance,
            z=Moment(_mean_square(z), predicted_z[i]),
            a=Moment(_mean_square(a), predicted_a[i + 1]),
            grad_a=Moment(_mean_square(grads_a[i + 1]), predicted_grad_a[i + 1]),
            grad_w=Moment(float(per_sample_dw), predicted_grad_z[i] * predicted_a[i]),
            saturated=saturated, dead=dead))
    return SignalReport(_mean_square(X), Moment(_mean_square(grads_a[0]), predicted_grad_a[0]),
                        signals)
