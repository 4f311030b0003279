"""The generic kernels' step, written by running :mod:`tinynet.step` on names.

:mod:`tinynet.compiled.tracing` writes the step for one layout, every number a local. The
generic kernels train any layout on one compiled function, so their step cannot know how many
layers there are, nor their widths: here :mod:`tinynet.step` runs on *runtime layers* whose
arrays are names, and whose words write calls of a loop module's functions:

* for one network (the kit's ``fit_network``), :mod:`~tinynet.compiled.
  single`'s (``affine``, ``activation_pairs`` through the kit's switch, ``times``,
  ``gradients``, ``_matmul_into``, which calls BLAS for big products), on views of the
  kernel's scratch rows: the kit's ``train_step``;
* for many networks side by side, one per SIMD lane (the kit's ``train_block``),
  :mod:`~tinynet.compiled.lanes`' (``dense_forward`` through the
  kit's switch ``forward_layer``, ``loss_rows``, ``times``, ``gradients_and_step``,
  ``backward_input``, ``backward_input_then_step``), on the block's arrays with the lanes
  innermost: the kit's ``train_step_lanes``, ``train_step_lanes_during`` and
  ``forward_lanes``.

The layers' loops are written as loops over the layout's table:

* ``for layer in layers`` (:func:`tinynet.step.forward`) is one loop over every layer, the
  layer's output the next one's input;
* ``for layer in reversed(layers)`` (:func:`tinynet.step.backward`) is the last layer, then
  a loop over the layers between the last and the first, then the first (if it is not the
  last): the three roles :func:`tinynet.step.backward` tells apart (``layer is last``,
  ``layer is not first``), each written once, so that no test of them runs in the kernel.
  Where the loss gives dL/dŷ (not dL/dz through the output sigmoid), the last layer's role
  is that of the layers between, and the lanes write one loop over all but the first
  (``RuntimeLayers(merged=True)``): the lanes' step is one compiled function, and three
  copies of its loops made 2-16x8-1 ensembles up to 1.2x slower.

The one-network step is one function for both update orders (``during``: each layer steps
inside the backward pass), called once a batch; the lanes' step is one function per order, so
that a run compiles its own order alone. Neither counts references (:data:`UNCOUNTED`).
``kernel_source`` prints them, each group of lines under a comment naming the line of
``tinynet/step.py`` it comes from.

The lanes keep no gradients: each parameter steps in the loop that sums its gradient, so a
lane's words step a layer where the update order allows it. ``during``: where
:meth:`tinynet.step.Dense.backward` calls ``update``. After the backward pass: as soon as the
layer's dX has read its old W, since nothing later in the step reads that W (for a
one-sample batch, dX and the steps are one loop over W); every parameter's arithmetic is
that of a step after the whole pass.
"""

from __future__ import annotations

from collections.abc import Iterator

from .. import step as description
from .render import Writer, said_by
from .sources import escaped

__all__ = ["UNCOUNTED", "source", "source_lanes"]

UNCOUNTED = '@njit(cache=True, error_model="numpy", _nrt=False)'
"""The decorator of the kit's functions that every step calls and that are not inlined (the
one-network step; the lanes' step, forward pass, and the words that take an activation or the
optimizer): compiled without Numba's reference counts (``_nrt=False``), which is allowed
because they allocate nothing (a view of an array they were given allocates nothing).

With the counts, a compiled function counts each array argument in on entry and out on exit
(an atomic add each), and each view it makes; LLVM's pruning of the pairs gives up wherever
an array dies inside a branch or before a loop. About 100 atomic adds a step made the
generic lane kernel 1.3-1.5 times slower on width-2 networks, and the one-network step's
views made its fits about twice as slow (issue 41's note). Only the arrays' owners, the
epoch loops and their callers, count them. A function such a step calls inherits
``_nrt=False`` unless it says otherwise (:func:`tinynet.compiled.single._blas_into`)."""


