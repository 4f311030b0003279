"""Epoch orders in compiled code: :func:`tinynet.shuffle.epoch_order`, the same hash and the
same keys, all distinct (so any sort ranks them alike): every backend visits the samples in
the same order for the same (seed, epoch)."""

from __future__ import annotations

import numba
import numpy as np
from numba import njit

from .. import shuffle
from .target import prefer_wide_vectors

prefer_wide_vectors()  # before anything is compiled

__all__ = ["splitmix64", "pair_hash", "high_key", "low_key", "epoch_order_into"]

if numba.config.DISABLE_JIT:
    def splitmix64(x):
        """:func:`tinynet.shuffle.splitmix64` as plain Python: NumPy would warn about the uint64
        wrap-around that the hash is built on, so it is silenced here."""
        with np.errstate(over="ignore"):
            return shuffle.splitmix64(x)
else:
    splitmix64 = njit(cache=True, error_model="numpy")(shuffle.splitmix64)  # the NumPy path's


_HIGH = np.uint64(0xFFFFFFFF00000000)
_32 = np.uint64(32)


@njit(cache=True, error_model="numpy", inline="always")
def pair_hash(base, pair):
    """The hash that holds the words of samples 2·pair (its high half) and 2·pair + 1 (its low
    half) in the epoch whose stream starts at ``base`` = h(h(seed) + epoch): base itself for
    pair 0, else h(base + pair), as :mod:`tinynet.shuffle` defines it. Sample i's key is
    (w_i << 32) + i."""
    return base if pair == 0 else splitmix64(base + np.uint64(pair))


@njit(cache=True, error_model="numpy", inline="always")
def high_key(hashed, i):
    """The key of the even sample ``i`` of a pair, from the pair's hash."""
    return (hashed & _HIGH) + np.uint64(i)


@njit(cache=True, error_model="numpy", inline="always")
def low_key(hashed, i):
    """The key of the odd sample ``i`` of a pair, from the pair's hash."""
    return (hashed << _32) + np.uint64(i)


@njit(cache=True, error_model="numpy")
def epoch_order_into(seed, epoch, keys, order):
    """Write :func:`tinynet.shuffle.epoch_order` (seed, epoch, n = len(order)) into ``order``,
    using ``keys`` (n,) uint64 as scratch: one hash for each pair of samples."""
    base = splitmix64(splitmix64(np.uint64(seed)) + np.uint64(epoch))
    n = keys.size
    for pair in range((n + 1) // 2):
        hashed = pair_hash(base, pair)
        keys[2 * pair] = high_key(hashed, 2 * pair)
        if 2 * pair + 1 < n:
            keys[2 * pair + 1] = low_key(hashed, 2 * pair + 1)
    order[:] = np.argsort(keys)
