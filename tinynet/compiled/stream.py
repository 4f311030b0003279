"""The compiled kernels of a network with residual blocks, written by running
:mod:`tinynet.step` on names, with the blocks as one loop.

The compiled backend runs a network that is ``head`` dense layers (none or more), then a run
of L residual blocks of one kind, then ``tail`` dense layers (one or more), as
:func:`tinynet.mlp` builds them (``residual=...``: one layer in, the blocks, the output
layer). A block's kind, what its code is written from, is its branch's length, its norm's
placement and whether α is trained (:class:`tinynet.compiled.blockruns.Structure`);
everything else is read when the kernel runs, so one kernel trains every depth and width:

* the dense layers, inside the blocks too, are rows of the layout's table, in
  ``net.layers``' order (:func:`tinynet.packing.layer_rows`);
* ``blocks_layout`` (:func:`tinynet.compiled.blockruns.blocks_layout`):
  ``(block_table, block_floats)``: block k's first branch row, where its
  norm's γ starts in θ (β follows it) and where its α is (−1 for none), (L, 3) integers;
  its skip's scale s, its constant α (NaN where it is trained) and its norm's ε, (L, 3).

Its step (``train_step_stream``) is :func:`tinynet.step.train_step` on a chain of runtime
parts (:class:`Chain`): the head's and the tail's layers, each a
:class:`tinynet.compiled.looping.RuntimeLayer` (:class:`LayerWords` name each layer's input
in the backward pass), and between them :class:`BlockLoop`, whose forward and backward passes
are loops over ``block``, each body :class:`tinynet.step.Residual`'s pass traced once on the
block's views (written at the top of the body: :meth:`BlockLoop.views`), its words
(:class:`NormWords`, :class:`SkipWords`, the branch's :class:`LayerWords`) calls of
:mod:`tinynet.compiled.single`'s loops. Its epoch loop (``fit_stream``) is
:func:`tinynet.step.train` (:func:`tinynet.compiled.epochs.network_source`); an ensemble's
members train as single fits (``fit_stream_members``), bit for bit each member alone.

The buffers of the backward pass: the gradient reaching a block is in ``delta``; the block
keeps dS, the gradient of its sum, in ``carry`` (``carry, delta = delta, carry``) while its
branch's layers trade ``delta`` and ``back``, and writes its dX = s·dS + dH in place over the
branch's, in ``delta`` again. The three buffers change places block after block, so each is
as long as the widest layer needs (:func:`tinynet.compiled.single.stream_scratch`). Its
arithmetic is the NumPy backend's, in the same order: :func:`tinynet.compiled.single`'s words
are :mod:`tinynet.blocks`' bit for bit.
"""

from __future__ import annotations

from collections.abc import Iterator
from types import ModuleType
from typing import Any

from .. import step as description
from . import epochs, kit, looping
from .blockruns import Structure
from .looping import UNCOUNTED, RuntimeLayer
from .render import Writer, said_by
from .sources import kernel_dir, load_module

__all__ = ["entry_name", "source", "module_source", "load", "entry"]


# --- the words ------------------------------------------------------------------------------

class LayerWords(looping.LayerWords):
    """A dense layer's words (:class:`tinynet.compiled.looping.LayerWords`) whose input in
    the backward pass is ``given``, an expression: a block's first layer reads the block's
    branch input, the first layer after the blocks the stream's last value."""

    def __init__(self, writer: Writer, maths: object, index: str, role: str,
                 given: str) -> None:
        super().__init__(writer, maths, index, role)
        self.given = given

    def layer_input(self) -> str:
        return self.given