def _loss_said(maths: object, through: str | None) -> str:
    """The comment above a loss's lines: where the step says it, and the definition."""
    loss = maths.loss
    return (f"# {said_by(3)}; {escaped(loss.name)}: {escaped(type(loss).__qualname__)}"
            ".value_and_gradient" + (f" and {through}" if through else ""))


def optimizer_said(maths: object) -> str:
    """The optimizer's definition, for the comment above an update's lines (here and in
    :mod:`tinynet.compiled.stream`)."""
    return (f"{escaped(maths.optimizer.name)}: "
            f"{escaped(type(maths.optimizer).__qualname__)}.update")


class StepWords:
    """The one-network step's words that are not a layer's: the loss over the batch's rows and
    outputs (the kit's ``loss``, which gives dL/dz through the output sigmoid where the loss
    does), its sum into ``batch_loss``, and ``wrong`` if an output is on the wrong side; and
    the update of every parameter after the backward pass."""

    def __init__(self, writer: Writer, maths: object) -> None:
        self.writer, self.maths = writer, maths

    def loss(self, loss: object, through: str | None, y_hat: str, y: str) -> tuple[str, str]:
        self.writer.write(_loss_said(self.maths, through),
                          "n_out = table[layers - 1, 1]",
                          "gradient = _rows(delta, rows, n_out)",
                          "batch_loss = 0.0",
                          "wrong = False",
                          "for r in range(rows):",
                          "    for k in range(n_out):",
                          f"        term, slope = loss({y_hat}[r, k], {y}[r, k], rows, hyper)",
                          "        batch_loss += term",
                          "        gradient[r, k] = slope",
                          f"        wrong |= wrong_side({y_hat}[r, k], {y}[r, k], threshold)")
        return "batch_loss", "gradient"

    def update_all(self) -> None:
        self.writer.write(f"# every layer, {said_by()}; {optimizer_said(self.maths)}",
                          "update_rows(theta, grad, state, lr, hyper, steps, 0, theta.size)")


class LayerWords:
    """A runtime layer's words for one network: calls of :mod:`tinynet.compiled.single`'s loops
    on views of the kernel's scratch rows, for layer ``index`` (an expression: ``layer``,
    ``last``, 0) in ``role`` (which layers it stands for)."""

    def __init__(self, writer: Writer, maths: object, index: str, role: str) -> None:
        self.writer, self.maths, self.index, self.role = writer, maths, index, role

    def _write(self, *lines: str) -> None:
        self.writer.write(f"# {self.role}, {said_by(3)}", *lines)

    def enter(self, backward: bool) -> None:
        """The lines that make the layer's views: W, b and its sizes and, in the backward
        pass, dW, db, its input X and φ'(Z)."""
        k = self.index
        self.writer.write(f"W, b = _weights(theta, table, {k})",
                          f"n_in, n_out = table[{k}, 0], table[{k}, 1]")
        if backward:
            self.writer.write(f"dW, db = _weights(grad, table, {k})", f"X = {self.layer_input()}",
                              f"D = _rows(Ds[{k}], rows, n_out)")

    def layer_input(self) -> str:
        """The layer's input X in the backward pass, an expression: the batch ``x`` for the
        first layer, the layer before's output for any other."""
        k = self.index
        before = "x" if k == "0" else f"_rows(As[{k} - 1], rows, n_in)"
        return f"x if last == 0 else {before}" if k == "last" else before

    def pre_activation(self, X: str, W: str, b: str) -> str:
        self._write(f"Z = _rows(Zs[{self.index}], rows, n_out)",
                    f"single.affine({X}, {W}, {b}, Z)")
        return "Z"

    def activate(self, activation: object, Z: str) -> tuple[str, str]:
        self._write(f"A = _rows(As[{self.index}], rows, n_out)",
                    f"D = _rows(Ds[{self.index}], rows, n_out)",
                    f"activate_pairs(kinds[{self.index}], parameters, {self.index}, {Z}, A, D)",
                    "inputs = A")                          # the next layer's input
        return "inputs", "D"

    def backward_activation(self, dA: str, slope: str) -> str:
        self._write("dZ = _rows(dZ_rows, rows, n_out)", f"single.times({dA}, {slope}, dZ)")
        return "dZ"

    def backward_parameters(self, dZ: str, X: str, dW: str, db: str) -> None:
        self._write(f"single.gradients({dZ}, {X}, {dW}, {db})")

    def update(self) -> None:
        k = self.index
        self.writer.write(f"# {self.role}, {said_by(3)}; {optimizer_said(self.maths)}",
                          f"update_rows(theta, grad, state, lr, hyper, steps, table[{k}, 2], "
                          f"table[{k}, 3] + n_out)")

    def backward_input(self, dZ: str, W: str) -> str:
        self._write("dX = _rows(back, rows, n_in)", f"single._matmul_into({dZ}, {W}, dX)",
                    "delta, back = back, delta")       # dX is the next dA: trade, not copy
        return "dX"

    def settle(self) -> None:
        """Nothing: one network's step keeps its gradients (``grad``) for its update."""


