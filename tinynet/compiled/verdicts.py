"""An epoch's verdicts compiled: :func:`tinynet.verdicts.wrong_side` (an output on the wrong
side of the threshold), :func:`tinynet.verdicts.diverged` of the summed
:func:`tinynet.verdicts.finite_mark` (a loss or parameter NaN or ±inf), and
:func:`tinynet.verdicts.history_slot` (where the epoch's loss goes in the history).

They are not written here: these are the functions the NumPy backend runs on arrays, compiled
by numba for the scalars of every kernel (generated ones import them by these names) and
inlined where they are called.
"""

from __future__ import annotations

from numba import njit

from .. import verdicts

__all__ = ["wrong_side", "finite_mark", "diverged", "history_slot"]

wrong_side = njit(error_model="numpy", inline="always")(verdicts.wrong_side)
finite_mark = njit(error_model="numpy", inline="always")(verdicts.finite_mark)
diverged = njit(error_model="numpy", inline="always")(verdicts.diverged)
history_slot = njit(error_model="numpy", inline="always")(verdicts.history_slot)
