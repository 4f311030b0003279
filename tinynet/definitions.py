"""Your own activation, loss or optimizer, checked (:func:`check`, ``tinynet.check``) and
registered by name (``tinynet.activations.register`` and its two siblings,
:mod:`tinynet.registering`, through :func:`add`).

:func:`admit` holds every class to what the registries need: a subclass of
:class:`~tinynet.activations.Activation`, :class:`~tinynet.losses.Loss` or
:class:`~tinynet.optimizers.Optimizer`, with a ``name`` that a spec can read back
(:func:`tinynet.init.registry.check_name`), its parameters dataclass fields, made by its name
alone (every field has a default), and its one method taking the arguments its kind passes.
:func:`add` puts it in ``ACTIVATIONS``, ``LOSSES`` or ``OPTIMIZERS``, the dictionaries that
``get_activation``, ``get_loss``, ``get_optimizer`` and everything that takes a name read.

A name means one class: registering a name that another class holds is refused unless
``replace=True`` (or within :func:`tinynet.init.registry.replacing`, as a cluster's workers
import a user's module again); registering the class that holds it already changes nothing.
"""

from __future__ import annotations

import inspect
import math
from dataclasses import dataclass

import numpy as np

from .activations import Activation, Sigmoid
from .init.registry import _REPLACING, check_name
from .losses import Loss
from .optimizers import Optimizer
from .validation import DefinitionError

__all__ = ["DefinitionError", "Report", "KINDS", "check", "admit", "add"]


KINDS: dict[str, tuple[type, str, str]] = {  # base class, method, the method's arguments
    "activation": (Activation, "forward_and_derivative", "z"),
    "loss": (Loss, "value_and_gradient", "y_hat, y, batch"),
    "optimizer": (Optimizer, "update", "p, g, lr, *state")}


def kind_of(cls: type) -> str:
    """``"activation"``, ``"loss"`` or ``"optimizer"``: which base ``cls`` derives from."""
    for kind, (base, _, _) in KINDS.items():
        if isinstance(cls, type) and issubclass(cls, base) and cls is not base:
            return kind
    raise TypeError(f"definition must be a subclass of Activation, Loss or Optimizer (or one "
                    f"of their instances), got {cls!r}")


def admit(cls: type, kind: str) -> type:
    """Return ``cls`` if it can be registered as a ``kind``; raise otherwise, in one line
    naming the class and what is wrong (a TypeError for what is not such a class, a
    :class:`DefinitionError` for a class that is)."""
    base, method, arguments = KINDS[kind]
    if not (isinstance(cls, type) and issubclass(cls, base) and cls is not base):
        raise TypeError(f"{kind}s.register takes a subclass of {base.__name__} (a class, "
                        f"not an instance), got {cls!r}")
    where = f"{kind} class {cls.__qualname__}"
    name = cls.__dict__.get("name", getattr(cls, "name", ""))
    if not name:
        raise DefinitionError(f"{where} has no name: set name = '...' in the class, the name "
                              "it is found by")
    try:
        check_name(name)
    except (TypeError, ValueError) as error:
        raise DefinitionError(f"{where}'s name: {error}") from None
    loose = [] if "__dataclass_fields__" in vars(cls) else [  # not a dataclass itself
        name for name, note in inspect.get_annotations(cls).items() if "ClassVar" not in str(note)]
    if loose:  # its parameters would be class attributes, unseen by equality, specs, kernels
        raise DefinitionError(f"{where} annotates {', '.join(loose)} but is not a dataclass of "
                              "its own: decorate it with @dataclass(frozen=True, repr=False), "
                              "so that its parameters are fields")
    if kind == "loss" and cls.value_and_gradient is Loss.value_and_gradient or \
            kind == "optimizer" and cls.update is Optimizer.update:
        raise DefinitionError(f"{where} does not define {method}({arguments})")
    if kind == "optimizer":
        _check_state_names(cls, where)
    _check_arguments(cls, kind, where)
    try:
        cls()
    except Exception as error:  # noqa: BLE001  (whatever it raises, named in one line)
        raise DefinitionError(f"{where} cannot be made by its name alone: {cls.__name__}() "
                              f"raised {type(error).__name__}: {error}; give every field a "
                              "default") from None
    return cls


