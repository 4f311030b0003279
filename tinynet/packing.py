"""A network as flat arrays: every parameter in one vector ``theta`` and a :class:`Layout`
that says where each layer's W and b sit and which activation it has.

    theta = [W0 (row-major, (n_out, n_in)), b0, W1, b1, ...]

Both fast paths train on this form: the NumPy ensemble (:mod:`tinynet.reference`) stacks the
members' vectors into ``theta`` (S, P) and steps them all with one subtraction, and the
compiled kernels (:mod:`tinynet.compiled`) take ``theta`` and the layout as plain arrays.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, NamedTuple

import numpy as np

if TYPE_CHECKING:
    from .network import Network

__all__ = ["Layout", "layout", "pack", "stack", "unpack", "layer_views"]


class Layout(NamedTuple):
    """Where the parameters sit, one row per layer: ``table`` int64 (layers, 4) holds n_in,
    n_out, the offset of W and the offset of b in theta; ``codes`` int64 (layers,) the
    activation codes (:mod:`tinynet.activations`) and ``alphas`` float64 (layers,) their
    negative slopes."""

    table: np.ndarray
    codes: np.ndarray
    alphas: np.ndarray


def layout(net: "Network") -> Layout:
    """The :class:`Layout` of ``net``'s parameters in ``pack(net)``."""
    rows, offset = [], 0
    for layer in net.layers:
        rows.append((layer.n_in, layer.n_out, offset, offset + layer.W.size))
        offset += layer.W.size + layer.b.size
    return Layout(np.array(rows, dtype=np.int64),
                  np.array([layer.activation.code for layer in net.layers], dtype=np.int64),
                  np.array([layer.activation.alpha for layer in net.layers], dtype=np.float64))


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


def layer_views(flat: np.ndarray, table: np.ndarray) -> list[tuple[np.ndarray, np.ndarray]]:
    """Per layer, ``(W, b)`` as views into ``flat`` (S, P): W (S, n_out, n_in), b (S, n_out).
    Writing to a view writes to ``flat``."""
    members = flat.shape[0]
    return [(flat[:, w_at:w_at + n_out * n_in].reshape(members, n_out, n_in),
             flat[:, b_at:b_at + n_out]) for n_in, n_out, w_at, b_at in table]
