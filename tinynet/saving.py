"""Saving and loading networks: plain ``.npz`` files that can never run code.

    >>> net.save("xor.npz")
    >>> same = tinynet.load("xor.npz")

A file holds a format tag and version, the layer sizes, each layer's activation, alpha,
initializer name and bias initializer (a constant, or an initializer name), the network's
seed, and every W and b as float64 arrays, all as plain NumPy arrays (strings as fixed-width
unicode, never Python objects). It is read with ``allow_pickle=False``, so a file cannot make
NumPy unpickle anything. Loading gives back the same numbers, bit for bit.
"""

from __future__ import annotations

import os
import zipfile
from pathlib import Path

import numpy as np

from . import init
from .files import write_whole
from .layers import Layer
from .network import Network
from .validation import FileFormatError, UnknownNameError, check_instance

__all__ = ["FORMAT", "VERSION", "FileFormatError", "save", "load"]

FORMAT = "tinynet-network"
VERSION = 2
"""Format 2 added drawn biases (entry ``bias_initializers``). A network whose biases are all
constants is written as format 1, which every version of tinynet reads."""


def _savable_name(initializer: init.Initializer, shape: tuple[int, int], layer: Layer,
                  what: str) -> str:
    """The initializer's name, if loading it by that name gives the same initializer."""
    name = initializer.name
    try:
        same = init.get(name).variance(shape, layer.activation) == \
            initializer.variance(shape, layer.activation)
    except (ValueError, TypeError):
        same = False
    if not same:
        raise ValueError(f"{what} {name!r} cannot be saved by name: the registry does not give "
                         "it back; register it with tinynet.init.register(name, ...) and build "
                         "the layer with that name")
    return name


def _bias_entries(net: Network) -> dict[str, np.ndarray]:
    """``bias_inits``: each layer's constant (NaN where drawn); ``bias_initializers`` (format
    2 only): the initializer names that draw them ("" for a constant)."""
    constants = [layer.bias_init if isinstance(layer.bias_init, float) else np.nan
                 for layer in net.layers]
    if not np.isnan(constants).any():
        return {"bias_inits": np.array(constants)}
    names = ["" if isinstance(layer.bias_init, float) else
             _savable_name(layer.bias_init, layer.bias_shape, layer,
                           f"layer {i}'s bias initializer")
             for i, layer in enumerate(net.layers)]
    return {"bias_inits": np.array(constants), "bias_initializers": np.array(names)}


def save(net: Network, path: str | os.PathLike) -> Path:
    """Write ``net`` to ``path`` (``.npz`` is added if missing); return the path written.
    ``net.save(path)`` is the same call.

    The file is written next to its destination and then moved into place, so an
    interrupted save never leaves a half-written file under the final name.
    """
    check_instance("net", net, Network, "a tinynet Network")
    path = Path(path)
    if path.suffix != ".npz":
        path = path.with_name(path.name + ".npz")
    biases = _bias_entries(net)
    arrays = {
        "format": np.array(FORMAT),
        "version": np.array(2 if "bias_initializers" in biases else 1),
        "sizes": np.array(net.sizes, dtype=np.int64), "seed": np.array(net.seed, dtype=np.int64),
        "activations": np.array([layer.activation.name for layer in net.layers]),
        "alphas": np.array([layer.activation.alpha for layer in net.layers]),
        "inits": np.array([_savable_name(layer.init, layer.shape, layer, f"layer {i}'s initializer")
                           for i, layer in enumerate(net.layers)]),
        **biases,
    }
    for i, layer in enumerate(net.layers):
        arrays[f"W{i}"], arrays[f"b{i}"] = layer.W, layer.b
    return write_whole(path, lambda partial: _savez(partial, arrays))


def _savez(path: Path, arrays: dict[str, np.ndarray]) -> None:
    with open(path, "wb") as file:  # a file object: np.savez would add ".npz" to a name
        np.savez(file, **arrays)


def _read(path: Path) -> dict[str, np.ndarray]:
    try:
        archive = np.load(path, allow_pickle=False)
        if not isinstance(archive, np.lib.npyio.NpzFile):
            raise ValueError(f"it holds a single {type(archive).__name__}, not an archive")
        with archive:
            return {name: archive[name] for name in archive.files}
    except FileNotFoundError:
        raise
    except (zipfile.BadZipFile, EOFError, OSError, ValueError, KeyError, TypeError,
            NotImplementedError, RuntimeError) as error:
        raise FileFormatError(f"{path} is not a readable tinynet network file "
                              f"({type(error).__name__}: {error})") from None


