"""Training by stochastic gradient descent on a loss (the notes' MSE by default): one network
(:func:`fit`), many at once (:func:`fit_ensemble`), and :func:`predict`. The public entry
points: they check their input once and hand the work to a backend.

Each epoch visits every sample once, in the order :func:`tinynet.shuffle.epoch_order` gives for
``(seed, epoch)`` when shuffling, and in data order otherwise. For every batch of
``batch_size`` samples (the last one may be smaller)::

    Y_hat = forward(X[batch])
    backward(dL/dY_hat)                  # every layer's dW, db, last layer first
    W -= lr · dW,   b -= lr · db         # the SGD step, every layer

``batch_size=1`` (the default) is per-sample SGD with an update after every sample, as in 99mlp.

That order is ``update="after_backward"``, the default: every gradient comes from the weights
the forward pass used. With ``update="during_backward"`` each layer takes its step inside the
backward pass, as soon as its dW and db are known, and passes back a gradient computed with
its new W, as many hand-written training loops do::

    for every layer, last first:
        dZ = dA ⊙ φ'(Z),   dW = dZᵀ X,   db = Σ_batch dZ
        W -= lr · dW,      b -= lr · db
        dA = dZ W                        # the layer before's dL/dA, with the new W

The two orders train a one-layer network identically: it passes nothing back.

Two backends do it: ``"numpy"``, the reference to read (:mod:`tinynet.reference`), and
``"numba"``, the default, each whole run in compiled code, no Python per step
(:mod:`tinynet.compiled`).

    >>> nets = [tinynet.mlp([2, 2, 2, 1], init="he_leaky", seed=s) for s in range(100)]
    >>> result = tinynet.fit_ensemble(nets, X, y, epochs=20_000, lr=0.01)
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from types import ModuleType
from typing import NamedTuple

import numpy as np

from . import compiled, reference
from .compiled import kit
from .evaluation import Evaluation, evaluate_into
from .losses import CrossEntropy, Loss, check_output, get_loss
from .network import Network
from .optimizers import SGD, Optimizer, get_optimizer, keep_state, state_of
from .packing import pack, size, stack, unpack
from .results import UPDATES, EnsembleResult, History, Record, Settings, history
from .schedules import decay_steps, run_steps
from .validation import (MAX_EPOCHS, as_float_matrix, check_backend, check_callable,
                         check_choice, check_instance, check_int, check_memory,
                         check_members, check_packed, check_schedule, check_seed, check_seeds,
                         check_state,
                         check_training_data, check_training_settings)

__all__ = ["fit", "fit_ensemble", "fit_packed", "predict", "predict_classes"]


def _backend(name: object, net: Network, loss: Loss, optimizer: Optimizer) -> ModuleType:
    """The module that implements backend ``name`` for networks like ``net`` trained on
    ``loss`` by ``optimizer``: the one place a backend is chosen. The compiled one must be
    able to build every activation, the loss and the optimizer from their definitions
    (:func:`tinynet.compiled.kit.check`), or it refuses them by name."""
    if check_backend(name) == "numpy":
        return reference
    kit.check(net, loss, optimizer)
    return compiled.load()


def fit(net: Network, X: object, y: object, *, epochs: int, lr: float, batch_size: int = 1,
        shuffle: bool = True, seed: int | None = None, print_every: int | None = None,
        backend: str = "numba", threshold: float = 0.5, record_every: int | None = 1,
        update: str = "after_backward", loss: str | Loss = "mse",
        optimizer: str | Optimizer = "sgd", test: tuple[object, object] | None = None,
        evaluate_every: int | None = None, warmup: int = 0,
        decay: str = "constant") -> History:
    """Train ``net`` in place on ``loss`` by ``optimizer`` and return its :class:`History`.

    ``loss`` is a name of :data:`tinynet.losses.LOSSES` (``"mse"``, the notes' loss, by
    default) or a :class:`tinynet.losses.Loss`; ``optimizer`` a name of
    :data:`tinynet.optimizers.OPTIMIZERS` (``"sgd"``, the notes' plain SGD, by default) or a
    :class:`tinynet.optimizers.Optimizer` (``Momentum(0.9)``, ``Adam(beta1=0.8)``). An
    optimizer with state (momentum's velocities, Adam's moments) keeps it in
    ``net.optimizer_state``, and a later fit with the same optimizer continues from it.

    ``seed`` fixes the shuffle order (default: the network's seed). ``print_every=k`` prints
    the loss every k epochs. ``record_every=k`` keeps the loss of every k-th epoch (None: none).
    ``threshold`` is the line between the two classes for ``History.last_wrong_epoch``. A NaN or
    infinite loss ends training with ``diverged=True``; it does not raise and does not warn.
    ``update`` is when each layer's W and b take their step: ``"after_backward"`` (the default)
    or ``"during_backward"``, which also changes the gradient passed back (see the module's
    docstring). ``backend`` is ``"numba"`` (compiled, the default) or ``"numpy"`` (the
    reference); both give the same result to rounding.

    ``test=(X_test, y_test)`` and ``evaluate_every=k`` evaluate the network every k epochs
    (default with a test set: once, at the end): its loss and accuracy on the training set
    and on the test set, in ``History.evaluation`` (:mod:`tinynet.evaluation`); the training
    is the same, bit for bit.

    ``warmup=W`` raises the learning rate linearly over the first W steps (one a batch), from
    lr / W to lr; then ``decay`` keeps it (``"constant"``) or lowers it along a half cosine
    towards 0 by the last step (``"cosine"``): :mod:`tinynet.schedules`.

    The run goes in chunks of at most about a second (``FIT_CHUNK_WORK`` in each backend's
    module), the same run bit for bit; a Ctrl-C (KeyboardInterrupt) stops it between two,
    putting the network back as it was before the call.
    """
    check_instance("net", net, Network, "a tinynet Network")
    X, y = check_training_data(X, y, net.n_in, net.n_out, _labels(net))
    epochs, lr, batch_size, shuffle, threshold, every = check_training_settings(
        len(X), epochs, lr, batch_size, shuffle, threshold, record_every)
    during = check_choice("update", update, UPDATES) == "during_backward"
    seed = net.seed if seed is None else check_seed("seed", seed)
    if print_every is not None:
        print_every = check_int("print_every", print_every, minimum=1, maximum=MAX_EPOCHS)
    loss = _checked_loss(loss, net, y)
    optimizer = get_optimizer(optimizer)
    run = _backend(backend, net, loss, optimizer)

    test, evaluate_every = _checked_test(test, evaluate_every, net, epochs, 1)
    evaluation = None if test is None else Evaluation.empty(1, epochs, evaluate_every)

    record = Record.empty(1, epochs, every)
    settings = Settings(0, epochs, lr, batch_size, shuffle, threshold, every, during,
                        *_schedule(warmup, decay, epochs, len(X), batch_size))
    chunk = max(1, run.FIT_CHUNK_WORK // (size(net) * len(X)))  # Ctrl-C: between chunks
    state = state_of(net, optimizer, size(net))  # a copy: net keeps its own until the end
    printed = {part.first_epoch + part.epochs for part in settings.chunks(print_every or epochs)}
    columns = {} if evaluation is None else {int(done): column for column, done
                                             in enumerate(evaluation.epochs)}
    with np.errstate(all="ignore"), _restored_at_interrupt(net, pack(net)):
        for part in settings.chunks(print_every or epochs, evaluate_every or epochs):
            for piece in part.chunks(chunk):
                run.fit_one(net, state, loss, optimizer, X, y, seed, piece, record)
                if record.diverged_epoch[0] >= 0:
                    break
            diverged = record.diverged_epoch[0] >= 0
            done = part.first_epoch + part.epochs
            if done in columns:
                evaluate_into(evaluation, columns[done], _predictor(run, net, loss, optimizer),
                              pack(net)[None], record.diverged_epoch >= 0, loss, (X, y), test,
                              threshold)
            if print_every and (done in printed or diverged):
                last = record.diverged_epoch[0] + 1 if diverged else done
                print(f"epoch {last:>{len(str(epochs))}}/{epochs}  loss "
                      f"{record.final_loss[0]:.6g}{'  (diverged)' if diverged else ''}",
                      file=sys.stdout)
            if diverged:
                break
    keep_state(net, optimizer, state)
    return history(record, 0, epochs, every, threshold, evaluation)


def _checked_test(test: object, evaluate_every: object, like: Network, epochs: int,
                  members: int) -> tuple[tuple[np.ndarray, np.ndarray] | None, int | None]:
    """``test`` as (X_test, y_test) arrays shaped as the training data are (None: no
    evaluation), and how often to evaluate (default with a test set: at the end)."""
    if test is None:
        if evaluate_every is not None:
            raise ValueError(f"evaluate_every={evaluate_every!r} evaluates on a test set; give "
                             "test=(X_test, y_test) as well")
        return None, None
    if not isinstance(test, tuple) or len(test) != 2:
        raise TypeError(f"test must be a tuple (X_test, y_test), got {type(test).__name__}"
                        + (f" of length {len(test)}" if isinstance(test, tuple) else ""))
    X_test, y_test = check_training_data(*test, like.n_in, like.n_out, _labels(like),
                                         suffix="_test")
    every = epochs if evaluate_every is None else \
        check_int("evaluate_every", evaluate_every, minimum=1, maximum=MAX_EPOCHS)
    evaluations = -(-epochs // every)
    check_memory(f"evaluate_every={every} evaluates {evaluations:,} times over {epochs:,} "
                 f"epochs; the scores of {members:,} network{'s' * (members > 1)}",
                 32 * members * evaluations, "pass a larger evaluate_every")
    return (X_test, y_test), every


def _predictor(run: ModuleType, like: Network, loss: Loss,
               optimizer: Optimizer) -> Callable[[np.ndarray, np.ndarray], np.ndarray]:
    """``predict(theta, X)``: the outputs (S, N, n_out) on X of the members whose packed
    parameters are ``theta`` (S, P), by backend ``run``'s forward pass of the training run's
    maths."""
    return lambda theta, X: run.predict_packed(theta, like, loss, optimizer, X)


def _schedule(warmup: object, decay: object, epochs: int, n: int,
              batch_size: int) -> tuple[int, int]:
    """``(warmup, cosine_steps)`` of :class:`~tinynet.results.Settings`, checked
    (:func:`~tinynet.validation.check_schedule`), the warmup no longer than the run."""
    warmup, decay = check_schedule(warmup, decay)
    steps = run_steps(epochs, n, batch_size)
    if warmup > steps:
        raise ValueError(f"warmup must be at most the run's {steps:,} steps ({epochs:,} epochs "
                         f"of {steps // epochs:,} batches), got {warmup:,}: the rate would "
                         "never reach lr")
    return warmup, decay_steps(decay, epochs, n, batch_size, warmup)


def _labels(net: Network) -> bool:
    """Whether a 1-D ``y`` holds class labels for ``net``: its output is a softmax."""
    return net.layers[-1].activation.over_units


def _checked_loss(loss: object, net: Network, y: np.ndarray) -> Loss:
    """The loss named or given, if the network's outputs and the targets ``y`` lie in its
    ``bounds`` (binary cross-entropy: [0, 1], so a sigmoid output and targets in [0, 1]);
    a softmax output takes cross-entropy and cross-entropy a softmax output, with targets
    whose rows sum to 1."""
    loss = get_loss(loss)
    low, high = loss.bounds
    output = net.layers[-1].activation
    check_output(loss, output)
    if loss.through_output(output) == "gradient_through_softmax":
        sums = np.add.accumulate(y, axis=1)[:, -1]
        off = np.flatnonzero(np.abs(sums - 1.0) > 1e-9)
        if off.size:
            raise ValueError(f"loss {loss.name!r} needs each row of y to sum to 1 (a one-hot "
                             f"row, or probabilities: its gradient p - y assumes it), got "
                             f"y[{off[0]}] summing to {float(sums[off[0]]):.6g}")
    if output.bounds[0] < low or output.bounds[1] > high:
        raise ValueError(f"loss {loss.name!r} needs outputs in [{low:g}, {high:g}], but the output "
                         f"layer's activation {output!r} gives values in [{output.bounds[0]:g}, "
                         f"{output.bounds[1]:g}]; use output='sigmoid', or loss='mse'")
    outside = (y < low) | (y > high)
    if outside.any():
        raise ValueError(f"loss {loss.name!r} needs targets y in [{low:g}, {high:g}], got "
                         f"{float(y[outside].flat[0])!r} (y[{np.argwhere(outside)[0][0]}])")
    return loss


@contextmanager
def _restored_at_interrupt(net: Network, before: np.ndarray) -> Iterator[None]:
    """On Ctrl-C (KeyboardInterrupt), put ``net``'s parameters back to ``before`` (its
    optimizer's state is only replaced once a run is done)."""
    try:
        yield
    except KeyboardInterrupt:
        unpack(net, before)
        raise


def fit_ensemble(networks: Sequence[Network], X: object, y: object, *, epochs: int, lr: float,
                 batch_size: int = 1, shuffle: bool = True, seeds: Sequence[int] | None = None,
                 backend: str = "numba", threshold: float = 0.5, record_every: int | None = None,
                 update: str = "after_backward",
                 progress: Callable[[int], None] | None = None,
                 loss: str | Loss = "mse", optimizer: str | Optimizer = "sgd",
                 test: tuple[object, object] | None = None,
                 evaluate_every: int | None = None, warmup: int = 0,
                 decay: str = "constant") -> EnsembleResult:
    """Train every network in ``networks`` (in place), each as :func:`fit` would alone.

    The members share sizes and activations; each keeps its own weights and optimizer state,
    and its shuffle order comes from ``seeds[k]`` (default: its own seed); ``update``,
    ``loss`` and ``optimizer`` are as in :func:`fit`. Member k
    of the result equals what ``fit`` reports for it with the same ``record_every`` and
    ``update`` (``result[k]``); the compiled backend trains it bit for bit as ``fit`` does
    while every matrix product is below :data:`tinynet.compiled.single.BLAS_MIN_WORK`
    multiply-adds (above, ``fit`` calls BLAS and the two agree to rounding). A member that
    diverges ends where its own fit stops.

    ``record_every=k`` keeps every member's loss every k epochs: S · epochs / k floats (8 bytes
    each: 16 MB for 100 members × 20,000 epochs), so it is off by default. ``test`` and
    ``evaluate_every`` evaluate every member as :func:`fit` does (``result.evaluation``).

    The run goes in chunks of epochs (``CHUNK_WORK`` in each backend's module), after
    each of which ``progress(epochs_done)`` is called if given, and a Ctrl-C
    (KeyboardInterrupt) stops it, leaving the networks as they were. A run in chunks is the
    same run, bit for bit.

    Numba trains blocks of networks in SIMD lanes, blocks spread over the CPU cores, on a
    kernel generated for a small layout (:mod:`tinynet.compiled.unrolled`) or the generic one
    (:mod:`tinynet.compiled.lanes`); NumPy all members at once, every array with a leading
    members axis (:mod:`tinynet.reference`). Memory besides the record: O(S · (P + N ·
    (n_in + n_out))) for S members of P parameters on N samples.
    """
    networks = check_members(networks, Network)
    seeds = [net.seed for net in networks] if seeds is None else seeds
    optimizer = get_optimizer(optimizer)
    state = np.stack([state_of(net, optimizer, size(networks[0])) for net in networks])
    run = EnsembleRun.checked(networks[0], len(networks), X, y, epochs, lr, batch_size,
                              shuffle, seeds, backend, threshold, record_every, update,
                              progress, loss, optimizer, test, evaluate_every, warmup, decay)
    theta = stack(networks)
    predictions = run.train(theta, state, networks[0], optimizer, progress)
    for net, row, values in zip(networks, theta, state):
        unpack(net, row)
        keep_state(net, optimizer, values)
    return run.result(predictions)


def fit_packed(like: Network, theta: np.ndarray, X: object, y: object, *, seeds: Sequence[int],
               epochs: int, lr: float, batch_size: int = 1, shuffle: bool = True,
               backend: str = "numba", threshold: float = 0.5, record_every: int | None = None,
               update: str = "after_backward",
               progress: Callable[[int], None] | None = None,
               loss: str | Loss = "mse", optimizer: str | Optimizer = "sgd",
               state: np.ndarray | None = None, test: tuple[object, object] | None = None,
               evaluate_every: int | None = None, warmup: int = 0,
               decay: str = "constant") -> EnsembleResult:
    """:func:`fit_ensemble` on packed parameters: train the members whose parameters are the
    rows of ``theta`` (S, P), float64, in place, without a Network per member.

    ``like`` is a network of the members' shape and activations (its own parameters are not used);
    row k is laid out as ``tinynet.packing.pack`` lays out a network (so
    ``tinynet.packing.draw(like, seeds)`` gives the rows of networks built with ``seeds``), and
    ``seeds[k]`` fixes its shuffle order. ``state`` (S, k, P), float64, is the optimizer's state of
    each member, trained in place too (None: every member starts from 0 and the state is dropped at
    the end); slot i holds ``optimizer.state[i]`` of each parameter. The result is
    :func:`fit_ensemble`'s on those networks, bit for bit. A Ctrl-C between chunks leaves ``theta``
    as it was on the numba backend (which trains a copy), and part-trained on the NumPy one. Memory:
    ``theta`` (8 · P bytes a member), the kernels' copy of it (as many again), the trained outputs
    (8 · N · n_out) and about 40 bytes of results. ``warmup`` and ``decay``: as in :func:`fit`.
    ``test`` and ``evaluate_every``: as in
    :func:`fit`; a Ctrl-C then leaves ``theta`` as it was on both backends.
    """
    check_instance("like", like, Network, "a tinynet Network")
    theta = check_packed("theta", theta, size(like))
    optimizer = get_optimizer(optimizer)
    if state is None:
        state = np.zeros((len(theta), len(optimizer.state), size(like)))
    else:
        state = check_state("state", state, (len(theta), len(optimizer.state), size(like)),
                            f"the state of optimizer {optimizer!r} "
                            f"({', '.join(optimizer.state) or 'none'}) per member")
    run = EnsembleRun.checked(like, len(theta), X, y, epochs, lr, batch_size, shuffle, seeds,
                              backend, threshold, record_every, update, progress, loss,
                              optimizer, test, evaluate_every, warmup, decay)
    if run.evaluation is not None:
        return run.result(run.train(theta, state, like, optimizer, progress))
    with np.errstate(all="ignore"):  # straight to the backend: no frame between a study and
        predictions = run.backend.fit_packed(  # its kernel (tests/test_architecture.py)
            theta, state, like, run.loss, optimizer, run.X, run.y, run.seeds, run.settings,
            run.record, progress)
    return run.result(predictions)


class EnsembleRun(NamedTuple):
    """An ensemble's run as :func:`fit_ensemble` and :func:`fit_packed` hand it to a backend,
    checked (:meth:`checked`, the checks both share): each then calls its backend's entry
    point itself, so that the way from a study to the kernel takes no detour."""

    backend: ModuleType
    loss: Loss
    X: np.ndarray
    y: np.ndarray
    seeds: np.ndarray
    settings: Settings
    record: Record
    test: tuple[np.ndarray, np.ndarray] | None = None
    evaluation: Evaluation | None = None

    @classmethod
    def checked(cls, like: Network, members: int, X: object, y: object, epochs: object,
                lr: object, batch_size: object, shuffle: object, seeds: object, backend: object,
                threshold: object, record_every: object, update: object, progress: object,
                loss: object, optimizer: Optimizer, test: object = None,
                evaluate_every: object = None, warmup: object = 0,
                decay: object = "constant") -> "EnsembleRun":
        """The run of ``members`` networks like ``like``, every setting checked, and an empty
        :class:`~tinynet.results.Record` for it."""
        X, y = check_training_data(X, y, like.n_in, like.n_out, _labels(like))
        epochs, lr, batch_size, shuffle, threshold, every = check_training_settings(
            len(X), epochs, lr, batch_size, shuffle, threshold, record_every, members)
        during = check_choice("update", update, UPDATES) == "during_backward"
        seeds = check_seeds(seeds, members)
        check_callable("progress", progress, "a function of the number of epochs done")
        loss = _checked_loss(loss, like, y)
        test, evaluate_every = _checked_test(test, evaluate_every, like, epochs, members)
        return cls(_backend(backend, like, loss, optimizer), loss, X, y, seeds,
                   Settings(0, epochs, lr, batch_size, shuffle, threshold, every, during,
                            *_schedule(warmup, decay, epochs, len(X), batch_size)),
                   Record.empty(members, epochs, every), test,
                   None if test is None else Evaluation.empty(members, epochs, evaluate_every))

    def train(self, theta: np.ndarray, state: np.ndarray, like: Network, optimizer: Optimizer,
              progress: Callable[[int], None] | None) -> np.ndarray:
        """Train the members whose packed parameters are the rows of ``theta`` (S, P) and
        their optimizer's ``state`` in place on the backend; return their outputs on X. With
        an evaluation, the run goes in parts of ``evaluate_every`` epochs, the members
        evaluated after each (:func:`tinynet.evaluation.evaluate_into`), and a Ctrl-C puts
        ``theta`` and ``state`` back as they were."""
        every = self.settings.epochs if self.evaluation is None else int(self.evaluation.epochs[0])
        predict = _predictor(self.backend, like, self.loss, optimizer)
        before = None if self.evaluation is None else (theta.copy(), state.copy())
        try:
            with np.errstate(all="ignore"):
                for column, part in enumerate(self.settings.chunks(every)):
                    told = None if progress is None else \
                        (lambda done, ran=part.first_epoch: progress(ran + done))
                    predictions = self.backend.fit_packed(
                        theta, state, like, self.loss, optimizer, self.X, self.y, self.seeds,
                        part, self.record, told)
                    diverged = self.record.diverged_epoch >= 0
                    if self.evaluation is not None:
                        evaluate_into(self.evaluation, column, predict, theta, diverged,
                                      self.loss, (self.X, self.y), self.test,
                                      self.settings.threshold)
                    if np.all(diverged):
                        break
        except KeyboardInterrupt:
            if before is not None:
                theta[...], state[...] = before
            raise
        return predictions

    def result(self, predictions: np.ndarray) -> EnsembleResult:
        """What the run reports, once the backend has written its record and returned the
        trained members' ``predictions``."""
        return EnsembleResult(*self.record, predictions=predictions, epochs=self.settings.epochs,
                              record_every=self.settings.record_every,
                              threshold=self.settings.threshold, evaluation=self.evaluation)


def predict(net: Network, X: object, backend: str = "numba") -> np.ndarray:
    """Network output for ``X`` (B, n_in), shape (B, n_out), by ``backend``: ``"numba"``
    (compiled, the default) or ``"numpy"``. Unlike :meth:`Network.forward` it keeps nothing
    for a backward pass."""
    check_instance("net", net, Network, "a tinynet Network")
    X = as_float_matrix("X", X, columns=net.n_in)
    output = net.layers[-1].activation
    if output.over_units and backend != "numpy":  # the kernels know the built-in Softmax alone
        check_output(CrossEntropy(), output)
    run = _backend(backend, net, get_loss("mse"), SGD())  # only its activations count
    with np.errstate(all="ignore"):
        return run.predict(net, X)


def predict_classes(net: Network, X: object, backend: str = "numba") -> np.ndarray:
    """The class each sample of ``X`` (B, n_in) is given, (B,) integers: the most probable
    of a softmax output's classes (the first of equals, as ``argmax``), or for a single
    output, 1 where it is at least 0.5 (a sigmoid's probability of class 1) and 0 elsewhere.
    By :func:`predict` on ``backend``."""
    outputs = predict(net, X, backend)
    if outputs.shape[1] == 1:
        return (outputs[:, 0] >= 0.5).astype(np.int64)
    return np.argmax(outputs, axis=1)
