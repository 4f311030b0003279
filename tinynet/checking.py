"""Gradient checking: the hand-written backward pass against finite differences.

A backward pass is easy to get subtly wrong (a missing factor, a transposed product, the
derivative of the wrong activation) and still train, badly. :func:`gradcheck` compares it,
number by number, with what the loss itself says. For every weight and bias θ, one at a time,
with every other parameter fixed::

    a = dL/dθ                                      analytic: net.forward, then net.backward
    n = (L(θ + eps) - L(θ - eps)) / (2 eps)        numerical: the central difference

where L is the loss over the batch, ``loss=`` as training takes it (a name such as ``"bce"``
or ``"huber(delta=0.5)"``, or a :class:`~tinynet.losses.Loss`; the mean squared error by
default, as in training). Its gradient starts the backward pass as in training: dL/dŷ from
the loss's ``value_and_gradient``, or, when the loss gives one through the output layer's
sigmoid or softmax (:meth:`~tinynet.losses.Loss.through_output`: binary cross-entropy on
a sigmoid output, cross-entropy on a softmax), dL/dz of that layer,
``gradient_through_sigmoid`` or ``gradient_through_softmax``; so this checks that too.
Shapes (B = batch size): X (B, n_in), y (B, n_out), or (B,) for a single output;
each layer's W (n_out, n_in) and b (n_out,) get an ``a`` and an ``n`` of their own shape.

They are compared by the relative error, element by element::

    r = |a - n| / max(|a| + |n|, tiny)

scale-free for gradients of any size; an element passes when r < ``tolerance``. ``tiny`` keeps
r meaningful for gradients near 0, as in a trained network: n has an error of its own, and a
disagreement within it is no evidence against the backward pass. That error is truncation
(n = L' + eps² L'''/6 + ..., the Taylor terms the central difference does not cancel) plus
rounding (two nearly equal losses subtracted). Both are estimated for every element, the
truncation by Richardson's trick: the difference with half the step,
n½ = (L(θ + eps/2) - L(θ - eps/2)) / eps, has a quarter of n's truncation error, so n - n½
is three quarters of it::

    error of n ≈ (4/3) |n - n½| + u (S₊ + S₋) / (2 eps),
    S = (1/B) Σ |ℓ(ŷ, y)| + Σ |dL/dŷ| |ŷ|

with u = 2.2e-16, ℓ the loss's terms (L = (1/B) Σ ℓ) and S₊, S₋ taken at θ + eps and
θ - eps: a computed loss is off by about u S. It assumes what holds for the built-in losses
and the networks here: each term, and their sum, is computed to about u relative (so the
first part; for MSE it is L itself), and each output ŷ is off by about u |ŷ|, which moves L
by |dL/dŷ| u |ŷ| (the second part; for MSE, (2/B) |ŷ - y| |ŷ|). A loss whose terms cancel
(a sum of large terms of both signs) or a network whose outputs round worse than that would
need a larger S. Then ``tiny = NOISE_MARGIN · (error of n) / tolerance``: a disagreement
within NOISE_MARGIN times n's estimated error passes, however small the gradient.

Noise. That is evidence only while n's error is small beside the gradients a bug would
change. An element is *inconclusive*, neither passed nor failed, when
NOISE_MARGIN · (error of n) >= tolerance · G, G the largest |a| or |n| over every parameter:
there the central difference is noise at the scale of the network's gradients. It happens at
a minimum, where every gradient is near 0 (check at initialization, where they are large),
and with an ``eps`` so small that rounding swamps the difference; an ``eps`` for which
θ ± eps/2 rounds back to θ for some parameter is refused.

Kinks. ReLU and LeakyReLU have a kink at z = 0, where the derivative does not exist and
backward uses a convention (the left slope, see :mod:`tinynet.activations`). If a step of
±eps carries a unit's pre-activation z across the kink, the central difference averages the
slopes on either side while backward uses one of them: the two disagree there, and neither
is wrong. :func:`gradcheck` watches every relu and leaky_relu pre-activation z (B, n_out)
during every step, and reports the units within a step's reach of the kink: those with
|z| <= KINK_MARGIN · m, where m is how far a single step moved that z (the step of one
parameter of the layer, or of an earlier one). Such a unit is common at initialization: with
zero biases, the XOR sample (0, 0) gives z = 0 in every first-layer unit. The elements whose
steps straddle a kink are held to n's rounding error alone (Richardson's estimate assumes a
smooth L), so that their mismatch shows, and is reported as a kink's, not as a failure.
Activations of your own are taken to be smooth; so are losses (the Huber loss's change of
form at |ŷ - y| = δ keeps its slope, so a central difference across it errs by O(eps), which
the estimate above covers).

    >>> import tinynet
    >>> from tinynet import gradcheck
    >>> X, y = tinynet.data.xor()
    >>> report = gradcheck(tinynet.mlp([2, 2, 2, 1]), X, y)
    >>> report.status, report.kinks[0].layer, report.kinks[0].sample
    ('kinks', 0, 0)

Layers, samples and units are numbered from 0, as ``print(net)`` and ``net.layers[i]``,
``X[i]`` and the columns of Z number them.
"""

