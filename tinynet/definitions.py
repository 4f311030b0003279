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

from .activations import Activation, Sigmoid, Softmax
from .init.registry import _REPLACING, check_name
from .losses import Loss
from .optimizers import Optimizer
from .differences import (H, RTOL, ULPS, Calls, at, compare, differences, finite,
                          returned, ulps_apart)
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

ACTIVATION_GRID = np.concatenate([
    [0.0, 1e-300, -1e-300, 1e-12, -1e-12, H / 4, -H / 4],  # at 0 and within a step of it
    np.linspace(-8.0, 8.0, 65),                           # moderate: every quarter from -8 to 8
    [20.0, -20.0, 40.0, -40.0, 700.0, -700.0]])           # large: exp(±700) is still finite
"""Where an activation is checked: 0 (every built-in kink) and just either side of it, every
quarter from -8 to 8 (kinks at integers and quarters), and large |z|, where φ must stay finite."""

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

    * Activation over a layer's units (a softmax): :func:`_check_over_units`.
    * Activation: ``forward_and_derivative(z)`` returns two values, each real and
      broadcastable to z's shape, element-wise, finite on :data:`ACTIVATION_GRID`; φ' agrees
      with central differences of φ (step :data:`H`, :data:`RTOL` beyond their own error) at
      every smooth point; at a kink (:func:`~tinynet.differences.differences`) φ' lies
      between the one-sided slopes, as a left or right derivative or any subgradient does.
    * Loss: ``value_and_gradient(y_hat, y, batch)`` returns two values; the term does not
      depend on ``batch``; batch × gradient agrees with the central difference of the term in
      ŷ at :data:`BATCHES` 1 and 4 (one without its 1/B is named so), as does batch ×
      ``gradient_through_sigmoid``, if any, with that in z of the term of σ(z), and
      ``gradient_through_softmax`` with that in z of the summed terms of softmax(z)
      (:func:`_check_through_softmax`); ŷ and y lie inside the loss's ``bounds``.
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
    if kind == "activation" and instance.over_units:
        with np.errstate(all="ignore"):
            checked, ulps = _check_over_units(instance, where, "numba" in backends)
        return Report(where, tuple(checked), None, RTOL, tuple(backends), ulps)
    run = {"activation": _check_activation, "loss": _check_loss,
           "optimizer": _check_optimizer}[kind]
    with np.errstate(all="ignore"):  # what is not finite is refused by name, not warned of
        checked, worst, calls = run(instance, where)
    ulps = _check_compiled(instance, where, calls) if "numba" in backends else None
    return Report(where, tuple(checked), worst, RTOL, tuple(backends), ulps)