class NormWords:
    """A block's LayerNorm's words (:class:`tinynet.step.Norm`'s ``ops``): calls of
    :mod:`tinynet.compiled.single`'s loops on the block's views ``normalized``,
    ``inverse_std``, ``gain``, ``bias``, ``dgain``, ``dbias``; ``out`` names where
    γ ⊙ x̂ + β goes (``H``, the branch's input, before the branch; ``Y``, the block's output,
    after the sum)."""

    def __init__(self, writer: Writer, maths: object, out: str) -> None:
        self.writer, self.maths, self.out = writer, maths, out

    def _write(self, *lines: str) -> None:
        self.writer.write(f"# the block's LayerNorm, {said_by(3)}", *lines)

    def normalize(self, X: str, eps: str) -> tuple[str, str]:
        self._write(f"single.normalize({X}, {eps}, normalized, inverse_std)")
        return "normalized", "inverse_std"

    def scale_shift(self, normalized: str, gain: str, bias: str) -> str:
        self._write(f"single.scale_shift({normalized}, {gain}, {bias}, {self.out})")
        return self.out

    def norm_gradients(self, dY: str, normalized: str, dgain: str, dbias: str) -> None:
        self._write(f"single.norm_gradients({dY}, {normalized}, {dgain}, {dbias})")

    def update(self) -> None:
        self.writer.write(f"# the block's LayerNorm, {said_by(3)}; "
                          f"{looping.optimizer_said(self.maths)}",
                          "update_rows(theta, grad, state, lr, hyper, steps, gain_at, "
                          "gain_at + 2 * width)")

    def normalize_backward(self, dY: str, gain: str, normalized: str,
                           inverse_std: str) -> str:
        """dX written over dY, which nothing reads after it."""
        self._write(f"single.normalize_backward({dY}, {gain}, {normalized}, {inverse_std}, "
                    f"{dY})")
        return dY


class SkipWords:
    """A block's own words (:class:`tinynet.step.Residual`'s ``ops``): the skip's sum into
    ``Y`` (or ``S`` before a post-norm), α's gradient and step, and α·dS (see the module's
    docstring for ``carry``)."""

    def __init__(self, writer: Writer, maths: object, post: bool) -> None:
        self.writer, self.maths, self.post = writer, maths, post
        self.forward = True     # which pass is traced: BlockLoop sets it before each

    def _write(self, *lines: str) -> None:
        self.writer.write(f"# the block, {said_by(3)}", *lines)

    def skip_sum(self, skip: str, X: str, scale: str, F: str) -> str:
        if not self.forward:                       # dX = s·dS + dH, over dH
            self._write(f"single.skip_sum({skip}, {X}, {scale}, {F}, {F})")
            return F
        out = "S" if self.post else "block_out"
        self._write(f"single.skip_sum({skip}, {X}, {scale}, {F}, {out})")
        return out

    def scale_gradient(self, dS: str, F: str, dscale: str) -> None:
        self._write(f"grad[alpha_at] = single.scale_gradient({dS}, {F})")

    def update(self) -> None:
        self.writer.write(f"# the block's α, {said_by(3)}; {looping.optimizer_said(self.maths)}",
                          "update_rows(theta, grad, state, lr, hyper, steps, alpha_at, "
                          "alpha_at + 1)")

    def scaled(self, scale: str, dS: str) -> str:
        self._write("carry, delta = delta, carry  # dS kept for the skip",
                    "dF = _rows(delta, rows, width)", f"single.scaled({scale}, {dS}, dF)")
        return "dF"


def _enter(part: Any, backward: bool) -> None:
    """A runtime layer's views, before its pass (a block loop writes its own); before the
    backward pass, its input and φ'(Z) are the names its views give them, not those its
    forward pass was traced with."""
    if isinstance(part, RuntimeLayer):
        part.ops.enter(backward)
        if backward:
            part._X, part._slope = "X", "D"


class Chain(list):
    """Runtime parts in a chain as :mod:`tinynet.step` iterates them: each layer's views
    written before its pass, first to last or last to first."""

    def __iter__(self) -> Iterator[Any]:
        for part in list.__iter__(self):
            _enter(part, backward=False)
            yield part

    def __reversed__(self) -> Iterator[Any]:
        for part in list.__reversed__(self):
            _enter(part, backward=True)
            yield part


