"""The kernel generator's words: :mod:`tinynet.step`, run on names, writes the step's code.

:mod:`tinynet.step` is written in the words of a backend (``ops``: ``pre_activation``,
``activate``, ``backward_activation``, ``backward_parameters``, ``backward_input``, ``loss``).
NumPy's (:mod:`tinynet.dense`) compute with arrays. The words here take arrays of *names* of
values (``a0_0_1``, ``p4``: a NumPy array of strings, of the shape the values would have) and
write the lines that compute them, one number at a time, returning the names of the results::

    pre_activation(X, W, b)     z0_0_0 = a0_0_0 * p0 + a0_0_1 * p1 + p4      (every r, j)
    activate(φ, Z)              φ's definition, written for every unit (kit.activation_lines)
    backward_activation(dA, D)  dz1_0_0 = da2_0_0 * d1_0_0
    backward_parameters(dZ, X)  g6 = dz1_0_0 * a1_0_0  ...  g8 = dz1_0_0
    backward_input(dZ, W)       da1_0_0 = dz1_0_0 * p6
    loss(ℓ, ŷ, y)               the loss's definition for every output, the batch's summed
                                loss and whether an output is on the wrong side

So running :func:`tinynet.step.train_step` on layers whose arrays hold names writes the step
of the kernels generated for a small layout (:mod:`tinynet.compiled.unrolled` and
:mod:`tinynet.compiled.fused`): the same code that trains on NumPy, in the same order, the
names of what it computes in the same places. Each word's lines come under a comment that
names the layer and the line of :mod:`tinynet.step` that said it, and each definition's lines
under one that names the definition (``kernel_source`` prints them).

Names, for layer k, batch row r, unit j (the kernels' locals): ``a{k}_{r}_{j}`` layer k's
input (``a0``: the sample), ``z{k}_{r}_{j}`` its pre-activation, ``d{k}_{r}_{j}`` φ'(z),
``dz{k}_{r}_{j}`` and ``da{k}_{r}_{j}`` the gradients, ``p{i}``, ``g{i}``, ``q{i}`` parameter
i, its gradient and its new value, ``t_{r}_{k}`` the targets.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from .. import step as description
from ..packing import Layout
from .codegen import (activation_parts, loss_parameter_names, n_params, parameter_indices,
                      updates)
from . import reducing
from .codegen import parameter_names
from .kit import Maths, definition_of, loss_lines
from .render import parameters, said_by
from .sources import escaped

__all__ = ["Words", "LayerWords", "names", "layers", "forward", "train_step", "step"]


def names(template: str, *shape: int) -> np.ndarray:
    """An array of names ``template.format(*index)`` of the given shape."""
    made = np.empty(shape, dtype=object)
    for index in np.ndindex(*shape):
        made[index] = template.format(*index)
    return made


def named(owner: object, method: str) -> str:
    """``"name: Class.method"`` for a comment, the names escaped (:func:`escaped`: a name may
    hold a line break)."""
    return f"{escaped(owner.name)}: {escaped(type(owner).__qualname__)}.{method}"


class Words:
    """The step's words that are not a layer's: the loss. Lines go to :attr:`lines`, ``lines``
    if given (an epoch loop's batch: :mod:`tinynet.compiled.epochs`)."""

    def __init__(self, layout: Layout, maths: Maths, rows: int,
                 lines: list[str] | None = None) -> None:
        self.layout, self.maths, self.rows = layout, maths, rows
        self.lines: list[str] = [] if lines is None else lines

    def loss(self, loss: object, through: str | None, y_hat: np.ndarray,
             y: np.ndarray) -> tuple:
        """The loss's definition for every output: the batch's summed loss into ``loss``,
        ``wrong`` if an output is on the wrong side of ``threshold``; returns the name of the
        summed loss and the names of dL/dŷ (dL/dz by the method ``through``:
        :func:`tinynet.compiled.kit.loss_lines`)."""
        layers = len(self.layout.table)
        gradient = names(f"da{layers}_{{}}_{{}}", *y_hat.shape)
        self.lines += [f"# {said_by()}; {named(self.maths.loss, 'value_and_gradient')}"
                       + (f" and {through}" if through else ""),
                       "loss = 0.0", "wrong = False"]
        for (r, k), name in np.ndenumerate(y_hat):
            own, term, slope = loss_lines(self.maths, name, y[r, k], str(self.rows),
                                          loss_parameter_names(self.maths), f"_{r}_{k}")
            self.lines += own + [f"loss = loss + {term}", f"{gradient[r, k]} = {slope}",
                                 f"wrong = wrong | wrong_side({name}, {y[r, k]}, threshold)"]
        return "loss", gradient


class LayerWords:
    """Layer ``k``'s words (:mod:`tinynet.step`'s ``ops`` of one layer): each writes its
    lines into ``words.lines`` and returns the names of what they compute. Without
    ``derivatives`` (a forward pass alone), φ' is not written."""

    def __init__(self, words: Words, k: int, derivatives: bool = True) -> None:
        self.words, self.k, self.derivatives = words, k, derivatives
        n_in, n_out = (int(n) for n in words.layout.table[k, :2])
        activation = escaped(words.maths.kind(int(words.layout.kinds[k]))[0].name)
        self.label = f"layer {k} ({n_in} -> {n_out}, {activation})"

    def _write(self, lines: list[str], definition: str = "", depth: int = 3) -> None:
        self.words.lines += [f"# {self.label}, {said_by(depth)}{definition}", *lines]

    def pre_activation(self, X: np.ndarray, W: np.ndarray, b: np.ndarray) -> np.ndarray:
        Z = names(f"z{self.k}_{{}}_{{}}", X.shape[0], W.shape[0])
        self._write([f"{Z[r, j]} = " + " + ".join(f"{X[r, i]} * {W[j, i]}"
                                                 for i in range(W.shape[1])) + f" + {b[j]}"
                     for r, j in np.ndindex(*Z.shape)])
        return Z

    def activate(self, activation: object, Z: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """φ's definition for every unit, its exps (a sigmoid's e = exp(−|z|)) first, as a
        run of lines of their own (:func:`tinynet.compiled.codegen.is_exp`), then the rest."""
        words = self.words
        A = names(f"a{self.k + 1}_{{}}_{{}}", *Z.shape)
        slope = names(f"d{self.k}_{{}}_{{}}", *Z.shape)
        if activation.over_units:
            return self._over_units(activation, Z, A, slope)
        parts = [activation_parts(words.layout, words.maths, self.k, f"{r}_{j}",
                                  self.derivatives) for r, j in np.ndindex(*Z.shape)]
        self._write([line for exps, _ in parts for line in exps]
                    + [line for _, rest in parts for line in rest],
                    f"; {named(activation, 'forward_and_derivative')}")
        return A, slope if self.derivatives else None

    def _over_units(self, activation: object, Z: np.ndarray, A: np.ndarray,
                    slope: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """φ's definition over each row's units (a softmax:
        :func:`tinynet.compiled.reducing.unit_lines`); its slope 1, the loss giving dL/dz."""
        words = self.words
        staged = reducing.stages(definition_of(activation), repr(activation))
        values = dict(zip((name for name, _ in parameters(activation)),
                          parameter_names(words.layout, words.maths, self.k)))
        lines = []
        for r in range(Z.shape[0]):
            own, (results,) = reducing.unit_lines(staged, list(Z[r]), values, f"_{self.k}_{r}")
            lines += own + [f"{A[r, j]} = {value}" for j, value in enumerate(results)]
            lines += [f"{slope[r, j]} = 1.0" for j in range(Z.shape[1]) if self.derivatives]
        self._write(lines, f"; {named(activation, 'forward_over_units')}", depth=4)
        return A, slope if self.derivatives else None

    def backward_activation(self, dA: np.ndarray, slope: np.ndarray) -> np.ndarray:
        dZ = names(f"dz{self.k}_{{}}_{{}}", *dA.shape)
        self._write([f"{dZ[index]} = {dA[index]} * {slope[index]}"
                     for index in np.ndindex(*dA.shape)])
        return dZ

    def backward_parameters(self, dZ: np.ndarray, X: np.ndarray, dW: np.ndarray,
                            db: np.ndarray) -> None:
        rows = range(dZ.shape[0])
        self._write([f"{dW[j, i]} = " + " + ".join(f"{dZ[r, j]} * {X[r, i]}" for r in rows)
                     for j, i in np.ndindex(*dW.shape)]
                    + [f"{db[j]} = " + " + ".join(f"{dZ[r, j]}" for r in rows)
                       for j in range(len(db))])

    def backward_input(self, dZ: np.ndarray, W: np.ndarray) -> np.ndarray:
        dX = names(f"da{self.k}_{{}}_{{}}", dZ.shape[0], W.shape[1])
        self._write([f"{dX[r, i]} = " + " + ".join(f"{dZ[r, j]} * {W[j, i]}"
                                                  for j in range(W.shape[0]))
                     for r, i in np.ndindex(*dX.shape)])
        return dX


def _parameters(layout: Layout, k: int, prefix: str) -> tuple[np.ndarray, np.ndarray]:
    """Layer ``k``'s W and b as names ``{prefix}{i}``, i each one's place in theta (``p``
    the parameters, ``g`` their gradients, ``q`` their new values)."""
    weights, biases = parameter_indices(layout, k)
    return (np.array([[f"{prefix}{i}" for i in row] for row in weights], dtype=object),
            np.array([f"{prefix}{i}" for i in biases], dtype=object))


def layers(words: Words, derivatives: bool = True) -> list[description.Dense]:
    """One :class:`tinynet.step.Dense` per layer of ``words.layout``, its arrays the names
    of its parameters (``p``) and gradients (``g``), its words a :class:`LayerWords`."""
    return [description.Dense(*_parameters(words.layout, k, "p"),
                              *_parameters(words.layout, k, "g"),
                              words.maths.kind(int(words.layout.kinds[k]))[0],
                              LayerWords(words, k, derivatives))
            for k in range(len(words.layout.table))]


def forward(layout: Layout, maths: Maths, rows: int, derivatives: bool) -> list[str]:
    """:func:`tinynet.step.forward` written out: z{k}_r_j = Σ_i a{k}_r_i w_ji + b_j and
    a{k+1}_r_j = φ(z{k}_r_j) for every layer k, row r and unit j, from the inputs a0_r_i and
    the parameters p0, p1, ..."""
    words = Words(layout, maths, rows)
    description.forward(layers(words, derivatives), names("a0_{}_{}", rows,
                                                          int(layout.table[0, 0])))
    return words.lines


def train_step(words: Words, during: bool) -> Callable[[np.ndarray, np.ndarray], tuple]:
    """:func:`tinynet.step.train_step` on names, as a function of the batch's inputs and
    targets (arrays of names), which writes the step into ``words.lines``: the parameters
    p0, p1, ... and their optimizer state s{slot}_{p} in; the new parameters q0, q1, ..., the
    new state r{slot}_{p}, the batch's summed loss ``loss`` and ``wrong`` (some output on the
    wrong side of ``threshold``) out. ``during``: each layer steps before passing dX = dZ W
    back (``update="during_backward"``)."""
    layout, maths = words.layout, words.maths
    made = layers(words)

    def update_layer(layer: description.Dense) -> None:   # the layer's W and b are q now
        weights, biases = parameter_indices(layout, layer.ops.k)
        words.lines += [f"# {layer.ops.label}, {said_by()}; {named(maths.optimizer, 'update')}",
                        *updates(maths, [i for row in weights for i in row] + biases)]
        layer.W, layer.b = _parameters(layout, layer.ops.k, "q")

    def update_all() -> None:
        words.lines += [f"# every layer, {said_by()}; {named(maths.optimizer, 'update')}",
                        *updates(maths, list(range(n_params(layout))))]

    def step(x: np.ndarray, y: np.ndarray) -> tuple:
        return description.train_step(words, made, maths.loss, maths.through(), x, y,
                                      update_layer if during else None, update_all)
    return step


def step(layout: Layout, maths: Maths, rows: int, during: bool) -> list[str]:
    """:func:`train_step` written out on a batch of ``rows`` rows, the inputs a0_r_i and
    targets t_r_k: its lines."""
    words = Words(layout, maths, rows)
    n_in, n_out = int(layout.table[0, 0]), int(layout.table[-1, 1])
    train_step(words, during)(names("a0_{}_{}", rows, n_in), names("t_{}_{}", rows, n_out))
    return words.lines
