"""The compiled backend's entry points, called by :mod:`tinynet.training`: each packs the
networks into flat arrays (:mod:`tinynet.packing`), runs one kernel for the whole training run,
and copies the trained parameters back. Same signatures as :mod:`tinynet.reference`'s."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ..packing import layout, pack, stack, unpack
from ..results import Record, Settings
from . import lanes, single

if TYPE_CHECKING:
    from ..network import Network

__all__ = ["fit_one", "fit_many", "predict"]


def fit_one(net: "Network", X: np.ndarray, y: np.ndarray, seed: int, settings: Settings,
            record: Record) -> None:
    """Train ``net`` in place with :func:`tinynet.compiled.single.fit_network`."""
    theta = pack(net)
    single.fit_network(theta, layout(net), X, y, seed, settings, record)
    unpack(net, theta)


def fit_many(networks: "list[Network]", X: np.ndarray, y: np.ndarray, seeds: np.ndarray,
             settings: Settings, record: Record) -> np.ndarray:
    """Train ``networks`` in place with :func:`tinynet.compiled.lanes.fit_lanes`; return the
    trained members' outputs on X, (S, N, n_out)."""
    theta = np.ascontiguousarray(stack(networks).T)  # (P, S): members side by side
    predictions = np.empty((len(networks), len(X), y.shape[1]))
    lanes.fit_lanes(theta, layout(networks[0]), X, y, seeds, settings, record, predictions)
    for net, column in zip(networks, theta.T):
        unpack(net, column)
    return predictions


def predict(net: "Network", X: np.ndarray) -> np.ndarray:
    """The network's output for X (B, n_in): (B, n_out)."""
    scratch = np.empty((len(net.layers), len(X) * max(net.sizes)))
    return single.forward_network(pack(net), layout(net), X, scratch,
                                  np.empty_like(scratch)).copy()