def _check_activation(activation: Activation, where: str) -> tuple[list[str], float, Calls]:
    """See :func:`check`."""
    method = f"{type(activation).__qualname__}.forward_and_derivative"
    z = ACTIVATION_GRID

    def pair(points: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        result = type(activation).forward_and_derivative(activation, points.copy())
        return returned(result, ("φ(z)", "φ'(z)"), points.shape, where, method)

    value, slope = pair(z)
    finite(where, method, {"z": z}, (value, slope))
    mirrored = pair(z[::-1])
    for name, ours, theirs in (("φ", value, mirrored[0][::-1]),
                               ("φ'", slope, mirrored[1][::-1])):
        far = ulps_apart(ours, theirs, np.abs(ours)) > ULPS
        if far.any():
            i = np.flatnonzero(far)[0]
            raise DefinitionError(f"{where}: {method} is not element-wise: its {name} at "
                                  f"z = {float(z[i])!r} is {float(ours[i])!r} in one order of "
                                  f"the points and {float(theirs[i])!r} in another")

    def phi(points: np.ndarray) -> np.ndarray:
        values = pair(points)[0]
        finite(where, method, {"z": points}, (values,))
        return values

    d = differences(phi, z, np.full(z.shape, H))
    worst = compare(where, method, {"z": z}, slope, d, "φ'(z)")
    kinks = int(d["kink"].sum())
    checked = [f"two values, real, element-wise and finite at {z.size} z from -700 to 700",
               f"φ' against central differences of φ (h = {H:g}) at {z.size - kinks} smooth "
               f"points, between the one-sided slopes at {kinks} kink(s)"]
    return checked, worst, [("forward_and_derivative", 1, 2, (z,), (value, slope))]


OVER_UNITS_ROWS = np.array([[0.0, 0.0, 0.0, 0.0], [1.0, 2.0, 3.0, 4.0], [-3.0, 0.5, 0.25, -1.0],
                            [700.0, -700.0, 0.0, 1e-12], [40.0, 40.0, -40.0, 20.0],
                            [-1e-300, 1e-300, 8.0, -8.0], [745.0, 745.0, 744.0, -745.0]])
"""Where an activation over a layer's units is checked: rows of four units, equal, ordered,
mixed, and far apart (where an exp of z itself would overflow or underflow)."""


def _check_over_units(activation: Activation, where: str,
                      compiled: bool) -> tuple[list[str], float | None]:
    """An activation over a layer's units: ``forward_over_units(z)`` returns one array of z's
    shape, finite on :data:`OVER_UNITS_ROWS`, the same row by row as for all rows at once
    (it reduces over the units of each row, nothing else); compiled, within :data:`ULPS` ulp
    of NumPy's value at every unit. Its gradient
    is checked through the loss that trains it (cross-entropy's
    ``gradient_through_softmax``)."""
    method = f"{type(activation).__qualname__}.forward_over_units"
    z = OVER_UNITS_ROWS

    def forward(points: np.ndarray) -> np.ndarray:
        result = type(activation).forward_over_units(activation, points.copy())
        (values,) = returned(result, ("φ(z)",), points.shape, where, method)
        return values

    values = forward(z)
    finite(where, method, {"z": z.ravel()}, (values.ravel(),))
    for r, row in enumerate(z):
        alone = forward(row[None])[0]
        if not np.array_equal(alone, values[r]):
            raise DefinitionError(f"{where}: {method} gives row {r} ({list(row)}) as "
                                  f"{list(alone)} alone and {list(values[r])} among the other "
                                  "rows: it must reduce over each row's units alone")
    checked = [f"one value per unit, finite at {len(z)} rows of {z.shape[1]} units, each row "
               "the same alone and among the others"]
    if not compiled:
        return checked, None
    from .compiled import kit, reducing, render
    names = [name for name, _ in render.parameters(activation)]
    function = reducing.row_function(reducing.stages(kit.definition_of(activation, where),
                                                     where), z.shape[1], names)
    got = np.array([function(*row, *(value for _, value in render.parameters(activation)))
                    for row in z])
    apart = ulps_apart(got, values, np.abs(values))
    if (apart > ULPS).any():
        r, j = np.argwhere(apart > ULPS)[0]
        raise DefinitionError(f"{where}: {method} compiled gives {float(got[r, j])!r} at unit "
                              f"{j} of row {list(z[r])} where NumPy gives "
                              f"{float(values[r, j])!r}: {apart[r, j]:.3g} ulp apart (allowed "
                              f"{ULPS})")
    return checked, float(apart.max())


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
        values = returned(result, ("term", "gradient"), points.shape, where,
                           f"{method}(batch={batch})")
        finite(where, method, {"y_hat": points, "y": y}, values)
        return values

    calls: Calls = []
    worst = 0.0
    first = terms(y_hat, BATCHES[0])
    for batch in BATCHES:
        term, gradient = terms(y_hat, batch)
        moved = ulps_apart(term, first[0], np.abs(term)) > ULPS
        if moved.any():
            i = np.flatnonzero(moved)[0]
            raise DefinitionError(f"{where}: {method}'s term depends on batch: at "
                                  f"{at({'y_hat': y_hat, 'y': y}, i)} it is "
                                  f"{float(first[0][i])!r} at batch {BATCHES[0]} and "
                                  f"{float(term[i])!r} at batch {batch} (an epoch's loss is the "
                                  "mean of its samples' terms, whatever the batches)")
        d = differences(lambda points: terms(points, batch)[0], y_hat, h)
        _batch_factor(where, method, "gradient", batch, gradient * batch, d)
        worst = max(worst, compare(where, method, {"y_hat": y_hat, "y": y}, gradient * batch,
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
    if loss.through("gradient_through_softmax"):
        more, calls_z = _check_through_softmax(loss, where)
        worst = max(worst, more)
        checked.append("gradient_through_softmax × batch against central differences in z of "
                       "the summed terms of softmax(z)")
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
        (gradient,) = returned(result, ("dL/dz",), z.shape, where, f"{method}(batch={batch})")
        finite(where, method, {"z": z, "y": y}, (gradient,))

        def term(points: np.ndarray) -> np.ndarray:
            values = type(loss).value_and_gradient(loss, sigmoid.forward(points), y.copy(), 1)
            return returned(values, ("term", "gradient"), points.shape, where, method)[0]

        d = differences(term, z, np.full(z.shape, H))
        _batch_factor(where, method, "gradient", batch, gradient * batch, d)
        worst = max(worst, compare(where, method, {"z": z, "y": y}, gradient * batch, d,
                                    f"dL/dz × batch (batch {batch})"))
        calls.append(("gradient_through_sigmoid", 3, 1, (y_hat, y, np.full(y.shape, batch)),
                      (gradient,)))
    return worst, calls


def _check_through_softmax(loss: Loss, where: str) -> tuple[float, Calls]:
    """``gradient_through_softmax`` × batch against the central difference in each z_k of
    the row's summed terms Σ_j term(softmax(z)_j, y_j) (the built-in
    :class:`~tinynet.activations.Softmax`), at batch sizes 1 and 4, for rows of three
    units and targets that sum to 1 (one-hot, and probabilities)."""
    method = f"{type(loss).__qualname__}.gradient_through_softmax"
    z = np.array([[0.0, 0.0, 0.0], [1.0, -2.0, 0.5], [4.0, 3.0, -6.0], [-1.5, 2.5, 0.25]])
    targets = np.array([[1.0, 0.0, 0.0], [0.0, 0.0, 1.0], [0.2, 0.5, 0.3]])
    z, y = (np.repeat(z, len(targets), axis=0), np.tile(targets, (len(z), 1)))
    softmax = Softmax()
    worst, calls = 0.0, []
    for batch in BATCHES:
        p = softmax.forward(z)
        result = type(loss).gradient_through_softmax(loss, p.copy(), y.copy(), batch)
        (gradient,) = returned(result, ("dL/dz",), z.shape, where, f"{method}(batch={batch})")
        finite(where, method, {"z": z.ravel(), "y": y.ravel()}, (gradient.ravel(),))
        for k in range(z.shape[1]):
            def total(points: np.ndarray) -> np.ndarray:
                moved = z.copy()
                moved[:, k] = points
                values = type(loss).value_and_gradient(loss, softmax.forward(moved), y.copy(), 1)
                terms = returned(values, ("term", "gradient"), moved.shape, where, method)[0]
                return np.add.accumulate(terms, axis=1)[:, -1]

            d = differences(total, z[:, k].copy(), np.full(len(z), H))
            points = {f"z[{k}]": z[:, k], f"y[{k}]": y[:, k]}
            _batch_factor(where, method, "gradient", batch, gradient[:, k] * batch, d)
            worst = max(worst, compare(where, method, points, gradient[:, k] * batch, d,
                                       f"dL/dz_{k} × batch (batch {batch})"))
        calls.append(("gradient_through_softmax", 3, 1,
                      (p.ravel(), y.ravel(), np.full(y.size, batch)), (gradient.ravel(),)))
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
        values = returned(result, ("p", *slots), p.shape, where, method)
        finite(where, method, {"p": p, "g": g}, values)
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
                                  f"{at({'p': p, 'g': g}, i)} by {float(moved[i])!r}: a "
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
            apart = ulps_apart(got[:, index], want, scale)
            if (apart > ULPS).any():
                i = np.flatnonzero(apart > ULPS)[0]
                at = ", ".join(f"{float(x[i])!r}" for x in points)
                raise DefinitionError(
                    f"{where}: {type(owner).__qualname__}.{method} compiled gives "
                    f"{float(got[i, index])!r} for value {index + 1} at ({at}) where NumPy gives "
                    f"{float(want[i])!r}: {apart[i]:.3g} ulp apart (allowed {ULPS})")
            worst = max(worst, float(apart.max(initial=0.0)))
    return worst
