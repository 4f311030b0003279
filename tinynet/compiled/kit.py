"""The maths of one network, written into compiled code from its definitions.

For a network's activations, loss and optimizer this module writes a small module, the
*kit*: each activation's ``forward_and_derivative`` and the loss's ``value_and_gradient`` as
scalar functions (:mod:`tinynet.compiled.render`), the optimizer's ``update`` for one
parameter, a switch over the activations for each of the generic kernels' loops, their step
(:mod:`tinynet.compiled.looping`) and epoch loop (:mod:`tinynet.compiled.epochs`), and the
generic kernels' entry points, written with the words of :mod:`tinynet.compiled.lanes` and
:mod:`tinynet.compiled.single`::

    @njit(cache=True, error_model="numpy", inline="always")
    def activation_4(z, parameters):
        \"\"\"leaky_relu: LeakyReLU.forward_and_derivative\"\"\"
        positive__0 = z > 0
        return (z if positive__0 else parameters[0] * z, 1.0 if positive__0 else parameters[0])

A kit is keyed by the maths alone (the activation classes the network uses, in the order of
its layers, the loss's class and the optimizer's, each with its definitions as written, so that
a method edited in place compiles anew: :meth:`Maths.key`), so every network of the same
activation classes shares one kit per loss and optimizer class, and a class a network does not
use (a new built-in one) is in none of its kits: layer sizes, seeds, samples, batch size,
epochs and learning rate are values the kernels read when they run, each layer's activation
parameters (LeakyReLU's alpha) come from :class:`tinynet.packing.Layout`, and the optimizer's
hyperparameters and the loss's parameters (a Huber loss's delta) from one array
(:func:`hyperparameters`). Nothing the kernels read at run time is written into their text
(:func:`described`). Written and compiled once per machine, as the generated kernels are
(:func:`tinynet.compiled.sources.load_module`).

What cannot be written (an activation defined with NumPy calls, a loss the kernels do not
know how to read) raises :class:`~tinynet.compiled.render.NotCompilableError` before anything
runs: :func:`check` is called by :func:`tinynet.fit` and its siblings when they choose the
backend.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Sequence
from types import ModuleType

import numpy as np

from ..activations import BUILT_IN, Activation
from ..losses import Loss
from ..optimizers import SGD, Optimizer
from ..packing import Layout, activation_kinds
from . import epochs, hoisting, looping, reducing, render
from .blockruns import structure_of
from .looping import UNCOUNTED
from .notices import entry_words
from .sources import announce_compiling, escaped, fingerprint, kernel_dir, load_module

__all__ = ["Maths", "maths_of", "layout_for", "check", "definition_of", "hyperparameters",
           "activation_lines", "loss_lines", "update_lines", "step_lines", "per_step_lanes",
           "source", "load", "entry"]


class Maths(tuple):
    """``(activations, loss, output, optimizer)``: the activations ``Layout.kinds`` indexes
    (one of each class the network uses: :func:`tinynet.packing.activation_kinds`, but a
    softmax output's), the loss, ``output``, the output layer's sigmoid or softmax when the
    loss gives its gradient through it (:meth:`tinynet.losses.Loss.through_output`), else
    None, and the optimizer. With ``output``, the output layer has kind
    ``len(activations)``: that sigmoid or softmax with slope 1, the loss giving dL/dz
    (:func:`layout_for`). The compiled kernels are keyed by :meth:`key`, what their code is
    written from."""

    def __new__(cls, activations: Sequence[Activation], loss: Loss,
                output: Activation | None = None, optimizer: Optimizer | None = None) -> "Maths":
        optimizer = SGD() if optimizer is None else optimizer
        return super().__new__(cls, (tuple(activations), loss, output, optimizer))

    @property
    def activations(self) -> tuple[Activation, ...]:
        return self[0]

    @property
    def loss(self) -> Loss:
        return self[1]

    @property
    def output(self) -> Activation | None:
        return self[2]

    @property
    def optimizer(self) -> Optimizer:
        return self[3]

    def kinds(self) -> int:
        """How many kinds of layer the kernels tell apart."""
        return len(self.activations) + (self.output is not None)

    def kind(self, kind: int) -> tuple[Activation, bool]:
        """``(activation, through)``: the activation of ``kind``, and whether its slope is 1
        (the output sigmoid or softmax the loss differentiates through)."""
        if kind == len(self.activations):
            return self.output, True
        return self.activations[kind], False

    def through(self) -> str | None:
        """The loss's method that gives dL/dz of the output layer
        (:meth:`tinynet.losses.Loss.through_output`), or None."""
        return None if self.output is None else self.loss.through_output(self.output)

    def split(self) -> hoisting.Split:
        """The optimizer's ``update`` split into its part per step and its part per parameter
        (:func:`tinynet.compiled.hoisting.split`)."""
        return hoisting.split(_optimizer_definition(self.optimizer))

    def optimizer_values(self) -> int:
        """How many of :func:`hyperparameters` are the optimizer's (the loss's follow)."""
        return len(render.parameters(self.optimizer))

    def key(self) -> tuple:
        """What the compiled code depends on: each activation's class, the names of its
        parameters (their values are read at run time) and its definition as the kernels are
        written from it (:attr:`~tinynet.compiled.render.Definition.text`); the loss's class,
        parameter names and definitions; whether its gradient goes through the output; and the
        optimizer's class, hyperparameter names and definition. A method edited in place
        (IPython's ``%autoreload``) gives another key, so it compiles anew, as it gets a file
        of its own on disk. Asked once per chunk of training and once per :func:`load`, it
        costs a few cache lookups per definition (:func:`tinynet.compiled.render.written`)."""
        loss, output = self.loss, self.output
        through = render.written(loss, self.through(), 3, 1) if output is not None else None
        return (tuple(_key(activation, "forward_and_derivative", 1, 2)
                      for activation in self.activations),
                (type(loss), tuple(name for name, _ in render.parameters(loss)),
                 render.written(loss, "value_and_gradient", 3, 2), through),
                None if output is None else _key(output, _definition_of(output), 1,
                                                 1 if output.over_units else 2),
                _key(self.optimizer, "update", 3 + len(self.optimizer.state),
                     1 + len(self.optimizer.state)))


def _definition_of(activation: Activation) -> str:
    """The method an activation is defined by: ``forward_over_units`` (a softmax) or
    ``forward_and_derivative``."""
    return "forward_over_units" if activation.over_units else "forward_and_derivative"


def _key(owner: Activation | Optimizer, method: str, arguments: int, results: int) -> tuple:
    """An activation's or optimizer's part of :meth:`Maths.key`."""
    return (type(owner), tuple(name for name, _ in render.parameters(owner)),
            render.written(owner, method, arguments, results))


def maths_of(net: object, loss: Loss, optimizer: Optimizer | None = None) -> Maths:
    """The :class:`Maths` of network ``net`` trained on ``loss`` by ``optimizer`` (default:
    plain SGD). A softmax output (only ever the output layer: :class:`tinynet.Network`) is
    ``output``, not one of ``activations``, and so is a sigmoid the loss differentiates
    through."""
    output = net.layers[-1].activation
    through = loss.through_output(output) is not None
    kinds = activation_kinds(net)
    return Maths(kinds[:-1] if output.over_units else kinds, loss,
                 output if through else None, optimizer)


def layout_for(layout: Layout, maths: Maths) -> Layout:
    """``layout`` with the output layer's kind ``len(maths.activations)`` when the loss gives
    its gradient through the output sigmoid (:class:`Maths`)."""
    if maths.output is None:  # (a softmax's kind is already the last: it is never hidden)
        return layout
    kinds = layout.kinds.copy()
    kinds[-1] = len(maths.activations)
    return layout._replace(kinds=kinds)


def check(net: object, loss: Loss, optimizer: Optimizer | None = None) -> None:
    """Raise :class:`~tinynet.compiled.render.NotCompilableError` unless the compiled backend
    can build every activation of ``net``, ``loss`` and ``optimizer`` from their
    definitions; a network with residual blocks it runs as layers, a run of blocks of one
    kind, then layers (:func:`tinynet.compiled.blockruns.structure_of`)."""
    if getattr(net, "residuals", None):
        structure_of(net)
    for index, layer in enumerate(net.layers):
        definition_of(layer.activation, f"layers[{index}]'s activation "
                               f"{layer.activation!r} ({type(layer.activation).__name__})")
    _loss_definition(loss, "value_and_gradient")
    through = loss.through_output(net.layers[-1].activation)
    if through:
        _loss_definition(loss, through)
    _optimizer_definition(SGD() if optimizer is None else optimizer)


def _optimizer_definition(optimizer: Optimizer) -> render.Definition:
    slots = len(optimizer.state)
    return render.read(optimizer, "update", 3 + slots, 1 + slots,
                       f"optimizer {optimizer!r} ({type(optimizer).__name__})")


def definition_of(activation: Activation, what: str | None = None) -> render.Definition:
    """``activation``'s definition as the kernels are written from it: its
    ``forward_over_units`` (a softmax) or ``forward_and_derivative``; or the refusal of one
    the compiled backend cannot build, naming ``what`` (default: the activation)."""
    if activation.over_units:
        return render.read(activation, "forward_over_units", 1, 1, what)
    if type(activation).forward_and_derivative is Activation.forward_and_derivative:
        raise render.NotCompilableError(
            f"backend 'numba' cannot run {what or repr(activation)}: it defines forward and "
            "derivative, not forward_and_derivative written with tinynet.maths, which the "
            "compiled kernels are built from; pass backend='numpy'")
    return render.read(activation, "forward_and_derivative", 1, 2, what)


def _loss_definition(loss: Loss, method: str) -> render.Definition:
    what = f"loss {loss!r} ({type(loss).__name__})"
    definition = render.read(loss, method, 3, 2 if method == "value_and_gradient" else 1, what)
    if method == "value_and_gradient" and \
            definition.arguments[2] in _names_read(definition, definition.results[0]):
        raise render.NotCompilableError(
            f"backend 'numba' cannot run {what}: its term depends on the batch size "
            f"{definition.arguments[2]} (an epoch's loss is the mean of its samples' terms, "
            "whatever the batches); pass backend='numpy'")
    return definition


def _names_read(definition: render.Definition, expression: ast.expr) -> set[str]:
    """The arguments and locals ``expression`` reads, directly or through locals."""
    made = dict(definition.assignments)
    todo = [node.id for node in ast.walk(expression) if isinstance(node, ast.Name)]
    seen: set[str] = set()
    while todo:
        name = todo.pop()
        if name not in seen:
            seen.add(name)
            if name in made:
                todo += [node.id for node in ast.walk(made[name]) if isinstance(node, ast.Name)]
    return seen


def activation_lines(maths: Maths, kind: int, z: str, parameters: Sequence[str],
                     suffix: str) -> tuple[list[str], str, str]:
    """Activation ``kind``'s definition for one number: ``(lines, value, slope)``, its lines
    with locals ending in ``suffix``, and the expressions of φ(z) and φ'(z) (1.0 for the
    output sigmoid a loss differentiates through), for the pre-activation held in ``z`` and
    its parameters held in ``parameters`` (in field order)."""
    activation, through = maths.kind(kind)
    if activation.over_units:  # z kept for the pass over the units (over_units_lines)
        return [], z, "1.0"
    definition = definition_of(activation)
    names = [name for name, _ in render.parameters(activation)]
    lines, (value, slope) = definition.instantiate(
        {definition.arguments[0]: z}, dict(zip(names, parameters)), suffix)
    return lines, value, "1.0" if through else slope


def hyperparameters(maths: Maths) -> np.ndarray:
    """What the kernels read at run time for ``maths``, as float64: the optimizer's
    hyperparameters (:meth:`~tinynet.optimizers.Optimizer.hyperparameters`), then the
    loss's parameters, each in field order (one kernel serves every value)."""
    return np.array([float(value) for _, value in (*render.parameters(maths.optimizer),
                                                    *render.parameters(maths.loss))])


