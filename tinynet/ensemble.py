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

No table of shuffles and no per-epoch history is kept: orders are recomputed each epoch from
(seed, epoch). Memory is O(S · (P + N · (n_in + n_out))) for S members of P parameters on N
samples (the NumPy path gathers each epoch's samples per member), plus, for numba, scratch of
64 lanes × batch × widest layer × layers per thread.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from . import packing
from .errors import ShapeError, check_seed
from .network import Network
from .shuffle import epoch_orders
from .training import check_backend, check_training_data, check_training_settings

__all__ = ["EnsembleResult", "fit_ensemble", "solves"]


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
    epochs: int

    @property
    def solved(self) -> np.ndarray:
        """True for members that solved the task (``solved_epoch`` >= 0)."""
        return self.solved_epoch >= 0

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


def solves(predictions: np.ndarray, y: np.ndarray) -> np.ndarray:
    """True for each member (row of ``predictions``, shape (S, N, n_out)) whose every output is
    on the same side of 0.5 as its target: ŷ > 0.5 exactly where y > 0.5 (so 0.5 counts as 0)."""
    return np.all((predictions > 0.5) == (y > 0.5), axis=(1, 2))


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
    epochs, lr, batch_size, shuffle = check_training_settings(len(X), epochs, lr, batch_size,
                                                              shuffle)
    if seeds is None:
        seeds = [net.seed for net in networks]
    elif len(seeds) != len(networks):
        raise ValueError(f"seeds must give one seed per network ({len(networks)}), "
                         f"got {len(seeds)}")
    seeds = np.array([check_seed(f"seeds[{k}]", s) for k, s in enumerate(seeds)], dtype=np.int64)

    run = _fit_numpy if check_backend(backend) == "numpy" else _fit_numba
    with np.errstate(over="ignore", invalid="ignore", divide="ignore", under="ignore"):
        final_loss, diverged_epoch, last_wrong, predictions = run(
            networks, X, y, epochs, lr, batch_size, shuffle, seeds)
    solved = solves(predictions, y) & (diverged_epoch < 0)
    return EnsembleResult(final_loss=final_loss, diverged_epoch=diverged_epoch,
                          solved_epoch=np.where(solved, last_wrong + 1, -1),
                          predictions=predictions, epochs=epochs)


def _fit_numba(networks, X, y, epochs, lr, batch_size, shuffle, seeds):
    theta = np.ascontiguousarray(np.stack([packing.pack(net) for net in networks], axis=1))
    codes, alphas = packing.activations(networks[0])
    members = len(networks)
    final_loss = np.empty(members)
    diverged_epoch = np.empty(members, dtype=np.int64)
    last_wrong = np.empty(members, dtype=np.int64)
    predictions = np.empty((members, len(X), y.shape[1]))
    packing.compiled("lanes").fit_lanes(
        theta, packing.layout(networks[0]), codes, alphas, X, y, seeds, epochs, lr, batch_size,
        shuffle, final_loss, diverged_epoch, last_wrong, predictions)
    for k, net in enumerate(networks):
        packing.unpack(net, theta[:, k])
    return final_loss, diverged_epoch, last_wrong, predictions


def _fit_numpy(networks, X, y, epochs, lr, batch_size, shuffle, seeds):
    """All members at once: every array has a leading members axis (S, ...).

    Member k's parameters are row k of ``theta`` (S, P), laid out as :mod:`tinynet.packing`
    says; each layer's ``W`` (S, n_out, n_in) and ``b`` (S, n_out) are views into it, and its
    gradients views into ``grad``, so one SGD step and one finiteness check cover them all.
    """
    members, n = len(networks), len(X)
    activations = [layer.activation for layer in networks[0].layers]
    theta = np.stack([packing.pack(net) for net in networks])
    grad = np.zeros_like(theta)

    def views(flat):
        return [(flat[:, w_at:w_at + n_out * n_in].reshape(members, n_out, n_in),
                 flat[:, b_at:b_at + n_out]) for n_in, n_out, w_at, b_at in layout]

    layout = packing.layout(networks[0])
    params, grads = views(theta), views(grad)
    final_loss = np.full(members, np.nan)
    diverged_epoch = np.full(members, -1, dtype=np.int64)
    last_wrong = np.full(members, -1, dtype=np.int64)
    in_order = np.broadcast_to(np.arange(n), (members, n))

    def forward(inputs):
        """Per layer: its input (S, B, n_in) and pre-activation z (S, B, n_out); and ŷ."""
        cache = []
        for (W, b), act in zip(params, activations):
            z = np.einsum("sbi,sji->sbj", inputs, W) + b[:, None, :]   # X Wᵀ + b, per member
            cache.append((inputs, z))
            inputs = act.forward(z)
        return cache, inputs

    seen = np.empty((members, n, y.shape[1]))  # this epoch's predictions, as training saw them
    for epoch in range(epochs):
        order = epoch_orders(seeds, epoch, n) if shuffle else in_order
        X_epoch, y_epoch = X[order], y[order]                     # (S, n, ·), in visiting order
        for start in range(0, n, batch_size):
            batch = slice(start, start + batch_size)
            cache, y_hat = forward(X_epoch[:, batch])             # (S, B, n_out)
            seen[:, batch] = y_hat
            delta = (2.0 / y_hat.shape[1]) * (y_hat - y_epoch[:, batch])  # dL/dŷ
            for (inputs, z), (W, _), (dW, db), act in zip(
                    reversed(cache), reversed(params), reversed(grads), reversed(activations)):
                dz = delta * act.derivative(z)
                np.einsum("sbj,sbi->sji", dz, inputs, out=dW)    # dW = dZᵀ X
                np.sum(dz, axis=1, out=db)                        # db = Σ_rows dZ
                delta = np.einsum("sbj,sji->sbi", dz, W)          # dL/d(inputs) = dZ W
            theta -= lr * grad                                    # the SGD step, every member
        errors = seen - y_epoch
        last_wrong[np.any((seen > 0.5) != (y_epoch > 0.5), axis=(1, 2))] = epoch
        alive = diverged_epoch < 0
        loss = np.sum(errors * errors, axis=(1, 2)) / n
        final_loss[alive] = loss[alive]
        finite = np.isfinite(loss) & np.isfinite(theta).all(axis=1)
        diverged_epoch[alive & ~finite] = epoch
        if not np.any(diverged_epoch < 0):
            break
    for k, net in enumerate(networks):
        packing.unpack(net, theta[k])
    _, predictions = forward(np.broadcast_to(X, (members, *X.shape)))
    return final_loss, diverged_epoch, last_wrong, predictions
