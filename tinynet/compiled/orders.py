"""Epoch orders in compiled code: :func:`tinynet.shuffle.epoch_order`, the same hash, the same
keys and the same sort, so every backend visits the samples in the same order for the same
(seed, epoch)."""

from __future__ import annotations

import numba
import numpy as np
from numba import njit

from .. import shuffle
from .target import prefer_wide_vectors

prefer_wide_vectors()  # before anything is compiled

__all__ = ["splitmix64", "sort_key", "epoch_order_into"]

if numba.config.DISABLE_JIT:
    def splitmix64(x):
        """:func:`tinynet.shuffle.splitmix64` as plain Python: NumPy would warn about the uint64
        wrap-around that the hash is built on, so it is silenced here."""
        with np.errstate(over="ignore"):
            return shuffle.splitmix64(x)
else:
    splitmix64 = njit(cache=True, error_model="numpy")(shuffle.splitmix64)  # the NumPy path's


@njit(cache=True, error_model="numpy", inline="always")
def sort_key(base, i):
    """Sample i's key in the epoch whose stream starts at ``base`` = h(h(seed) + epoch):
    (w_i << 32) + i, with w_i the i-th 32-bit word of base, h(base + 1), h(base + 2), ...
    (high half first), as :mod:`tinynet.shuffle` defines it."""
    pair = np.uint64(i >> 1)
    hashed = base if pair == 0 else splitmix64(base + pair)
    word = hashed >> np.uint64(32) if i & 1 == 0 else hashed & np.uint64(0xFFFFFFFF)
    return (word << np.uint64(32)) + np.uint64(i)


@njit(cache=True, error_model="numpy")
def epoch_order_into(seed, epoch, keys, order):
    """Write :func:`tinynet.shuffle.epoch_order` (seed, epoch, n = len(order)) into ``order``,
    using ``keys`` (n,) uint64 as scratch."""
    base = splitmix64(splitmix64(np.uint64(seed)) + np.uint64(epoch))
    for i in range(keys.size):
        keys[i] = sort_key(base, i)
    order[:] = np.argsort(keys)