from __future__ import annotations

import textwrap
from dataclasses import dataclass

import numpy as np

from .activations import Activation, LeakyReLU, ReLU
from .losses import Loss
from .network import Network
from .text import table
from .training import _checked_loss  # the loss named, if outputs and targets fit its bounds
from .validation import check_float, check_instance, check_training_data

__all__ = ["gradcheck", "GradcheckReport", "ArrayCheck", "Kink"]

ROUNDING = float(np.finfo(np.float64).eps)
"""u = 2⁻⁵² ≈ 2.2e-16: the relative rounding error of a float64 operation."""

NOISE_MARGIN = 10.0
"""n may miss the true derivative by this many times its estimated error before a mismatch
counts: the estimate gives the error's size, not a bound on it. (Measured on correct backward
passes: |a - n| up to 0.6 times the estimate on random networks, up to 1.04 times at an exact
fit, where every gradient is rounding noise.)"""

KINK_MARGIN = 2.0
"""A step counts as straddling a unit's kink when |z| <= KINK_MARGIN · (how far it moved z).
For the layer's own W and b, z is affine in the parameter, so a step crosses z = 0 exactly
when |z| <= the move (a margin of 1 would do); through earlier layers z also bends, by
O(eps²) over the step, which the margin of 2 covers."""


@dataclass(frozen=True)
class Kink:
    """A relu/leaky_relu unit whose pre-activation ``z`` lies within a step's reach of the
    kink at z = 0: ``layer`` (its index in ``net.layers``, as ``print(net)`` numbers a chain;
    a residual block's layers count in their order) and its ``activation`` as printed
    there, ``sample`` (the row of X), ``unit`` (the column of the layer's Z), and ``reach``,
    the largest move of z by a step that straddles it."""

    layer: int
    activation: str
    sample: int
    unit: int
    z: float
    reach: float

    def __str__(self) -> str:
        return (f"layer {self.layer} ({self.activation}), sample {self.sample}, unit {self.unit}: "
                f"z = {self.z:.3g}, and a step moves it by up to {self.reach:.2g}")


@dataclass(frozen=True, eq=False)
class ArrayCheck:
    """The check of one parameter array, ``name`` such as ``"layer 0 W"``: ``analytic`` (a),
    ``numerical`` (n), ``numerical_error`` (n's estimated error), ``relative_error`` (r), all
    of the array's shape; ``at_kink``, True where the element's steps straddled a kink, and
    ``inconclusive``, True where n is noise (see the module's docstring)."""

    name: str
    analytic: np.ndarray
    numerical: np.ndarray
    numerical_error: np.ndarray
    relative_error: np.ndarray
    at_kink: np.ndarray
    tolerance: float
    inconclusive: np.ndarray

    @property
    def max_relative_error(self) -> float:
        """The largest r in the array."""
        return float(np.max(self.relative_error))

    @property
    def max_absolute_error(self) -> float:
        """The largest |a - n| in the array."""
        return float(np.max(np.abs(self.analytic - self.numerical)))

    @property
    def mismatch(self) -> np.ndarray:
        """True where r is not below the tolerance (NaN included) and n is not noise."""
        return ~(self.relative_error < self.tolerance) & ~self.inconclusive

    @property
    def status(self) -> str:
        """``"passed"``: every r below the tolerance, with n no noise anywhere; ``"failed"``:
        a mismatch away from every kink; ``"kinks"``: mismatches only in elements whose steps
        straddle a kink; ``"inconclusive"``: no mismatch, but n is noise in some element."""
        if (self.mismatch & ~self.at_kink).any():
            return "failed"
        if self.mismatch.any():
            return "kinks"
        return "inconclusive" if self.inconclusive.any() else "passed"


