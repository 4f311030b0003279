"""A network: dense layers in a chain, their weights drawn from one seeded generator.

    >>> import tinynet
    >>> net = tinynet.mlp([2, 2, 2, 1], activation="leaky_relu", output="sigmoid",
    ...                   init="he_leaky", seed=0)

Forward runs the layers in order; backward runs them in reverse, each turning dL/d(output)
into dL/d(input) and keeping its own dW and db: :func:`tinynet.step.forward` and
:func:`tinynet.step.backward`, the chain every backend runs or renders.

The model knows nothing of how it is trained, run fast or stored: ``net.fit``,
``net.predict`` and ``net.save`` are :func:`tinynet.fit`, :func:`tinynet.predict` and
:func:`tinynet.save` with ``net`` as their first argument, attached to the class by
``tinynet/__init__.py``.
"""

from __future__ import annotations

import copy
import weakref
from collections.abc import Callable, Sequence

import numpy as np

from . import step
from .activations import Activation
from .init import InitSpec
from .layers import Layer
from .optimizers import State
from .residual import NORMS, Residual
from .text import table
from .validation import (ShapeError, as_float_matrix, check_chain, check_choice, check_int,
                         check_not_masked, check_seed, check_sequence)

__all__ = ["Network", "mlp", "check_residual", "RESIDUALS"]