def loss_lines(maths: Maths, y_hat: str, y: str, batch: str, parameters: Sequence[str],
               suffix: str) -> tuple[list[str], str, str]:
    """The loss's definition for one output: ``(lines, term, gradient)``, as
    :func:`activation_lines`, its parameters held in ``parameters`` (in field order); the
    gradient is dL/dz, from ``gradient_through_sigmoid`` or ``gradient_through_softmax``,
    when the output layer is the loss's sigmoid or softmax (:meth:`Maths.through`)."""
    loss = maths.loss
    values = dict(zip((name for name, _ in render.parameters(loss)), parameters))
    definition = _loss_definition(loss, "value_and_gradient")
    arguments = (y_hat, y, batch)
    lines, (term, gradient) = definition.instantiate(
        dict(zip(definition.arguments, arguments)), values, suffix)
    if maths.output is not None:
        through = _loss_definition(loss, maths.through())
        more, (gradient,) = through.instantiate(dict(zip(through.arguments, arguments)), values,
                                                f"{suffix}_z")
        lines += more
    return lines, term, gradient


def update_lines(maths: Maths, p: str, g: str, lr: str, state: Sequence[str],
                 hyperparameters: Sequence[str], steps: Sequence[str],
                 suffix: str) -> tuple[list[str], list[str]]:
    """The optimizer's part per parameter (:meth:`Maths.split`): ``(lines, results)``, as
    :func:`activation_lines`, its results the new parameter and the new state values of the
    slots kept per parameter; the parameter held in ``p``, its gradient in ``g``, those
    slots' state values in ``state``, the hyperparameters in ``hyperparameters`` (in field
    order) and the step values (:func:`step_lines`) in ``steps``."""
    split = maths.split()
    definition = split.per_element
    names = [name for name, _ in render.parameters(maths.optimizer)]
    return definition.instantiate(dict(zip(definition.arguments, (p, g, lr, *state, *steps))),
                                  dict(zip(names, hyperparameters)), suffix)