WIDTH = 100
"""Width the report's sentences are wrapped to."""

_RESULT_TEXT = {"passed": "ok", "kinks": "mismatch at a kink", "failed": "FAILED",
                "inconclusive": "inconclusive"}


@dataclass(frozen=True, eq=False)
class GradcheckReport:
    """What :func:`gradcheck` found. ``arrays`` maps each parameter array's name
    (``"layer 0 W"``, ``"layer 0 b"``, ...) to its :class:`ArrayCheck`, in the order of
    ``net.parameters()``; ``kinks`` lists the straddled units; ``scale`` is G, the largest
    |a| or |n|, beside which n's error makes an element inconclusive; ``objective`` the loss
    checked, as its ``repr`` writes it. Print it to read it."""

    sizes: tuple[int, ...]
    samples: int
    loss: float
    eps: float
    tolerance: float
    arrays: dict[str, ArrayCheck]
    kinks: tuple[Kink, ...]
    scale: float
    objective: str = "mse"

    @property
    def status(self) -> str:
        """``"passed"``, ``"inconclusive"`` (no mismatch, but n is noise somewhere),
        ``"kinks"`` (mismatches only where a kink is straddled) or ``"failed"`` (a mismatch
        away from every kink): the worst of the arrays'."""
        statuses = {check.status for check in self.arrays.values()}
        return next(s for s in ("failed", "kinks", "inconclusive", "passed") if s in statuses)

    @property
    def passed(self) -> bool:
        """True if every element's relative error is below the tolerance, and n is no noise
        anywhere."""
        return self.status == "passed"

    @property
    def failed(self) -> bool:
        """True if some element disagrees away from every kink: a bug, not a kink."""
        return self.status == "failed"

    @property
    def max_relative_error(self) -> float:
        """The largest relative error over every parameter."""
        return max(check.max_relative_error for check in self.arrays.values())

    def __str__(self) -> str:
        lines = [f"gradcheck of Network {'-'.join(map(str, self.sizes))} on {self.samples} "
                 f"samples, loss {self.objective} {self.loss:.6g}: backward (a) against central",
                 f"differences (n) with eps {self.eps:g}; an element passes if "
                 f"r = |a - n| / max(|a| + |n|, tiny) < {self.tolerance:g},",
                 f"where tiny = {NOISE_MARGIN:g} x (error of n) / {self.tolerance:g}; n is noise "
                 f"(inconclusive) where",
                 f"{NOISE_MARGIN:g} x (error of n) >= {self.tolerance:g} x {self.scale:.3g}, "
                 "the largest |a| or |n|"]
        rows = [("array", "shape", "max r", "max |a - n|", "max error of n",
                 "steps across a kink", "n is noise", "result")]
        for name, check in self.arrays.items():
            rows.append((name, str(check.analytic.shape), f"{check.max_relative_error:.2g}",
                         f"{check.max_absolute_error:.2g}",
                         f"{float(np.max(check.numerical_error)):.2g}",
                         f"{int(check.at_kink.sum())} of {check.at_kink.size}",
                         f"{int(check.inconclusive.sum())} of {check.inconclusive.size}",
                         _RESULT_TEXT[check.status]))
        lines.append(table(rows))
        if self.kinks:
            lines.append(f"{len(self.kinks)} unit(s) lie within a step's reach of the kink at "
                         "z = 0:")
            lines.extend(f"  {kink}" for kink in self.kinks)
            lines.append(textwrap.fill(
                "A step there straddles the kink: the central difference averages the slopes "
                "on either side while backward uses one of them, so a mismatch in those steps "
                "is expected, not a bug.", WIDTH))
        lines.append(textwrap.fill(self._verdict(), WIDTH))
        return "\n".join(lines)

    __repr__ = __str__

    def _verdict(self) -> str:
        """The last line of the report: the status, and for a failure where to look."""
        if self.status == "passed":
            return f"result: passed, every element agrees (r < {self.tolerance:g})."
        if self.status == "inconclusive":
            noisy = [check for check in self.arrays.values() if check.inconclusive.any()]
            count = sum(int(check.inconclusive.sum()) for check in noisy)
            worst = max(float(np.max(check.numerical_error)) for check in noisy)
            names = ", ".join(check.name for check in noisy)
            total = sum(check.inconclusive.size for check in self.arrays.values())
            return (f"result: inconclusive: in {count} element(s) ({names}) the central "
                    f"difference's own error (up to {worst:.2g}) "
                    f"is too large beside the gradients (up to {self.scale:.3g}) to tell a "
                    "correct backward from a wrong one"
                    + ("" if count == total else "; every other element agrees")
                    + ". Check at initialization, away from a minimum, with eps near its "
                    "default 1e-6.")
        if self.status == "kinks":
            names = ", ".join(name for name, check in self.arrays.items()
                              if check.status == "kinks")
            unsure = sum(int(check.inconclusive.sum()) for check in self.arrays.values())
            rest = (f"every other element agrees (r < {self.tolerance:g})" if not unsure else
                    f"{unsure} other element(s) are inconclusive (their central difference "
                    "is noise), the rest agree")
            return (f"result: mismatch only where a kink is straddled ({names}); {rest}. "
                    "Other biases or samples would test those elements too.")
        failing = [check for check in self.arrays.values() if check.status == "failed"]
        last = failing[-1]
        errors = np.where(last.mismatch & ~last.at_kink,
                          np.nan_to_num(last.relative_error, nan=np.inf), -1.0)
        index = tuple(int(i) for i in np.unravel_index(np.argmax(errors), errors.shape))
        return (f"result: FAILED in {', '.join(check.name for check in failing)}, away from "
                f"any kink: the backward pass has a bug. Worst in {last.name}"
                f"[{', '.join(map(str, index))}]: backward {last.analytic[index]:.6g}, central "
                f"difference {last.numerical[index]:.6g}. A wrong activation derivative spoils "
                "its layer's gradients and those of every layer before it: look first at the "
                "failing layer nearest the output.")