class Network:
    """``Network(layers, seed=0)``: a chain of :class:`Layer` s and residual blocks
    (:class:`tinynet.Residual`, whose layers count among ``net.layers``; ``net.blocks`` is
    the chain as given), ending with a Layer.

    Every layer's weights are drawn again, in order, from ``numpy.random.default_rng(seed)``,
    then every layer's biases (drawn only for a bias initializer; constants draw nothing), so
    the seed alone fixes the initial network and the weights do not depend on ``bias_init``.
    Nothing uses NumPy's global random state.

    ``parameters=[W0, b0, W1, b1, ...]`` (the order of :meth:`parameters`) sets the weights
    and biases to copies of those arrays instead, running no initializer (how
    :func:`tinynet.load` rebuilds a network).

    The network owns its layers: a Layer already in another (live) Network is refused, since
    building this one would redraw that one's weights; build new layers, or ``copy.deepcopy``
    the other network.

    ``optimizer_state`` is the state the optimizer of the last :func:`tinynet.fit` left
    (:class:`tinynet.optimizers.State`: Adam's moments, momentum's velocities), which the
    next fit with the same optimizer continues from; None for a new network or after plain SGD.
    """

    def __init__(self, layers: Sequence[Layer | Residual], seed: int = 0,
                 parameters: Sequence[np.ndarray] | None = None) -> None:
        blocks = check_sequence("layers", layers, (Layer, Residual),
                                "tinynet Layer or Residual", distinct=True)
        _check_owners(blocks)
        if isinstance(blocks[-1], Residual):
            raise ValueError("layers[-1] is a Residual block: a network ends with a Layer, "
                             "its output layer")
        layers = [layer for block in blocks
                  for layer in (block.layers if isinstance(block, Residual) else (block,))]
        for index, layer in enumerate(blocks[:-1]):
            if isinstance(layer, Layer) and layer.activation.over_units:
                raise ValueError(f"layers[{index}]'s activation {layer.activation!r} is defined "
                                 "over its units and has no element-wise derivative: it can "
                                 "only be the output layer's, trained with "
                                 "loss='cross_entropy'")
        check_chain(blocks)
        self.seed = check_seed("seed", seed)
        self.layers = layers    # every dense layer, in order (a block's among them)
        self.blocks = blocks    # what the network chains: Layers and Residual blocks
        if parameters is not None:
            parameters = _checked_parameters(parameters, self)
        self.optimizer_state: State | None = None  # what the last fit's optimizer carries
        if parameters is None:
            self.reset_parameters()
        else:
            for target, value in zip(self.parameters(), parameters):
                target[...] = value
        self._claim_layers()  # once built: a failed build leaves the layers free

    def _claim_layers(self) -> None:
        for layer in (*self.layers, *self.residuals):
            layer._network = weakref.ref(self)

    def structure(self) -> tuple:
        """What an ensemble's members must share with its first: where the residual blocks
        stand among the layers, and each one's :meth:`tinynet.Residual.signature`."""
        return tuple(("layer",) if isinstance(block, Layer) else block.signature()
                     for block in self.blocks)

    @property
    def residuals(self) -> list[Residual]:
        """The network's residual blocks, in order (none for a chain of layers)."""
        return [block for block in self.blocks if isinstance(block, Residual)]

    def __setstate__(self, state: dict) -> None:
        """A copied or unpickled network owns its (copied) layers."""
        self.__dict__.update(state)
        self._claim_layers()

    def __copy__(self) -> "Network":
        """A copy shares nothing with this network (``copy.copy`` is ``copy.deepcopy``): two
        networks sharing layers would train one set of weights."""
        return copy.deepcopy(self)

    def reset_parameters(self) -> None:
        """Redraw every layer's weights, then every layer's biases, from a fresh generator
        seeded with ``self.seed``; the optimizer's state (:attr:`optimizer_state`) goes."""
        self.optimizer_state = None
        rng = np.random.default_rng(self.seed)
        for layer in self.layers:
            layer.reset_weights(rng)
        for layer in self.layers:
            layer.reset_biases(rng)
        for block in self.residuals:
            block.reset_parameters()

    @property
    def n_in(self) -> int:
        """Number of inputs."""
        return self.layers[0].n_in

    @property
    def n_out(self) -> int:
        """Number of outputs."""
        return self.layers[-1].n_out

    @property
    def sizes(self) -> list[int]:
        """Layer sizes, inputs first: ``[2, 2, 2, 1]`` for 2-2-2-1 (a residual block's width
        once)."""
        return [self.n_in] + [block.n_out for block in self.blocks]

    def forward(self, X: object) -> np.ndarray:
        """Network output for a batch ``X`` of shape (B, n_in): shape (B, n_out). Every layer
        keeps its input and pre-activation for :meth:`backward`."""
        return step.forward(self.blocks, as_float_matrix("X", X, columns=self.n_in))

    def backward(self, dY: np.ndarray, *, given_dZ: bool = False,
                 update: Callable[[Layer], None] | None = None,
                 input_gradient: bool = True) -> np.ndarray | None:
        """Backpropagate dL/dY (B, n_out) through every layer, last first; return dL/dX
        (B, n_in), or None without ``input_gradient`` (training needs no gradient of its
        data). ``given_dZ``: ``dY`` is dL/dZ of the output layer (a loss's gradient through a
        sigmoid output); ``update(part)`` is called for each layer (and a block's norm, and a
        block whose α is trained) once its gradients are
        known, before it passes its dX back (see :meth:`Layer.backward`)."""
        return step.backward(self.blocks, dY, given_dZ=given_dZ, update=update,
                             input_gradient=input_gradient)

    def labels(self) -> dict[int, str]:
        """What ``print(net)`` calls each layer, norm and block, by its id: ``"0"`` for a
        layer of the chain, ``"1.0"``, ``"1.norm"`` and ``"1.α"`` for a block's layer, norm
        and trained α (the block itself)."""
        labels = {}
        for index, block in enumerate(self.blocks):
            if isinstance(block, Layer):
                labels[id(block)] = str(index)
                continue
            labels[id(block)] = f"{index}.α"
            if block.norm is not None:
                labels[id(block.norm)] = f"{index}.norm"
            labels.update({id(layer): f"{index}.{k}" for k, layer in enumerate(block.layers)})
        return labels

    def slots(self) -> list[tuple[object, str, str]]:
        """Where every parameter array and its gradient are, in the order of
        :meth:`parameters`: ``(owner, "W", "dW")`` for each (:meth:`tinynet.Layer.slots`)."""
        return [slot for block in self.blocks for slot in block.slots()]

    def parameters(self) -> list[np.ndarray]:
        """``[W0, b0, W1, b1, ...]``: the arrays themselves (a residual block's in its place:
        :meth:`tinynet.Residual.parameters`)."""
        return [p for block in self.blocks for p in block.parameters()]

    def gradients(self) -> list[np.ndarray]:
        """``[dW0, db0, dW1, db1, ...]`` from the last backward pass."""
        return [g for block in self.blocks for g in block.gradients()]

    @property
    def n_parameters(self) -> int:
        """Total number of weights and biases."""
        return sum(p.size for p in self.parameters())

    def __repr__(self) -> str:
        biases = any(layer.bias_init != 0.0 for layer in self.layers)  # else: a column of 0s
        header = ("layer", "shape (out, in)", "activation", "init", "init std",
                  *(("bias init",) if biases else ()), "params")
        rows, labels = [], self.labels()

        def dense_row(layer: Layer) -> tuple[str, ...]:
            std = layer.init_std()
            return (labels[id(layer)], str(layer.shape), repr(layer.activation),
                    layer.init_label(),
                    "?" if std is None else f"{std:#.4g}",
                    *((layer.bias_label(),) if biases else ()), str(layer.W.size + layer.b.size))

        def other_row(label: str, what: str, size: int | None) -> tuple[str, ...]:
            return (label, "", what, "", "", *(("",) if biases else ()),
                    "" if size is None else str(size))

        for index, block in enumerate(self.blocks):
            if isinstance(block, Layer):
                rows.append(dense_row(block))
                continue
            rows.append(other_row(str(index), f"residual: {block.formula()}", None))
            if block.norm is not None:
                rows.append(other_row(labels[id(block.norm)], repr(block.norm), 2 * block.width))
            rows += [dense_row(layer) for layer in block.layers]
            if block.train_scale:
                rows.append(other_row(labels[id(block)], f"trained, from {block.initial_scale:g}",
                                      1))
        return (f"Network {'-'.join(map(str, self.sizes))}: {self.n_parameters} parameters, "
                f"seed {self.seed}\n" + table([header, *rows]))