def step_lines(maths: Maths, lr: str, counters: Sequence[str], hyperparameters: Sequence[str],
               suffix: str) -> tuple[list[str], list[str], list[str]]:
    """The optimizer's part per step (:meth:`Maths.split`): ``(lines, step values,
    counters)``, the expressions of the step values and of the counters' new values, from
    the learning rate held in ``lr`` and the counters' values in ``counters``."""
    split = maths.split()
    definition = split.per_step
    names = [name for name, _ in render.parameters(maths.optimizer)]
    lines, results = definition.instantiate(dict(zip(definition.arguments, (lr, *counters))),
                                            dict(zip(names, hyperparameters)), suffix)
    return lines, results[:split.step_values], results[split.step_values:]


def _update(maths: Maths, lanes: bool) -> str:
    """The optimizer's part per parameter: ``update_rows(theta, grad, state, lr, hyper, steps,
    start, stop)`` of parameters start to stop of ``theta`` (P,) from ``grad`` (P,), with
    ``state`` (k, P) and the step values ``steps``; or, for ``lanes``, ``update_lane(theta,
    state, lr, hyper, steps, i, l, g)`` of parameter i of lane l of ``theta`` (P, LANES),
    state (k, P, LANES), steps (values, LANES), from its gradient g. ``hyper``: the
    hyperparameters (:func:`hyperparameters`)."""
    optimizer = maths.optimizer
    at = "i, l" if lanes else "i"
    slots = maths.split().element_slots(len(optimizer.state))
    steps = [f"steps[{k}, l]" if lanes else f"steps[{k}]"
             for k in range(maths.split().step_values)]
    hyper = [f"hyper[{index}]" for index in range(maths.optimizer_values())]
    lines, results = update_lines(maths, "p", "g", "lr", [f"s{slot}" for slot in slots],
                                  hyper, steps, "")
    body = [f"p = theta[{at}]", *([] if lanes else [f"g = grad[{at}]"]),
            *(f"s{slot} = state[{slot}, {at}]" for slot in slots), *lines,
            f"theta[{at}] = {results[0]}",
            *(f"state[{slot}, {at}] = {result}" for slot, result in zip(slots, results[1:]))]
    doc = f"{described(optimizer)}: {escaped(type(optimizer).__qualname__)}.update"
    if lanes:
        return (f'@njit(cache=True, error_model="numpy", inline="always")\n'
                f'def update_lane(theta, state, lr, hyper, steps, i, l, g):\n'
                f'    """{doc}, parameter i of lane l."""\n'
                + "".join(f"    {line}\n" for line in body))
    return (f'@njit(cache=True, error_model="numpy", inline="always")\n'
            f'def update_rows(theta, grad, state, lr, hyper, steps, start, stop):\n'
            f'    """{doc}, parameters start to stop."""\n'
            f'    for i in range(start, stop):\n'
            + "".join(f"        {line}\n" for line in body))


