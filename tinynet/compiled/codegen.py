"""One training step of a small network written out as straight-line Python, for the
kernels generated per layout.

For a layout known in advance (sizes, activations, update order) every loop over units can be
unrolled and every value given a name of its own: ``p3`` is parameter 3, ``a1_0_1`` the activation
of layer 1 for batch row 0, unit 1, ``g3`` the gradient of ``p3``, ``q3`` its new value and
``s0_3``, ``r0_3`` its optimizer state before and after the step. The compiler then keeps the values
in registers instead of storing and reloading them through scratch arrays. Two kernels are built
from the step: :mod:`tinynet.compiled.unrolled` runs it for many networks side by side in SIMD
lanes, and :mod:`tinynet.compiled.fused` for one network, parameters held in locals for the whole
run.

Every value is computed as the generic kernels compute it, in the same order (dot products
from the first input's product upwards, then the bias; ``db`` from the first row; each
activation, the loss and the optimizer written in from their one definition, as the generic
kernels' kit has them: :mod:`tinynet.compiled.kit`, the optimizer's part per step once per
step: :mod:`tinynet.compiled.hoisting`), so the generated kernels are bit-identical to them.

Generated sources are written and loaded by :mod:`tinynet.compiled.sources`: a kernel is
compiled once per machine for each of what its text holds (the layout, activations, loss,
optimizer and update order), and a change of the generator or of a definition writes new
files. Everything else (seeds, samples, epochs, learning rate, shuffle, the activations'
parameters and the optimizer's hyperparameters) the kernel reads when it runs. The kernels
take per-sample steps (batch size 1, the notes' SGD); minibatches, and layouts with more than
:data:`MAX_UNROLLED_WORK` multiply-adds per step, are left to the generic kernels, whose
compile time does not grow with the network.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np

from ..packing import Layout
from .kit import Maths, activation_lines, described, step_lines, update_lines
from .render import parameters
from .sources import announce_compiling, escaped, fingerprint, load_module

__all__ = ["MAX_UNROLLED_WORK", "step_work", "supports", "n_params", "parameter_names",
           "parameter_loads", "hyperparameter_names", "loss_parameter_names", "state_slots",
           "state_names", "step_value_names", "per_step", "updates", "activation_parts",
           "parameter_indices", "is_exp", "is_comment", "names_used", "name_defined",
           "module_header", "indent", "layout_of", "kernel"]

MAX_UNROLLED_WORK = 160
"""Generate a kernel for a layout when one SGD step has at most this many multiply-adds in its
weight products (forward, dW and dX: 3 · batch size · Σ n_in · n_out). Above it, the generic
kernels. Chosen by compile time, which grows with the unrolled code
(``benchmarks/results/bench_compile.md`` measures such compiles)."""


def step_work(layout: Layout, batch_size: int) -> int:
    """Multiply-adds in the weight products of one SGD step: forward, dW and dX."""
    return 3 * batch_size * sum(n_in * n_out for n_in, n_out in layout.table[:, :2].tolist())


def supports(layout: Layout, batch_size: int) -> bool:
    """True for per-sample steps (``batch_size`` 1, the notes' SGD) of a layout small enough
    to unroll (:data:`MAX_UNROLLED_WORK`). Minibatches train on the generic kernels, which
    read the batch size when they run: a kernel written for one batch size would be compiled
    again for every other."""
    return batch_size == 1 and step_work(layout, batch_size) <= MAX_UNROLLED_WORK


def n_params(layout: Layout) -> int:
    """Parameters of the layout: the last layer's bias offset plus its width."""
    return int(layout.table[-1, 3] + layout.table[-1, 1])


# --- the step -------------------------------------------------------------------------------

def _weight(table: np.ndarray, layer: int, j: int, i: int) -> int:
    return int(table[layer, 2] + j * table[layer, 0] + i)


def _bias(table: np.ndarray, layer: int, j: int) -> int:
    return int(table[layer, 3] + j)


def parameter_names(layout: Layout, maths: Maths, layer: int) -> list[str]:
    """The locals holding layer ``layer``'s activation parameters: ``param{layer}_{i}``,
    loaded from ``parameters[layer, i]`` (:func:`parameter_loads`)."""
    count = len(parameters(maths.kind(int(layout.kinds[layer]))[0]))
    return [f"param{layer}_{i}" for i in range(count)]


def parameter_loads(layout: Layout, maths: Maths) -> list[str]:
    """Lines loading every layer's activation parameters, the optimizer's hyperparameters
    (``hyper{i} = hyper[i]``) and the loss's parameters (``loss_parameter{i}``, after them in
    ``hyper``: :func:`tinynet.compiled.kit.hyperparameters`) into locals, once per run."""
    first = maths.optimizer_values()
    return [f"{name} = parameters[{layer}, {i}]" for layer in range(len(layout.table))
            for i, name in enumerate(parameter_names(layout, maths, layer))] + \
        [f"{name} = hyper[{i}]" for i, name in enumerate(hyperparameter_names(maths))] + \
        [f"{name} = hyper[{first + i}]" for i, name in enumerate(loss_parameter_names(maths))]


def hyperparameter_names(maths: Maths) -> list[str]:
    """The locals holding the optimizer's hyperparameters: ``hyper{i}``."""
    return [f"hyper{i}" for i in range(maths.optimizer_values())]


def loss_parameter_names(maths: Maths) -> list[str]:
    """The locals holding the loss's parameters: ``loss_parameter{i}``."""
    return [f"loss_parameter{i}" for i in range(len(parameters(maths.loss)))]


def state_slots(maths: Maths) -> list[int]:
    """The optimizer's state slots kept per parameter: all but its counters, which are one
    number per network (:mod:`tinynet.compiled.hoisting`)."""
    return maths.split().element_slots(len(maths.optimizer.state))


def state_names(maths: Maths, p: int, new: bool = False) -> list[str]:
    """The locals holding parameter ``p``'s optimizer state, ``s{slot}_{p}`` for each slot
    of :func:`state_slots`, or its new state after the step, ``r{slot}_{p}``."""
    return [f"{'r' if new else 's'}{slot}_{p}" for slot in state_slots(maths)]


def step_value_names(maths: Maths) -> list[str]:
    """The locals holding the optimizer's step values, ``step_value{k}``
    (:func:`tinynet.compiled.kit.step_lines`)."""
    return [f"step_value{k}" for k in range(maths.split().step_values)]


def per_step(maths: Maths, counters: list[str], suffix: str) -> tuple[list[str], list[str]]:
    """The optimizer's part per step, from the counters held in ``counters`` (one per counter
    slot): ``(lines, new counters)``, its lines setting each of :func:`step_value_names`, and
    the expressions of the counters' new values."""
    lines, values, new = step_lines(maths, "lr", counters, hyperparameter_names(maths), suffix)
    return lines + [f"{name} = {value}" for name, value in zip(step_value_names(maths),
                                                               values)], new


def updates(maths: Maths, params: list[int]) -> list[str]:
    """The optimizer's step of parameters ``params``, its part per parameter written from its
    definition (:func:`tinynet.compiled.kit.update_lines`), reading the step values: ``q{p}``
    the new parameter, ``r{slot}_{p}`` its new state (SGD: ``q{p} = p{p} - lr * g{p}``)."""
    lines = []
    for p in params:
        own, (value, *state) = update_lines(maths, f"p{p}", f"g{p}", "lr", state_names(maths, p),
                                            hyperparameter_names(maths),
                                            step_value_names(maths), f"_u{p}")
        lines += own + [f"q{p} = {value}"] + [f"{name} = {new}" for name, new
                                              in zip(state_names(maths, p, new=True), state)]
    return lines


def activation_parts(layout: Layout, maths: Maths, layer: int, unit: str,
                     derivative: bool) -> tuple[list[str], list[str]]:
    """The activation of layer ``layer`` at ``unit`` from ``z{layer}_{unit}``, written from its
    definition (:func:`tinynet.compiled.kit.activation_lines`): ``(exps, rest)``, the lines of
    its definition up to its last exp that come before every other line (a sigmoid's
    e = exp(−|z|): :func:`is_exp`), and the rest, which set ``a{layer+1}_{unit}`` = φ(z) and,
    if asked, ``d{layer}_{unit}`` = φ'(z); the lines under a comment naming the definition."""
    lines, value, slope = activation_lines(maths, int(layout.kinds[layer]), f"z{layer}_{unit}",
                                           parameter_names(layout, maths, layer),
                                           f"_{layer}_{unit}")
    leading = 0
    while leading < len(lines) and is_exp(lines[leading]):
        leading += 1
    rest = lines[leading:] + [f"a{layer + 1}_{unit} = {value}"]
    return lines[:leading], rest + ([f"d{layer}_{unit} = {slope}"] if derivative else [])


def parameter_indices(layout: Layout, layer: int) -> tuple[list[list[int]], list[int]]:
    """Where layer ``layer``'s parameters are in theta: W's (n_out rows of n_in) and b's."""
    n_in, n_out = int(layout.table[layer, 0]), int(layout.table[layer, 1])
    return ([[_weight(layout.table, layer, j, i) for i in range(n_in)] for j in range(n_out)],
            [_bias(layout.table, layer, j) for j in range(n_out)])


# --- reading the lines ----------------------------------------------------------------------

_NAME = re.compile(r"[A-Za-z_]\w*")


def is_exp(line: str) -> bool:
    """True for a line of a sigmoid layer's exps (see
    :meth:`tinynet.compiled.tracing.LayerWords.activate`)."""
    return "vector_exp(" in line and not is_comment(line)


def is_comment(line: str) -> bool:
    """True for a comment line (:mod:`tinynet.compiled.tracing` puts one above each word's
    lines, naming where they come from)."""
    return line.lstrip().startswith("#")


def name_defined(line: str) -> str | None:
    """The local a line assigns, or None (a store into an array)."""
    match = re.match(r"(\w+) = ", line)
    return match.group(1) if match else None


def names_used(line: str) -> list[str]:
    """The names a line reads, in order (for an assignment, those right of ``=``; none for
    a comment)."""
    if is_comment(line):
        return []
    return _NAME.findall(line.split(" = ", 1)[1] if name_defined(line) else line)


def module_header(generator: str, layout: Layout, maths: Maths, during: bool,
                  from_lanes: list[str]) -> str:
    """The start of a generated module: a docstring saying what it was generated for (with
    :func:`fingerprint`), and its imports, ``from_lanes`` from :mod:`tinynet.compiled.lanes`."""
    sizes = [int(layout.table[0, 0]), *(int(n) for n in layout.table[:, 1])]
    names = escaped(str([maths.kind(int(kind))[0].name for kind in layout.kinds]))
    loss, optimizer = described(maths.loss), described(maths.optimizer)
    return f'''"""Generated by {generator}: sizes {sizes}, activations
{names}, loss {loss}, optimizer {optimizer}, per-sample steps,
update {"during" if during else "after"} backward, tinynet.compiled sources {fingerprint()}.
Do not edit: it is rewritten from the generator."""

import math

import numpy as np
from numba import njit

from tinynet.compiled.lanes import {", ".join(from_lanes)}
from tinynet.compiled.verdicts import diverged, finite_mark, history_slot, wrong_side
from tinynet.compiled.schedules import learning_rate, step_at
from tinynet.compiled.scalars import vector_exp, vector_log, vector_log1p
'''


def indent(lines: list[str], depth: int) -> str:
    """The lines as one block of text, each indented by ``depth`` levels."""
    return "\n".join("    " * depth + line for line in lines)


# --- compiling ------------------------------------------------------------------------------

def layout_of(table: bytes, kinds: bytes) -> Layout:
    """The layout whose table and activation kinds are ``table`` and ``kinds`` as bytes (the
    hashable key the kernel caches use); its parameters are read when the kernel runs."""
    kinds_array = np.frombuffer(kinds, dtype=np.int64)
    return Layout(np.frombuffer(table, dtype=np.int64).reshape(-1, 4), kinds_array,
                  np.zeros((len(kinds_array), 1)))


def maths_words(maths: object, during: bool) -> str:
    """A generated kernel's loss and optimizer, and its update order when it is not the
    default, for its compile notice: ``"loss bce, optimizer adam"``."""
    return (f"loss {maths.loss.name}, optimizer {maths.optimizer.name}"
            + (", updating during the backward pass" if during else ""))


def kernel(text: str, entry: str, layout: Layout, directory: Path, what: str) -> object:
    """The function ``entry`` of the generated module with source ``text`` (:func:`load_module`),
    after saying on stderr if it is about to compile (:func:`announce_compiling`) ``what``
    it does, for the layout's sizes (``"the training of {sizes} networks"``)."""
    function = getattr(load_module(text, directory), entry)
    sizes = "-".join(str(int(n)) for n in [layout.table[0, 0], *layout.table[:, 1]])
    announce_compiling(function, what.format(sizes=sizes), f"layout {entry}", directory)
    return function