def add(cls: type, registry: dict[str, type], kind: str, replace: bool = False) -> type:
    """Admit ``cls`` (:func:`admit`), check it on NumPy (:func:`check`: the compiled
    backend's part compiles, and a fit that uses the class checks that it can render it) and
    put it in ``registry`` under its name; return it."""
    admit(cls, kind)
    held = registry.get(cls.name)
    if held is not None and held is not cls and not (replace or _REPLACING.get()):
        raise ValueError(f"{kind} {cls.name!r} is already registered (class "
                         f"{held.__module__}.{held.__qualname__}); pass replace=True to replace "
                         f"it with {cls.__qualname__}")
    check(cls, backends=("numpy",))
    registry[cls.name] = cls
    return cls


def _check_state_names(cls: type, where: str) -> None:
    """An optimizer's ``state``: a tuple of distinct identifiers, one per state value."""
    state = cls.state
    if not (isinstance(state, tuple) and all(isinstance(s, str) and s.isidentifier()
                                             for s in state) and len(set(state)) == len(state)):
        raise DefinitionError(f"{where}'s state must be a tuple of distinct names such as "
                              f"('velocity',), got {state!r}")


def _check_arguments(cls: type, kind: str, where: str) -> None:
    """The method takes the arguments its kind passes, positionally, after ``self``."""
    _, method, arguments = KINDS[kind]
    numpy_only = kind == "activation" and \
        cls.forward_and_derivative is Activation.forward_and_derivative
    names = ["forward", "derivative"] if numpy_only else [method]
    expected = 1 if kind == "activation" else 3 if kind == "loss" else 3 + len(cls.state)
    if kind == "optimizer":
        arguments = ", ".join(("p", "g", "lr", *cls.state))
    for name in names:
        try:
            signature = inspect.signature(getattr(cls, name))
        except (TypeError, ValueError):
            continue  # a builtin: nothing to read
        parameters = list(signature.parameters.values())[1:]
        if any(p.kind is p.VAR_POSITIONAL for p in parameters):
            continue
        positional = [p for p in parameters if p.kind in (p.POSITIONAL_ONLY,
                                                          p.POSITIONAL_OR_KEYWORD)]
        required = [p for p in positional if p.default is p.empty]
        if not len(required) <= expected <= len(positional):
            raise DefinitionError(f"{where}: {name} must take {expected} argument(s) after "
                                  f"self ({arguments}), got {name}{signature}")


# --- check: a definition against finite differences, on both backends ----------------------

U = float(np.finfo(np.float64).eps)  # 2.2e-16, one ulp of 1

H = 1e-5
"""The central differences' step. Their error at a smooth point is truncation, h²|φ'''|/6,
plus rounding, about u |φ| / h (two values of φ, each off by an ulp or so, subtracted and
divided by 2h): least near h = (3u |φ| / |φ'''|)^(1/3), about 1e-5 for |φ| ≈ |φ'''|. At
h = 1e-5 both are near 1e-11 relative for the built-in definitions."""

RTOL = 1e-6
"""The relative error a derivative may have beyond its central difference's estimated error
(:func:`_differences`): room for its own rounding (a few ulp) and what the estimate misses.
A wrong derivative (a factor missing, the wrong form) is off by far more."""

ULPS = 4
"""How far the compiled backend's values may be from NumPy's: its exp, log and log1p are
within 1 ulp of the exact value, as NumPy's are, so the two differ by an ulp or two after the
operations that follow (measured: 1 on the built-in definitions). Where a result is a small
difference of larger values (tanh's 1 − t², t ≈ 1) that ulp of t is many of the result's:
there the bound is ULPS ulp of the largest value the definition holds (its arguments and
locals, :func:`_compiled`)."""

