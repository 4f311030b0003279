"""How many networks the generic ensemble kernel trains side by side, in a module of its own
so that the seed blocks of :mod:`tinynet.xor.blocks` can be sized without importing Numba."""

__all__ = ["LANES"]

LANES = 64
"""Networks per block of :mod:`tinynet.compiled.lanes`: two AVX-512 registers of float64, or
four AVX2 ones."""