def per_step_lanes(maths: Maths, counter: Callable[[int, str], str],
                   step: Callable[[int, str], str], lanes: str,
                   hyperparameters: Sequence[str]) -> list[str]:
    """The optimizer's part per step for every lane of a block (:meth:`Maths.split`), as lines:
    each step value k into ``step(k, l)`` and each counter slot's new value into
    ``counter(slot, l)``, where it is read from, for lane ``l`` (an expression) of ``lanes``.
    Lane 0's values are computed first and, while every lane's counters equal lane 0's (as when
    the members started together), copied to every lane: a counter's new value is often a
    ``pow`` (Adam's β^t), which does not vectorise; else each lane computes its own. The kit's
    ``per_step`` and the generated ensemble kernels both write it from here."""
    split = maths.split()
    if not split.step_values and not split.counters:
        return []

    def lane(l: str, suffix: str) -> tuple[list[str], list[str], list[str]]:
        return step_lines(maths, "lr", [counter(slot, l) for slot in split.counters],
                          hyperparameters, suffix)

    first, values, counters = lane("0", "_first")
    lines = [*first, *(f"value{k} = {value}" for k, value in enumerate(values)),
             *(f"counter{k} = {new}" for k, new in enumerate(counters))]
    fill = [*(f"{step(k, 'l')} = value{k}" for k in range(len(values))),
            *(f"{counter(slot, 'l')} = counter{k}" for k, slot in enumerate(split.counters))]
    loop = f"for l in range({lanes}):"
    if not split.counters:                  # the same for every lane
        return lines + [loop, *(f"    {line}" for line in fill)]
    own, values, counters = lane("l", "")
    each = [*own, *(f"{step(k, 'l')} = {value}" for k, value in enumerate(values)),
            *(f"next{k} = {new}" for k, new in enumerate(counters)),   # all read, then all
            *(f"{counter(slot, 'l')} = next{k}" for k, slot in enumerate(split.counters))]
    same = " & ".join(f"({counter(slot, 'l')} == {counter(slot, '0')})"
                      for slot in split.counters)
    return lines + ["same = True", loop, f"    same = same & {same}",
                    "if same:", f"    {loop}", *(f"        {line}" for line in fill),
                    "else:", f"    {loop}", *(f"        {line}" for line in each)]