ACTIVATION_GRID = np.concatenate([
    [0.0, 1e-300, -1e-300, 1e-12, -1e-12, H / 4, -H / 4],  # at 0 and within a step of it
    np.linspace(-8.0, 8.0, 65),                           # moderate: every quarter from -8 to 8
    [20.0, -20.0, 40.0, -40.0, 700.0, -700.0]])           # large: exp(±700) is still finite
"""Where an activation is checked: 0 (every built-in kink) and just either side of it, every
quarter from -8 to 8 (kinks at integers and quarters), and large |z|, where φ must stay finite."""

KINK = 1e-3
"""A point is a kink when its one-sided differences disagree by more than this, relative to
the larger (plus their rounding error): at a smooth point they differ by about h |φ''|, 1e-5
|φ''| at h = 1e-5; across a kink by the jump in slope."""


@dataclass(frozen=True)
class Report:
    """What :func:`check` verified: ``checked``, a phrase per check; ``worst``, the largest
    relative error of a derivative against its central difference where that resolves it
    (None for an optimizer), ``tolerance`` (:data:`RTOL`, beyond the difference's own error);
    ``ulps``, the compiled values' distance from NumPy's (None when not checked)."""

    definition: str
    checked: tuple[str, ...]
    worst: float | None
    tolerance: float
    backends: tuple[str, ...]
    ulps: float | None = None

    def __repr__(self) -> str:
        lines = [f"check({self.definition}): passed on {', '.join(self.backends)}",
                 *self.checked]
        if self.worst is not None:
            lines.append(f"worst relative error {self.worst:.2g}, tolerance "
                         f"{self.tolerance:g} beyond the differences' own error")
        if self.ulps is not None:
            lines.append(f"numba renders it, within {self.ulps:.2g} ulp of NumPy "
                         f"(allowed {ULPS})")
        return "\n  ".join(lines)


def check(definition: object, *, backends: tuple[str, ...] = ("numpy", "numba")) -> Report:
    """Check an activation, a loss or an optimizer (an instance, or a class: its default
    instance); return a :class:`Report`, or raise :class:`DefinitionError` in one line naming
    the class, the method, the point and the numbers. The NumPy method is always run (the
    compiled code is held to its values); ``backends=("numpy",)`` skips the compiled part.

    * Activation: ``forward_and_derivative(z)`` returns two values, each real and
      broadcastable to z's shape, element-wise, finite on :data:`ACTIVATION_GRID`; φ' agrees
      with central differences of φ (step :data:`H`, :data:`RTOL` beyond their own error) at
      every smooth point; at a kink (:func:`_differences`) φ' lies between the one-sided
      slopes, as a left or right derivative or any subgradient does.
    * Loss: ``value_and_gradient(y_hat, y, batch)`` returns two values; the term does not
      depend on ``batch``; batch × gradient agrees with the central difference of the term in
      ŷ at :data:`BATCHES` 1 and 4 (one without its 1/B is named so), as does batch ×
      ``gradient_through_sigmoid``, if any, with that in z of the term of σ(z); ŷ and y lie
      inside the loss's ``bounds``.
    * Optimizer: ``update(p, g, lr, *state)`` returns 1 + len(state) values; from the zero
      state, three steps with a nonzero g each move p against g at lr = 1e-3 (descent), and
      change every state value (one returned as it came would stay 0 for ever); at lr = 0,
      p does not move.
    * On ``"numba"``: :func:`_check_compiled`.
    """
    cls = definition if isinstance(definition, type) else type(definition)
    kind = kind_of(cls)
    instance = cls() if definition is cls else definition
    unknown = sorted(set(backends) - {"numpy", "numba"})
    if unknown or not backends:
        raise ValueError(f"backends must name 'numpy' and/or 'numba', got {backends!r}")
    where = f"{kind} {instance!r} ({cls.__qualname__})"
    if kind == "optimizer":
        _check_state_names(cls, where)
    _check_arguments(cls, kind, where)
    run = {"activation": _check_activation, "loss": _check_loss,
           "optimizer": _check_optimizer}[kind]
    with np.errstate(all="ignore"):  # what is not finite is refused by name, not warned of
        checked, worst, calls = run(instance, where)
    ulps = _check_compiled(instance, where, calls) if "numba" in backends else None
    return Report(where, tuple(checked), worst, RTOL, tuple(backends), ulps)