class BlockLoop:
    """The run of blocks as one part of the chain: its passes are loops over ``block``, each
    body :class:`tinynet.step.Residual`'s pass on the block's views (:meth:`views`)."""

    def __init__(self, writer: Writer, maths: object, structure: Structure) -> None:
        self.writer, self.structure = writer, structure
        pre, post = structure.placement == "pre", structure.placement == "post"
        branch = [RuntimeLayer(LayerWords(
            writer, maths, _row(i), f"the block's layer {i}",
            ("H" if pre else "block_in") if i == 0 else f"_rows(As[{_row(i - 1)}], rows, n_in)"))
            for i in range(structure.branch)]
        norm = None if structure.placement is None else description.Norm(
            "gain", "bias", "dgain", "dbias", "eps",
            NormWords(writer, maths, "H" if pre else "block_out"))
        self.skip_words = SkipWords(writer, maths, post)
        self.block = description.Residual(
            branch, norm, structure.placement,
            "theta[alpha_at]" if structure.trained else "block_floats[block, 1]",
            "dalpha" if structure.trained else None, "block_floats[block, 0]", self.skip_words)
        self.block.layers = Chain(branch)    # which writes each layer's views

    def views(self, backward: bool) -> list[str]:
        """The lines that make block ``block``'s views: its input X and output Y in the
        stream, its first branch row, ε, α's place; its norm's; in the backward pass, the
        gradient reaching it (``dY``, in ``delta``) and its branch's output F."""
        s = self.structure
        lines = ["row = block_table[block, 0]"]
        if not backward or s.placement != "pre":       # the branch's input, backward
            lines.append("block_in = _rows(stream[block], rows, width)")
        if not backward:
            lines.append("block_out = _rows(stream[block + 1], rows, width)")
        if s.trained:
            lines.append("alpha_at = block_table[block, 2]")
        if s.placement is not None:
            lines += ["eps = block_floats[block, 2]", "gain_at = block_table[block, 1]",
                      "gain = theta[gain_at:gain_at + width]",
                      "bias = theta[gain_at + width:gain_at + 2 * width]",
                      "normalized = _rows(normalized_rows[block], rows, width)",
                      "inverse_std = inverse_stds[block, :rows]"]
        if s.placement == "pre":
            lines.append("H = _rows(hidden[block], rows, width)")
        if s.placement == "post" and not backward:
            lines.append("S = _rows(summed, rows, width)")
        if backward:
            lines += ["dY = _rows(delta, rows, width)",
                      f"F = _rows(As[{_row(s.branch - 1)}], rows, width)"]
            if s.placement is not None:
                lines += ["dgain = grad[gain_at:gain_at + width]",
                          "dbias = grad[gain_at + width:gain_at + 2 * width]"]
        return lines

    def forward(self, X: str) -> str:
        """The stream's first value X, each block's forward pass; the last block's output."""
        self.writer.write(f"# the blocks, {said_by()}: the stream starts at the layer "
                          "before's output",
                          f"single.copy_rows({X}, _rows(stream[0], rows, width))")
        self.writer.open("for block in range(blocks):")
        self.writer.write(*self.views(backward=False))
        self.skip_words.forward = True
        self.block.forward("block_in")
        self.writer.close()
        self.writer.write("inputs = _rows(stream[blocks], rows, width)")
        return "inputs"

    def backward(self, dY: str, *, given_dZ: bool = False, update: Any = None,
                 input_gradient: bool = True) -> str:
        """Each block's backward pass, the last first, the gradient in ``delta`` from block to
        block; the first block's dX."""
        self.writer.open("for block in range(blocks - 1, -1, -1):")
        self.writer.write(*self.views(backward=True))
        self.skip_words.forward = False
        self.block._branch = "F"                       # the branch's output, in its views
        self.block.backward("dY", given_dZ=given_dZ, update=update)
        self.writer.close()
        self.writer.write("dX = _rows(delta, rows, width)")
        return "dX"


def _row(i: int) -> str:
    """The table's row of a block's branch layer ``i``."""
    return "row" if i == 0 else f"row + {i}"