def _per_step(maths: Maths) -> str:
    """The kit's ``per_step(state, lr, hyper, steps)``: :func:`per_step_lanes` with the step
    values in ``steps`` (values, lanes) and the counters in parameter 0's slots of ``state``
    (k, P, lanes) (a network's state (k, P) goes in as (k, P, 1))."""
    hyper = [f"hyper[{index}]" for index in range(maths.optimizer_values())]
    lines = per_step_lanes(maths, lambda slot, l: f"state[{slot}, 0, {l}]",
                           lambda k, l: f"steps[{k}, {l}]", "state.shape[2]", hyper) or ["pass"]
    doc = (f"{described(maths.optimizer)}: {escaped(type(maths.optimizer).__qualname__)}"
           ".update, its part per step")
    return (f'@njit(cache=True, error_model="numpy", inline="always")\n'
            f'def per_step(state, lr, hyper, steps):\n    """{doc}."""\n'
            + "".join(f"    {line}\n" for line in lines))


def described(owner: object) -> str:
    """``owner``'s name and the names of its parameters, ``"adam(beta1, beta2, eps)"``, for
    generated text: never their values, which the kernels read when they run, so that the
    text (and with it the compiled kernel) is the same whatever they are."""
    names = ", ".join(name for name, _ in render.parameters(owner))
    return escaped(f"{owner.name}({names})" if names else owner.name)


def _function(name: str, arguments: str, doc: str, lines: list[str], results: str) -> str:
    body = "\n".join(f"    {line}" for line in lines)
    return (f'@njit(cache=True, error_model="numpy", inline="always")\n'
            f'def {name}({arguments}):\n    """{doc}"""\n'
            + (body + "\n" if body else "") + f"    return {results}\n")


