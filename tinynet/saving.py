"""Saving and loading networks: plain ``.npz`` files that can never run code.

    >>> net.save("xor.npz")
    >>> same = tinynet.load("xor.npz")

A file holds a format tag and version, the layer sizes, each layer's activation, alpha,
initializer name and initial bias, the network's seed, and every W and b as float64 arrays,
all as plain NumPy arrays (strings as fixed-width unicode, never Python objects). It is read
with ``allow_pickle=False``, so a file cannot make NumPy unpickle anything. Loading gives back
the same numbers, bit for bit.
"""

from __future__ import annotations

import os
import zipfile
from pathlib import Path

import numpy as np

from . import init
from .errors import UnknownNameError
from .layers import Layer
from .network import Network

__all__ = ["FORMAT", "VERSION", "FileFormatError", "save", "load"]

FORMAT = "tinynet-network"
VERSION = 1


class FileFormatError(ValueError):
    """A file that is not a tinynet network this version can read: foreign, corrupted,
    truncated, or written by a newer tinynet."""


def save(net: Network, path: str | os.PathLike) -> Path:
    """Write ``net`` to ``path`` (``.npz`` is added if missing); return the path written."""
    path = Path(path)
    if path.suffix != ".npz":
        path = path.with_name(path.name + ".npz")
    arrays = {
        "format": np.array(FORMAT), "version": np.array(VERSION),
        "sizes": np.array(net.sizes, dtype=np.int64), "seed": np.array(net.seed, dtype=np.int64),
        "activations": np.array([layer.activation.name for layer in net.layers]),
        "alphas": np.array([layer.activation.alpha for layer in net.layers]),
        "inits": np.array([layer.init.name for layer in net.layers]),
        "bias_inits": np.array([layer.bias_init for layer in net.layers]),
    }
    for i, layer in enumerate(net.layers):
        arrays[f"W{i}"], arrays[f"b{i}"] = layer.W, layer.b
    with open(path, "wb") as file:
        np.savez(file, **arrays)
    return path


def _read(path: Path) -> dict[str, np.ndarray]:
    try:
        with np.load(path, allow_pickle=False) as archive:
            return {name: archive[name] for name in archive.files}
    except FileNotFoundError:
        raise
    except (zipfile.BadZipFile, EOFError, OSError, ValueError, KeyError) as error:
        raise FileFormatError(f"{path} is not a readable tinynet network file "
                              f"({type(error).__name__}: {error})") from None


def load(path: str | os.PathLike) -> Network:
    """Read a network written by :func:`save` (or :meth:`Network.save`)."""
    path = Path(path)
    arrays = _read(path)
    if not isinstance(arrays, dict) or "format" not in arrays or \
            str(arrays["format"]) != FORMAT:
        raise FileFormatError(f"{path} is not a tinynet network file (its 'format' entry is "
                              f"missing or not {FORMAT!r})")
    version = int(arrays.get("version", -1))
    if version > VERSION:
        raise FileFormatError(f"{path} was written in tinynet network format {version}; this "
                              f"tinynet reads up to format {VERSION}: upgrade tinynet")
    if version < 1:
        raise FileFormatError(f"{path} has an invalid format version {version}")
    try:
        sizes = [int(s) for s in arrays["sizes"]]
        entries = [arrays[key] for key in ("activations", "alphas", "inits", "bias_inits")]
        weights = [(arrays[f"W{i}"], arrays[f"b{i}"]) for i in range(len(sizes) - 1)]
        seed = int(arrays["seed"])
    except (KeyError, TypeError, ValueError) as error:
        raise FileFormatError(f"{path} is missing or garbles an entry: {error}") from None
    if any(len(entry) != len(sizes) - 1 for entry in entries):
        raise FileFormatError(f"{path} describes {len(sizes) - 1} layers but lists "
                              f"{[len(e) for e in entries]} activations, alphas, inits, biases")
    layers = []
    for i, (activation, alpha, init_name, bias_init) in enumerate(zip(*entries)):
        W, b = weights[i]
        shape = (sizes[i + 1], sizes[i])
        if W.shape != shape or b.shape != (sizes[i + 1],) or W.dtype != np.float64 \
                or b.dtype != np.float64:
            raise FileFormatError(f"{path}: layer {i} holds W {W.shape} {W.dtype} and b "
                                  f"{b.shape} {b.dtype}; its sizes say float64 {shape} and "
                                  f"({sizes[i + 1]},)")
        try:
            initializer = init.get(str(init_name))
        except UnknownNameError:
            raise UnknownNameError(
                "initializer", str(init_name), init.available(),
                f"{path} was saved with it (layer {i}); register it with "
                f"tinynet.init.register({str(init_name).split('(')[0]!r}, ...) before loading"
            ) from None
        layers.append(Layer(sizes[i], sizes[i + 1], activation=str(activation),
                            init=initializer, alpha=float(alpha), bias_init=float(bias_init)))
    net = Network(layers, seed=seed)
    for layer, (W, b) in zip(net.layers, weights):
        layer.W[...], layer.b[...] = W, b
    return net