# What NumPy computed, for the compiled backend to compute again: (method, arguments, results,
# the arguments' values, NumPy's results), flat arrays
Calls = list[tuple[str, int, int, tuple[np.ndarray, ...], tuple[np.ndarray, ...]]]


def _returned(result: object, names: tuple[str, ...], shape: tuple[int, ...], where: str,
              what: str) -> tuple[np.ndarray, ...]:
    """``result`` as one float64 array of ``shape`` per name, or the refusal: not that many
    values, or a value not real or not broadcastable to ``shape``."""
    values = result if type(result) is tuple else (result,)
    if len(values) != len(names):
        shapes = ", ".join(f"shape {np.shape(value)}" for value in values[:4])
        raise DefinitionError(f"{where}: {what} must return {len(names)} value(s) "
                              f"({', '.join(names)}), got {len(values)} ({shapes})")
    arrays = []
    for index, value in enumerate(values):
        array = np.asarray(value)
        if array.dtype.kind not in "fiu":
            raise DefinitionError(f"{where}: {what}'s value {index + 1} must be real numbers, "
                                  f"got dtype {array.dtype}")
        try:
            array = np.broadcast_to(array, shape).astype(np.float64)
        except ValueError:
            raise DefinitionError(f"{where}: {what}'s value {index + 1} has shape "
                                  f"{array.shape}, which does not broadcast to its arguments' "
                                  f"shape {shape}") from None
        arrays.append(array)
    return tuple(arrays)


def _finite(where: str, what: str, points: dict[str, np.ndarray],
            values: tuple[np.ndarray, ...]) -> None:
    """Refuse the first point at which a value is not finite."""
    for index, value in enumerate(values):
        bad = np.flatnonzero(~np.isfinite(value))
        if bad.size:
            raise DefinitionError(f"{where}: {what}'s value {index + 1} is "
                                  f"{float(value[bad[0]])!r} at {_at(points, bad[0])}: it must "
                                  "stay finite")


def _differences(f, x: np.ndarray, h: np.ndarray) -> dict[str, np.ndarray]:
    """Finite differences of ``f`` at ``x``, each over the step actually taken (x ± h
    rounds)::

        central = (f(x+h) − f(x−h)) / 2h          left = (f(x) − f(x−h)) / h
        wide = (f(x+2h) − f(x−2h)) / 4h           right = (f(x+h) − f(x)) / h

    with ``own``, central's estimated error: rounding, noise = 2U (|f(x+h)| + |f(x−h)|) / 2h
    (each value of f within 2 ulp), plus truncation, h² |f'''| / 6, which |wide − central|
    bounds three times over (wide's is four times central's: Richardson); and ``kink``, True
    where left and right disagree by more than :data:`KINK` relative (plus 4 noise): the step
    straddles a kink, and central averages two slopes."""
    up, down, far_up, far_down = x + h, x - h, x + 2 * h, x - 2 * h
    f_up, f_down, f_at = f(up), f(down), f(x)
    central = (f_up - f_down) / (up - down)
    wide = (f(far_up) - f(far_down)) / (far_up - far_down)
    left, right = (f_at - f_down) / (x - down), (f_up - f_at) / (up - x)
    noise = 2 * U * (np.abs(f_up) + np.abs(f_down)) / (up - down)
    return {"central": central, "left": left, "right": right, "noise": noise,
            "own": noise + np.abs(wide - central),
            "kink": np.abs(right - left) > KINK * np.maximum(np.abs(left), np.abs(right))
            + 4 * noise}


