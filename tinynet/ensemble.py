"""Seed ensembles: train S networks of one shape in one call, and report on each.

    >>> nets = [tinynet.mlp([2, 2, 2, 1], init="he_leaky", seed=s) for s in range(100)]
    >>> result = tinynet.fit_ensemble(nets, X, y, epochs=20_000, lr=0.01)
    >>> result.solved.mean()

Each member keeps its own initial weights (its own seed and initializer) and its own shuffle
order, and ends exactly where :meth:`Network.fit` would have taken it alone. Two backends:

* ``numba`` (default): blocks of networks in SIMD lanes, blocks over CPU cores
  (:mod:`tinynet.lanes`); member k is bit-identical to ``fit(backend="numba")``.
* ``numpy``: the same SGD written once for all members at a time, every weight array with a
  leading members axis: ``W`` is (S, n_out, n_in), a batch is (S, B, n_in). It agrees with
  ``fit(backend="numpy")`` to rounding.

Memory is O(members × parameters): orders are recomputed each epoch from (seed, epoch), and
no per-epoch history is kept.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from . import packing
from .errors import ShapeError, check_float, check_int, check_seed
from .lanes import fit_lanes
from .network import Network
from .shuffle import epoch_orders
from .training import check_backend, check_training_data

__all__ = ["EnsembleResult", "fit_ensemble"]


@dataclass(eq=False)
class EnsembleResult:
    """Per-member outcome of :func:`fit_ensemble` (arrays indexed by member).

    ``final_loss``: the loss of the member's last epoch (the epoch it diverged in, if it did).
    ``diverged``/``diverged_epoch``: whether, and in which epoch (−1: never), the loss or a
    parameter stopped being finite. ``predictions`` (S, N, n_out): the trained members on X.
    ``solved``: every prediction on the same side of 0.5 as its target. ``solved_epoch``: for a
    solved member, the first epoch from which every prediction training made stayed on the
    right side (−1 for members not solved).
    """

    final_loss: np.ndarray
    diverged_epoch: np.ndarray
    solved_epoch: np.ndarray
    predictions: np.ndarray
    solved: np.ndarray
    epochs: int

    @property
    def diverged(self) -> np.ndarray:
        """True for members whose loss or parameters stopped being finite."""
        return self.diverged_epoch >= 0

    @property
    def members(self) -> int:
        """Number of networks trained."""
        return len(self.final_loss)

    def __repr__(self) -> str:
        return (f"EnsembleResult(members={self.members}, epochs={self.epochs}, "
                f"solved={int(self.solved.sum())}, diverged={int(self.diverged.sum())})")


def _check_networks(networks: Sequence[Network]) -> list[Network]:
    networks = list(networks) if not isinstance(networks, Network) else [networks]
    if not networks:
        raise ValueError("networks must hold at least one Network, got an empty sequence")
    for index, net in enumerate(networks):
        if not isinstance(net, Network):
            raise TypeError(f"networks[{index}] must be a tinynet Network, got {net!r}")
    first = networks[0]
    for index, net in enumerate(networks[1:], start=1):
        if net.sizes != first.sizes or \
                [l.activation for l in net.layers] != [l.activation for l in first.layers]:
            raise ShapeError(f"networks[{index}] ({'-'.join(map(str, net.sizes))}, "
                             f"{[repr(l.activation) for l in net.layers]}) differs from "
                             f"networks[0] ({'-'.join(map(str, first.sizes))}, "
                             f"{[repr(l.activation) for l in first.layers]}): an ensemble's "
                             "members share one shape and one set of activations")
        if any(net is other for other in networks[:index]):
            raise ValueError(f"networks[{index}] is the same Network object as an earlier one")
    return networks


def fit_ensemble(networks: Sequence[Network], X: object, y: object, *, epochs: int, lr: float,
                 batch_size: int = 1, shuffle: bool = True, seeds: Sequence[int] | None = None,
                 backend: str = "numba") -> EnsembleResult:
    """Train every network in ``networks`` (in place) by SGD on the MSE loss.

    The members must share sizes and activations; each keeps its own weights, and its shuffle
    order comes from ``seeds[k]`` (default: its own seed), as :func:`tinynet.training.fit`.
    """
    networks = _check_networks(networks)
    X, y = check_training_data(networks[0], X, y)
    epochs = check_int("epochs", epochs, minimum=1)
    lr = check_float("lr", lr, minimum=0.0, inclusive=False)
    batch_size = check_int("batch_size", batch_size, minimum=1)
    if batch_size > len(X):
        raise ValueError(f"batch_size must be at most the number of samples ({len(X)}), "
                         f"got {batch_size}")
    if not isinstance(shuffle, (bool, np.bool_)):
        raise TypeError(f"shuffle must be True or False, got {shuffle!r}")
    if seeds is None:
        seeds = [net.seed for net in networks]
    elif len(seeds) != len(networks):
        raise ValueError(f"seeds must give one seed per network ({len(networks)}), "
                         f"got {len(seeds)}")
    seeds = np.array([check_seed(f"seeds[{k}]", s) for k, s in enumerate(seeds)], dtype=np.int64)

    run = _fit_numpy if check_backend(backend) == "numpy" else _fit_numba
    with np.errstate(over="ignore", invalid="ignore", divide="ignore", under="ignore"):
        final_loss, diverged_epoch, last_wrong, predictions = run(
            networks, X, y, epochs, lr, batch_size, bool(shuffle), seeds)
    solved = np.all((predictions > 0.5) == (y > 0.5), axis=(1, 2)) & (diverged_epoch < 0)
    return EnsembleResult(final_loss=final_loss, diverged_epoch=diverged_epoch,
                          solved_epoch=np.where(solved, last_wrong + 1, -1),
                          predictions=predictions, solved=solved, epochs=epochs)


def _fit_numba(networks, X, y, epochs, lr, batch_size, shuffle, seeds):
    theta = np.ascontiguousarray(np.stack([packing.pack(net) for net in networks], axis=1))
    codes, alphas = packing.activations(networks[0])
    members = len(networks)
    final_loss = np.empty(members)
    diverged_epoch = np.empty(members, dtype=np.int64)
    last_wrong = np.empty(members, dtype=np.int64)
    predictions = np.empty((members, len(X), y.shape[1]))
    fit_lanes(theta, packing.layout(networks[0]), codes, alphas, X, y, seeds, epochs, lr,
              batch_size, shuffle, final_loss, diverged_epoch, last_wrong, predictions)
    for k, net in enumerate(networks):
        packing.unpack(net, theta[:, k])
    return final_loss, diverged_epoch, last_wrong, predictions


def _fit_numpy(networks, X, y, epochs, lr, batch_size, shuffle, seeds):
    """All members at once: every array has a leading members axis (S, ...)."""
    members, n = len(networks), len(X)
    activations = [layer.activation for layer in networks[0].layers]
    Ws = [np.stack([net.layers[i].W for net in networks]) for i in range(len(activations))]
    bs = [np.stack([net.layers[i].b for net in networks]) for i in range(len(activations))]
    final_loss = np.full(members, np.nan)
    diverged_epoch = np.full(members, -1, dtype=np.int64)
    last_wrong = np.full(members, -1, dtype=np.int64)
    in_order = np.broadcast_to(np.arange(n), (members, n))

    def forward(inputs):
        """Per layer: its input (S, B, n_in) and pre-activation z (S, B, n_out); and ŷ."""
        cache = []
        for W, b, act in zip(Ws, bs, activations):
            z = np.einsum("sbi,sji->sbj", inputs, W) + b[:, None, :]   # X Wᵀ + b, per member
            cache.append((inputs, z))
            inputs = act.forward(z)
        return cache, inputs

    squared_errors = np.empty((members, n, y.shape[1]))  # this epoch's, as training saw them
    wrong_side = np.empty((members, n, y.shape[1]), dtype=bool)
    for epoch in range(epochs):
        order = epoch_orders(seeds, epoch, n) if shuffle else in_order
        for start in range(0, n, batch_size):
            batch = order[:, start:start + batch_size]            # (S, B)
            targets = y[batch]                                    # (S, B, n_out)
            cache, y_hat = forward(X[batch])
            diff = y_hat - targets
            squared_errors[:, start:start + batch_size] = diff * diff
            wrong_side[:, start:start + batch_size] = (y_hat > 0.5) != (targets > 0.5)
            delta = (2.0 / batch.shape[1]) * diff                # dL/dŷ
            steps = []
            for (inputs, z), W, act in zip(reversed(cache), reversed(Ws), reversed(activations)):
                dz = delta * act.derivative(z)
                steps.append((np.einsum("sbj,sbi->sji", dz, inputs),  # dW = dZᵀ X
                              np.einsum("sbj->sj", dz)))             # db = Σ_rows dZ
                delta = np.einsum("sbj,sji->sbi", dz, W)              # dL/d(inputs) = dZ W
            for W, b, (dW, db) in zip(Ws, bs, reversed(steps)):
                W -= lr * dW
                b -= lr * db
        last_wrong[wrong_side.any(axis=(1, 2))] = epoch
        alive = diverged_epoch < 0
        loss = squared_errors.sum(axis=(1, 2)) / n
        final_loss[alive] = loss[alive]
        finite = np.isfinite(loss) & np.all([np.isfinite(p).all(axis=tuple(range(1, p.ndim)))
                                             for p in Ws + bs], axis=0)
        diverged_epoch[alive & ~finite] = epoch
        if not np.any(diverged_epoch < 0):
            break
    for k, net in enumerate(networks):
        for layer, W, b in zip(net.layers, Ws, bs):
            layer.W[...], layer.b[...] = W[k], b[k]
    _, predictions = forward(np.broadcast_to(X, (members, *X.shape)))
    return final_loss, diverged_epoch, last_wrong, predictions