def _integer(arrays: dict[str, np.ndarray], key: str, path: Path) -> int:
    value = arrays.get(key)
    if value is None or value.shape != () or value.dtype.kind not in "iu":
        raise FileFormatError(f"{path}: entry {key!r} must be one integer, got {value!r}")
    return int(value)


def _initializer(name: str, path: Path, what: str) -> init.Initializer:
    """The registered initializer ``name`` that ``path`` names for ``what``."""
    try:
        return init.get(name)
    except UnknownNameError:
        raise UnknownNameError(
            "initializer", name, init.available(),
            f"{path} was saved with it ({what}); register it with "
            f"tinynet.init.register({name.split('(')[0]!r}, ...) before loading") from None
    except (ValueError, TypeError) as error:
        raise FileFormatError(f"{path}: {what} entry is garbled: {error}") from None


def load(path: str | os.PathLike) -> Network:
    """Read a network written by :func:`save` (or :meth:`Network.save`); like ``save``, add
    ``.npz`` to a path without it."""
    path = Path(path)
    if path.suffix != ".npz" and not path.exists():
        path = path.with_name(path.name + ".npz")
    arrays = _read(path)
    if "format" not in arrays or arrays["format"].shape != () or str(arrays["format"]) != FORMAT:
        raise FileFormatError(f"{path} is not a tinynet network file (its 'format' entry is "
                              f"missing or not {FORMAT!r})")
    version = _integer(arrays, "version", path)
    if version > VERSION:
        raise FileFormatError(f"{path} was written in tinynet network format {version}; this "
                              f"tinynet reads up to format {VERSION}: upgrade tinynet")
    if version < 1:
        raise FileFormatError(f"{path} has an invalid format version {version}")
    seed = _integer(arrays, "seed", path)
    sizes = arrays.get("sizes")
    if sizes is None or sizes.ndim != 1 or sizes.dtype.kind not in "iu" or len(sizes) < 2:
        raise FileFormatError(f"{path}: entry 'sizes' must list at least two integers, "
                              f"got {sizes!r}")
    layers = len(sizes) - 1
    keys = ["activations", "alphas", "inits", "bias_inits"]
    if version >= 2:
        keys.append("bias_initializers")
    entries = {key: arrays.get(key) for key in keys}
    if version < 2:
        entries["bias_initializers"] = np.full(layers, "")
    for key, entry in entries.items():
        if entry is None or entry.shape != (layers,):
            raise FileFormatError(f"{path} describes {layers} layers but its entry {key!r} is "
                                  f"{entry!r}")
    weights = []
    for i in range(layers):
        W, b = arrays.get(f"W{i}"), arrays.get(f"b{i}")
        shape = (int(sizes[i + 1]), int(sizes[i]))
        if W is None or b is None or W.shape != shape or b.shape != shape[:1] or \
                W.dtype != np.float64 or b.dtype != np.float64:
            raise FileFormatError(
                f"{path}: layer {i} holds W {getattr(W, 'shape', None)} "
                f"{getattr(W, 'dtype', None)} and b {getattr(b, 'shape', None)} "
                f"{getattr(b, 'dtype', None)}; its sizes say float64 {shape} and {shape[:1]}")
        weights.append((W, b))

    net_layers = []
    for i, (activation, alpha, init_name, bias_constant, bias_name) in \
            enumerate(zip(*entries.values())):
        initializer = _initializer(str(init_name), path, f"layer {i}'s initializer")
        bias_init = float(bias_constant) if str(bias_name) == "" else \
            _initializer(str(bias_name), path, f"layer {i}'s bias initializer")
        try:
            net_layers.append(Layer(int(sizes[i]), int(sizes[i + 1]), activation=str(activation),
                                    init=initializer, alpha=float(alpha), bias_init=bias_init))
        except (ValueError, TypeError) as error:
            raise FileFormatError(f"{path}: layer {i} cannot be rebuilt: {error}") from None
    try:
        net = Network(net_layers, seed=seed)
    except (ValueError, TypeError) as error:
        raise FileFormatError(f"{path}: the network cannot be rebuilt: {error}") from None
    for layer, (W, b) in zip(net.layers, weights):
        layer.W[...], layer.b[...] = W, b
    return net