def _compare(where: str, method: str, points: dict[str, np.ndarray], slope: np.ndarray,
             d: dict[str, np.ndarray], what: str) -> float:
    """Hold ``slope`` to the differences ``d`` in the first of ``points`` (at smooth points to
    the central one, at kinks between the one-sided ones); return the worst relative error
    where the central difference resolves it (its own estimated error is at most RTOL
    |slope|: not in a tail where φ' is below its rounding, 1e-304 against 0)."""
    kink = d["kink"]
    error = np.abs(slope - d["central"])
    tolerance = RTOL * np.abs(slope) + d["own"]
    wrong = ~kink & (error > tolerance)
    low = np.minimum(d["left"], d["right"])
    high = np.maximum(d["left"], d["right"])
    margin = KINK * np.maximum(np.abs(low), np.abs(high)) + 2 * d["noise"]
    wrong_at_kink = kink & ((slope < low - margin) | (slope > high + margin))
    if wrong.any():
        i = np.flatnonzero(wrong)[np.argmax((error / tolerance)[wrong])]
        relative = error[i] / max(abs(slope[i]), abs(d["central"][i]))
        raise DefinitionError(
            f"{where}: {method}'s {what} is {slope[i]:.17g} at {_at(points, i)}, "
            f"but central differences give {d['central'][i]:.17g} (h = {H:g}): relative "
            f"error {relative:.3g}, tolerance {tolerance[i] / abs(slope[i] or 1):.3g}")
    if wrong_at_kink.any():
        i = np.flatnonzero(wrong_at_kink)[0]
        raise DefinitionError(
            f"{where}: {method}'s {what} is {slope[i]:.17g} at {_at(points, i)}, a "
            f"kink (one-sided differences {d['left'][i]:.6g} and {d['right'][i]:.6g}): it "
            "must lie between them")
    resolved = ~kink & (d["own"] <= RTOL * np.abs(slope))
    scale = np.maximum(np.abs(slope), np.abs(d["central"]))[resolved]
    ratios = np.divide(error[resolved], scale, out=np.zeros_like(scale), where=scale > 0)
    return float(ratios.max(initial=0.0))


def _at(points: dict[str, np.ndarray], i: int) -> str:
    """``z = 0.5`` or ``y_hat = 0.3, y = 1.0``: point ``i``."""
    return ", ".join(f"{name} = {float(values[i])!r}" for name, values in points.items())


