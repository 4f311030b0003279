"""What the compiled backend runs of a network with residual blocks: layers, then a run of
blocks of one kind, then layers (:class:`Structure`, :func:`structure_of`), and where each
block's parts are (:func:`blocks_layout`), for :mod:`tinynet.compiled.stream`'s kernels; and
the refusal, by name, of any other network with blocks (:func:`tinynet.compiled.kit.check`).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, NamedTuple

import numpy as np

from ..packing import offsets
from ..residual import Residual
from .render import NotCompilableError

if TYPE_CHECKING:
    from ..network import Network

__all__ = ["Structure", "structure_of", "blocks_layout"]


class Structure(NamedTuple):
    """What a network's kernels are written from: ``head`` dense layers, blocks of
    ``branch`` layers with their norm's ``placement`` (None, ``"pre"``, ``"post"``) and a
    trained α or not (``trained``), then ``tail`` dense layers."""

    head: int
    branch: int
    placement: str | None
    trained: bool
    tail: int


def structure_of(net: "Network") -> Structure:
    """``net``'s :class:`Structure`, or :class:`~tinynet.compiled.render.NotCompilableError`
    naming the part the compiled backend cannot run: a layer between blocks, or blocks of two
    kinds (a network never ends with a block: :class:`tinynet.Network` refuses it)."""
    parts = net.blocks
    where = [k for k, part in enumerate(parts) if isinstance(part, Residual)]
    first, last = where[0], where[-1]
    kind = _kind(parts[first])
    for k in range(first, last + 1):
        if not isinstance(parts[k], Residual):
            raise NotCompilableError(
                f"backend 'numba' runs layers, then a run of residual blocks, then layers; "
                f"net.blocks[{k}] is {parts[k]!r}, between blocks; pass backend='numpy'")
        if _kind(parts[k]) != kind:
            raise NotCompilableError(
                f"backend 'numba' runs blocks of one kind (branch length, norm, trained α) in a "
                f"network; net.blocks[{k}] is {parts[k]!r}, net.blocks[{first}] "
                f"{parts[first]!r}; pass backend='numpy'")
    return Structure(first, *kind, len(parts) - last - 1)


def _kind(block: Residual) -> tuple[int, str | None, bool]:
    return len(block.layers), block.placement, block.train_scale


def blocks_layout(net: "Network") -> tuple[np.ndarray, np.ndarray]:
    """``(block_table, block_floats)`` of ``net``'s blocks: block k's first branch row in
    ``net.layers``, where its norm's γ starts in θ (β follows it; −1 without a norm) and where
    its α is (−1 for a constant), (L, 3) integers; its skip's scale s, its constant α (NaN
    where it is trained) and its norm's ε (NaN without one), (L, 3)."""
    starts = offsets(net)
    rows = {id(layer): k for k, layer in enumerate(net.layers)}
    table, floats = [], []
    for block in net.residuals:
        table.append((rows[id(block.layers[0])],
                      starts[id(block.norm.gain)] if block.norm is not None else -1,
                      starts[id(block.scale)] if block.train_scale else -1))
        floats.append((block.skip, math.nan if block.train_scale else block.scale,
                       block.norm.eps if block.norm is not None else math.nan))
    return np.array(table, dtype=np.int64), np.array(floats, dtype=np.float64)
