"""Epoch orders in compiled code: :func:`tinynet.shuffle.epoch_order`, the same hash and the
same sort, so every backend visits the samples in the same order for the same (seed, epoch)."""

from __future__ import annotations

import numba
import numpy as np
from numba import njit

from .. import shuffle

__all__ = ["splitmix64", "epoch_order_into"]

if numba.config.DISABLE_JIT:
    def splitmix64(x):
        """:func:`tinynet.shuffle.splitmix64` as plain Python: NumPy would warn about the uint64
        wrap-around that the hash is built on, so it is silenced here."""
        with np.errstate(over="ignore"):
            return shuffle.splitmix64(x)
else:
    splitmix64 = njit(cache=True, error_model="numpy")(shuffle.splitmix64)  # the NumPy path's


@njit(cache=True, error_model="numpy")
def epoch_order_into(seed, epoch, keys, order):
    """Write :func:`tinynet.shuffle.epoch_order` (seed, epoch, n = len(order)) into ``order``,
    using ``keys`` (n,) uint64 as scratch."""
    base = splitmix64(splitmix64(np.uint64(seed)) + np.uint64(epoch))
    for i in range(keys.size):
        keys[i] = splitmix64(base + np.uint64(i))
    order[:] = np.argsort(keys, kind="mergesort")