def _switch(name: str, loop: str, arguments: str, maths: Maths, passed: str | None = None,
            inline: bool = True, over_units: str = "") -> str:
    """A function choosing activation ``kind`` and running ``loop`` with its function and its
    parameters (a tuple read from ``parameters[layer]``): one copy of the loop per activation,
    each straight-line code. The last activation takes every kind not matched before it (the
    kinds come from :func:`tinynet.packing.layout`, which numbers these activations). The
    switch takes ``arguments``, of which it passes ``passed`` (default: all) to the loop. It
    is inlined where it is called (a call per unit, with its arrays' reference counts, cost
    the 2-64-1 ensemble a tenth of its time), unless not ``inline``: a switch called once
    per layer, compiled once however many steps call it, and without reference counts
    (:data:`tinynet.compiled.looping.UNCOUNTED`). ``over_units``: the call that follows the
    loop for an output over a layer's units (a softmax, whose loop keeps z), ``{values}``
    standing for its parameters."""
    lines = ['@njit(cache=True, error_model="numpy", inline="always")' if inline else UNCOUNTED,
             f'def {name}(kind, parameters, {arguments}):']
    last = maths.kinds() - 1
    for kind in range(maths.kinds()):
        count = len(render.parameters(maths.kind(kind)[0]))
        values = "".join(f"parameters[layer, {i}], " for i in range(count))
        calls = [f"{loop}(activation_{kind}, ({values}), {passed or arguments})"]
        if maths.kind(kind)[0].over_units:
            calls.append(over_units.format(values=f"({values})"))
        if last == 0:
            lines += [f"    {call}" for call in calls]
        else:
            test = "else" if kind == last else f"{'if' if kind == 0 else 'elif'} kind == {kind}"
            lines += [f"    {test}:", *(f"        {call}" for call in calls)]
    return "\n".join(lines) + "\n"


def _over_units(maths: Maths) -> list[str]:
    """For an output over a layer's units (a softmax), its definition as loops over the units
    on rows that hold z (:func:`tinynet.compiled.reducing.row_functions`)."""
    output = maths.output
    if output is None or not output.over_units:
        return []
    return reducing.row_functions(
        reducing.stages(definition_of(output), f"{output!r}"),
        {name: f"parameters[{i}]" for i, (name, _) in enumerate(render.parameters(output))},
        f"{escaped(output.name)}: {escaped(type(output).__qualname__)}.forward_over_units")


