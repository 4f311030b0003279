"""The learning rate step by step: a linear warmup, then constant or a cosine decay.

For optimizer step t (0, 1, 2, ... counted over the whole run, one a batch), a base rate lr,
a warmup of W steps and a run of T steps::

    lr_t = lr · (t + 1) / W                               t < W       warmup
    lr_t = lr                                             t >= W      decay="constant"
    lr_t = lr · ½ (1 + cos(π (t − W) / (T − W)))           t >= W      decay="cosine"

So the warmup's first step takes lr / W and its last the whole lr (Goyal et al. 2017; the
Transformer's warmup, Vaswani et al. 2017, then decays as 1/√t, which is not here), and the
cosine (Loshchilov & Hutter 2017, without restarts) falls from lr towards 0 over the rest of
the run. With no warmup and no decay lr_t is lr itself, the same float: a run without a
schedule trains bit for bit as before there was one.

One definition: the NumPy backend calls :func:`learning_rate` of :func:`step_at` per batch,
and every compiled kernel calls the same functions compiled by numba
(:mod:`tinynet.compiled.schedules`), where its batch loop starts a batch. PyTorch's
``LambdaLR`` with ``lr_lambda=lambda t: learning_rate(1.0, t, W, C)``, C = T − W for the
cosine (0 for a constant rate: :func:`decay_steps`), multiplies its base rate by the same
factor. The module imports nothing but :mod:`math`, so that the kernels' cache key needs only
this file.
"""

from __future__ import annotations

import math

__all__ = ["DECAYS", "learning_rate", "step_at", "run_steps", "decay_steps"]

DECAYS = ("constant", "cosine")
"""What the rate does after the warmup: stays at lr, or falls along a half cosine."""


def learning_rate(lr: float, step: int, warmup: int, cosine_steps: int) -> float:
    """lr_t for optimizer step ``step`` (from 0): the warmup's ramp for its first ``warmup``
    steps, then lr, or the cosine over ``cosine_steps`` steps (0: no decay)."""
    if step < warmup:
        return lr * ((step + 1) / warmup)
    if cosine_steps > 0:
        return lr * (0.5 * (1.0 + math.cos(math.pi * ((step - warmup) / cosine_steps))))
    return lr


def step_at(settings: object, n: int, epoch: int, start: int) -> int:
    """The run's step count t at the batch that starts at sample ``start`` of epoch ``epoch``,
    batches of ``settings.batch_size`` of ``n`` samples (``settings``:
    :class:`tinynet.results.Settings`); its rate is :func:`learning_rate` of it."""
    batch_size = settings.batch_size
    return epoch * ((n + batch_size - 1) // batch_size) + start // batch_size


def run_steps(epochs: int, n: int, batch_size: int) -> int:
    """T, the steps of a run of ``epochs`` epochs of ``n`` samples in batches of
    ``batch_size`` (the last batch of an epoch may be smaller)."""
    return epochs * ((n + batch_size - 1) // batch_size)


def decay_steps(decay: str, epochs: int, n: int, batch_size: int, warmup: int) -> int:
    """``Settings.cosine_steps`` for a run of ``epochs`` epochs of ``n`` samples: T − W for a
    cosine (at least 1), 0 for a constant rate."""
    if decay == "constant":
        return 0
    return max(1, run_steps(epochs, n, batch_size) - warmup)
