"""Training by stochastic gradient descent, one (mini)batch at a time, on the MSE loss.

Each epoch visits every sample once, in the order :func:`tinynet.shuffle.epoch_order` gives for
``(seed, epoch)`` when shuffling, and in data order otherwise. For every batch of
``batch_size`` samples (the last one may be smaller)::

    Y_hat = net.forward(X[batch])
    net.backward(dL/dY_hat)              # fills each layer's dW, db
    W -= lr · dW,   b -= lr · db         # the SGD step, every layer

``batch_size=1`` (the default) is per-sample SGD with an update after every sample, as in 99mlp.
"""

from __future__ import annotations

import math
import sys
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from . import packing
from .errors import (ShapeError, UnknownNameError, as_float_matrix, check_float, check_int,
                     check_seed)
from .losses import mse_gradient
from .shuffle import epoch_order

if TYPE_CHECKING:
    from .network import Network

__all__ = ["History", "fit", "check_training_data", "check_training_settings",
           "check_backend", "BACKENDS"]


@dataclass(eq=False)
class History:
    """What :func:`fit` reports.

    ``loss[e]`` is epoch ``e``'s loss: the mean over samples of Σ_k (ŷ_k − y_k)², each sample's
    prediction taken when training visited it (before its update), as Keras reports it.
    ``diverged`` is True when the loss or a parameter became NaN or infinite; training then
    stops, and ``loss`` ends with the epoch where that happened.
    """

    loss: np.ndarray = field(default_factory=lambda: np.zeros(0))
    diverged: bool = False

    @property
    def epochs(self) -> int:
        """How many epochs ran."""
        return len(self.loss)

    def __repr__(self) -> str:
        final = f"{self.loss[-1]:.6g}" if len(self.loss) else "n/a"
        return f"History(epochs={self.epochs}, final_loss={final}, diverged={self.diverged})"


def check_training_data(net: "Network", X: object, y: object) -> tuple[np.ndarray, np.ndarray]:
    """Return X (B, n_in) and y (B, n_out) as float64, or raise naming what does not fit.

    A 1-D ``y`` is taken as one target per sample when the network has a single output.
    """
    X = as_float_matrix("X", X, columns=net.n_in)
    y_array = np.asarray(y)
    given_shape = y_array.shape
    if y_array.ndim == 1 and net.n_out == 1 and y_array.dtype.kind in "biuf":
        y_array = y_array.reshape(-1, 1)
    y = as_float_matrix("y", y_array, columns=net.n_out)
    if len(X) != len(y):
        raise ShapeError(f"X and y must have the same number of samples, got X {X.shape} "
                         f"and y {given_shape}")
    return X, y


def check_training_settings(samples: int, epochs: object, lr: object, batch_size: object,
                            shuffle: object) -> tuple[int, float, int, bool]:
    """Return (epochs, lr, batch_size, shuffle) checked: epochs >= 1, lr > 0 and finite,
    1 <= batch_size <= samples, shuffle a bool."""
    epochs = check_int("epochs", epochs, minimum=1)
    lr = check_float("lr", lr, minimum=0.0, inclusive=False)
    batch_size = check_int("batch_size", batch_size, minimum=1)
    if batch_size > samples:
        raise ValueError(f"batch_size must be at most the number of samples ({samples}), "
                         f"got {batch_size}")
    if not isinstance(shuffle, (bool, np.bool_)):
        raise TypeError(f"shuffle must be True or False, got {shuffle!r}")
    return epochs, lr, batch_size, bool(shuffle)


BACKENDS = ("numba", "numpy")
"""``numpy``: the readable reference loop below. ``numba``: the same arithmetic, the whole run
in one compiled call (:func:`tinynet.kernels.fit_network`)."""


def check_backend(backend: object) -> str:
    """Return ``backend`` if it is one of :data:`BACKENDS`."""
    if backend not in BACKENDS:
        raise UnknownNameError("backend", backend, BACKENDS)
    return str(backend)


def fit(net: "Network", X: object, y: object, *, epochs: int, lr: float, batch_size: int = 1,
        shuffle: bool = True, seed: int | None = None, print_every: int | None = None,
        backend: str = "numba") -> History:
    """Train ``net`` in place by SGD on the MSE loss and return its :class:`History`.

    ``seed`` fixes the shuffle order (default: the network's seed). ``print_every=k`` prints
    the loss every k epochs. A NaN or infinite loss ends training with ``diverged=True``; it
    does not raise and does not warn. ``backend`` is ``"numba"`` (compiled, the default) or
    ``"numpy"`` (the reference); both give the same result to rounding.
    """
    X, y = check_training_data(net, X, y)
    epochs, lr, batch_size, shuffle = check_training_settings(len(X), epochs, lr, batch_size,
                                                              shuffle)
    seed = net.seed if seed is None else check_seed("seed", seed)
    if print_every is not None:
        print_every = check_int("print_every", print_every, minimum=1)
    run_epochs = _run_numpy if check_backend(backend) == "numpy" else _run_numba

    losses = np.empty(epochs)
    chunk = print_every or epochs
    with np.errstate(over="ignore", invalid="ignore", divide="ignore", under="ignore"):
        for first in range(0, epochs, chunk):
            part = losses[first:first + chunk]
            ran = run_epochs(net, X, y, first, part, lr, batch_size, shuffle, seed)
            if ran < len(part):
                return History(loss=losses[:first + ran].copy(), diverged=True)
            if print_every:
                print(f"epoch {first + len(part):>{len(str(epochs))}}/{epochs}  "
                      f"loss {part[-1]:.6g}", file=sys.stdout)
    return History(loss=losses, diverged=False)


def _run_numpy(net: "Network", X: np.ndarray, y: np.ndarray, first_epoch: int,
               losses: np.ndarray, lr: float, batch_size: int, shuffle: bool, seed: int) -> int:
    """The reference loop: epochs first_epoch, first_epoch + 1, ..., one per entry of
    ``losses``. Returns how many ran (fewer if the loss or a parameter stopped being finite)."""
    n = len(X)
    params, grads = net.parameters(), net.gradients()
    for run in range(len(losses)):
        order = epoch_order(seed, first_epoch + run, n) if shuffle else np.arange(n)
        total = 0.0
        for start in range(0, n, batch_size):
            batch = order[start:start + batch_size]
            y_batch = y[batch]
            y_hat = net.forward_unchecked(X[batch])
            diff = y_hat - y_batch
            total += float(np.sum(diff * diff))
            net.backward(mse_gradient(y_hat, y_batch))
            for param, grad in zip(params, grads):
                param -= lr * grad
        losses[run] = total / n
        if not math.isfinite(losses[run]) or not all(np.all(np.isfinite(p)) for p in params):
            return run + 1
    return len(losses)


def _run_numba(net: "Network", X: np.ndarray, y: np.ndarray, first_epoch: int,
               losses: np.ndarray, lr: float, batch_size: int, shuffle: bool, seed: int) -> int:
    """As :func:`_run_numpy`, all epochs in one compiled call."""
    theta = packing.pack(net)
    codes, alphas = packing.activations(net)
    kernels = packing.compiled("kernels")
    ran = kernels.fit_network(theta, packing.layout(net), codes, alphas, X, y, first_epoch, lr,
                              batch_size, shuffle, seed, losses)
    packing.unpack(net, theta)
    return ran
