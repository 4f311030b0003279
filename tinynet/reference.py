"""The NumPy backend: the reference implementation of training, the code to read.

One loop trains S networks of one shape at once, S = 1 for ``net.fit``: every array carries a
leading members axis, ``theta`` (S, P) holds member s's parameters in row s (laid out as
:mod:`tinynet.packing` says), and each layer's W (S, n_out, n_in) and b (S, n_out) are views
into it, so one subtraction updates every member. Each epoch e::

    order   = epoch_orders(seeds, e, N)          per member, or the data order (no shuffle)
    for every batch of batch_size samples (the last one may be smaller):
        ŷ  = forward(X[batch])                   dense.forward, layer by layer
        dA = mse_gradient(ŷ, y[batch])           dL/dŷ = (2/B)(ŷ − y)
        for every layer, last first:             dense.backward_*
            dZ = dA ⊙ φ'(Z),  dW = dZᵀ X,  db = Σ_b dZ
            W ← W − lr · dW,  b ← b − lr · db    only if update="during_backward"
            dA = dZ W                            for the layer before (with the new W if so)
        θ ← θ − lr · ∇θ                          only if update="after_backward" (default)
    loss = mse(ŷ of the epoch, y)                 each sample's ŷ as training saw it
    record the loss, the outputs on the wrong side of the threshold, divergence

The two updates are the same subtraction, element by element; only when it happens differs,
and with it the gradient passed back (one layer: nothing is passed back, the same training).

A member whose loss or parameters stop being finite is marked diverged in that epoch: its
record stops there, and it ends with the parameters it had then, as a single fit, which stops.
The others go on, unaffected. The compiled backend
(:mod:`tinynet.compiled`) does the same arithmetic in the same order.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from . import dense, losses
from .activations import Activation
from .packing import layer_views, layout, pack, stack, unpack
from .results import Record, Settings
from .shuffle import epoch_orders

if TYPE_CHECKING:
    from .network import Network

__all__ = ["sgd_step", "train", "fit_one", "fit_many", "predict"]

Parameters = list[tuple[np.ndarray, np.ndarray]]


def sgd_step(theta: np.ndarray, grad: np.ndarray, params: Parameters, grads: Parameters,
             activations: list[Activation], x: np.ndarray, y: np.ndarray, lr: float,
             during_backward: bool) -> np.ndarray:
    """One SGD step of every member on its batch: x (S, B, n_in), y (S, B, n_out).

    ``params`` and ``grads`` are per-layer (W, b) views into ``theta`` and ``grad`` (S, P).
    With ``during_backward`` each layer is updated as soon as its dW and db are known, and
    passes back dZ W with its new W; otherwise every layer is updated after the backward pass.
    Returns ŷ (S, B, n_out), the predictions the step computed its gradient from.
    """
    inputs, pre_activations = [], []
    a = x
    for (W, b), activation in zip(params, activations):            # forward
        inputs.append(a)
        z, a = dense.forward(a, W, b, activation)
        pre_activations.append(z)
    y_hat = a
    delta = losses.mse_gradient(y_hat, y)                           # dL/dŷ
    for layer in range(len(params) - 1, -1, -1):                    # backward
        (W, b), (dW, db) = params[layer], grads[layer]
        dz = dense.backward_activation(delta, pre_activations[layer], activations[layer])
        dense.backward_parameters(dz, inputs[layer], dW, db)
        if during_backward:                                         # update this layer now
            W -= lr * dW
            b -= lr * db
        if layer > 0:                                               # the layer before's dA
            delta = dense.backward_input(dz, W)
    if not during_backward:                                         # update every layer
        theta -= lr * grad
    return y_hat


def train(theta: np.ndarray, table: np.ndarray, activations: list[Activation], X: np.ndarray,
          y: np.ndarray, seeds: np.ndarray, settings: Settings, record: Record) -> None:
    """Train the members in ``theta`` (S, P) in place, epochs ``settings.first_epoch`` on,
    writing into ``record`` (see :mod:`tinynet.results`)."""
    members, n = theta.shape[0], len(X)
    grad = np.zeros_like(theta)
    params, grads = layer_views(theta, table), layer_views(grad, table)
    every, batch_size = settings.record_every, settings.batch_size
    seen = np.empty((members, n, y.shape[1]))  # this epoch's predictions, as training saw them
    X_epoch, y_epoch = (np.broadcast_to(X, (members, *X.shape)),  # (S, N, ·), visiting order
                        np.broadcast_to(y, (members, *y.shape)))
    kept = theta.copy()  # a diverged member's parameters where training stopped
    for epoch in range(settings.first_epoch, settings.first_epoch + settings.epochs):
        if settings.shuffle:
            order = epoch_orders(seeds, epoch, n)
            X_epoch, y_epoch = X[order], y[order]
        for start in range(0, n, batch_size):
            batch = slice(start, start + batch_size)
            seen[:, batch] = sgd_step(theta, grad, params, grads, activations,
                                      X_epoch[:, batch], y_epoch[:, batch], settings.lr,
                                      settings.update_during_backward)
        alive = record.diverged_epoch < 0
        loss = losses.mse(seen, y_epoch)                            # (S,)
        wrong = np.any((seen > settings.threshold) != (y_epoch > settings.threshold),
                       axis=(1, 2))
        record.last_wrong_epoch[alive & wrong] = epoch
        record.final_loss[alive] = loss[alive]
        if every and (epoch + 1) % every == 0:
            record.loss[alive, (epoch + 1) // every - 1] = loss[alive]
        diverging = alive & ~(np.isfinite(loss) & np.isfinite(theta).all(axis=1))
        record.diverged_epoch[diverging] = epoch
        kept[diverging] = theta[diverging]
        if np.all(record.diverged_epoch >= 0):
            break
    stopped = record.diverged_epoch >= 0
    theta[stopped] = kept[stopped]


def fit_one(net: "Network", X: np.ndarray, y: np.ndarray, seed: int, settings: Settings,
            record: Record) -> None:
    """Train ``net`` in place: :func:`train` with one member."""
    theta = pack(net)[None, :]
    train(theta, layout(net).table, [layer.activation for layer in net.layers], X, y,
          np.array([seed]), settings, record)
    unpack(net, theta[0])


def fit_many(networks: "list[Network]", X: np.ndarray, y: np.ndarray, seeds: np.ndarray,
             settings: Settings, record: Record) -> np.ndarray:
    """Train ``networks`` in place; return the trained members' outputs on X, (S, N, n_out)."""
    theta = stack(networks)
    table = layout(networks[0]).table
    activations = [layer.activation for layer in networks[0].layers]
    train(theta, table, activations, X, y, seeds, settings, record)
    for net, row in zip(networks, theta):
        unpack(net, row)
    outputs = np.broadcast_to(X, (len(networks), *X.shape))
    for (W, b), activation in zip(layer_views(theta, table), activations):
        _, outputs = dense.forward(outputs, W, b, activation)
    return outputs


def predict(net: "Network", X: np.ndarray) -> np.ndarray:
    """The network's output for X (B, n_in): (B, n_out). Leaves the layers' caches alone."""
    outputs = X
    for layer in net.layers:
        _, outputs = dense.forward(outputs, layer.W, layer.b, layer.activation)
    return outputs
