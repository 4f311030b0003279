"""The NumPy backend: the reference implementation of training, the code to read.

One loop trains S networks of one shape at once, S = 1 for ``net.fit``: every array carries a
leading members axis, ``theta`` (S, P) holds member s's parameters in row s (laid out as
:mod:`tinynet.packing` says), and each layer's W (S, n_out, n_in) and b (S, n_out) are views
into it, so one subtraction updates every member. Each epoch e (:func:`tinynet.step.train`,
the epoch loop written once for every backend, in the words of :class:`Epochs`)::

    order = epoch_orders(seeds, e, N)            per member, or the data order (no shuffle);
                                                 shuffle.orders_from draws 64 epochs at once
    X_e, y_e = X[order], y[order]                (S, N, ·): the samples in visiting order
    for every batch of batch_size samples (the last one may be smaller):
        ŷ, ℓ = step.train_step(x, y)             forward, the loss, backward, the update:
                                                 tinynet.step, written once for every
                                                 backend, run here with tinynet.dense's
                                                 arrays (each with the members axis)
    loss = Σ ℓ / N                               each sample's ŷ as training saw it
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

from . import dense, step, verdicts
from .activations import Activation
from .losses import Loss
from .optimizers import Optimizer
from .packing import layer_views, layout, offsets, pack, unpack
from .residual import Residual
from .results import Record, Settings, run_in_chunks
from .schedules import learning_rate, step_at
from .shuffle import orders_from

if TYPE_CHECKING:
    from .layers import Layer
    from .network import Network

__all__ = ["CHUNK_WORK", "FIT_CHUNK_WORK", "train", "Epochs", "described", "fit_one",
           "fit_packed", "layer_outputs_many", "forward_many", "output_layer",
           "predict"]

def train(theta: np.ndarray, state: np.ndarray, like: "Network", loss: Loss,
          optimizer: Optimizer, X: np.ndarray, y: np.ndarray, seeds: np.ndarray,
          settings: Settings, record: Record, net: "Network | None" = None) -> None:
    """Train the members in ``theta`` (S, P), networks shaped ``like`` this one, and their
    optimizer's ``state`` (S, k, P) in place, epochs ``settings.first_epoch`` on, writing into
    ``record`` (see :mod:`tinynet.results`): :func:`tinynet.step.train`, the epoch loop, in
    the words of :class:`Epochs`, on a copy in the memory order the module's docstring
    describes, copied back at the end.

    Each step is :func:`tinynet.step.train_step` on one :class:`tinynet.step.Dense` per layer
    (a :class:`tinynet.step.Residual` per block) whose arrays are views into every member's
    parameters; or, given ``net`` (one member, S = 1, ``like``), on the network's own layers
    and blocks, whose arrays are views into that member's for the run, so that the step runs
    their :meth:`~tinynet.Layer.forward` and :meth:`~tinynet.Layer.backward`
    (:func:`fit_one`)."""
    widest = max(max(layer.n_in, layer.n_out) for layer in like.layers)
    words = Epochs(theta, state, _spans(like), widest, X, y, seeds, settings, record, net)
    through = loss.through_output(like.layers[-1].activation)
    with _blocks(net, like, words.params, words.grad) as (blocks, owners), \
            np.errstate(invalid="ignore"):  # ±inf · 0 in finite_mark is NaN, as meant
        by_part = {id(owner): words.stepped[k + 1] for k, owner in enumerate(owners)}

        def update_part(part: object) -> None:   # one layer's (norm's, α's) step, inside backward
            optimizer.step(*by_part[id(part)], words.lr)

        def update_all() -> None:                      # every layer's step, after backward
            optimizer.step(*words.stepped[0], words.lr)

        during = update_part if settings.update_during_backward else None
        step.train(words, lambda x, y: step.train_step(dense, blocks, loss, through, x, y,
                                                       during, update_all))


class Epochs:
    """The epoch loop's words (:func:`tinynet.step.train`) for S members at once: the
    parameters ``params`` (S, P), their gradients ``grad`` and the optimizer's state, copies
    in the memory order of the module's docstring; what each optimizer call steps at once
    (``stepped``: every parameter, then each layer's W and b); the epoch's samples in their
    order and the members' outputs on them as training saw them; the record (``results``),
    written for the members still ``alive``; a diverged member's parameters and state as it
    stopped."""

    def __init__(self, theta: np.ndarray, state: np.ndarray, spans: list[slice], widest: int,
                 X: np.ndarray, y: np.ndarray, seeds: np.ndarray, settings: Settings,
                 record: Record, net: "Network | None") -> None:
        members, n = theta.shape[0], len(X)
        members_fastest = settings.batch_size == 1 and members >= widest
        order = "F" if members_fastest else "C"
        self.params = np.array(theta, order=order)
        self.grad = np.zeros_like(self.params)
        self.slots = [np.array(state[:, slot], order=order) for slot in range(state.shape[1])]
        self.stepped = [(self.params[:, span], self.grad[:, span],
                         [slot[:, span] for slot in self.slots])
                        for span in [slice(0, self.params.shape[1]), *spans]]
        self.theta, self.state = theta, state    # where the trained values go
        self.X, self.y, self.settings, self.results = X, y, settings, record
        self.X_epoch = np.empty((members, *X.shape), order=order)  # the samples in visiting
        self.y_epoch = np.empty((members, *y.shape), order=order)  # order
        self.X_epoch[...], self.y_epoch[...] = X, y                # the data order: no shuffle
        self.seen = np.empty_like(self.y_epoch)  # the epoch's outputs, as training saw them
        one = slice(None) if net is None else 0  # a network's own layers take no members axis
        batches = [slice(start, start + settings.batch_size)
                   for start in range(0, n, settings.batch_size)]
        self.steps = [(self.X_epoch[one, batch], self.y_epoch[one, batch],
                       self.seen[one, batch]) for batch in batches]
        self.losses = np.empty((len(batches), members))  # each batch's summed loss
        self.epoch_loss = np.zeros(members)
        self.kept = [self.params.copy(), *(slot.copy() for slot in self.slots)]
        self.alive = record.diverged_epoch < 0  # the members whose record goes on
        self.orders = orders_from(seeds, settings.first_epoch, n)  # epoch_orders, in blocks
        self._batch = 0

    def epochs(self) -> range:
        """Epochs ``settings.first_epoch`` on."""
        first = self.settings.first_epoch
        return range(first, first + self.settings.epochs)

    def visit(self, epoch: int) -> None:
        """Gather the samples in the epoch's order (a member's own, drawn from its seed)."""
        self.epoch = epoch
        if self.settings.shuffle:
            visit = next(self.orders)
            self.X_epoch[...] = self.X.take(visit, axis=0)
            self.y_epoch[...] = self.y.take(visit, axis=0)

    def batches(self) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        """Each batch's samples and targets, views into the epoch's arrays; the batch's
        learning rate in ``lr`` (:mod:`tinynet.schedules`)."""
        settings = self.settings
        for batch, (x, y, _) in enumerate(self.steps):
            self._batch = batch
            self.lr = learning_rate(settings.lr, step_at(settings, len(self.X), self.epoch,
                                                         batch * settings.batch_size),
                                    settings.warmup, settings.cosine_steps)
            yield x, y

    def add_loss(self, terms: np.ndarray, y: np.ndarray) -> None:
        """The batch's summed loss, kept to be added in order at the epoch's end."""
        self.losses[self._batch] = batch_loss(terms, y)

    def saw(self, y_hat: np.ndarray, y: np.ndarray, epoch: int) -> None:
        """ŷ as training saw it, kept for the wrong-side test: once an epoch, in
        :meth:`record`, on every output at once."""
        self.steps[self._batch][2][...] = y_hat

    def record(self, epoch: int) -> None:
        """The epoch's loss Σ ℓ / N into the record of every member still alive, and the
        epoch as its last wrong one if some output was on the wrong side."""
        record, alive = self.results, self.alive
        self.epoch_loss = epoch_total(self.losses.T) / len(self.X)           # (S,)
        wrong = verdicts.wrong_side(self.seen, self.y_epoch,
                                    self.settings.threshold).any(axis=(1, 2))
        record.last_wrong_epoch[alive & wrong] = epoch
        record.final_loss[alive] = self.epoch_loss[alive]
        slot = verdicts.history_slot(epoch, self.settings.record_every)
        if slot >= 0:
            record.loss[alive, slot] = self.epoch_loss[alive]

    def diverged(self, epoch: int) -> bool:
        """Mark the members that diverged in this epoch, keeping their parameters and state
        as they are; whether every member has diverged."""
        marks = (verdicts.finite_mark(self.epoch_loss)
                 + verdicts.finite_mark(self.params).sum(axis=1))
        diverging = self.alive & verdicts.diverged(marks)
        if diverging.any():
            self.results.diverged_epoch[diverging] = epoch
            for keep, now in zip(self.kept, (self.params, *self.slots)):
                keep[diverging] = now[diverging]
            self.alive &= ~diverging
        return not self.alive.any()

    def finish(self) -> None:
        """The trained parameters and state into ``theta`` and ``state``: as they were when
        it stopped, for a diverged member."""
        theta, state = self.theta, self.state
        stopped = self.results.diverged_epoch >= 0
        for keep, now in zip(self.kept, (self.params, *self.slots)):
            now[stopped] = keep[stopped]
        theta[...] = self.params
        for slot, values in enumerate(self.slots):
            state[:, slot] = values


def batch_loss(terms: np.ndarray, y: np.ndarray) -> np.ndarray | float:
    """A batch's loss, Σ of its terms ℓ (broadcast to ``y``'s shape, (…, B, n_out)), added one
    after the other, rows first, as the compiled kernels add them: so that one network's
    sum is the same alone or in a stack, in any memory order."""
    if np.shape(terms) != y.shape:
        terms = np.broadcast_to(terms, y.shape)
    if y.shape[-2] * y.shape[-1] == 1:                  # one sample, one output
        return terms[..., 0, 0]
    return np.add.accumulate(terms.reshape(*y.shape[:-2], -1), axis=-1)[..., -1]


def _owners(like: "Network") -> list[object]:
    """Each object that owns parameters in ``like`` (a layer, a norm, a block with a trained
    α), in the order of their parameters in θ."""
    return list(dict.fromkeys(owner for owner, _, _ in like.slots()))


def _spans(like: "Network") -> list[slice]:
    """What the optimizer steps at once inside the backward pass: each of :func:`_owners`'
    parameters (a layer's W and b, side by side in θ: :mod:`tinynet.packing`)."""
    starts, spans = offsets(like), {}
    for owner, name, _ in like.slots():
        array = getattr(owner, name)
        start, end = starts[id(array)], starts[id(array)] + array.size
        first = spans.get(id(owner), slice(start, end))
        spans[id(owner)] = slice(first.start, end)
    return list(spans.values())


def described(like: "Network", params: np.ndarray,
              grad: np.ndarray) -> tuple[list[object], list[object]]:
    """``like``'s layers and blocks as :mod:`tinynet.step` describes them, their arrays views
    into ``params`` and ``grad`` (S, P), each with a members axis; and the described owners of
    parameters, in the order of :func:`_owners`."""
    starts, members, made = offsets(like), params.shape[0], {}

    def views(array: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        start = starts[id(array)]
        return tuple(flat[:, start:start + array.size].reshape(members, *array.shape)
                     for flat in (params, grad))

    def dense(layer: "Layer") -> step.Dense:
        (W, dW), (b, db) = views(layer.W), views(layer.b)
        made[id(layer)] = step.Dense(W, b, dW, db, layer.activation)
        return made[id(layer)]

    blocks = []
    for block in like.blocks:
        if not isinstance(block, Residual):
            blocks.append(dense(block))
            continue
        norm = None
        if block.norm is not None:
            (gain, dgain), (bias, dbias) = views(block.norm.gain), views(block.norm.bias)
            norm = made[id(block.norm)] = step.Norm(gain, bias, dgain, dbias, block.norm.eps)
        layers = [dense(layer) for layer in block.layers]
        scale, dscale = views(block.scale) if block.train_scale else (block.scale, None)
        blocks.append(step.Residual(layers, norm, block.placement, scale, dscale, block.skip))
        if block.train_scale:
            made[id(block)] = blocks[-1]
    return blocks, [made[id(owner)] for owner in _owners(like)]


@contextmanager
def _blocks(net: "Network | None", like: "Network", params: np.ndarray,
            grad: np.ndarray) -> Iterator[tuple[list[object], list[object]]]:
    """The layers and blocks :func:`train` steps and the owners of their parameters:
    :func:`described`, views into ``params`` (S, P) and ``grad``; or ``net``'s own (``like``),
    their arrays views into member 0's for the block and their own again (holding the trained
    values) after it."""
    if net is None:
        yield described(like, params, grad)
        return
    starts, own = offsets(net), []
    for owner, name, gradient in net.slots():
        array = getattr(owner, name)
        start = starts[id(array)]
        for attribute, flat in ((name, params), (gradient, grad)):
            own.append((owner, attribute, getattr(owner, attribute)))
            setattr(owner, attribute, flat[0, start:start + array.size].reshape(array.shape))
    try:
        yield net.blocks, _owners(net)
    finally:
        for owner, attribute, array in own:
            array[...] = getattr(owner, attribute)
            setattr(owner, attribute, array)


def fit_one(net: "Network", state: np.ndarray, loss: Loss, optimizer: Optimizer,
            X: np.ndarray, y: np.ndarray, seed: int, settings: Settings, record: Record) -> None:
    """Train ``net`` and its optimizer's ``state`` (k, P) in place: :func:`train` of one
    member on the network's own layers, whose :meth:`~tinynet.Layer.forward` and
    :meth:`~tinynet.Layer.backward` (:class:`tinynet.step.Dense`'s, with the layer's checks)
    it runs, the loop a student writes::

        for every batch:
            y_hat = net.forward(x)
            net.backward(dL/dŷ)                  each layer keeps its dW and db
            θ ← optimizer.update(θ, ∇θ, ...)     every W and b (or each layer in its backward)

    the same arithmetic as an ensemble's member, bit for bit (while
    :data:`tinynet.dense.ORDERED_MAX` holds)."""
    theta = pack(net)[None]
    train(theta, state[None], net, loss, optimizer, X, y, np.array([seed]), settings, record,
          net=net)
    unpack(net, theta[0])  # state: trained in place, through the view state[None]


def epoch_total(losses: np.ndarray) -> np.ndarray | float:
    """An epoch's summed loss from its batches' (…, batches), added in order, as the compiled
    kernels add them."""
    return np.add.accumulate(losses, axis=-1)[..., -1]


CHUNK_WORK = 1 << 23
"""A run of many networks is cut into chunks of about this much work, counted as members x
samples x parameters per epoch (about a second for 100 XOR networks of 2-2-1), after each of
which the caller may report progress; see :meth:`tinynet.results.Settings.chunks`."""


FIT_CHUNK_WORK = 1 << 19
""":func:`tinynet.fit` on this backend runs in chunks of this much work: about a second of
one 2-2-1 network's per-sample steps (a Ctrl-C stops NumPy code at once anyway)."""


def fit_packed(theta: np.ndarray, state: np.ndarray, like: "Network", loss: Loss,
               optimizer: Optimizer, X: np.ndarray, y: np.ndarray, seeds: np.ndarray,
               settings: Settings, record: Record,
               progress: Callable[[int], None] | None = None) -> np.ndarray:
    """Train the members whose packed parameters are the rows of ``theta`` (S, P), networks
    shaped ``like`` this one, and their optimizer's ``state`` (S, k, P) in place; return their
    outputs on X, (S, N, n_out). After each
    chunk of the run (:data:`CHUNK_WORK`), ``progress`` (if given) is called with the number
    of epochs done."""
    run_in_chunks(settings, theta.size * len(X), CHUNK_WORK,
                  lambda part: train(theta, state, like, loss, optimizer, X, y, seeds, part,
                                     record),
                  record, progress)
    return predict_packed(theta, like, loss, optimizer, X)


def predict_packed(theta: np.ndarray, like: "Network", loss: Loss, optimizer: Optimizer,
                   X: np.ndarray) -> np.ndarray:
    """The outputs on X (N, n_in) of the members whose packed parameters are ``theta``
    (S, P), networks shaped ``like`` this one: (S, N, n_out) (:func:`forward_many`; the
    loss and optimizer, which the compiled backend's kit is chosen by, are not used); a
    network with residual blocks by :func:`tinynet.step.forward` on :func:`described`."""
    if like.residuals:
        blocks, _ = described(like, theta, np.empty_like(theta))
        return step.forward(blocks, np.broadcast_to(X, (len(theta), *X.shape)))
    return forward_many(theta, layout(like).table, [layer.activation for layer in like.layers],
                        X)


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
    if net.residuals:
        theta = pack(net)[None]
        blocks, _ = described(net, theta, np.empty_like(theta))
        outputs = step.forward(blocks, X[None])
        return blocks[-1]._Z[0], outputs[0]
    Z, outputs = None, X
    for layer in net.layers:
        Z, outputs = dense.forward(outputs, layer.W, layer.b, layer.activation)
    return Z, outputs


def predict(net: "Network", X: np.ndarray) -> np.ndarray:
    """The network's output for X (B, n_in): (B, n_out), the A of :func:`output_layer`."""
    return output_layer(net, X)[1]
