"""The generic one-network kernel's step, written by running :mod:`tinynet.step` on names.

:mod:`tinynet.compiled.tracing` writes the step for one layout, every number a local. The
generic kernel (:func:`tinynet.compiled.single.fit_network`) trains any layout on one compiled
function, so its step cannot know how many layers there are, nor their widths: here
:mod:`tinynet.step` runs on *runtime layers* whose arrays are names of array views, and whose
words write calls of :mod:`tinynet.compiled.single`'s loops (``affine``, ``activation_pairs``
through the kit's switch, ``times``, ``gradients``, ``_matmul_into``, which calls BLAS for big
products). The layers' loops are written as loops over the layout's table:

* ``for layer in layers`` (:func:`tinynet.step.forward`) is one loop over every layer, the
  layer's output the next one's input (``inputs``);
* ``for layer in reversed(layers)`` (:func:`tinynet.step.backward`) is the last layer, then
  a loop over the layers between the last and the first, then the first (if it is not the
  last): the three roles :func:`tinynet.step.backward` tells apart (``layer is last``,
  ``layer is not first``), each written once, so that no test of them runs in the kernel.

The result is the kit's ``train_step`` (:func:`source`), one function for both update orders
(``during``: each layer steps inside the backward pass); ``kernel_source`` prints it, each
group of lines under a comment naming the line of ``tinynet/step.py`` it comes from.
"""

from __future__ import annotations

from collections.abc import Iterator

from .. import step as description
from .render import said_by
from .sources import escaped

__all__ = ["source"]


class Writer:
    """Lines at an indentation that blocks (loops, ifs) open and close."""

    def __init__(self, depth: int) -> None:
        self.lines: list[str] = []
        self.depth = depth

    def write(self, *lines: str) -> None:
        self.lines += ["    " * self.depth + line for line in lines]

    def open(self, header: str) -> None:
        self.write(header)
        self.depth += 1

    def close(self) -> None:
        self.depth -= 1


class StepWords:
    """The step's words that are not a layer's: the loss over the batch's rows and outputs
    (the kit's ``loss``, which gives dL/dz through the output sigmoid where the loss does),
    its sum into ``batch_loss``, and ``wrong`` if an output is on the wrong side."""

    def __init__(self, writer: Writer, maths: object) -> None:
        self.writer, self.maths = writer, maths

    def loss(self, loss: object, through: bool, y_hat: str, y: str) -> tuple[None, str]:
        loss = self.maths.loss
        self.writer.write(f"# {said_by()}; {escaped(loss.name)}: "
                          f"{escaped(type(loss).__qualname__)}.value_and_gradient"
                          + (" and gradient_through_sigmoid" if through else ""),
                          "n_out = table[layers - 1, 1]",
                          "gradient = _rows(delta, rows, n_out)",
                          "batch_loss = 0.0",
                          "wrong = False",
                          "for r in range(rows):",
                          "    for k in range(n_out):",
                          f"        term, slope = loss({y_hat}[r, k], {y}[r, k], rows, hyper)",
                          "        batch_loss += term",
                          "        gradient[r, k] = slope",
                          f"        wrong |= ({y_hat}[r, k] > threshold) != ({y}[r, k] > "
                          "threshold)")
        return None, "gradient"


class LayerWords:
    """A runtime layer's words: calls of :mod:`tinynet.compiled.single`'s loops on views of
    the kernel's scratch rows, for layer ``index`` (an expression: ``layer``, ``last``, 0)."""

    def __init__(self, writer: Writer, index: str, role: str) -> None:
        self.writer, self.index, self.role = writer, index, role

    def _write(self, *lines: str) -> None:
        self.writer.write(f"# {self.role}, {said_by(3)}", *lines)

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

    def backward_input(self, dZ: str, W: str) -> str:
        self._write("dX = _rows(back, rows, n_in)", f"single._matmul_into({dZ}, {W}, dX)",
                    "delta, back = back, delta")       # dX is the next dA: trade, not copy
        return "dX"


class RuntimeLayer(description.Dense):
    """A layer of the layout, ``index`` its row of the table (an expression), as
    :class:`tinynet.step.Dense` with names for arrays; in the backward pass, its input and
    φ'(Z) are the forward pass's scratch rows (``X``, ``D``)."""

    def __init__(self, writer: Writer, index: str, role: str) -> None:
        super().__init__("W", "b", "dW", "db", None, LayerWords(writer, index, role))
        self._X, self._slope = "X", "D"

    def enter(self, backward: bool) -> None:
        """The lines that make this layer's views: W, b and its sizes and, in the backward
        pass, dW, db, its input X and φ'(Z)."""
        k, writer = self.ops.index, self.ops.writer
        writer.write(f"W, b = _weights(theta, table, {k})",
                     f"n_in, n_out = table[{k}, 0], table[{k}, 1]")
        if backward:
            first = "x" if k == "0" else f"_rows(As[{k} - 1], rows, n_in)"
            if k == "last":
                first = f"x if last == 0 else {first}"
            writer.write(f"dW, db = _weights(grad, table, {k})", f"X = {first}",
                         f"D = _rows(Ds[{k}], rows, n_out)")


