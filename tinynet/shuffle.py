"""Epoch orders: the sample order of each training epoch as a pure function of (seed, epoch).

Shuffling with a stateful generator would tie an epoch's order to everything drawn before it.
Here epoch ``e`` of seed ``seed`` draws a stream of 32-bit words from ``h``, the SplitMix64
hash, with wrapping 64-bit arithmetic: ``base = h(h(seed) + e)``, then ``h(base + 1)``,
``h(base + 2)``, ..., each giving two words, its high half first. Sample ``i`` gets the key
``(w_i << 32) + i``, with ``w_i`` the i-th word, and the epoch visits samples in increasing key
order: a random sort, ties (equal words) broken by the sample's index, and every key distinct.

The order is uniform over permutations up to those ties: two of n words are equal with
probability below n(n − 1)/2^33 (1.4e-9 for XOR's four samples), which no test can see (the
chi-squared tests in ``tests/test_shuffle.py``). An epoch costs ⌈n/2⌉ hashes: two for XOR,
where one hash per sample and one for the epoch cost five. It needs no stored tables, and any
backend (NumPy, a Numba kernel, a seed ensemble) computes exactly the same order from the
same two integers.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator

import numpy as np

__all__ = ["splitmix64", "epoch_keys", "epoch_order", "epoch_orders", "orders_from"]

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_MUL1 = np.uint64(0xBF58476D1CE4E5B9)
_MUL2 = np.uint64(0x94D049BB133111EB)
_S30, _S27, _S31 = np.uint64(30), np.uint64(27), np.uint64(31)
_S32 = np.uint64(32)
_LOW32 = np.uint64(0xFFFFFFFF)


def splitmix64(x: np.ndarray) -> np.ndarray:
    """SplitMix64's finaliser (Steele, Lea & Flood 2014): a bijective 64-bit hash.

    Works on uint64 arrays (wrapping arithmetic) and, unchanged, on uint64 scalars in Numba.
    """
    z = x + _GOLDEN
    z = (z ^ (z >> _S30)) * _MUL1
    z = (z ^ (z >> _S27)) * _MUL2
    return z ^ (z >> _S31)


def epoch_keys(seeds: np.ndarray, epoch: int, n: int) -> np.ndarray:
    """The uint64 sort keys (S, n) of epoch ``epoch`` for each of the S ``seeds``."""
    return _keys(seeds, np.array([epoch], dtype=np.uint64), n)[0]


def _keys(seeds: np.ndarray, epochs: np.ndarray, n: int) -> np.ndarray:
    """The keys (E, S, n) of each of the E ``epochs`` (uint64) for each of the S ``seeds``."""
    hashed = splitmix64(np.asarray(seeds, dtype=np.uint64).reshape(1, -1, 1))
    base = splitmix64(hashed + epochs.reshape(-1, 1, 1))          # (E, S, 1)
    pairs = np.arange(1, (n + 1) // 2, dtype=np.uint64)
    hashes = np.concatenate([base, splitmix64(base + pairs)], axis=2)
    words = np.stack([hashes >> _S32, hashes & _LOW32], axis=3).reshape(*base.shape[:2], -1)
    return (words[..., :n] << _S32) + np.arange(n, dtype=np.uint64)


def epoch_orders(seeds: np.ndarray, epoch: int, n: int) -> np.ndarray:
    """Row s: the order (a permutation of ``range(n)``) of epoch ``epoch`` under ``seeds[s]``."""
    return np.argsort(epoch_keys(seeds, epoch, n), axis=1)  # distinct keys: any sort agrees


def epoch_order(seed: int, epoch: int, n: int) -> np.ndarray:
    """The order (a permutation of ``range(n)``, int64) in which epoch ``epoch`` visits samples."""
    return epoch_orders(np.array([seed]), epoch, n)[0]


ORDER_BLOCK_KEYS = 1 << 16
""":func:`orders_from` draws as many epochs at once as fit in this many keys (512 kB), at
most 64: for 100 XOR seeds, 64 epochs in one set of NumPy calls instead of 64 sets."""


def orders_from(seeds: np.ndarray, first_epoch: int, n: int) -> Iterator[np.ndarray]:
    """``epoch_orders(seeds, e, n)`` for e = first_epoch, first_epoch + 1, ... without end,
    drawn a block of epochs at a time (:data:`ORDER_BLOCK_KEYS`)."""
    seeds = np.asarray(seeds, dtype=np.uint64)
    block = max(1, min(64, ORDER_BLOCK_KEYS // (seeds.size * n)))
    for first in itertools.count(first_epoch, block):
        epochs = np.arange(first, first + block, dtype=np.uint64)
        yield from np.argsort(_keys(seeds, epochs, n), axis=2)