def _check_owners(blocks: list[Layer | Residual]) -> None:
    """Refuse a layer or block that belongs to another live Network (building this one would
    redraw that one's weights), and a layer that stands twice among ``blocks`` and their
    branches (``check_sequence`` saw to the blocks themselves)."""
    seen: dict[int, str] = {}
    for index, block in enumerate(blocks):
        parts = [(f"layers[{index}]", block)] + (
            [(f"layers[{index}].layers[{k}]", layer) for k, layer in enumerate(block.layers)]
            if isinstance(block, Residual) else [])
        for where, part in parts:
            if id(part) in seen:
                raise ValueError(f"{where} is the same Layer object as {seen[id(part)]}: a "
                                 "layer stands once in a network")
            seen[id(part)] = where
            owner = _owner(part)
            if owner is not None:
                raise ValueError(
                    f"{where} ({part!r}) already belongs to a Network (seed {owner.seed}); a "
                    "Layer belongs to one Network, since building a second would redraw the "
                    "first one's weights: build new Layers, or copy.deepcopy the first "
                    "network")


def _owner(layer: Layer) -> "Network | None":
    """The live Network ``layer`` belongs to, if any."""
    owner = getattr(layer, "_network", None)  # a Layer pickled before ownership has none
    return None if owner is None else owner()


