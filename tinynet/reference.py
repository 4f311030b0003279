"""The NumPy backend: the reference implementation of training, the code to read.

One loop trains S networks of one shape at once, S = 1 for ``net.fit``: every array carries a
leading members axis, ``theta`` (S, P) holds member s's parameters in row s (laid out as
:mod:`tinynet.packing` says), and each layer's W (S, n_out, n_in) and b (S, n_out) are views
into it, so one subtraction updates every member. Each epoch e::

    order = epoch_orders(seeds, e, N)            per member, or the data order (no shuffle);
                                                 shuffle.orders_from draws 64 epochs at once
    X_e, y_e = X[order], y[order]                (S, N, ·): the samples in visiting order
    for every batch of batch_size samples (the last one may be smaller):
        A = X_e[batch]
        for every layer:                         dense.forward_with_derivative
            X = A,  Z = X Wᵀ + b,  A = φ(Z)      keeping X and φ'(Z) for the backward pass
        ŷ = A,  dA = loss.gradient(ŷ, y_e[batch])  dL/dŷ (MSE: (2/B)(ŷ − y)); or dL/dz of
                                                 a sigmoid output (BCE: (ŷ − y)/B), whose
                                                 dZ is then dA itself
        for every layer, last first:             dense.backward_*
            dZ = dA ⊙ φ'(Z),  dW = dZᵀ X,  db = Σ_b dZ
            W, b ← optimizer.update(W, dW, ...)  only if update="during_backward"
            dA = dZ W                            for the layer before (with the new W if so)
        θ ← optimizer.update(θ, ∇θ, lr, state) only if update="after_backward" (default);
                                                 SGD: θ − lr ∇θ
    loss = loss.value(ŷ of the epoch, y_e)       each sample's ŷ as training saw it
    record the loss, the outputs on the wrong side of the threshold, divergence

The two updates are the same subtraction, element by element; only when it happens differs,
and with it the gradient passed back (one layer: nothing is passed back, the same training).

A member whose loss or parameters stop being finite is marked diverged in that epoch: its
record stops there, and it ends with the parameters it had then, as a single fit, which stops.
The others go on, unaffected. The compiled backend
(:mod:`tinynet.compiled`) does the same arithmetic in the same order.

Speed. Per-sample SGD of many small networks makes NumPy calls on a few numbers per member
(for XOR, arrays of S × 2 numbers), so the time goes into the calls, not into the arithmetic.
So a step makes each call once for all members; what stays the same from step to step (the
layers' views, each batch's views into the epoch's arrays) is made once per run, the epoch's
samples are gathered once per epoch, and φ and φ' come from one call. And for per-sample SGD
of at least as many members as the widest layer has units (XOR: from 2 members), the arrays
are stored *members fastest* (Fortran order: member s's number next to member s + 1's), so
that each NumPy loop runs over all S members at
once instead of once per member over its few numbers. Otherwise (minibatches, whose products
are matmul's BLAS calls per member, or a few members with wide layers) each member's arrays
stay together (C order). The order changes the speed, never the rounding: short sums are
added in order, term by term (:mod:`tinynet.dense`), so that member s is its single fit
(:func:`fit_one`, the network's own layers) bit for bit; only products too big for that go
to BLAS, which rounds in an order of its own.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

import numpy as np

from . import dense
from .activations import Activation
from .losses import Loss
from .optimizers import Optimizer
from .packing import layer_views, layout, pack, stack, unpack
from .results import Record, Settings, run_in_chunks
from .shuffle import orders_from

if TYPE_CHECKING:
    from .layers import Layer
    from .network import Network

__all__ = ["CHUNK_WORK", "FIT_CHUNK_WORK", "sgd_step", "train", "fit_one",
           "fit_many", "fit_packed", "layer_outputs_many", "forward_many", "output_layer",
           "predict"]

Layers = list[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, Activation]]
"""Per layer ``(W, b, dW, db, activation)``: W and b are views into ``theta``, dW and db into
``grad``."""

Parameters = list[tuple[np.ndarray, np.ndarray, list[np.ndarray]]]
"""What the optimizer steps: ``(theta, grad, state)`` (S, P) each, state one array per state
name; then the same per layer, views of its W and b (which sit side by side in theta)."""


def sgd_step(params: Parameters, layers: Layers, loss: Loss, through: bool,
             optimizer: Optimizer, x: np.ndarray, y: np.ndarray, lr: float,
             during_backward: bool) -> np.ndarray:
    """One step of every member on its batch: x (S, B, n_in), y (S, B, n_out), on ``loss``
    by ``optimizer``; ``through``: the loss's gradient through the output sigmoid is dL/dz of
    the output layer (:meth:`tinynet.losses.Loss.through_output`).

    ``params`` holds theta, grad and the optimizer's state, whole and per layer
    (:data:`Parameters`); ``layers`` the views into theta and grad (:data:`Layers`). With
    ``during_backward`` each layer is updated as soon as its dW and db are known, and passes
    back dZ W with its new W; otherwise every layer is updated after the backward pass.
    Returns ŷ (S, B, n_out), the predictions the step computed its gradient from, and the
    batch's loss (S,), the sum of its terms (:func:`batch_loss`).
    """
    inputs, derivatives = [], []
    a = x
    for W, b, _, _, activation in layers:                          # forward
        inputs.append(a)
        a, derivative = dense.forward_with_derivative(a, W, b, activation)
        derivatives.append(derivative)
    y_hat = a
    terms, delta = loss.value_and_gradient(y_hat, y, y.shape[-2])  # ℓ, dL/dŷ
    if through:                                                     # dL/dz of the output
        delta = loss.gradient_through_sigmoid(y_hat, y, y.shape[-2])
    for layer in range(len(layers) - 1, -1, -1):                    # backward
        W, b, dW, db, _ = layers[layer]
        if through and layer == len(layers) - 1:
            dz = delta
        else:
            dz = dense.backward_activation(delta, derivatives[layer])
        dense.backward_parameters(dz, inputs[layer], dW, db)
        if during_backward:                                         # update this layer now
            optimizer.step(*params[layer + 1], lr)
        if layer > 0:                                               # the layer before's dA
            delta = dense.backward_input(dz, W)
    if not during_backward:                                         # update every layer
        optimizer.step(*params[0], lr)
    return y_hat, batch_loss(terms, y)


def batch_loss(terms: np.ndarray, y: np.ndarray) -> np.ndarray | float:
    """A batch's loss, Σ of its terms ℓ (broadcast to ``y``'s shape, (…, B, n_out)), added one
    after the other, rows first, as the compiled kernels add them: so that one network's
    sum is the same alone or in a stack, in any memory order."""
    if np.shape(terms) != y.shape:
        terms = np.broadcast_to(terms, y.shape)
    if y.shape[-2] * y.shape[-1] == 1:                  # one sample, one output
        return terms[..., 0, 0]
    return np.add.accumulate(terms.reshape(*y.shape[:-2], -1), axis=-1)[..., -1]


def train(theta: np.ndarray, state: np.ndarray, table: np.ndarray,
          activations: list[Activation], loss: Loss, optimizer: Optimizer, X: np.ndarray,
          y: np.ndarray, seeds: np.ndarray, settings: Settings, record: Record) -> None:
    """Train the members in ``theta`` (S, P) and their optimizer's ``state`` (S, k, P) in
    place, epochs ``settings.first_epoch`` on, writing into ``record`` (see
    :mod:`tinynet.results`). The training itself runs on a copy in the memory order the
    module's docstring describes, copied back at the end."""
    members, n = theta.shape[0], len(X)
    members_fastest = settings.batch_size == 1 and members >= table[:, :2].max()
    order = "F" if members_fastest else "C"
    params = np.array(theta, order=order)
    grad = np.zeros_like(params)
    slots = [np.array(state[:, slot], order=order) for slot in range(state.shape[1])]
    layers = [(W, b, dW, db, activation) for (W, b), (dW, db), activation
              in zip(layer_views(params, table), layer_views(grad, table), activations)]
    spans = _spans(table, params.shape[1])
    stepped = [(params[:, span], grad[:, span], [slot[:, span] for slot in slots])
               for span in spans]
    X_epoch = np.empty((members, *X.shape), order=order)  # the samples in visiting order
    y_epoch = np.empty((members, *y.shape), order=order)
    X_epoch[...], y_epoch[...] = X, y                          # the data order: no shuffle
    seen = np.empty_like(y_epoch)  # this epoch's predictions, as training saw them
    batches = [slice(start, start + settings.batch_size)
               for start in range(0, n, settings.batch_size)]
    steps = [(X_epoch[:, batch], y_epoch[:, batch], seen[:, batch]) for batch in batches]
    losses = np.empty((len(batches), members))  # each batch's loss
    through = loss.through_output(activations[-1])
    lr, during, every = settings.lr, settings.update_during_backward, settings.record_every
    threshold = settings.threshold
    kept = [params.copy(), *(slot.copy() for slot in slots)]  # a diverged member's, as it
    alive = record.diverged_epoch < 0  # stopped; the members whose record goes on
    orders = orders_from(seeds, settings.first_epoch, n)  # epoch_orders, drawn in blocks
    for epoch in range(settings.first_epoch, settings.first_epoch + settings.epochs):
        if settings.shuffle:
            visit = next(orders)
            X_epoch[...], y_epoch[...] = X.take(visit, axis=0), y.take(visit, axis=0)
        for batch, (x_batch, y_batch, seen_batch) in enumerate(steps):
            seen_batch[...], losses[batch] = sgd_step(stepped, layers, loss, through,
                                                      optimizer, x_batch, y_batch, lr, during)
        epoch_loss = epoch_total(losses.T) / n                      # (S,)
        wrong = ((seen > threshold) != (y_epoch > threshold)).any(axis=(1, 2))
        record.last_wrong_epoch[alive & wrong] = epoch
        record.final_loss[alive] = epoch_loss[alive]
        if every and (epoch + 1) % every == 0:
            record.loss[alive, (epoch + 1) // every - 1] = epoch_loss[alive]
        diverging = alive & ~(np.isfinite(epoch_loss) & np.isfinite(params).all(axis=1))
        if diverging.any():
            record.diverged_epoch[diverging] = epoch
            for keep, now in zip(kept, (params, *slots)):
                keep[diverging] = now[diverging]
            alive &= ~diverging
            if not alive.any():
                break
    stopped = record.diverged_epoch >= 0
    for keep, now in zip(kept, (params, *slots)):
        now[stopped] = keep[stopped]
    theta[...] = params
    for slot, values in enumerate(slots):
        state[:, slot] = values


def fit_one(net: "Network", state: np.ndarray, loss: Loss, optimizer: Optimizer,
            X: np.ndarray, y: np.ndarray, seed: int, settings: Settings, record: Record) -> None:
    """Train ``net`` and its optimizer's ``state`` (k, P) in place, through the network's own
    :meth:`~tinynet.Network.forward` and :meth:`~tinynet.Network.backward` (each layer's
    :meth:`~tinynet.Layer.forward` and :meth:`~tinynet.Layer.backward`) and the optimizer's
    step: the loop a student writes, the same arithmetic as :func:`train` on one member, bit
    for bit (while :data:`tinynet.dense.ORDERED_MAX` holds)::

        for every batch:
            y_hat = net.forward(x)
            net.backward(dL/dŷ)                  each layer keeps its dW and db
            θ ← optimizer.update(θ, ∇θ, ...)     every W and b (or each layer in its backward)

    While it trains, every layer's W, b, dW and db are views into one vector θ and one ∇θ
    (:func:`_packed`), so that the optimizer steps them all in one call, as :func:`train`.
    """
    n, batch_size = len(X), settings.batch_size
    through = loss.through_output(net.layers[-1].activation)
    batches = range(0, n, batch_size)
    seen = np.empty_like(y)                          # the epoch's predictions, as training
    losses = np.empty(len(batches))                  # saw them, and each batch's loss
    orders = orders_from(np.array([seed]), settings.first_epoch, n)
    with _packed(net) as (theta, grad, spans):
        slots = [list(state)] + [[slot[span] for slot in state] for span in spans[1:]]
        steps = {id(layer): (theta[span], grad[span], slots[k + 1], settings.lr)
                 for k, (layer, span) in enumerate(zip(net.layers, spans[1:]))}

        def step(layer: "Layer") -> None:           # one layer's step, inside backward
            optimizer.step(*steps[id(layer)])

        during = step if settings.update_during_backward else None
        for epoch in range(settings.first_epoch, settings.first_epoch + settings.epochs):
            visit = next(orders)[0] if settings.shuffle else np.arange(n)
            for batch, start in enumerate(batches):
                rows = visit[start:start + batch_size]
                x, target = X[rows], y[rows]
                y_hat = seen[start:start + batch_size] = net.forward(x)
                terms, gradient = loss.value_and_gradient(y_hat, target, len(rows))
                if through:                                 # dL/dz of the output layer
                    gradient = loss.gradient_through_sigmoid(y_hat, target, len(rows))
                net.backward(gradient, given_dZ=through, update=during, input_gradient=False)
                if during is None:                          # every layer steps
                    optimizer.step(theta, grad, slots[0], settings.lr)
                losses[batch] = batch_loss(terms, target)
            epoch_loss = epoch_total(losses) / n
            if ((seen > settings.threshold) != (y[visit] > settings.threshold)).any():
                record.last_wrong_epoch[0] = epoch
            record.final_loss[0] = epoch_loss
            every = settings.record_every
            if every and (epoch + 1) % every == 0:
                record.loss[0, (epoch + 1) // every - 1] = epoch_loss
            if not (np.isfinite(epoch_loss) and np.isfinite(theta).all()):
                record.diverged_epoch[0] = epoch
                return


def epoch_total(losses: np.ndarray) -> np.ndarray | float:
    """An epoch's summed loss from its batches' (…, batches), added in order, as the compiled
    kernels add them."""
    return np.add.accumulate(losses, axis=-1)[..., -1]


def _spans(table: np.ndarray, parameters: int) -> list[slice]:
    """What the optimizer steps at once: every parameter, then each layer's W and b (side by
    side in θ: :mod:`tinynet.packing`)."""
    return [slice(0, parameters)] + [slice(w_at, b_at + n_out)
                                     for _, n_out, w_at, b_at in table]


@contextmanager
def _packed(net: "Network") -> Iterator[tuple[np.ndarray, np.ndarray, list[slice]]]:
    """Within the block, every layer's W, b, dW and db are views into θ = pack(net) and a
    ∇θ of zeros: ``(θ, ∇θ, spans)``, spans[0] the whole vector and spans[k + 1] layer k's W
    and b (side by side in θ). At the end the layers get their own arrays back, holding θ's
    values."""
    table = layout(net).table
    theta = pack(net)
    grad = np.zeros_like(theta)
    own = [(layer.W, layer.b, layer.dW, layer.db) for layer in net.layers]
    views = zip(layer_views(theta[None], table), layer_views(grad[None], table))
    for layer, ((W, b), (dW, db)) in zip(net.layers, views):
        layer.W, layer.b, layer.dW, layer.db = W[0], b[0], dW[0], db[0]
    try:
        yield theta, grad, _spans(table, len(theta))
    finally:
        for layer, (W, b, dW, db) in zip(net.layers, own):
            W[...], b[...], dW[...], db[...] = layer.W, layer.b, layer.dW, layer.db
            layer.W, layer.b, layer.dW, layer.db = W, b, dW, db


CHUNK_WORK = 1 << 23
"""A run of many networks is cut into chunks of about this much work, counted as members x
samples x parameters per epoch (about a second for 100 XOR networks of 2-2-1), after each of
which the caller may report progress; see :meth:`tinynet.results.Settings.chunks`."""


FIT_CHUNK_WORK = 1 << 19
""":func:`tinynet.fit` on this backend runs in chunks of this much work: about a second of
one 2-2-1 network's per-sample steps (a Ctrl-C stops NumPy code at once anyway)."""


def fit_many(networks: "list[Network]", state: np.ndarray, loss: Loss, optimizer: Optimizer,
             X: np.ndarray, y: np.ndarray, seeds: np.ndarray, settings: Settings,
             record: Record, progress: Callable[[int], None] | None = None) -> np.ndarray:
    """Train ``networks`` and their optimizer's ``state`` (S, k, P) in place:
    :func:`fit_packed` on their packed parameters, copied back into every network."""
    theta = stack(networks)
    predictions = fit_packed(theta, state, networks[0], loss, optimizer, X, y, seeds, settings,
                             record, progress)
    for net, row in zip(networks, theta):
        unpack(net, row)
    return predictions


def fit_packed(theta: np.ndarray, state: np.ndarray, like: "Network", loss: Loss,
               optimizer: Optimizer, X: np.ndarray, y: np.ndarray, seeds: np.ndarray,
               settings: Settings, record: Record,
               progress: Callable[[int], None] | None = None) -> np.ndarray:
    """Train the members whose packed parameters are the rows of ``theta`` (S, P), networks
    shaped ``like`` this one, and their optimizer's ``state`` (S, k, P) in place; return their
    outputs on X, (S, N, n_out). After each
    chunk of the run (:data:`CHUNK_WORK`), ``progress`` (if given) is called with the number
    of epochs done."""
    table = layout(like).table
    activations = [layer.activation for layer in like.layers]
    run_in_chunks(settings, theta.size * len(X), CHUNK_WORK,
                  lambda part: train(theta, state, table, activations, loss, optimizer, X, y,
                                     seeds, part, record),
                  record, progress)
    return forward_many(theta, table, activations, X)


def layer_outputs_many(theta: np.ndarray, table: np.ndarray, activations: list[Activation],
                       X: np.ndarray) -> Iterator[np.ndarray]:
    """Each layer's output on X (N, n_in) of S stacked networks, packed parameters ``theta``
    (S, P) of layout ``table``, in turn: (S, N, width of the layer), every member at once."""
    outputs = np.broadcast_to(X, (len(theta), *X.shape))
    for (W, b), activation in zip(layer_views(theta, table), activations):
        _, outputs = dense.forward(outputs, W, b, activation)
        yield outputs


def forward_many(theta: np.ndarray, table: np.ndarray, activations: list[Activation],
                 X: np.ndarray) -> np.ndarray:
    """The outputs on X (N, n_in) of S stacked networks, packed parameters ``theta`` (S, P) of
    layout ``table``: (S, N, n_out), the last of :func:`layer_outputs_many`."""
    return deque(layer_outputs_many(theta, table, activations, X), maxlen=1).pop()


def output_layer(net: "Network", X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The output layer's pre-activation Z and output A = φ(Z) for X (B, n_in): (B, n_out)
    each. Leaves the layers' caches alone."""
    Z, outputs = None, X
    for layer in net.layers:
        Z, outputs = dense.forward(outputs, layer.W, layer.b, layer.activation)
    return Z, outputs


def predict(net: "Network", X: np.ndarray) -> np.ndarray:
    """The network's output for X (B, n_in): (B, n_out), the A of :func:`output_layer`."""
    return output_layer(net, X)[1]
