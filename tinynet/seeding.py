"""``numpy.random.default_rng(seed)`` for many seeds at once, in the same states.

A study draws every member's initial weights from ``default_rng(seed)``. Making a Generator
costs about 15 µs, most of it NumPy's ``SeedSequence`` hashing the seed, one seed at a time in
Python: for a million seeds that is longer than training them for an epoch. Here the hash runs
for all seeds at once, as NumPy array arithmetic, and one Generator is set to each seed's
state in turn (about 3 µs a seed). The states are NumPy's, bit for bit, for every seed from 0
to 2**63 − 1 (``tests/test_scale.py`` compares them with ``default_rng``'s).

The two steps, as NumPy does them (``numpy/random/bit_generator.pyx``, ``_pcg64.pyx``):

1. ``SeedSequence(seed)``: the seed's 32-bit words (low word first) fill a pool of 4 words,
   each hashed, then every word is mixed into every other; ``generate_state(4, uint64)``
   hashes the pool, cycled, into 8 words, read as 4 64-bit words v0..v3.
2. ``PCG64``: initstate = v0·2⁶⁴ + v1, inc = (v2·2⁶⁴ + v3)·2 + 1; the state starts at 0 and
   steps ``state = state·M + inc`` (mod 2¹²⁸) once, takes ``+ initstate``, and steps again.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import numpy as np

from .validation import check_seeds

__all__ = ["generators", "pcg64_states"]

_INIT_A, _MULT_A = 0x43B0D7E5, 0x931E8875
_INIT_B, _MULT_B = 0x8B51F9DD, 0x58F38DED
_MIX_MULT_L, _MIX_MULT_R = 0xCA01F9DD, 0x4973F715
_XSHIFT = 16
_POOL = 4
_MASK32 = 0xFFFFFFFF
_PCG_MULT = (2549297995355413924 << 64) + 4865540595714422341
_MASK128 = (1 << 128) - 1


def _hash_constants(start: int, multiplier: int, count: int) -> list[np.uint32]:
    """The hash constant before each of ``count`` hashes: it starts at ``start`` and is
    multiplied by ``multiplier`` (mod 2³²) at each."""
    constants = []
    for _ in range(count):
        constants.append(start)
        start = (start * multiplier) & _MASK32
    return [np.uint32(c) for c in constants]


def _hashmix(value: np.ndarray, constant: np.uint32, multiplier: int) -> np.ndarray:
    """One hash of NumPy's: xor with the constant before it, multiply by the one after it
    (``constant · multiplier``), xor-shift."""
    value = value ^ constant
    value = value * np.uint32((int(constant) * multiplier) & _MASK32)
    return value ^ (value >> np.uint32(_XSHIFT))


def _mix(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    result = np.uint32(_MIX_MULT_L) * x - np.uint32(_MIX_MULT_R) * y
    return result ^ (result >> np.uint32(_XSHIFT))


def _pools(seeds: np.ndarray) -> list[np.ndarray]:
    """``SeedSequence(seed).pool`` for every seed: 4 words, each (S,) uint32."""
    words = [(seeds & _MASK32).astype(np.uint32), (seeds >> 32).astype(np.uint32)]
    words += [np.zeros_like(words[0])] * (_POOL - 2)  # a seed below 2**32 pads with 0 too
    constants = iter(_hash_constants(_INIT_A, _MULT_A, _POOL + _POOL * (_POOL - 1)))
    pool = [_hashmix(word, next(constants), _MULT_A) for word in words]
    for source in range(_POOL):
        for target in range(_POOL):
            if source != target:
                pool[target] = _mix(pool[target],
                                    _hashmix(pool[source], next(constants), _MULT_A))
    return pool


def _generated_state(pool: list[np.ndarray]) -> np.ndarray:
    """``generate_state(4, np.uint64)`` for every seed's pool: (S, 4) uint64."""
    words = [_hashmix(pool[index % _POOL], constant, _MULT_B)
             for index, constant in enumerate(_hash_constants(_INIT_B, _MULT_B, 2 * 4))]
    low, high = np.stack(words[0::2], axis=1), np.stack(words[1::2], axis=1)
    return low.astype(np.uint64) | (high.astype(np.uint64) << np.uint64(32))


def pcg64_states(seeds: Sequence[int]) -> Iterator[tuple[int, int]]:
    """``(state, inc)`` of ``numpy.random.PCG64(seed)`` for every seed (each from 0 to
    2**63 − 1), as Python ints: what ``PCG64(seed).state["state"]`` holds. Hashed
    :data:`CHUNK` seeds at a time, so memory stays flat however many seeds there are."""
    seeds = check_seeds(seeds, len(seeds))
    for start in range(0, len(seeds), CHUNK):
        chunk = seeds[start:start + CHUNK].astype(np.uint64)
        with np.errstate(over="ignore"):
            values = _generated_state(_pools(chunk)).tolist()
        for v0, v1, v2, v3 in values:
            inc = (((v2 << 64) | v3) << 1 | 1) & _MASK128
            state = (inc + ((v0 << 64) | v1)) & _MASK128  # 0·M + inc, plus initstate
            yield (state * _PCG_MULT + inc) & _MASK128, inc


CHUNK = 1 << 12
"""Seeds hashed at once by :func:`pcg64_states`: 4,096 (under a megabyte of arrays and ints)."""


def generators(seeds: Sequence[int]) -> Iterator[np.random.Generator]:
    """For each seed in turn, a Generator in the state ``numpy.random.default_rng(seed)``
    starts in. It is one Generator, set to each seed's state as the next is asked for: use
    it before asking for the next."""
    bit_generator = np.random.PCG64(0)
    generator = np.random.Generator(bit_generator)
    for state, inc in pcg64_states(seeds):
        bit_generator.state = {"bit_generator": "PCG64", "state": {"state": state, "inc": inc},
                               "has_uint32": 0, "uinteger": 0}
        yield generator