def _chain(writer: Writer, maths: object, structure: Structure) -> Chain:
    """The network as runtime parts: the head's layers (rows 0 on), the blocks, the tail's
    (the table's last rows)."""
    def layer(index: str, role: str, given: str) -> RuntimeLayer:
        return RuntimeLayer(LayerWords(writer, maths, index, role, given))

    head = [layer(str(k), f"layer {k}", "x" if k == 0 else f"_rows(As[{k - 1}], rows, n_in)")
            for k in range(structure.head)]
    tail = [layer(f"layers - {structure.tail - j}", f"the blocks' layer {j} after",
                  "_rows(stream[blocks], rows, n_in)" if j == 0
                  else f"_rows(As[layers - {structure.tail - j + 1}], rows, n_in)")
            for j in range(structure.tail)]
    return Chain([*head, BlockLoop(writer, maths, structure), *tail])


_PROLOGUE = '''    table, kinds, parameters = layout
    layers = table.shape[0]
    block_table, block_floats = blocks_layout
    blocks, width = block_table.shape[0], table[block_table[0, 0], 0]
    stream, hidden, normalized_rows, inverse_stds, summed, carry = kept
'''


def _step_source(maths: kit.Maths, structure: Structure, during: bool) -> str:
    """``train_step_stream`` (``_during`` for ``update="during_backward"``): one step,
    :func:`tinynet.step.train_step` on :func:`_chain`, for one update order (a run compiles
    its own order alone: both in one function took half as long again to compile)."""
    writer = Writer(1)
    words = looping.StepWords(writer, maths)
    writer.write("inputs = x")
    description.train_step(words, _chain(writer, maths, structure), maths.loss,
                           maths.through(), "inputs", "y",
                           (lambda part: part.ops.update()) if during else None,
                           words.update_all)
    return (UNCOUNTED + "\n"
            f"def train_step_stream{epochs.lane_suffix(during)}(theta, grad, state, lr, hyper, "
            "steps, layout,\n"
            "        blocks_layout, x, y, rows, Zs, As, Ds, dZ_rows, delta, back, kept, "
            "threshold):\n"
            f'    """tinynet.step.train_step on {_described(structure)}, update='
            f'"{"during" if during else "after"}_backward"."""\n'
            + _PROLOGUE + "\n".join(writer.lines) + "\n    return batch_loss, wrong\n")


def _forward_source(maths: kit.Maths, structure: Structure) -> str:
    """``forward_stream``: :func:`tinynet.step.forward` on :func:`_chain`, the output written
    into ``out`` (a function that counts no references returns no array it made)."""
    writer = Writer(1)
    writer.write("rows = x.shape[0]", "inputs = x")
    output = description.forward(_chain(writer, maths, structure), "inputs")
    return (UNCOUNTED + "\n"
            "def forward_stream(theta, layout, blocks_layout, x, Zs, As, Ds, kept, out):\n"
            f'    """tinynet.step.forward on {_described(structure)}: the output into '
            'out."""\n' + _PROLOGUE + "\n".join(writer.lines)
            + f"\n    single.copy_rows({output}, out)\n")


def _described(structure: Structure) -> str:
    """``"1 layer, blocks of 2 layers with LayerNorm after the sum and a trained α, 1
    layer"``: the structure in words, for docstrings and the compile notice."""
    def layers(count: int) -> str:
        return f"{count} layer{'s' * (count != 1)}"

    norm = {"pre": " with LayerNorm before the branch and", "post": " with LayerNorm after the "
            "sum and", None: " with"}[structure.placement]
    alpha = "a trained" if structure.trained else "a constant"
    return (f"{layers(structure.head)}, blocks of {layers(structure.branch)}{norm} {alpha} α, "
            f"{layers(structure.tail)}")


class StreamWords(epochs.NetworkWords):
    """``fit_stream``'s words: :class:`tinynet.compiled.epochs.NetworkWords` whose step is
    ``train_step_stream`` of one update order (``suffix``:
    :func:`tinynet.compiled.epochs.lane_suffix`)."""

    def __init__(self, writer: Writer, suffix: str) -> None:
        super().__init__(writer)
        self.suffix = suffix

    def step(self, x: str, y: str) -> tuple[None, str]:
        self.body += [f"# {said_by()}: tinynet.step.train_step, above",
                      f"batch_loss, wrong = train_step_stream{self.suffix}(theta, grad, state, "
                      f"lr, hyper, steps, layout, blocks_layout, {x}, {y}, rows, Zs, As, Ds, dZ, "
                      "delta, back, kept, threshold)"]
        return None, "batch_loss"