def source(maths: Maths) -> str:
    """The Python source of the kit for ``maths``."""
    parts = []
    for kind in range(maths.kinds()):
        activation, through = maths.kind(kind)
        count = len(render.parameters(activation))
        lines, value, slope = activation_lines(
            maths, kind, "z", [f"parameters[{i}]" for i in range(count)], "")
        doc = (f"{escaped(activation.name)}: z kept for {escaped(type(activation).__qualname__)}"
               ".forward_over_units (over_units_rows, over_units_lanes)" if activation.over_units
               else f"{escaped(activation.name)}: {escaped(type(activation).__qualname__)}."
               "forward_and_derivative")
        parts.append(_function(f"activation_{kind}", "z, parameters",
                               doc + (", slope 1: the loss gives dL/dz" if through else ""),
                               lines, f"({value}, {slope})"))
    parts += _over_units(maths)
    first = maths.optimizer_values()
    lines, term, gradient = loss_lines(
        maths, "y_hat", "y", "batch",
        [f"hyper[{first + i}]" for i in range(len(render.parameters(maths.loss)))], "")
    parts.append(_function("loss", "y_hat, y, batch, hyper", f"{described(maths.loss)}: "
                           f"{escaped(type(maths.loss).__qualname__)}.value_and_gradient", lines,
                           f"({term}, {gradient})"))
    parts.append(_per_step(maths))
    parts.append(_update(maths, lanes=False))
    parts.append(_update(maths, lanes=True))
    parts.append(_switch("forward_layer", "lanes.dense_forward",
                         "theta, table, layer, A, D, rows, acc", maths, inline=False,
                         over_units="over_units_lanes(A, layer + 1, rows, table[layer, 1], "
                                    "{values})"))
    parts.append(_switch("activate_rows", "single.activation_rows", "layer, Z, out", maths,
                         "Z, out", over_units="over_units_rows(out, {values})"))
    parts.append(_switch("activate_pairs", "single.activation_pairs", "layer, Z, A, D", maths,
                         "Z, A, D", over_units="over_units_rows(A, {values})"))
    parts.append(looping.source(maths, described(maths.loss), described(maths.optimizer)))
    parts.append(looping.source_lanes(maths, described(maths.loss), described(maths.optimizer),
                                      {during: "train_step_lanes" + epochs.lane_suffix(during)
                                       for during in (False, True)}))
    names = escaped(", ".join(activation.name for activation in maths.activations))
    loss = described(maths.loss) + (f" through the output {escaped(maths.output.name)}"
                                     if maths.output is not None else "")
    optimizer = escaped(type(maths.optimizer).__qualname__)
    return f'''"""Generated by tinynet.compiled.kit: activations {names}, loss {loss}, optimizer
{optimizer}, tinynet.compiled sources {fingerprint()}. Do not edit: it is rewritten from the
definitions."""

import math

import numpy as np
from numba import njit, prange

from tinynet.compiled import lanes, single
from tinynet.compiled.lanes import (diverged_lanes, keep_state, lane_orders, order_scratch,
                                    record_lanes, record_scratch, restore_diverged,
                                    restore_state, spread_counters)
from tinynet.compiled.orders import epoch_order_into
from tinynet.compiled.verdicts import diverged, finite_mark, history_slot, wrong_side
from tinynet.compiled.schedules import learning_rate, step_at
from tinynet.compiled.scalars import vector_exp, vector_log, vector_log1p
from tinynet.compiled.single import _rows, _weights


''' + "\n\n".join(parts) + f'''

{UNCOUNTED}
def loss_rows(hyper, A, layers, targets, delta, rows, n_out, batch_loss, threshold, epoch,
              last_wrong_epoch):
    """tinynet.compiled.lanes.loss_rows with this network's loss."""
    lanes.loss_rows(loss, hyper, A, layers, targets, delta, rows, n_out, batch_loss, threshold,
                    epoch, last_wrong_epoch)


{UNCOUNTED}
def gradients_and_step(theta, state, hyper, steps, lr, table, layer, A, delta, rows, acc):
    """tinynet.compiled.lanes.gradients_and_step with this network's optimizer."""
    lanes.gradients_and_step(update_lane, theta, state, hyper, steps, lr, table, layer, A,
                             delta, rows, acc)


{UNCOUNTED}
def backward_input_then_step(theta, state, hyper, steps, lr, table, layer, A, delta, back, rows,
                             acc):
    """tinynet.compiled.lanes.backward_input_then_step with this network's optimizer."""
    lanes.backward_input_then_step(update_lane, gradients_and_step, theta, state, hyper, steps,
                                   lr, table, layer, A, delta, back, rows, acc)


STEP_VALUES = {maths.split().step_values}
"""How many values the optimizer computes once per step (tinynet.compiled.hoisting)."""

COUNTERS = np.array({list(maths.split().counters)}, dtype=np.int64)
"""The optimizer's state slots that are counters, one number per network."""


''' + "\n\n".join(epochs.lanes_source(during) for during in (False, True)) + '''

@njit(cache=True, error_model="numpy")
def step_rows(state, lr, hyper, steps):
    """The optimizer's step values of one network (state (k, P))."""
    per_step(state.reshape(state.shape[0], state.shape[1], 1), lr, hyper,
             steps.reshape(steps.shape[0], 1))


''' + epochs.network_source() + '''

@njit(cache=True, error_model="numpy")
def forward_network(theta, layout, X, Zs, As):
    """tinynet.compiled.single.forward_network with this network's activations."""
    return single.forward_network(activate_rows, theta, layout, X, Zs, As)


''' + epochs.members_source()


_KITS: dict[tuple, ModuleType] = {}
"""The kits loaded in this process, by :meth:`Maths.key` and kernel directory."""


def load(maths: Maths) -> ModuleType:
    """The kit for ``maths``, written, imported and compiled once per process and kernel
    directory (:func:`tinynet.compiled.sources.kernel_dir`)."""
    key = (maths.key(), kernel_dir())
    if key not in _KITS:
        _KITS[key] = load_module(source(maths), key[1])
    return _KITS[key]


def entry(maths: Maths, name: str, module: ModuleType | None = None, what: str = "") -> object:
    """The kit's entry point ``name`` (``fit_lanes``, ``fit_lanes_during``, ``fit_network``,
    ``forward_network``), or that of ``module``, a kit with more functions
    (:func:`tinynet.compiled.stream.load`, ``what`` saying what for), after saying on stderr if
    it is about to be compiled, and what for (:func:`~tinynet.compiled.notices.entry_words`)."""
    function = getattr(load(maths) if module is None else module, name)
    layers = [a.name + (" (yours)" if type(a) not in BUILT_IN else "")
              for a in maths.activations]
    if maths.output is not None and maths.output.name not in layers:
        layers.append(maths.output.name)
    announce_compiling(function, entry_words(name, layers, maths.loss.name,
                                             maths.optimizer.name) + what,
                       f"kit {name}", kernel_dir())
    return function