class LaneStepWords(StepWords):
    """The lanes' step words that are not a layer's: the loss (:func:`tinynet.compiled.lanes.
    loss_rows`), and nothing after the backward pass, where every layer has stepped."""

    def loss(self, loss: object, through: str | None, y_hat: str, y: str) -> tuple[str, str]:
        self.writer.write(_loss_said(self.maths, through),
                          "loss_rows(hyper, A, layers, targets, delta, rows, "
                          "table[layers - 1, 1], batch_loss, threshold, epoch, "
                          "last_wrong_epoch)")
        return "batch_loss", "delta"

    def update_all(self) -> None:
        self.writer.write(f"# every layer, {said_by()}: each layer took its step after its "
                          "dX (the lanes keep no gradients: see tinynet.compiled.looping)")


class LaneWords(LayerWords):
    """A runtime layer's words for the lanes: calls of :mod:`tinynet.compiled.lanes`' loops on
    the block's arrays (A[layer] is the layer's input X, A[layer + 1] its output, D[layer]
    φ'(Z), ``delta`` dA and then dZ, ``back`` dX). dW and db are not stored: ``pending`` says
    that the layer's gradients are due, to be summed where its parameters step."""

    def __init__(self, writer: Writer, maths: object, index: str, role: str) -> None:
        super().__init__(writer, maths, index, role)
        self.pending = False

    def enter(self, backward: bool) -> None:
        if backward:                        # for times; the other words read the table
            self.writer.write(f"n_out = table[{self.index}, 1]")

    def pre_activation(self, X: str, W: str, b: str) -> str:
        self._write("# summed in the loop that applies φ, below: Z is not stored")
        return "Z"

    def activate(self, activation: object, Z: str) -> tuple[str, str]:
        k = self.index
        self._write(f"forward_layer(kinds[{k}], parameters, theta, table, {k}, A, D, rows, acc)")
        return f"A[{k} + 1]", f"D[{k}]"

    def backward_activation(self, dA: str, slope: str) -> str:
        self._write(f"lanes.times(delta, D, {self.index}, rows, n_out)")
        return "delta"

    def backward_parameters(self, dZ: str, X: str, dW: str, db: str) -> None:
        self._write("# summed where each parameter steps, below: no gradient is stored")
        self.pending = True

    def _step(self) -> str:
        return (f"gradients_and_step(theta, state, hyper, steps, lr, table, {self.index}, A, "
                "delta, rows, acc)")

    def update(self) -> None:
        self.writer.write(f"# {self.role}, {said_by(3)}; {optimizer_said(self.maths)}",
                          self._step())
        self.pending = False

    def backward_input(self, dZ: str, W: str) -> str:
        if self.pending:                    # after the backward pass: dX reads the old W
            self._write(f"# then W, b ← their step; {optimizer_said(self.maths)}",
                        f"backward_input_then_step(theta, state, hyper, steps, lr, table, "
                        f"{self.index}, A, delta, back, rows, acc)")
            self.pending = False
        else:
            self._write(f"lanes.backward_input(theta, table, {self.index}, delta, back, rows, "
                        "acc)")
        self.writer.write("delta, back = back, delta")   # dX is the next dA: trade, not copy
        return "delta"

    def settle(self) -> None:
        """The layer's step, if it is still due at the end of its backward pass (the first
        layer, which computes no dX, after the backward pass)."""
        if self.pending:
            self.writer.write(f"# {self.role}: W, b ← their step, the end of its backward pass; "
                              f"{optimizer_said(self.maths)}", self._step())
            self.pending = False


