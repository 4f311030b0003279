"""A network as the compiled kernels see it: one flat parameter vector and a layout table.

``theta`` = [W0 (row-major), b0, W1, b1, ...]; ``layout`` has one row per layer,
``(n_in, n_out, offset of W, offset of b)``; ``codes`` and ``alphas`` give each layer's
activation (see :mod:`tinynet.kernels`).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from .network import Network

__all__ = ["layout", "activations", "pack", "unpack", "compiled"]


def compiled(module: str):
    """Import the Numba module ``tinynet.<module>`` (``kernels`` or ``lanes``) when a compiled
    backend is first used, so that ``import tinynet`` and the NumPy backend work without Numba."""
    try:
        return importlib.import_module(f"tinynet.{module}")
    except ModuleNotFoundError as error:
        if error.name not in ("numba", "llvmlite"):
            raise
        raise ModuleNotFoundError(f"backend='numba' needs the numba package ({error}); install "
                                  "it (pip install numba) or pass backend='numpy'") from error


def layout(net: "Network") -> np.ndarray:
    """int64 (layers, 4): n_in, n_out, offset of W in theta, offset of b in theta."""
    rows, offset = [], 0
    for layer in net.layers:
        rows.append((layer.n_in, layer.n_out, offset, offset + layer.W.size))
        offset += layer.W.size + layer.b.size
    return np.array(rows, dtype=np.int64)


def activations(net: "Network") -> tuple[np.ndarray, np.ndarray]:
    """(codes int64, alphas float64), one entry per layer."""
    return (np.array([layer.activation.code for layer in net.layers], dtype=np.int64),
            np.array([layer.activation.alpha for layer in net.layers], dtype=np.float64))


def pack(net: "Network") -> np.ndarray:
    """A new flat float64 vector holding every W and b, in layer order."""
    return np.concatenate([p.ravel() for p in net.parameters()])


def unpack(net: "Network", theta: np.ndarray) -> None:
    """Copy ``theta`` back into the network's W and b arrays (in place)."""
    offset = 0
    for param in net.parameters():
        param[...] = theta[offset:offset + param.size].reshape(param.shape)
        offset += param.size
