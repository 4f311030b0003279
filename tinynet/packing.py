"""A network as flat arrays: every parameter in one vector ``theta`` and a :class:`Layout`
that says where each layer's W and b sit and which activation it has.

    theta = [W0 (row-major, (n_out, n_in)), b0, W1, b1, ...]

Both fast paths train on this form: the NumPy ensemble (:mod:`tinynet.reference`) stacks the
members' vectors into ``theta`` (S, P) and steps them all with one subtraction, and the
compiled kernels (:mod:`tinynet.compiled`) take ``theta`` and the layout as plain arrays.
"""

from __future__ import annotations

import dataclasses
import math
import numbers
from collections.abc import Sequence
from typing import TYPE_CHECKING, NamedTuple

import numpy as np

from . import init
from .seeding import generators
from .validation import check_seeds

if TYPE_CHECKING:
    from .network import Network

__all__ = ["Layout", "layout", "layer_rows", "offsets", "activation_kinds", "pack", "stack",
           "unpack", "draw", "layer_views", "size", "count"]


class Layout(NamedTuple):
    """Where the parameters sit, one row per layer: ``table`` int64 (layers, 4) holds n_in,
    n_out, the offset of W and the offset of b in theta; ``kinds`` int64 (layers,) which of
    :func:`activation_kinds` each layer has; ``parameters`` float64 (layers, k) each layer's
    activation's numeric parameters, its dataclass fields in order (LeakyReLU's alpha),
    padded with 0."""

    table: np.ndarray
    kinds: np.ndarray
    parameters: np.ndarray


def activation_kinds(net: "Network") -> list:
    """What ``Layout.kinds`` indexes: one activation of each class ``net`` uses, in the
    order of the layers that first use it (a LeakyReLU network with a sigmoid output:
    LeakyReLU, then Sigmoid). The compiled kernels are written for these classes alone:
    networks that use the same classes in the same order share them, and a class a network
    does not use (a new built-in one among them) is in none of its kernels."""
    first: dict[type, object] = {}
    for layer in net.layers:
        first.setdefault(type(layer.activation), layer.activation)
    return list(first.values())


def offsets(net: "Network") -> dict[int, int]:
    """Where each of ``net``'s parameter arrays starts in ``pack(net)``, by the array's id."""
    starts, offset = {}, 0
    for parameter in net.parameters():
        starts[id(parameter)] = offset
        offset += parameter.size
    return starts


def layout(net: "Network") -> Layout:
    """The :class:`Layout` of ``net``'s parameters in ``pack(net)``: a chain of layers alone
    (a network with residual blocks is refused, as everything that reads a Layout would run
    it as a chain)."""
    if net.residuals:
        raise ValueError("a Layout describes a chain of layers; this network has residual "
                         f"blocks (net.blocks[{net.blocks.index(net.residuals[0])}] is "
                         f"{net.residuals[0]!r}), whose parameters tinynet.packing.offsets "
                         "places")
    return layer_rows(net)


def layer_rows(net: "Network") -> Layout:
    """The :class:`Layout` of every dense layer of ``net`` (``net.layers``, inside residual
    blocks too), in order: for a chain, its layout; for a network with blocks, the rows that
    :mod:`tinynet.compiled.stream`'s block table joins into blocks."""
    starts = offsets(net)
    rows = [(layer.n_in, layer.n_out, starts[id(layer.W)], starts[id(layer.b)])
            for layer in net.layers]
    classes = [type(activation) for activation in activation_kinds(net)]
    values = [_parameter_values(layer.activation) for layer in net.layers]
    parameters = np.zeros((len(values), max(1, *map(len, values))))
    for row, numbers_of_layer in zip(parameters, values):
        row[:len(numbers_of_layer)] = numbers_of_layer
    return Layout(np.array(rows, dtype=np.int64),
                  np.array([classes.index(type(layer.activation)) for layer in net.layers],
                           dtype=np.int64), parameters)


def _parameter_values(activation: object) -> list[float]:
    """An activation's dataclass fields, as numbers (NaN for a field that is not one, which no
    kernel reads: the compiled backend refuses such an activation)."""
    if not dataclasses.is_dataclass(activation):
        return []
    return [float(value) if isinstance(value, numbers.Real) else math.nan
            for value in (getattr(activation, field.name)
                          for field in dataclasses.fields(activation))]


def pack(net: "Network") -> np.ndarray:
    """A new flat float64 vector (P,) holding every W and b, in layer order."""
    return np.concatenate([p.ravel() for p in net.parameters()])


def stack(networks: Sequence["Network"]) -> np.ndarray:
    """The members' packed vectors as the rows of a new (S, P) array."""
    return np.stack([pack(net) for net in networks])


def unpack(net: "Network", theta: np.ndarray) -> None:
    """Copy ``theta`` (P,) back into the network's W and b arrays (in place)."""
    offset = 0
    for param in net.parameters():
        param[...] = theta[offset:offset + param.size].reshape(param.shape)
        offset += param.size


def count(sizes: Sequence[int]) -> int:
    """P, the number of weights and biases of a network of layer ``sizes`` (inputs first):
    Σ (n_in + 1) · n_out."""
    return sum((n_in + 1) * n_out for n_in, n_out in zip(sizes, sizes[1:]))