class RuntimeLayer(description.Dense):
    """A layer of the layout as :class:`tinynet.step.Dense` with names for arrays, its words
    ``words``; in the backward pass, its input and φ'(Z) are the forward pass's (``X``,
    ``D``)."""

    def __init__(self, words: LayerWords) -> None:
        super().__init__("W", "b", "dW", "db", None, words)
        self._X, self._slope = "X", "D"


class RuntimeLayers:
    """The layout's layers as :mod:`tinynet.step` iterates them, written as loops over the
    table (see the module's docstring): ``layers[0]`` and ``layers[-1]`` are the first and
    last layers' roles, which ``reversed`` yields around the loop over the others. ``words``
    makes a role's words from its writer, maths, index and role; ``merged``: the last layer's
    role is that of the layers between (see the module's docstring)."""

    def __init__(self, writer: Writer, maths: object, words: type[LayerWords],
                 merged: bool = False) -> None:
        self.writer, self.merged = writer, merged

        def role(index: str, name: str) -> RuntimeLayer:
            return RuntimeLayer(words(writer, maths, index, name))

        self.each = role("layer", "every layer")
        self.last = role("last", "the last layer")
        self.middle = role("layer", "the layers between")
        self.first = role("0", "the first layer")
        self.rest = role("layer", "every layer but the first")      # merged: last and between

    def __getitem__(self, index: int) -> RuntimeLayer:
        if index not in (0, -1):
            raise IndexError(f"runtime layers have a first (0) and a last (-1), not {index}")
        return self.first if index == 0 else self.last

    def __iter__(self) -> Iterator[RuntimeLayer]:
        self.writer.open("for layer in range(layers):")
        self.each.ops.enter(backward=False)
        yield self.each
        self.writer.close()

    def __reversed__(self) -> Iterator[RuntimeLayer]:
        if self.merged:
            yield from self._backward(self.rest, "for layer in range(layers - 1, 0, -1):")
            yield from self._backward(self.first)
            return
        self.writer.write("last = layers - 1")
        yield from self._backward(self.last)
        yield from self._backward(self.middle, "for layer in range(layers - 2, 0, -1):")
        yield from self._backward(self.first, "if layers > 1:")

    def _backward(self, role: RuntimeLayer, block: str | None = None) -> Iterator[RuntimeLayer]:
        """``role``'s backward pass, inside ``block`` (a loop or test) if given: its views,
        the pass, and its step if the words left it due (:meth:`LaneWords.settle`)."""
        if block:
            self.writer.open(block)
        role.ops.enter(backward=True)
        yield role
        role.ops.settle()
        if block:
            self.writer.close()


def _trace(writer: Writer, maths: object, during: bool, lanes: bool) -> None:
    """:func:`tinynet.step.train_step` on runtime layers, into ``writer``, in the words of
    :mod:`tinynet.compiled.lanes` (``lanes``) or :mod:`tinynet.compiled.single`."""
    layers = RuntimeLayers(writer, maths, LaneWords if lanes else LayerWords,
                           merged=lanes and maths.output is None)
    words = (LaneStepWords if lanes else StepWords)(writer, maths)
    if not lanes:
        writer.write("inputs = x")                            # the first layer's input
    description.train_step(words, layers, maths.loss, maths.through(),
                           "A[0]" if lanes else "inputs", "targets" if lanes else "y",
                           (lambda layer: layer.ops.update()) if during else None,
                           words.update_all)