class RuntimeLayers:
    """The layout's layers as :mod:`tinynet.step` iterates them, written as loops over the
    table (see the module's docstring): ``layers[0]`` and ``layers[-1]`` are the first and
    last layers' roles, which ``reversed`` yields around the loop over the others."""

    def __init__(self, writer: Writer) -> None:
        self.writer = writer
        self.each = RuntimeLayer(writer, "layer", "every layer")
        self.last = RuntimeLayer(writer, "last", "the last layer")
        self.middle = RuntimeLayer(writer, "layer", "the layers between")
        self.first = RuntimeLayer(writer, "0", "the first layer")

    def __getitem__(self, index: int) -> RuntimeLayer:
        if index not in (0, -1):
            raise IndexError(f"runtime layers have a first (0) and a last (-1), not {index}")
        return self.first if index == 0 else self.last

    def __iter__(self) -> Iterator[RuntimeLayer]:
        self.writer.open("for layer in range(layers):")
        self.each.enter(backward=False)
        yield self.each
        self.writer.close()

    def __reversed__(self) -> Iterator[RuntimeLayer]:
        self.writer.write("last = layers - 1")
        self.last.enter(backward=True)
        yield self.last
        self.writer.open("for layer in range(layers - 2, 0, -1):")
        self.middle.enter(backward=True)
        yield self.middle
        self.writer.close()
        self.writer.open("if layers > 1:")
        self.first.enter(backward=True)
        yield self.first
        self.writer.close()


def _trace(writer: Writer, maths: object, during: bool) -> None:
    """:func:`tinynet.step.train_step` on runtime layers, into ``writer``."""
    layers = RuntimeLayers(writer)

    def update_layer(layer: RuntimeLayer) -> None:            # W and b, in place
        k = layer.ops.index
        writer.write(f"# {layer.ops.role}, {said_by()}; {escaped(maths.optimizer.name)}: "
                     f"{escaped(type(maths.optimizer).__qualname__)}.update",
                     f"update_rows(theta, grad, state, lr, hyper, steps, table[{k}, 2], "
                     f"table[{k}, 3] + n_out)")

    def update_all() -> None:
        writer.write(f"# every layer, {said_by()}; {escaped(maths.optimizer.name)}: "
                     f"{escaped(type(maths.optimizer).__qualname__)}.update",
                     "update_rows(theta, grad, state, lr, hyper, steps, 0, theta.size)")

    writer.write("inputs = x")                                # the first layer's input
    description.train_step(StepWords(writer, maths), layers, maths.loss,
                           maths.output is not None, "inputs", "y",
                           update_layer if during else None, update_all)


def source(maths: object, loss: str, optimizer: str) -> str:
    """The kit's ``train_step`` for ``maths`` (:class:`tinynet.compiled.kit.Maths`, whose
    module calls this one), its loss and optimizer described as ``loss`` and ``optimizer``:
    one step of the generic one-network kernel on a batch of ``rows`` rows ``x``, ``y``, for
    both update orders; returns the batch's summed loss and whether an output was on the
    wrong side of ``threshold``. Inlined into the kit's ``fit_network``: called once per
    batch with its eighteen arguments, it made 2-8-1 fits on batches of 2 about 7 % slower
    than the loops it replaced; inlined, it compiles in about the same time."""
    writer = Writer(2)
    _trace(writer, maths, during=True)
    during = writer.lines
    writer = Writer(2)
    _trace(writer, maths, during=False)
    after = writer.lines
    return (
        '@njit(cache=True, error_model="numpy", inline="always")\n'
        "def train_step(theta, grad, state, lr, hyper, steps, layout, x, y, rows, Zs, As, Ds,\n"
        "               dZ_rows, delta, back, threshold, during):\n"
        f'    """tinynet.step.train_step on the layout\'s layers, with {loss} and '
        f'{optimizer}."""\n'
        "    table, kinds, parameters = layout\n"
        "    layers = table.shape[0]\n"
        "    if during:\n" + "\n".join(during) + "\n"
        "    else:\n" + "\n".join(after) + "\n"
        "    return batch_loss, wrong\n")