def size(like: "Network") -> int:
    """P, the number of parameters of a network like ``like``: the length of ``pack(like)``."""
    return sum(parameter.size for parameter in like.parameters())


def draw(like: "Network", seeds: Sequence[int]) -> np.ndarray:
    """The initial parameters of networks like ``like`` built with each of ``seeds``, packed
    without building them: (S, P), row k bit for bit ``pack`` of ``like``'s layers in a
    :class:`~tinynet.network.Network` of seed ``seeds[k]`` (as
    :meth:`~tinynet.network.Network.reset_parameters` draws: every layer's weights, then every
    layer's biases, from ``numpy.random.default_rng(seed)``; for tinynet's own initializers,
    one generator set to each seed's state by :func:`tinynet.seeding.generators`, which hashes
    all seeds at once). 8 · P bytes per member.

    An initializer that returns the wrong shape or non-finite numbers raises as it would in a
    Network (:func:`tinynet.init.draw`), for the first seed that shows it."""
    seeds = check_seeds(seeds, len(seeds))
    theta = np.empty((len(seeds), size(like)))
    draws, constants = _plan(like)
    for start, end, constant in constants:
        theta[:, start:end] = constant
    builtin = all(_builtin(initializer) for initializer, *_ in draws)
    rngs = generators(seeds) if builtin else (np.random.default_rng(seed) for seed in seeds)
    for row, seed, rng in zip(theta, seeds, rngs):
        for initializer, shape, activation, start, end in draws:
            try:
                values = np.asarray(initializer(shape, rng, activation))
            except Exception:
                _draw_checked(draws, int(seed))  # raises as init.draw does
                raise
            if values.shape != shape or values.dtype.kind not in "biuf":
                _draw_checked(draws, int(seed))
                raise ValueError(f"initializer {initializer.name!r} returned {values.dtype} "
                                 f"{values.shape} for seed {seed}, expected float {shape}")
            row[start:end] = values.ravel()
    finite = np.isfinite(theta).all(axis=1)
    if not finite.all():
        _draw_checked(draws, int(seeds[int(np.argmin(finite))]))
    return theta


Draws = list[tuple["init.Initializer", tuple[int, int], object, int, int]]
"""What :func:`draw` draws, in order: per draw the initializer, the shape it draws, the
layer's activation, and where the values go in a row of theta (start, end)."""


def _plan(like: "Network") -> tuple[Draws, list[tuple[int, int, float]]]:
    """What ``Network`` draws for ``like``'s layers, in its order (every layer's weights, then
    every drawn bias), and where each constant bias goes in a row of theta (start, end,
    value)."""
    starts = offsets(like)
    table = [(layer.n_out, starts[id(layer.W)], starts[id(layer.b)]) for layer in like.layers]
    draws: Draws = [(layer.init, layer.shape, layer.activation, w_at, b_at)
                    for layer, (_, w_at, b_at) in zip(like.layers, table)]
    constants = []
    for layer, (n_out, _, b_at) in zip(like.layers, table):
        if isinstance(layer.bias_init, float):
            constants.append((b_at, b_at + n_out, layer.bias_init))
        else:
            draws.append((layer.bias_init, layer.bias_shape, layer.activation, b_at,
                          b_at + n_out))
    for block in like.residuals:      # what a block's reset_parameters sets: no draws
        norm = [] if block.norm is None else [(getattr(block.norm, name), value)
                                              for name, value in block.norm.INITIAL.items()]
        for parameter, value in [*norm, *(((block.scale, block.initial_scale),)
                                          if block.train_scale else ())]:
            start = starts[id(parameter)]
            constants.append((start, start + parameter.size, value))
    return draws, constants


def _builtin(initializer: "init.Initializer") -> bool:
    """Whether ``initializer`` is one of tinynet's own schemes, which only draw from the
    generator they are given: :func:`draw` may then set one generator to each seed's state
    (:func:`tinynet.seeding.generators`). A user's function might use anything a fresh
    ``default_rng(seed)`` has (its ``spawn``, its seed sequence), so it gets one."""
    return type(initializer).__module__.startswith("tinynet.init.") and \
        not isinstance(initializer, init.FunctionInitializer)


def _draw_checked(draws: Draws, seed: int) -> None:
    """Draw ``seed``'s parameters through :func:`tinynet.init.draw`, which raises naming the
    initializer whose values are wrong (an initializer that fails only now and then may not
    fail again here: the caller then raises what it saw)."""
    rng = np.random.default_rng(seed)
    for initializer, shape, activation, _, _ in draws:
        init.draw(initializer, shape, rng, activation)


def layer_views(flat: np.ndarray, table: np.ndarray) -> list[tuple[np.ndarray, np.ndarray]]:
    """Per layer, ``(W, b)`` as views into ``flat`` (S, P): W (S, n_out, n_in), b (S, n_out).
    Writing to a view writes to ``flat``."""
    members = flat.shape[0]
    return [(flat[:, w_at:w_at + n_out * n_in].reshape(members, n_out, n_in),
             flat[:, b_at:b_at + n_out]) for n_in, n_out, w_at, b_at in table]