def _checked_parameters(parameters: object, net: Network) -> list[np.ndarray]:
    """``parameters`` as arrays [W0, b0, ...], if each holds real numbers in its layer's
    shape (they are copied into the layer's float64 arrays)."""
    shapes = [p.shape for p in net.parameters()]
    if isinstance(parameters, np.ndarray) or not isinstance(parameters, Sequence) or \
            len(parameters) != len(shapes):
        raise TypeError(f"parameters must be a list of {len(shapes)} arrays [W0, b0, W1, ...] "
                        f"of shapes {shapes}, got {type(parameters).__name__}")
    arrays = []
    for index, (value, shape) in enumerate(zip(parameters, shapes)):
        array = np.asarray(check_not_masked(f"parameters[{index}]", value))
        if array.shape != shape or array.dtype.kind not in "iuf":
            raise ShapeError(f"parameters[{index}] must be a real array of shape {shape}, got "
                             f"{array.dtype} {array.shape}")
        arrays.append(array)
    return arrays


RESIDUALS = ("standard", "rezero", "fixup", "deepnet")
"""The residual blocks :func:`mlp` builds by name (``residual=True`` is ``"standard"``)."""


def mlp(sizes: Sequence[int], activation: str | Activation = "leaky_relu",
        output: str | Activation = "sigmoid", init: InitSpec = "auto",
        output_init: InitSpec | None = None, alpha: float = 0.01, seed: int = 0,
        bias_init: float | InitSpec = 0.0, residual: bool | str = False,
        norm: str | None = None, branch: int = 1) -> Network:
    """Build a multilayer perceptron with layer sizes ``sizes`` (inputs first).

    Hidden layers use ``activation`` and ``init``; the last layer uses ``output`` and
    ``output_init`` (default: ``init``). ``alpha`` is LeakyReLU's negative slope; every layer's
    biases start at ``bias_init``, a constant or an initializer (see :class:`Layer`).
    ``mlp([2, 2, 2, 1])`` is 99mlp's likely shape: two LeakyReLU layers of 2 and a sigmoid output.

    ``residual`` makes every hidden size after the first a residual block
    (:class:`tinynet.Residual`) of ``branch`` layers of that width (the hidden sizes must be
    equal): ``mlp([2, 16, 16, 16, 1], residual=True)`` is a layer 2 → 16, two blocks
    ``x + F(x)``, and the output layer. ``norm="pre"`` or ``"post"`` puts a LayerNorm in each
    block. By name (``True`` is ``"standard"``), for L blocks of m layers:

    * ``"standard"``: ``x + F(x)``, He et al. 2016;
    * ``"rezero"``: ``x + α·F(x)``, α trained from 0 (Bachlechner et al. 2020; SkipInit);
    * ``"fixup"``: α trained from 1, a branch's layers but its last drawn by ``fixup`` (He's
      normal scaled by L^(−1/(2m−2))), its last, linear as the paper's, and the output layer
      at 0 (Zhang et al. 2019); at least two layers a branch, no norm;
    * ``"deepnet"``: ``LN((2L)^¼·x + F(x))``, the branch drawn by ``deepnet`` (Xavier's
      normal with gain (8L)^(−¼)), Wang et al. 2022; needs ``norm="post"``.

    Every branch layer has ``activation`` (so a ReLU branch's output is never negative) but
    Fixup's last; Fixup's and DeepNet's branches are drawn by their own schemes whatever
    ``init`` is, which draws the first layer (and the output layer but Fixup's).
    """
    if isinstance(sizes, (str, bytes)) or np.ndim(sizes) != 1 or len(sizes) < 2:
        raise ValueError(f"sizes must be a sequence of at least two layer sizes such as "
                         f"[2, 2, 1], got {sizes!r}")
    sizes = [check_int(f"sizes[{i}]", size, minimum=1) for i, size in enumerate(sizes)]
    if residual is False and norm is None and branch == 1:
        last = len(sizes) - 2
        layers = [Layer(n_in, n_out,
                        activation=output if i == last else activation,
                        init=(output_init if output_init is not None else init)
                        if i == last else init, alpha=alpha, bias_init=bias_init)
                  for i, (n_in, n_out) in enumerate(zip(sizes[:-1], sizes[1:]))]
        return Network(layers, seed=seed)
    return Network(_residual_blocks(sizes, activation, output, init, output_init, alpha,
                                    bias_init, residual, norm, branch), seed=seed)


