"""The learning-rate schedule compiled: :func:`tinynet.schedules.learning_rate` and
:func:`tinynet.schedules.step_at`, the functions the NumPy backend calls, compiled by numba
for every kernel's batch loop (:meth:`tinynet.compiled.epochs.Epochs.batch_loop`) and inlined
where they are called. Not written here."""

from __future__ import annotations

from numba import njit

from .. import schedules

__all__ = ["learning_rate", "step_at"]

learning_rate = njit(error_model="numpy", inline="always")(schedules.learning_rate)
step_at = njit(error_model="numpy", inline="always")(schedules.step_at)
