"""Compiled training of many small networks at once: one network per SIMD lane.

One network's per-sample SGD is a chain of dependent scalar operations, so a CPU core spends
most of its time waiting on its own results. Independent networks do not wait on each other:
stored side by side, with the network index innermost (``theta[p, lane]``), every operation
becomes a short loop over lanes that the compiler turns into vector instructions. Networks are
trained in blocks of :data:`LANES`, and blocks are spread over the CPU cores (``prange``).

Every lane does exactly the arithmetic of one network's kernel (the kit's ``fit_network``), in
the same order and with the same scalar functions, so member k of an ensemble ends bit-identical
to the same network trained alone by the numba backend (a network whose single fit calls
BLAS, :data:`tinynet.compiled.single.BLAS_MIN_WORK`, trains as that single fit instead: the
kit's ``fit_members``). No array views are made inside the loops: a
view costs an atomic reference count, and threads sharing one would fight over it.

The passes loop over ``theta.shape[1]`` lanes, a number known only when they run, not over
the constant :data:`LANES`: LLVM unrolls a short loop of a constant trip count whole before
it vectorises, and the unrolled copy of a loop that reads one array and writes another stays
scalar, as nothing tells the compiler the two do not overlap (a copy of 64 lanes became 64
scalar loads and stores; at 32 lanes nearly every loop did, at half the speed). A loop of
unknown length is vectorised with a run-time overlap check instead, whatever the target and
LANES, as a hand-written loop over its lanes is (``tests/test_unrolled.py`` reads the
assembly).

Neither the maths nor the step nor the epoch loop is spelled here. This module holds the
*words* of a dense layer with the lanes innermost (:func:`dense_forward`, :func:`loss_rows`,
:func:`times`, :func:`gradients_and_step`, :func:`backward_input`,
:func:`backward_input_then_step`), and :mod:`tinynet.compiled.looping` writes
:func:`tinynet.step.train_step` with them into the kit (:mod:`tinynet.compiled.kit`) as
``train_step_lanes`` and ``forward_lanes``, with the network's activations, loss and optimizer
written from their definitions; and the words of the epoch loop's record (:func:`gather`,
:func:`record_lanes`, :func:`diverged_lanes`, ...), with which :mod:`tinynet.compiled.epochs`
writes :func:`tinynet.step.train` into the kit as ``train_block``, and the generated ensemble
kernels' loop. The kit's entry point runs a block's copy of its members through
``train_block`` (:func:`fit_block_of_members`). The functions that
take a function are inlined where they are called (``inline="always"``), so that numba can
cache the result (a function passed through a call that is not inlined would become a
function pointer, which numba cannot cache). The step, the forward pass, and the words that
take an activation or the optimizer (a layer's forward pass, its gradients and step) are kit
functions of their own, each compiled once: inlined at each of the step's call sites, the
words took the after-backward step's compile from about 9 s to 14 s (measured on a 2-3-1 kit).
They count no references (:data:`tinynet.compiled.looping.UNCOUNTED`): the calls a step
makes cost no atomic operation.
"""

from __future__ import annotations


import numpy as np
from numba import njit

from .orders import high_key, low_key, pair_hash, splitmix64
from .verdicts import diverged, finite_mark, history_slot, wrong_side
from .simd import LANES

__all__ = ["LANES", "dense_forward", "loss_rows", "times", "gradients_and_step",
           "backward_input", "backward_input_then_step", "forward_scratch", "block_scratch",
           "gather", "block_outputs", "fit_block_of_members", "lane_orders", "order_scratch",
           "record_scratch", "record_lanes", "diverged_lanes", "restore_diverged", "keep_state",
           "restore_state", "spread_counters"]