def gradcheck(net: Network, X: object, y: object, eps: float = 1e-6,
              tolerance: float = 1e-5, loss: str | Loss = "mse") -> GradcheckReport:
    """Check ``net``'s backward pass on the batch X (B, n_in), y (B, n_out) against central
    differences with step ``eps``, for every weight and bias, of ``loss`` (a name, a spec or a
    :class:`~tinynet.losses.Loss`, as :func:`tinynet.fit` takes it; its bounds are checked as
    there); return a :class:`GradcheckReport`.

    Every parameter is put back exactly after its steps (even if interrupted), so the
    parameters are bit for bit unchanged. The layers are left as after ``net.forward(X)`` and
    ``net.backward`` of the loss's gradient: their dW and db hold the analytic gradients.
    """
    check_instance("net", net, Network, "a tinynet Network")
    X, y = check_training_data(X, y, net.n_in, net.n_out)
    eps = check_float("eps", eps, minimum=0.0, inclusive=False)
    # Why 1e-5. n errs by about eps²·|L'''|/6 (truncation) plus u·|L|/eps (rounding,
    # u = 2.2e-16). At eps = 1e-6 that is about 1e-12 + 2e-10 for a loss and derivatives of
    # order 1, so a correct backward pass shows r of 1e-10 to 1e-7 (more only for gradients
    # far smaller than the loss, which ``tiny`` takes care of), while a real bug (a wrong
    # factor, a sign, a dropped term) shows r of 1e-3 to 1. 1e-5 lies between, with 100x to
    # spare on either side.
    tolerance = check_float("tolerance", tolerance, minimum=0.0, inclusive=False)
    objective = _checked_loss(loss, net, y)
    for name, parameter in _named_parameters(net):
        if not np.all(np.isfinite(parameter)):
            bad = tuple(int(i) for i in np.argwhere(~np.isfinite(parameter))[0])
            raise ValueError(f"net's parameters must be finite, got {name}{list(bad)} = "
                             f"{parameter[bad]}")
    _check_steps_move(net, eps)
    _check_step_small(net, eps)

    value = objective.value(net.forward(X), y)
    z = [layer.pre_activation.copy() for layer in net.layers]
    numerical, errors, at_kink, kinks = _central_differences(net, X, y, eps, z, objective)
    _backward(net, objective, X, y)  # after the steps: leave the caches at θ

    scale = max(float(np.max(np.abs(array))) for array in (*net.gradients(), *numerical))
    arrays = {}
    for (name, _), gradient, n, error, straddled in zip(
            _named_parameters(net), net.gradients(), numerical, errors, at_kink):
        a = gradient.copy()
        # at least the smallest float: error is 0 when the outputs and targets are all 0
        tiny = np.maximum(NOISE_MARGIN * error / tolerance, np.finfo(np.float64).tiny)
        relative = np.abs(a - n) / np.maximum(np.abs(a) + np.abs(n), tiny)
        noise = ~(NOISE_MARGIN * error < tolerance * scale)  # NaN errors included
        arrays[name] = ArrayCheck(name, a, n, error, relative, straddled, tolerance, noise)
    return GradcheckReport(tuple(net.sizes), len(X), value, eps, tolerance, arrays, kinks,
                           scale, repr(objective))