def _both_orders(maths: object, lanes: bool) -> str:
    """The step's body for both update orders, chosen by ``during`` when it runs."""
    bodies = []
    for during in (True, False):
        writer = Writer(2)
        _trace(writer, maths, during, lanes)
        bodies.append("\n".join(writer.lines) + "\n")
    return "    if during:\n" + bodies[0] + "    else:\n" + bodies[1]


def source(maths: object, loss: str, optimizer: str) -> str:
    """The kit's ``train_step`` for ``maths`` (:class:`tinynet.compiled.kit.Maths`, whose
    module calls this one), its loss and optimizer described as ``loss`` and ``optimizer``:
    one step of the generic one-network kernel on a batch of ``rows`` rows ``x``, ``y``, for
    both update orders; returns the batch's summed loss and whether an output was on the
    wrong side of ``threshold``. A function of its own, called once per batch by the kit's
    ``fit_network``, that counts no references (:data:`UNCOUNTED`): its views of the scratch
    rows and of θ cost no atomic operation (inlined with the counts, as it was, it ran a
    2-32-1 fit at half the speed; a big product goes to BLAS through
    :func:`tinynet.compiled.single._blas_into`, which counts)."""
    return (
        UNCOUNTED + "\n"
        "def train_step(theta, grad, state, lr, hyper, steps, layout, x, y, rows, Zs, As, Ds,\n"
        "               dZ_rows, delta, back, threshold, during):\n"
        f'    """tinynet.step.train_step on the layout\'s layers, with {loss} and '
        f'{optimizer}."""\n'
        "    table, kinds, parameters = layout\n"
        "    layers = table.shape[0]\n"
        + _both_orders(maths, lanes=False) +
        "    return batch_loss, wrong\n")


def source_lanes(maths: object, loss: str, optimizer: str, names: dict[bool, str]) -> str:
    """The kit's lanes' step for ``maths``, one function for each update order, named
    ``names[during]`` (``during``: update during the backward pass): one step of every lane
    of a block (the kit's ``train_block``, :mod:`tinynet.compiled.epochs`) on its batch of ``rows``
    rows, ``A[0]`` and ``targets`` (rows, n, lanes), each lane's summed loss into
    ``batch_loss`` and ``epoch`` as its last wrong epoch where an output was on the wrong
    side of ``threshold``; and ``forward_lanes``, the forward pass alone. Each is a function
    of its own, compiled once (not inlined where it is called), and only if a run calls it:
    one update order's step, not both; none counts references (:data:`UNCOUNTED`)."""
    steps = []
    for during, name in names.items():
        writer = Writer(1)
        _trace(writer, maths, during, lanes=True)
        steps.append(
            UNCOUNTED + "\n"
            f"def {name}(theta, state, hyper, steps, lr, layout, A, D, delta, back, targets,\n"
            "        rows, acc, batch_loss, threshold, epoch, last_wrong_epoch):\n"
            f'    """tinynet.step.train_step on the layout\'s layers in every lane, with {loss} '
            f'and {optimizer}, update="{"during" if during else "after"}_backward"."""\n'
            "    table, kinds, parameters = layout\n"
            "    layers = table.shape[0]\n"
            + "\n".join(writer.lines) + "\n")
    writer = Writer(1)
    description.forward(RuntimeLayers(writer, maths, LaneWords), "A[0]")
    return "\n\n".join(steps) + (
        "\n\n" + UNCOUNTED + "\n"
        "def forward_lanes(theta, layout, A, D, rows, acc):\n"
        '    """tinynet.step.forward on the layout\'s layers in every lane: A[layers] is '
        'the output."""\n'
        "    table, kinds, parameters = layout\n"
        "    layers = table.shape[0]\n"
        + "\n".join(writer.lines) + "\n")