@njit(cache=True, error_model="numpy")
def lane_orders(seed_hashes, epoch, keys, rank, order):
    """order[t, l] = :func:`tinynet.shuffle.epoch_order` (seed of lane l, epoch, n)[t], for
    the ``order.shape[1]`` lanes of a block.

    ``seed_hashes[l]`` is splitmix64(seed of lane l), computed once. Every loop runs over the
    lanes innermost, so the hashing and the ranking vectorise too.
    """
    n, lanes = order.shape
    for l in range(lanes):
        rank[l] = splitmix64(seed_hashes[l] + np.uint64(epoch))  # the epoch's base, for now
    for pair in range((n + 1) // 2):  # one hash for each pair of samples
        for l in range(lanes):
            hashed = pair_hash(rank[l], pair)
            keys[2 * pair, l] = high_key(hashed, 2 * pair)
            if 2 * pair + 1 < n:
                keys[2 * pair + 1, l] = low_key(hashed, 2 * pair + 1)
    if n > 32:
        for l in range(lanes):
            order[:, l] = np.argsort(keys[:, l])
        return
    for i in range(n):  # rank by counting: the keys are distinct, and nothing is allocated
        for l in range(lanes):
            rank[l] = 0
        for j in range(n):
            for l in range(lanes):
                rank[l] += np.uint64(keys[j, l] < keys[i, l])
        for l in range(lanes):
            order[rank[l], l] = i


# --- the words of a dense layer, lanes innermost (tinynet.compiled.looping writes
# tinynet.step with them: the kit's train_step_lanes and forward_lanes) -------------------

@njit(error_model="numpy", inline="always")
def dense_forward(activation, parameters, theta, table, layer, A, D, rows, acc):
    """A[layer + 1] = φ(Z) and D[layer] = φ'(Z) of layer ``layer``, Z = X Wᵀ + b with X =
    A[layer], lanes innermost, with ``activation(z, parameters) = (φ(z), φ'(z))``: each dot
    product summed from its first product (not from 0.0) into ``acc``, the bias added as φ
    takes it, so that Z is never stored.

    The kit calls it once per activation of the network with that activation's function, so
    that each copy of the loop is straight-line arithmetic, which vectorises (a loop that
    chose the activation in every iteration would not).
    """
    n_in, n_out, w_at, b_at = table[layer, 0], table[layer, 1], table[layer, 2], table[layer, 3]
    lanes = theta.shape[1]  # not LANES: see the module's docstring
    for r in range(rows):
        for j in range(n_out):
            for l in range(lanes):
                acc[l] = A[layer, r, 0, l] * theta[w_at + j * n_in, l]
            for i in range(1, n_in):
                for l in range(lanes):
                    acc[l] += A[layer, r, i, l] * theta[w_at + j * n_in + i, l]
            for l in range(lanes):
                A[layer + 1, r, j, l], D[layer, r, j, l] = activation(acc[l] + theta[b_at + j, l],
                                                                      parameters)


@njit(error_model="numpy", inline="always")
def loss_rows(loss, hyper, A, layers, targets, delta, rows, n_out, batch_loss, threshold,
              epoch, last_wrong_epoch):
    """The loss of every lane's batch, ŷ = A[layers] (the kit's ``loss(y_hat, y, batch, hyper)
    = (ℓ, dL/dŷ)``): its terms summed into ``batch_loss`` (lanes,), dL/dŷ into ``delta``, and
    ``epoch`` as the lane's last wrong epoch if an output is on the wrong side of
    ``threshold``."""
    for l in range(batch_loss.shape[0]):
        batch_loss[l] = 0.0
    for r in range(rows):
        for k in range(n_out):
            for l in range(batch_loss.shape[0]):
                y_hat, y = A[layers, r, k, l], targets[r, k, l]
                term, gradient = loss(y_hat, y, rows, hyper)
                batch_loss[l] += term
                delta[r, k, l] = gradient
                if wrong_side(y_hat, y, threshold):
                    last_wrong_epoch[l] = epoch


@njit(error_model="numpy", inline="always")
def times(delta, D, layer, rows, n_out):
    """dZ = dA ⊙ D[layer] in place in ``delta`` (rows, n_out, lanes): the chain rule through
    φ, D = φ'(Z)."""
    for r in range(rows):
        for j in range(n_out):
            for l in range(delta.shape[2]):
                delta[r, j, l] *= D[layer, r, j, l]


@njit(error_model="numpy", inline="always")
def gradients_and_step(update, theta, state, hyper, steps, lr, table, layer, A, delta, rows,
                       acc):
    """dW = dZᵀ X and db = Σ_rows dZ of layer ``layer`` (X = A[layer], dZ in ``delta``), each
    summed from its first row, and every parameter's step as soon as its gradient is known
    (``update(theta, state, lr, hyper, steps, p, l, g)``, the kit's optimizer step of
    parameter p of lane l): no gradient is stored."""
    n_in, n_out, w_at, b_at = table[layer, 0], table[layer, 1], table[layer, 2], table[layer, 3]
    lanes = theta.shape[1]
    for j in range(n_out):
        for i in range(n_in):
            w = w_at + j * n_in + i
            if rows == 1:                         # one row: a sum of one term, one loop
                for l in range(lanes):
                    update(theta, state, lr, hyper, steps, w, l,
                           delta[0, j, l] * A[layer, 0, i, l])
                continue
            for l in range(lanes):
                acc[l] = delta[0, j, l] * A[layer, 0, i, l]
            for r in range(1, rows):
                for l in range(lanes):
                    acc[l] += delta[r, j, l] * A[layer, r, i, l]
            for l in range(lanes):
                update(theta, state, lr, hyper, steps, w, l, acc[l])
        if rows == 1:
            for l in range(lanes):
                update(theta, state, lr, hyper, steps, b_at + j, l, delta[0, j, l])
            continue
        for l in range(lanes):
            acc[l] = delta[0, j, l]
        for r in range(1, rows):
            for l in range(lanes):
                acc[l] += delta[r, j, l]
        for l in range(lanes):
            update(theta, state, lr, hyper, steps, b_at + j, l, acc[l])


@njit(error_model="numpy", inline="always")
def backward_input(theta, table, layer, delta, back, rows, acc):
    """back = dZ W (rows, n_in, lanes) of layer ``layer``: the previous layer's dA, each sum
    from its first term (not from 0.0)."""
    n_in, n_out, w_at = table[layer, 0], table[layer, 1], table[layer, 2]
    lanes = theta.shape[1]
    for r in range(rows):
        for i in range(n_in):
            for l in range(lanes):
                acc[l] = delta[r, 0, l] * theta[w_at + i, l]
            for j in range(1, n_out):
                for l in range(lanes):
                    acc[l] += delta[r, j, l] * theta[w_at + j * n_in + i, l]
            for l in range(lanes):
                back[r, i, l] = acc[l]


@njit(error_model="numpy", inline="always")
def backward_input_then_step(update, gradients_and_step, theta, state, hyper, steps, lr, table,
                             layer, A, delta, back, rows, acc):
    """:func:`backward_input` with the old W, then the layer's step, ``gradients_and_step``
    (:func:`gradients_and_step` with the kit's optimizer, compiled once): the layer's part of
    a step that updates after the backward pass (nothing after this reads the layer's W).
    For a one-sample batch both are one loop over W: the old W_ji's term into dX_i, in the
    order :func:`backward_input` sums it, then W_ji's step (``update``, the kit's optimizer
    step of parameter p of lane l)."""
    if rows > 1:
        backward_input(theta, table, layer, delta, back, rows, acc)
        gradients_and_step(theta, state, hyper, steps, lr, table, layer, A, delta, rows, acc)
        return
    n_in, n_out, w_at, b_at = table[layer, 0], table[layer, 1], table[layer, 2], table[layer, 3]
    lanes = theta.shape[1]
    for j in range(n_out):
        for i in range(n_in):
            w = w_at + j * n_in + i
            for l in range(lanes):                # dX_i from its first term, not 0.0
                term = delta[0, j, l] * theta[w, l]
                back[0, i, l] = term if j == 0 else back[0, i, l] + term
                update(theta, state, lr, hyper, steps, w, l, delta[0, j, l] * A[layer, 0, i, l])
        for l in range(lanes):
            update(theta, state, lr, hyper, steps, b_at + j, l, delta[0, j, l])


@njit(cache=True, error_model="numpy")
def order_scratch(seeds, n):
    """For :func:`lane_orders` on ``n`` samples and one lane per seed: each seed's hash, the
    keys and ranks to fill, and ``order`` (n, lanes), set to the data order."""
    lanes = seeds.shape[0]
    seed_hashes = np.zeros(lanes, dtype=np.uint64)
    for l in range(lanes):
        seed_hashes[l] = splitmix64(np.uint64(seeds[l]))
    order = np.zeros((n, lanes), dtype=np.int64)
    for t in range(n):
        for l in range(lanes):
            order[t, l] = t
    keys, rank = np.zeros((n, lanes), dtype=np.uint64), np.zeros(lanes, dtype=np.uint64)
    return seed_hashes, keys, rank, order


@njit(cache=True, error_model="numpy")
def record_scratch(theta, last_wrong_epoch):
    """For :func:`diverged_lanes` and :func:`restore_diverged` on ``theta`` (P, lanes): where a
    diverged lane's parameters and last wrong epoch are kept (copies of them as they are
    now), and each lane's marks (lanes,), :func:`tinynet.verdicts.finite_mark` summed."""
    return theta.copy(), last_wrong_epoch.copy(), np.zeros(theta.shape[1])


@njit(cache=True, error_model="numpy")
def record_lanes(total, n, epoch, every, loss_history, final_loss, diverged_epoch):
    """The epoch's loss Σ ℓ / N of every lane still running (``total`` (lanes,) its summed
    loss) into ``final_loss`` and, in an epoch the history keeps
    (:func:`tinynet.verdicts.history_slot`), into ``loss_history``."""
    for l in range(total.shape[0]):
        final_loss[l] = total[l] / n if diverged_epoch[l] < 0 else final_loss[l]
    slot = history_slot(epoch, every)
    if slot >= 0:                               # the rare epochs: lane by lane
        for l in range(total.shape[0]):
            if diverged_epoch[l] < 0:
                loss_history[l, slot] = final_loss[l]


@njit(cache=True, error_model="numpy")
def diverged_lanes(theta, total, epoch, diverged_epoch, last_wrong_epoch, kept, kept_wrong,
                   marks):
    """Mark every lane still running that diverged in ``epoch`` (``theta`` (P, lanes),
    ``total`` its summed loss), keeping its parameters and last wrong epoch as they are now.
    Returns the number of lanes still running.

    A lane has diverged when its loss or a parameter is NaN or ±inf
    (:func:`tinynet.verdicts.diverged` of ``marks`` (lanes,), the sum of their
    :func:`~tinynet.verdicts.finite_mark`): loops without a branch, over the lanes innermost,
    that vectorise.
    """
    n_params, lanes = theta.shape
    for l in range(lanes):
        marks[l] = finite_mark(total[l])
    for p in range(n_params):
        for l in range(lanes):
            marks[l] += finite_mark(theta[p, l])
    alive, diverging = 0, 0
    for l in range(lanes):
        running = diverged_epoch[l] < 0
        gone = diverged(marks[l])
        alive += running & (not gone)
        diverging += running & gone
    if diverging > 0:                           # the rare epochs: lane by lane
        for l in range(lanes):
            if diverged_epoch[l] < 0 and diverged(marks[l]):
                diverged_epoch[l] = epoch
                kept_wrong[l] = last_wrong_epoch[l]
                for p in range(n_params):
                    kept[p, l] = theta[p, l]
    return alive


@njit(cache=True, error_model="numpy")
def restore_diverged(theta, diverged_epoch, last_wrong_epoch, kept, kept_wrong):
    """Put every diverged lane back where it stopped: parameters and last wrong epoch."""
    n_params, lanes = theta.shape
    for l in range(lanes):
        if diverged_epoch[l] >= 0:
            last_wrong_epoch[l] = kept_wrong[l]
            for p in range(n_params):
                theta[p, l] = kept[p, l]


@njit(cache=True, error_model="numpy")
def keep_state(state, kept_state, diverged_epoch, epoch):
    """Keep the optimizer's state (k, P, lanes) of every lane that diverged in ``epoch``."""
    for l in range(state.shape[2]):
        if diverged_epoch[l] == epoch:
            for k in range(state.shape[0]):
                for p in range(state.shape[1]):
                    kept_state[k, p, l] = state[k, p, l]


@njit(cache=True, error_model="numpy")
def restore_state(state, kept_state, diverged_epoch):
    """Put the optimizer's state of every diverged lane back where it stopped."""
    for l in range(state.shape[2]):
        if diverged_epoch[l] >= 0:
            for k in range(state.shape[0]):
                for p in range(state.shape[1]):
                    state[k, p, l] = kept_state[k, p, l]


@njit(cache=True, error_model="numpy")
def spread_counters(state, counters):
    """Write each counter slot's value in parameter 0 (where the kernels keep an optimizer's
    counters, one number per network, while they run: :mod:`tinynet.compiled.hoisting`) into
    every parameter's slot of ``state`` (k, P, lanes), as the saved state holds it."""
    for slot in counters:
        for p in range(1, state.shape[1]):
            for l in range(state.shape[2]):
                state[slot, p, l] = state[slot, 0, l]


@njit(cache=True, error_model="numpy")
def forward_scratch(layout, n_in, batch_size):
    """A block's forward pass's scratch: A (layers + 1, batch, width, LANES), A[0] the input
    batch; D (layers, ...), φ'(Z); ``acc`` (LANES,)."""
    layers = layout.table.shape[0]
    width = max(n_in, layout.table[:, 1].max())
    return (np.zeros((layers + 1, batch_size, width, LANES)),
            np.zeros((layers, batch_size, width, LANES)), np.zeros(LANES))


@njit(cache=True, error_model="numpy")
def block_scratch(layout, X, Y, batch_size):
    """A block's scratch for the kit's ``train_block``: A, D and ``acc``
    (:func:`forward_scratch`); ``delta`` and ``back`` (batch, width, LANES), dA or dZ and dX;
    ``targets`` (batch, n_out, LANES); ``total`` and ``batch_loss`` (LANES,)."""
    A, D, acc = forward_scratch(layout, X.shape[1], batch_size)
    width = A.shape[2]
    return (A, D, np.zeros((batch_size, width, LANES)), np.zeros((batch_size, width, LANES)),
            np.zeros((batch_size, Y.shape[1], LANES)), acc, np.zeros(LANES), np.zeros(LANES))


@njit(error_model="numpy", inline="always")
def gather(X, Y, order, start, rows, A, targets):
    """Samples ``start`` to ``start + rows`` of each lane's order into A[0] and ``targets``
    (rows, n, LANES)."""
    for r in range(rows):
        for i in range(X.shape[1]):
            for l in range(LANES):
                A[0, r, i, l] = X[order[start + r, l], i]
        for k in range(Y.shape[1]):
            for l in range(LANES):
                targets[r, k, l] = Y[order[start + r, l], k]


@njit(error_model="numpy", inline="always")
def block_outputs(forward, theta, layout, X, batch_size, predictions):
    """The outputs on X of the block's networks (``theta`` (P, LANES)) into ``predictions``
    (LANES, N, n_out), ``batch_size`` rows at a time: ``forward`` is the kit's
    ``forward_lanes``, :func:`tinynet.step.forward`."""
    n, n_in = X.shape
    layers, n_out = layout.table.shape[0], predictions.shape[2]
    A, D, acc = forward_scratch(layout, n_in, batch_size)
    for start in range(0, n, batch_size):
        rows = min(batch_size, n - start)
        for r in range(rows):
            for i in range(n_in):
                for l in range(LANES):
                    A[0, r, i, l] = X[start + r, i]
        forward(theta, layout, A, D, rows, acc)
        for r in range(rows):
            for k in range(n_out):
                for l in range(LANES):
                    predictions[l, start + r, k] = A[layers, r, k, l]


@njit(error_model="numpy", inline="always")
def fit_block_of_members(train, forward, block, theta, state, hyper, layout, X, Y, seeds,
                         settings, loss_history, final_loss, diverged_epoch, last_wrong_epoch,
                         predictions):
    """Train block ``block`` of the S networks of one layout in ``theta`` (P, S), network s in
    column s, and their optimizer's ``state`` (k, P, S), epochs ``settings.first_epoch`` on,
    as the kit's ``fit_network`` trains each alone: the members ``block · LANES`` on, copied
    into lanes, trained by ``train``, the kit's ``train_block`` (:func:`tinynet.step.train`,
    written by :mod:`tinynet.compiled.epochs`), and their outputs computed by ``forward``,
    the kit's ``forward_lanes``.

    Continues row s of the record's arrays (see :mod:`tinynet.results`) and writes
    ``predictions[s]`` (N, n_out), the trained network's outputs on X. The kit's
    ``fit_lanes`` runs the blocks in a ``prange``.
    """
    n_params, members = theta.shape
    n, n_out = Y.shape
    records = loss_history.shape[1]
    first = block * LANES
    local = np.empty((n_params, LANES))
    slots = state.shape[0]
    local_state = np.empty((slots, n_params, LANES))
    local_seeds = np.empty(LANES, dtype=np.int64)
    history = np.empty((LANES, records))
    loss_now = np.empty(LANES)
    diverged = np.empty(LANES, dtype=np.int64)
    wrong = np.empty(LANES, dtype=np.int64)
    for l in range(LANES):
        member = min(first + l, members - 1)  # a short last block repeats its last member
        for p in range(n_params):
            local[p, l] = theta[p, member]
            for k in range(slots):
                local_state[k, p, l] = state[k, p, member]
        local_seeds[l] = seeds[member]
        for e in range(records):
            history[l, e] = loss_history[member, e]
        loss_now[l] = final_loss[member]
        diverged[l] = diverged_epoch[member]
        wrong[l] = last_wrong_epoch[member]
    outputs = np.empty((LANES, n, n_out))
    train(local, local_state, hyper, layout, X, Y, local_seeds, settings, history, loss_now,
          diverged, wrong)
    block_outputs(forward, local, layout, X, settings.batch_size, outputs)
    for l in range(min(LANES, members - first)):
        member = first + l
        for p in range(n_params):
            theta[p, member] = local[p, l]
            for k in range(slots):
                state[k, p, member] = local_state[k, p, l]
        for e in range(records):
            loss_history[member, e] = history[l, e]
        final_loss[member] = loss_now[l]
        diverged_epoch[member] = diverged[l]
        last_wrong_epoch[member] = wrong[l]
        for t in range(n):
            for k in range(n_out):
                predictions[member, t, k] = outputs[l, t, k]