def _backward(net: Network, loss: Loss, X: np.ndarray, y: np.ndarray) -> None:
    """``net.forward(X)``, then backward from the loss's gradient as training starts it:
    dL/dŷ, or dL/dz of the output layer when the loss gives it through that layer's sigmoid
    or softmax (:meth:`~tinynet.losses.Loss.through_output`)."""
    y_hat = net.forward(X)
    through = loss.through_output(net.layers[-1].activation)
    if through:
        net.backward(getattr(loss, through)(y_hat, y, len(y)), given_dZ=True)
    else:
        net.backward(loss.gradient(y_hat, y))


def _check_steps_move(net: Network, eps: float) -> None:
    """Raise ValueError if a step of ±eps/2 rounds some parameter back to itself (then so
    may ±eps: rounding is monotone): its central difference would be 0 over 0 steps, or
    noise. The smallest eps that moves every parameter is just over the largest parameter's
    spacing of floats; the message asks for 4 times that, a margin."""
    for name, parameter in _named_parameters(net):
        stuck = (parameter + eps / 2 == parameter) | (parameter - eps / 2 == parameter)
        if stuck.any():
            index = tuple(int(i) for i in np.argwhere(stuck)[0])
            needed = max(float(np.max(np.spacing(np.abs(p)))) for p in net.parameters())
            value = float(parameter[index])
            raise ValueError(f"eps must move every parameter, got eps={eps:g}: "
                             f"{name}{list(index)} = {value!r} plus or minus eps/2 rounds back "
                             f"to itself; expected eps > {4 * needed:.2g} (4 times the "
                             "largest spacing of floats among the parameters; "
                             "the default 1e-6 suits parameters of order 1)")


EPS_SCALE = 1e-2
"""The largest step :func:`gradcheck` takes, as a fraction of the parameters' scale
max(1, max |θ|): see :func:`_check_step_small`."""


def _check_step_small(net: Network, eps: float) -> None:
    """Raise ValueError if ``eps`` is too large for the parameters' scale
    s = max(1, max |θ|), that is if eps > EPS_SCALE · s.

    Why. n = L' + eps² L'''/6 + eps⁴ L⁽⁵⁾/120 + ..., and n's estimated error (Richardson's,
    from n and n½) takes the eps² term for the whole truncation error. A network's loss bends
    over distances of about s in its parameters (a step moves a pre-activation z by eps·|x|,
    the activations bend where |z| is of order 1, and larger parameters stretch that), so
    L⁽ᵏ⁾ is about L'/s^(k-1) and each term of the series about (eps/s)² times the one before.
    At eps = s/100 the terms the estimate leaves out are 1e-4 of the one it takes; at eps of
    the order of s or more, n measures the loss's shape far from θ, not its slope at θ, and
    neither n nor its estimated error mean anything: a correct 2-3-1 on XOR was reported
    FAILED at eps = 30 and 1000."""
    largest = max(float(np.max(np.abs(p))) for p in net.parameters())
    bound = EPS_SCALE * max(1.0, largest)
    if eps > bound:
        raise ValueError(f"eps must be small beside the parameters' scale, got eps={eps:g}: "
                         f"expected eps <= {bound:g} ({EPS_SCALE:g} x max(1, largest "
                         f"|parameter| {largest:g})); the central difference is the slope at the "
                         "parameters only for steps small beside them (the default 1e-6 suits "
                         "parameters of order 1)")


