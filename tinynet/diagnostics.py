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

The residual stream (:func:`stream`). A network of residual blocks carries a *stream* x_l
(the input of block l) from its first layer to its output layer. For a block
``S = s·x + α·F(h)`` at initialization, h the branch's input (x, or LN(x) for a pre-norm), F
its dense layers with zero-mean weights and zero biases, m_l = E[x_l²] and μ_l = E[x_l]::

    the branch    z ~ N(0, fan_in · E[w²] · E[h²]) layer by layer,
                  q = E[φ(z)²] and μ_F = E[φ(z)] of its last layer
    the sum       E[S²] = s² m_l + α² q + 2 s α μ_l μ_F,    E[S] = s μ_l + α μ_F
    so            no norm:    m_{l+1} = E[S²]
                  pre-norm:   m_{l+1} = E[S²] with E[h²] = 1
                  post-norm:  m_{l+1} = 1, a LayerNorm's output (σ²/(σ² + ε) on each row)
                  ReZero (α = 0), Fixup (F's last layer 0): m_{l+1} = m_l

F's unit i sees x_i only through |h|, its weights being symmetric, so the cross term is
E[x_i] E[F_i] exactly when |h| is the same for every sample: for a pre-norm (|LN(x)|² = n),
and nearly so for wide layers. Treating z as Gaussian overstates μ_F a little at small widths
(z is a mixture over the samples' |a|, and E[φ(z)] is concave in its spread for ReLU): the
pre-norm's predicted mean, and with it its second moment, run a few percent high by depth 64.
A ReLU branch has a positive mean, so the stream's mean grows by μ_F a block and the cross
term with it: without a norm E[x²] grows by more than the branch's doubling, and with a
pre-norm quadratically, not linearly as for a branch of mean 0.

Backward, g_l = E[(dL/dx_l)²] from a gradient N(0, 1) given to the stream after the last
block (not through the output layer, whose gradient is tied to its input), a branch passing
back r = Π fan_out · E[w²] · E[φ'(z)²] of a gradient, a LayerNorm (n − 2)/n of a random one
(it removes the row's mean and the part along x̂) over the row's variance::

    no norm:      g_l = g_{l+1} · (s² + α² r)
    pre-norm:     g_l = g_{l+1} · (s² + α² r (n − 2) / (n σ_l²)),    σ_l² = m_l − μ_l²
    post-norm:    g_l = g_{l+1} · (s² + α² r) / σ_S²,     σ_S² = E[S²] − E[S]²

and (n − 2)/n of that for the last post-norm block only: below it, the gradient has left a
LayerNorm's backward already, which leaves nothing along the row's mean or x̂. They assume
wide layers, a gradient unrelated to the weights it passes through, and rows alike (a
LayerNorm divides each row by its own variance, the theory by their mean); the table shows
where they hold. At the first block the rows are the first layer's outputs, whose variance
is proportional to each sample's |x|² for ReLU and zero biases: E[1/σ²] there depends on the
batch's smallest inputs (for Gaussian inputs in 2-D it is infinite), so the gradient reaching
the first block is a property of the batch, not of the initialization.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from .validation import as_float_matrix, check_choice, check_members, check_seed
from .init.gains import gaussian_mean
from .network import Network
from .residual import Residual
from .text import table

if TYPE_CHECKING:
    from .layers import Layer

__all__ = ["Moment", "LayerSignal", "SignalReport", "propagate", "BlockStream",
           "StreamReport", "stream", "predicted_stream"]


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
                         f"blocks yet (net.blocks[{net.blocks.index(net.residuals[0])}] is "
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

    variances = [_weight_moment(layer, [layer.W], weight_variance == "actual")
                 for layer in net.layers]  # E[w²] per layer

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


@dataclass(frozen=True)
class BlockStream:
    """The stream entering block ``index`` (``index`` = the number of blocks: leaving the
    last): its second moment ``x`` = E[x_l²] and the gradient reaching it ``grad`` =
    E[(dL/dx_l)²], each measured over the seeds (mean and standard error) and predicted."""

    index: int
    x: Moment
    x_error: float
    grad: Moment
    grad_error: float


@dataclass(frozen=True)
class StreamReport:
    """The stream of :func:`stream`'s networks: what their blocks are (``formula``,
    ``width``), over how many ``seeds``, and each position's :class:`BlockStream`."""

    formula: str
    width: int
    seeds: int
    positions: list[BlockStream]

    def __str__(self) -> str:
        header = ("block", "E[x²] measured", "predicted", "E[(dL/dx)²] measured", "predicted")
        rows = [(str(p.index), f"{p.x.measured:.4g} ± {p.x_error:.2g}", f"{p.x.predicted:.4g}",
                 f"{p.grad.measured:.4g} ± {p.grad_error:.2g}", f"{p.grad.predicted:.4g}")
                for p in self.positions]
        return (f"the residual stream through {len(self.positions) - 1} blocks {self.formula}, "
                f"width {self.width}, {self.seeds} seeds (± a standard error)\n"
                + table([header, *rows]))


def _standard_error(values: np.ndarray) -> np.ndarray:
    """The standard error of the mean of each column of ``values`` (networks, positions): NaN
    for one network. Not ``scipy.stats.sem``: the XOR command imports this module, and loads
    no SciPy stats (``tests/test_stats.py``, ``tests/test_import_weight.py``)."""
    if len(values) < 2:
        return np.full(values.shape[1], np.nan)
    return values.std(axis=0, ddof=1) / np.sqrt(len(values))


def _weight_moment(layer: "Layer", weights: Sequence[np.ndarray], actual: bool = False) -> float:
    """E[w²] of ``layer``'s weights: its initializer's target, Var + mean², or (``actual``, or
    an initializer that states none) the mean of W² over ``weights``, the W of every layer
    like it."""
    target = layer.init.variance(layer.shape, layer.activation)
    if actual or target is None:
        return float(np.mean([_mean_square(W) for W in weights]))
    return target + layer.init.mean(layer.shape, layer.activation) ** 2


def _weight_moments(blocks: Sequence[Residual]) -> list[float]:
    """E[w²] of each layer of alike ``blocks``' branches (:func:`_weight_moment`)."""
    return [_weight_moment(layer, [block.layers[k].W for block in blocks])
            for k, layer in enumerate(blocks[0].layers)]


def _branch(block: Residual, weight_moments: Sequence[float],
            second_moment: float) -> tuple[float, float, float]:
    """``(q, μ_F, r)`` of the module's docstring: the branch's output second moment and mean
    for an input of second moment ``second_moment``, and what it passes back of a gradient,
    E[w²] of each layer given."""
    mean, passed = 0.0, 1.0
    for layer, weight in zip(block.layers, weight_moments):
        spread = layer.n_in * weight * second_moment
        activation = layer.activation
        passed *= layer.n_out * weight * gaussian_mean(lambda z: activation.derivative(z) ** 2,
                                                       spread)
        mean = gaussian_mean(activation.forward, spread)
        second_moment = gaussian_mean(lambda z: activation.forward(z) ** 2, spread)
    return second_moment, mean, passed


def predicted_stream(block: Residual, blocks: int, x0: float, mean0: float, g_top: float,
                     weight_moments: Sequence[float] | None = None
                     ) -> tuple[list[float], list[float]]:
    """E[x_l²] and E[(dL/dx_l)²] for l = 0 … ``blocks`` of a stack of ``blocks`` blocks like
    ``block`` at initialization (its initial α, its layers' E[w²]: their initializers' unless
    ``weight_moments`` gives them), from the first block's input (second moment ``x0``, mean
    ``mean0``) and the gradient given to the stream after the last (``g_top``): the module's
    docstring."""
    n, s, alpha = block.width, block.skip, block.initial_scale
    weights = (_weight_moments([block]) if weight_moments is None
               else list(weight_moments))
    moments, means, factors = [x0], [mean0], []
    for index in range(blocks):
        m, mu = moments[-1], means[-1]
        q, mu_f, r = _branch(block, weights, 1.0 if block.placement == "pre" else m)
        total = s * s * m + alpha * alpha * q + 2 * s * alpha * mu * mu_f
        mean = s * mu + alpha * mu_f
        if block.placement == "pre":
            factors.append(s * s + alpha * alpha * r * (n - 2) / _over(n * (m - mu * mu)))
        elif block.placement == "post":      # only the last block's gradient is random
            kept = (n - 2) / n if index == blocks - 1 else 1.0
            factors.append(kept * (s * s + alpha * alpha * r) / _over(total - mean * mean))
            total, mean = 1.0, 0.0
        else:
            factors.append(s * s + alpha * alpha * r)
        moments.append(total)
        means.append(mean)
    gradients = [g_top]
    for factor in reversed(factors):
        gradients.append(gradients[-1] * factor)
    return moments, gradients[::-1]


def _over(variance: float) -> float:
    """A LayerNorm's input variance as a divisor: NaN where it is 0 (a constant row, which
    the norm maps to 0 and whose gradient the theory does not predict)."""
    return variance if variance != 0 else math.nan


def _signature(block: Residual) -> tuple:
    """What a block of a measured run must share with the first: what an ensemble's members
    share (:meth:`tinynet.Residual.signature`), and its initial α, activations and
    initializers."""
    return (block.signature(), block.initial_scale,
            tuple((repr(layer.activation), layer.init_label()) for layer in block.layers))


def _check_initial(networks: Sequence[Network]) -> None:
    """Refuse blocks that are not as the theory takes them: alike, at zero biases, their
    norms at γ = 1 and β = 0."""
    first = _signature(networks[0].residuals[0])
    for index, net in enumerate(networks):
        for position, block in enumerate(net.residuals):
            if _signature(block) != first:
                raise ValueError(f"stream predicts a run of alike blocks; networks[{index}]'s "
                                 f"block {position} ({block!r}) differs from networks[0]'s "
                                 "first")
            if any(layer.b.any() for layer in block.layers):
                raise ValueError(f"stream predicts blocks at initialization with zero "
                                 f"biases; networks[{index}]'s block {position} has biases "
                                 "other than 0 (build it with bias_init=0)")
            if block.norm is not None and (np.any(block.norm.gain != 1.0) or
                                           block.norm.bias.any()):
                raise ValueError(f"stream predicts LayerNorms at initialization (γ = 1, "
                                 f"β = 0); networks[{index}]'s block {position}'s are not")


def stream(networks: Sequence[Network], X: object, seed: int = 0) -> StreamReport:
    """Measure the residual stream of ``networks`` (alike, one per seed, with one run of
    alike residual blocks at initialization: ``tinynet.mlp(..., residual=...)``'s) on the
    batch ``X`` (B, n_in), beside :func:`predicted_stream` from the measured input of the
    first block: at each block's input and after the last, E[x²] over the samples and units,
    and E[(dL/dx)²] for a gradient N(0, 1) given to the stream after the last block (drawn
    from ``seed``); each the mean over the networks with its standard error, the batch fixed.
    The networks' weights are left as they are; their gradients (dW, db, ...) are
    overwritten."""
    networks = check_members(networks, Network)
    like = networks[0]
    if not like.residuals:
        raise ValueError("stream follows residual blocks, and networks[0] has none; build "
                         "them with tinynet.mlp(..., residual=True)")
    first = like.blocks.index(like.residuals[0])
    last = first + len(like.residuals)           # the first layer after the blocks
    if any(not isinstance(block, Residual) for block in like.blocks[first:last]):
        raise ValueError("stream follows one run of residual blocks; networks[0]'s blocks are "
                         "interrupted by a layer")
    _check_initial(networks)
    X = as_float_matrix("X", X, columns=like.n_in)
    rng = np.random.default_rng(check_seed("seed", seed))
    moments, gradients, means = [], [], []
    with np.errstate(over="ignore", invalid="ignore"):
        for net in networks:
            inputs, outputs = [], X
            for block in net.blocks[:last]:
                if isinstance(block, Residual):
                    inputs.append(outputs)
                outputs = block.forward(outputs)
            inputs.append(outputs)
            gradient = rng.normal(size=outputs.shape)
            reached = [gradient]
            for block in reversed(net.residuals):
                gradient = block.backward(gradient)
                reached.append(gradient)
            moments.append([_mean_square(x) for x in inputs])
            gradients.append([_mean_square(g) for g in reached[::-1]])
            means.append(float(np.mean(inputs[0])))
    moments, gradients = np.array(moments), np.array(gradients)
    predicted_x, predicted_g = predicted_stream(
        like.residuals[0], len(like.residuals), float(moments[:, 0].mean()),
        float(np.mean(means)), float(gradients[:, -1].mean()),
        _weight_moments([block for net in networks for block in net.residuals]))
    x_error, g_error = _standard_error(moments), _standard_error(gradients)
    positions = [BlockStream(l, Moment(float(moments[:, l].mean()), predicted_x[l]),
                             float(x_error[l]), Moment(float(gradients[:, l].mean()),
                                                       predicted_g[l]), float(g_error[l]))
                 for l in range(moments.shape[1])]
    return StreamReport(like.residuals[0].formula(), like.residuals[0].width, len(networks),
                        positions)