def entry_name(name: str, during: bool) -> str:
    """The name of entry point ``name`` (``fit_stream``, ``fit_stream_members``) for an update
    order (``during``: update during the backward pass)."""
    return name + epochs.lane_suffix(during)


def source(maths: kit.Maths, structure: Structure) -> str:
    """The stream's functions for ``maths`` and ``structure``, written after the kit's
    (:func:`tinynet.compiled.kit.source`), whose words they call: for each update order its
    step, ``fit_stream`` and ``fit_stream_members`` (:func:`entry_name`); the forward pass and
    ``predict_stream_members``."""
    parts = []
    for during in (False, True):
        suffix = epochs.lane_suffix(during)
        parts += [_step_source(maths, structure, during),
                  epochs.network_source(StreamWords(Writer(1), suffix), f"fit_stream{suffix}",
                                        "layout, blocks_layout",
                                        ["kept = single.stream_scratch(layout, blocks_layout, "
                                         "batch_size)"]),
                  _MEMBERS.replace("{suffix}", suffix)]
    return "\n\n".join([*parts, _forward_source(maths, structure), _PREDICT])


_MEMBERS = '''@njit(cache=True, parallel=True, error_model="numpy")
def fit_stream_members{suffix}(theta, state, hyper, layout, blocks_layout, X, Y, seeds, settings,
                       record, predictions):
    """fit_stream{suffix} for every member, theta (S, P) and state (S, k, P) in place, row s of
    record member s's (a member that has diverged stays as it stopped), spread over the cores;
    then predictions[s], member s's outputs on X (N, n_out)."""
    loss_history, final_loss, diverged_epoch, last_wrong_epoch = record
    for s in prange(theta.shape[0]):
        if diverged_epoch[s] < 0:
            fit_stream{suffix}(theta[s], state[s], hyper, layout, blocks_layout, X, Y, seeds[s],
                       settings, (loss_history[s:s + 1], final_loss[s:s + 1],
                                  diverged_epoch[s:s + 1], last_wrong_epoch[s:s + 1]))
    predict_stream_members(theta, layout, blocks_layout, X, predictions)
'''

_PREDICT = '''@njit(cache=True, parallel=True, error_model="numpy")
def predict_stream_members(theta, layout, blocks_layout, X, predictions):
    """predictions[s], the outputs on X (N, n_out) of the network whose packed parameters are
    theta[s] (theta (S, P)), the members spread over the cores."""
    width = max(X.shape[1], layout.table[:, 1].max())
    for s in prange(theta.shape[0]):
        Zs = np.empty((layout.table.shape[0], X.shape[0] * width))
        As, Ds = np.empty_like(Zs), np.empty_like(Zs)
        kept = single.stream_scratch(layout, blocks_layout, X.shape[0])
        forward_stream(theta[s], layout, blocks_layout, X, Zs, As, Ds, kept, predictions[s])
'''


_LOADED: dict[tuple, ModuleType] = {}
"""The stream kits loaded in this process, by maths, structure and kernel directory."""


def load(maths: kit.Maths, structure: Structure) -> ModuleType:
    """The kit for ``maths`` with the stream's functions for ``structure``: written,
    imported and compiled once per process and kernel directory."""
    key = (maths.key(), structure, kernel_dir())
    if key not in _LOADED:
        _LOADED[key] = load_module(module_source(maths, structure), key[2])
    return _LOADED[key]


def module_source(maths: kit.Maths, structure: Structure) -> str:
    """The generated module's text: the kit's (:func:`tinynet.compiled.kit.source`), then the
    stream's functions (:func:`source`)."""
    return kit.source(maths) + "\n\n" + source(maths, structure)


def entry(maths: kit.Maths, structure: Structure, name: str) -> object:
    """Entry point ``name`` (:func:`entry_name`, ``predict_stream_members``), after saying on
    stderr if it is about to be compiled (:func:`tinynet.compiled.kit.entry`)."""
    return kit.entry(maths, name, load(maths, structure), f" ({_described(structure)})")