def _named_parameters(net: Network) -> list[tuple[str, np.ndarray]]:
    """``[("layer 0 W", W0), ("layer 0 b", b0), ...]``, in the order of ``net.parameters()``,
    each named by its row of ``print(net)``: a residual block's ``"layer 1.norm gain"``,
    ``"layer 1.0 W"``, ``"layer 1.α"``."""
    labels = net.labels()
    return [(f"layer {labels[id(owner)]}" + ("" if owner in net.residuals else f" {name}"),
             getattr(owner, name)) for owner, name, _ in net.slots()]


def _has_kink(activation: Activation) -> bool:
    """True for ReLU and LeakyReLU, except LeakyReLU(1), which is the identity."""
    return isinstance(activation, (ReLU, LeakyReLU)) and activation.alpha != 1.0


def _central_differences(net: Network, X: np.ndarray, y: np.ndarray, eps: float,
                         z: list[np.ndarray], loss: Loss
                         ) -> tuple[list[np.ndarray], list[np.ndarray], list[np.ndarray],
                                    tuple[Kink, ...]]:
    """For each parameter array: n, the central differences; n's estimated error,
    (4/3) |n - n½| + u (S₊ + S₋) / (2 eps), or its second term alone where a kink is
    straddled; and a mask of the elements whose steps straddled a kink. Then the straddled
    units. ``z`` holds each layer's pre-activation (B, n_out) at the unchanged parameters.

    A step of θ straddles unit (layer l, sample i, unit j) of a relu/leaky_relu layer when it
    moves z[l][i, j] by some m > 0 with |z[l][i, j]| <= KINK_MARGIN · m; ``reach`` keeps, per
    unit, the largest such m. The steps of ±eps/2 stay within those of ±eps, but are watched
    too, since they feed the error estimate.
    """
    kinked = [l for l, layer in enumerate(net.layers) if _has_kink(layer.activation)]
    reach = {l: np.zeros_like(z[l]) for l in kinked}

    def loss_at(parameter: np.ndarray, index: tuple[int, ...], value: float,
                straddled: np.ndarray) -> tuple[float, float]:
        """L and S with ``parameter[index]`` set to ``value``; marks ``straddled[index]`` if
        the step straddles a kink, and records how far it moved each straddled unit."""
        parameter[index] = value
        y_hat = net.forward(X)
        terms, gradient = loss.value_and_gradient(y_hat, y, len(y))
        total = float(np.sum(np.broadcast_to(terms, y.shape))) / len(y)  # loss.value(y_hat, y)
        for l in kinked:
            move = np.abs(net.layers[l].pre_activation - z[l])
            across = (move > 0) & (np.abs(z[l]) <= KINK_MARGIN * move)
            straddled[index] |= bool(across.any())
            reach[l] = np.where(across, np.maximum(reach[l], move), reach[l])
        size = float(np.sum(np.abs(np.broadcast_to(terms, y.shape)))) / len(y)
        return total, size + float(np.sum(np.abs(gradient) * np.abs(y_hat)))  # L and S

    numerical, errors, at_kink = [], [], []
    for parameter in net.parameters():
        n, n_half, rounding = (np.empty_like(parameter) for _ in range(3))
        straddled = np.zeros(parameter.shape, dtype=bool)
        for index in np.ndindex(parameter.shape):
            saved = parameter[index]
            try:
                (up, s_up), (down, s_down), (up_half, _), (down_half, _) = (
                    loss_at(parameter, index, saved + step, straddled)
                    for step in (eps, -eps, eps / 2, -eps / 2))
            finally:
                parameter[index] = saved
            n[index] = (up - down) / (2.0 * eps)
            n_half[index] = (up_half - down_half) / eps
            rounding[index] = ROUNDING * (s_up + s_down) / (2.0 * eps)
        numerical.append(n)
        # across a kink L is not smooth, Richardson's estimate does not hold (it would pass
        # anything there): those elements keep only the rounding error
        errors.append(np.where(straddled, 0.0, 4.0 / 3.0 * np.abs(n - n_half)) + rounding)
        at_kink.append(straddled)

    kinks = tuple(Kink(l, repr(net.layers[l].activation), int(i), int(j), float(z[l][i, j]),
                       float(reach[l][i, j]))
                  for l in kinked for i, j in zip(*np.nonzero(reach[l])))
    return numerical, errors, at_kink, kinks