def check_residual(residual: bool | str, norm: str | None,
                   branch: object) -> tuple[str, str | None, int]:
    """``(kind, norm, branch)`` of :func:`mlp`'s residual blocks, checked: ``residual`` True
    (``"standard"``) or a name of :data:`RESIDUALS`, ``norm`` None or one of
    :data:`tinynet.residual.NORMS`, ``branch`` at least 1, and the papers' rules: Fixup has no
    norm and two layers a branch at least, DeepNet a post-norm."""
    kind = "standard" if residual is True else check_choice("residual", residual, RESIDUALS)
    if norm is not None:
        norm = check_choice("norm", norm, NORMS)
    branch = check_int("branch", branch, minimum=1)
    if kind == "fixup" and norm is not None:
        raise ValueError(f"residual='fixup' is for networks without normalization, got "
                         f"norm={norm!r}")
    if kind == "fixup" and branch < 2:
        raise ValueError(f"residual='fixup' needs branch >= 2 (its branch's last layer, linear, "
                         f"starts at 0, and the others are scaled by L^(-1/(2m-2))), got "
                         f"branch={branch}")
    if kind == "deepnet" and norm != "post":
        raise ValueError(f"residual='deepnet' scales a post-norm block's skip: pass "
                         f"norm='post', got norm={norm!r}")
    return kind, norm, branch


def _residual_blocks(sizes: list[int], activation: str | Activation, output: str | Activation,
                     init: InitSpec, output_init: InitSpec | None, alpha: float,
                     bias_init: float | InitSpec, residual: bool | str, norm: str | None,
                     branch: int) -> list[Layer | Residual]:
    """:func:`mlp`'s layers with residual blocks: the first layer, the blocks, the output."""
    if residual is False:
        raise ValueError(f"norm={norm!r} and branch={branch!r} are a residual block's: pass "
                         "residual=True (or a name of RESIDUALS) with them")
    kind, norm, branch = check_residual(residual, norm, branch)
    width, hidden = sizes[1], sizes[1:-1]
    if len(hidden) < 2 or any(size != width for size in hidden):
        raise ValueError(f"sizes must have at least two hidden sizes, all equal, for residual "
                         f"blocks (the first layer maps the inputs to the width, each further "
                         f"hidden size is a block), got {sizes!r}")
    blocks = len(hidden) - 1
    if kind == "fixup":      # the branch's last layer starts at 0
        inits = [f"fixup(blocks={blocks}, branch_layers={branch})"] * (branch - 1) + ["zeros"]
    elif kind == "deepnet":
        inits = [f"deepnet(blocks={blocks})"] * branch
    else:
        inits = [init] * branch
    scale, trained = {"rezero": (0.0, True), "fixup": (1.0, True)}.get(kind, (1.0, False))
    skip = (2.0 * blocks) ** 0.25 if kind == "deepnet" else 1.0

    def layer(n_in: int, n_out: int, layer_init: InitSpec, layer_activation=activation) -> Layer:
        return Layer(n_in, n_out, activation=layer_activation, init=layer_init, alpha=alpha,
                     bias_init=bias_init)

    def branch_layer(k: int) -> Layer:
        last_of_fixup = kind == "fixup" and k == branch - 1
        return layer(width, width, inits[k], "identity" if last_of_fixup else activation)

    head_init = output_init if output_init is not None else "zeros" if kind == "fixup" else init
    return [layer(sizes[0], width, init),
            *(Residual([branch_layer(k) for k in range(branch)], norm=norm,
                       scale=scale, train_scale=trained, skip=skip) for _ in range(blocks)),
            layer(width, sizes[-1], head_init, output)]