def _check_activation(activation: Activation, where: str) -> tuple[list[str], float, Calls]:
    """See :func:`check`."""
    method = f"{type(activation).__qualname__}.forward_and_derivative"
    z = ACTIVATION_GRID

    def pair(points: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        result = type(activation).forward_and_derivative(activation, points.copy())
        return _returned(result, ("φ(z)", "φ'(z)"), points.shape, where, method)

    value, slope = pair(z)
    _finite(where, method, {"z": z}, (value, slope))
    mirrored = pair(z[::-1])
    for name, ours, theirs in (("φ", value, mirrored[0][::-1]),
                               ("φ'", slope, mirrored[1][::-1])):
        far = _ulps(ours, theirs, np.abs(ours)) > ULPS
        if far.any():
            i = np.flatnonzero(far)[0]
            raise DefinitionError(f"{where}: {method} is not element-wise: its {name} at "
                                  f"z = {float(z[i])!r} is {float(ours[i])!r} in one order of "
                                  f"the points and {float(theirs[i])!r} in another")

    def phi(points: np.ndarray) -> np.ndarray:
        values = pair(points)[0]
        _finite(where, method, {"z": points}, (values,))
        return values

    d = _differences(phi, z, np.full(z.shape, H))
    worst = _compare(where, method, {"z": z}, slope, d, "φ'(z)")
    kinks = int(d["kink"].sum())
    checked = [f"two values, real, element-wise and finite at {z.size} z from -700 to 700",
               f"φ' against central differences of φ (h = {H:g}) at {z.size - kinks} smooth "
               f"points, between the one-sided slopes at {kinks} kink(s)"]
    return checked, worst, [("forward_and_derivative", 1, 2, (z,), (value, slope))]


def _loss_points(bounds: tuple[float, float]) -> tuple[np.ndarray, np.ndarray]:
    """Where a loss is checked: every pair of ŷ strictly inside ``bounds`` and y within them."""
    low, high = bounds
    if math.isfinite(low) and math.isfinite(high):
        y_hat = low + (high - low) * np.array([0.01, 0.1, 0.3, 0.5, 0.7, 0.9, 0.99])
        y = low + (high - low) * np.array([0.0, 0.3, 1.0])
    elif math.isfinite(low) or math.isfinite(high):
        sign, edge = (1.0, low) if math.isfinite(low) else (-1.0, high)
        y_hat = edge + sign * np.array([0.01, 0.1, 0.5, 1.0, 2.0, 5.0])
        y = edge + sign * np.array([0.0, 0.5, 2.0])
    else:
        y_hat = np.array([-5.0, -2.0, -1.0, -0.3, 0.0, 0.25, 0.7, 1.0, 1.5, 3.0, 6.0])
        y = np.array([-1.0, 0.0, 0.5, 1.0, 2.0])
    return tuple(grid.ravel() for grid in np.meshgrid(y_hat, y, indexing="ij"))


BATCHES = (1, 4)  # a gradient without its 1/B agrees at batch 1 only


def _check_loss(loss: Loss, where: str) -> tuple[list[str], float, Calls]:
    """See :func:`check`."""
    method = f"{type(loss).__qualname__}.value_and_gradient"
    y_hat, y = _loss_points(loss.bounds)
    low, high = loss.bounds
    h = np.minimum(H, np.minimum(y_hat - low, high - y_hat) / 4)  # never past a bound

    def terms(points: np.ndarray, batch: int) -> tuple[np.ndarray, np.ndarray]:
        result = type(loss).value_and_gradient(loss, points.copy(), y.copy(), batch)
        values = _returned(result, ("term", "gradient"), points.shape, where,
                           f"{method}(batch={batch})")
        _finite(where, method, {"y_hat": points, "y": y}, values)
        return values

    calls: Calls = []
    worst = 0.0
    first = terms(y_hat, BATCHES[0])
    for batch in BATCHES:
        term, gradient = terms(y_hat, batch)
        moved = _ulps(term, first[0], np.abs(term)) > ULPS
        if moved.any():
            i = np.flatnonzero(moved)[0]
            raise DefinitionError(f"{where}: {method}'s term depends on batch: at "
                                  f"{_at({'y_hat': y_hat, 'y': y}, i)} it is "
                                  f"{float(first[0][i])!r} at batch {BATCHES[0]} and "
                                  f"{float(term[i])!r} at batch {batch} (an epoch's loss is the "
                                  "mean of its samples' terms, whatever the batches)")
        d = _differences(lambda points: terms(points, batch)[0], y_hat, h)
        _batch_factor(where, method, "gradient", batch, gradient * batch, d)
        worst = max(worst, _compare(where, method, {"y_hat": y_hat, "y": y}, gradient * batch,
                                    d, f"gradient × batch (batch {batch})"))
        calls.append(("value_and_gradient", 3, 2, (y_hat, y, np.full(y.shape, batch)),
                      (term, gradient)))
    checked = [f"two values, finite, the term the same at batch {BATCHES[0]} and {BATCHES[1]}",
               f"batch × gradient against central differences of the term at {y_hat.size} "
               f"(y_hat, y) in {list(loss.bounds)}"]
    if loss.through_sigmoid():
        more, calls_z = _check_through_sigmoid(loss, where)
        worst = max(worst, more)
        checked.append("gradient_through_sigmoid × batch against central differences in z of "
                       "the term of σ(z)")
        calls += calls_z
    return checked, worst, calls


def _batch_factor(where: str, method: str, what: str, batch: int, scaled: np.ndarray,
                  d: dict[str, np.ndarray]) -> None:
    """Name a gradient that is batch (or 1/batch) times what it should be: one without its
    1/B (or with it twice) agrees at batch 1 and is off by exactly that factor elsewhere."""
    smooth = ~d["kink"] & (np.abs(d["central"]) > 1e-3)
    if batch == 1 or not smooth.any():
        return
    ratio = scaled[smooth] / d["central"][smooth]
    for factor, why in ((batch, "without the 1/B of the batch average: divide it by batch"),
                        (1 / batch, "divided by batch twice")):
        if np.allclose(ratio, factor, rtol=1e-4):
            raise DefinitionError(f"{where}: {method}'s {what} times batch is {factor:g} times "
                                  f"the derivative of the term at batch {batch}: it is "
                                  f"{why}")


def _check_through_sigmoid(loss: Loss, where: str) -> tuple[float, Calls]:
    """``gradient_through_sigmoid`` × batch against the central difference in z of the term
    of ŷ = σ(z) (the built-in :class:`~tinynet.activations.Sigmoid`), at batch sizes 1 and 4,
    for z from -6 to 6 and targets in the loss's bounds."""
    method = f"{type(loss).__qualname__}.gradient_through_sigmoid"
    targets = np.unique(_loss_points(loss.bounds)[1])
    z, y = (grid.ravel() for grid in np.meshgrid(np.linspace(-6.0, 6.0, 25), targets,
                                                 indexing="ij"))
    sigmoid = Sigmoid()
    worst, calls = 0.0, []
    for batch in BATCHES:
        y_hat = sigmoid.forward(z)
        result = type(loss).gradient_through_sigmoid(loss, y_hat.copy(), y.copy(), batch)
        (gradient,) = _returned(result, ("dL/dz",), z.shape, where, f"{method}(batch={batch})")
        _finite(where, method, {"z": z, "y": y}, (gradient,))

        def term(points: np.ndarray) -> np.ndarray:
            values = type(loss).value_and_gradient(loss, sigmoid.forward(points), y.copy(), 1)
            return _returned(values, ("term", "gradient"), points.shape, where, method)[0]

        d = _differences(term, z, np.full(z.shape, H))
        _batch_factor(where, method, "gradient", batch, gradient * batch, d)
        worst = max(worst, _compare(where, method, {"z": z, "y": y}, gradient * batch, d,
                                    f"dL/dz × batch (batch {batch})"))
        calls.append(("gradient_through_sigmoid", 3, 1, (y_hat, y, np.full(y.shape, batch)),
                      (gradient,)))
    return worst, calls


def _check_optimizer(optimizer: Optimizer, where: str) -> tuple[list[str], None, Calls]:
    """See :func:`check`."""
    method = f"{type(optimizer).__qualname__}.update"
    slots = optimizer.state
    p = np.array([-1.5, -0.2, 0.0, 0.4, 2.0, 1e-3, -3.0, 0.7])
    g = np.array([0.5, -2.0, 1e-3, -1e-2, 3.0, 10.0, -0.7, 1.0])
    lr = 1e-3

    def update(p: np.ndarray, lr: float, state: list[np.ndarray]) -> tuple[np.ndarray, ...]:
        result = type(optimizer).update(optimizer, p.copy(), g.copy(), lr,
                                        *(value.copy() for value in state))
        values = _returned(result, ("p", *slots), p.shape, where, method)
        _finite(where, method, {"p": p, "g": g}, values)
        return values

    state = [np.zeros(p.shape) for _ in slots]
    changed = [False] * len(slots)
    calls: Calls = []
    for step in range(1, 4):
        new = update(p, lr, state)
        moved = new[0] - p
        against = moved * g < 0
        if not against.all():
            i = np.flatnonzero(~against)[0]
            raise DefinitionError(f"{where}: {method} step {step} (lr = {lr:g}) moves "
                                  f"{_at({'p': p, 'g': g}, i)} by {float(moved[i])!r}: a "
                                  "descent step moves p against its gradient")
        calls.append(("update", 3 + len(slots), 1 + len(slots),
                      (p, g, np.full(p.shape, lr), *state), new))
        changed = [was or bool(np.any(after != before))
                   for was, after, before in zip(changed, new[1:], state)]
        p, state = new[0], list(new[1:])
    unchanged = [name for name, was in zip(slots, changed) if not was]
    if unchanged:
        raise DefinitionError(f"{where}: {method} returns its state {', '.join(unchanged)} as "
                              "it came in three steps from 0 with a nonzero g: it would stay 0 "
                              "for ever (return the new value)")
    still = update(p, 0.0, state)[0]
    if not np.array_equal(still, p):
        i = np.flatnonzero(still != p)[0]
        raise DefinitionError(f"{where}: {method} moves p = {float(p[i])!r} to "
                              f"{float(still[i])!r} at lr = 0: p must not move without a "
                              "learning rate")
    checked = [f"{1 + len(slots)} values ({', '.join(('p', *slots))}), finite",
               f"three steps from the zero state at lr = {lr:g} move p against g at {p.size} "
               "points" + (" and change every state value" * bool(slots)), "lr = 0 keeps p"]
    return checked, None, calls


def _ulps(a: np.ndarray, b: np.ndarray, scale: np.ndarray) -> np.ndarray:
    """|a − b| in ulps of ``scale`` (at least the larger of |a| and |b|); 0 where they are
    equal (infinities and NaNs of the same kind included)."""
    with np.errstate(invalid="ignore"):  # inf - inf
        far = np.abs(a - b) / np.spacing(np.maximum(np.maximum(np.abs(a), np.abs(b)), scale))
    return np.where((a == b) | (np.isnan(a) & np.isnan(b)), 0.0, np.nan_to_num(far, nan=np.inf))


def _check_compiled(owner: object, where: str, calls: Calls) -> float:
    """Render each method NumPy ran (:func:`tinynet.compiled.render.read`, which refuses what
    the compiled backend cannot build), compile its scalar code alone and hold its values at
    the same points to NumPy's: within :data:`ULPS` ulp of the larger of the two, or of the
    largest value the definition holds there (its arguments and locals). Returns the worst
    difference, in ulps of the larger of the two."""
    from .compiled import render
    if isinstance(owner, Activation) and \
            type(owner).forward_and_derivative is Activation.forward_and_derivative:
        raise render.NotCompilableError(
            f"backend 'numba' cannot run {where}: it defines forward and derivative, not "
            "forward_and_derivative written with tinynet.maths; pass backend='numpy'")
    worst, compiled, parameters = 0.0, {}, render.parameters(owner)
    for method, arguments, results, points, expected in calls:
        if method not in compiled:
            compiled[method] = render.scalar_function(
                render.read(owner, method, arguments, results, where),
                [name for name, _ in parameters])
        got = np.array([compiled[method](*(float(x[i]) for x in points),
                                         *(value for _, value in parameters))
                        for i in range(points[0].size)])
        for index, want in enumerate(expected):
            scale = np.max(np.abs(np.concatenate([got[:, results:],
                                                  np.column_stack(points)], axis=1)), axis=1)
            apart = _ulps(got[:, index], want, scale)
            if (apart > ULPS).any():
                i = np.flatnonzero(apart > ULPS)[0]
                at = ", ".join(f"{float(x[i])!r}" for x in points)
                raise DefinitionError(
                    f"{where}: {type(owner).__qualname__}.{method} compiled gives "
                    f"{float(got[i, index])!r} for value {index + 1} at ({at}) where NumPy gives "
                    f"{float(want[i])!r}: {apart[i]:.3g} ulp apart (allowed {ULPS})")
            worst = max(worst, float(apart.max(initial=0.0)))
    return worst
