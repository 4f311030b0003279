"""Finite differences and how far apart two numbers are: the measures
:func:`tinynet.check` holds a definition to (:mod:`tinynet.definitions`).

A derivative is held to central differences of the value it differentiates, at a step
:data:`H`, within :data:`RTOL` beyond the differences' own estimated error
(:func:`differences`, :func:`compare`); the compiled backend's values to NumPy's within
:data:`ULPS` units in the last place (:func:`ulps_apart`).
"""

from __future__ import annotations

import numpy as np

from .validation import DefinitionError

__all__ = ["U", "H", "RTOL", "ULPS", "KINK", "Calls", "returned", "finite", "differences",
           "compare", "at", "ulps_apart"]

U = float(np.finfo(np.float64).eps)  # 2.2e-16, one ulp of 1

H = 1e-5
"""The central differences' step. Their error at a smooth point is truncation, h²|φ'''|/6,
plus rounding, about u |φ| / h (two values of φ, each off by an ulp or so, subtracted and
divided by 2h): least near h = (3u |φ| / |φ'''|)^(1/3), about 1e-5 for |φ| ≈ |φ'''|. At
h = 1e-5 both are near 1e-11 relative for the built-in definitions."""

RTOL = 1e-6
"""The relative error a derivative may have beyond its central difference's estimated error
(:func:`differences`): room for its own rounding (a few ulp) and what the estimate misses.
A wrong derivative (a factor missing, the wrong form) is off by far more."""

ULPS = 4
"""How far the compiled backend's values may be from NumPy's: its exp, log and log1p are
within 1 ulp of the exact value, as NumPy's are, so the two differ by an ulp or two after the
operations that follow (measured: 1 on the built-in definitions). Where a result is a small
difference of larger values (tanh's 1 − t², t ≈ 1) that ulp of t is many of the result's:
there the bound is ULPS ulp of the largest value the definition holds (its arguments and
locals, :func:`_compiled`)."""

KINK = 1e-3
"""A point is a kink when its one-sided differences disagree by more than this, relative to
the larger (plus their rounding error): at a smooth point they differ by about h |φ''|, 1e-5
|φ''| at h = 1e-5; across a kink by the jump in slope."""



# What NumPy computed, for the compiled backend to compute again: (method, arguments, results,
# the arguments' values, NumPy's results), flat arrays
Calls = list[tuple[str, int, int, tuple[np.ndarray, ...], tuple[np.ndarray, ...]]]


def returned(result: object, names: tuple[str, ...], shape: tuple[int, ...], where: str,
              what: str) -> tuple[np.ndarray, ...]:
    """``result`` as one float64 array of ``shape`` per name, or the refusal: not that many
    values, or a value not real or not broadcastable to ``shape``."""
    values = result if type(result) is tuple else (result,)
    if len(values) != len(names):
        shapes = ", ".join(f"shape {np.shape(value)}" for value in values[:4])
        raise DefinitionError(f"{where}: {what} must return {len(names)} value(s) "
                              f"({', '.join(names)}), got {len(values)} ({shapes})")
    arrays = []
    for index, value in enumerate(values):
        array = np.asarray(value)
        if array.dtype.kind not in "fiu":
            raise DefinitionError(f"{where}: {what}'s value {index + 1} must be real numbers, "
                                  f"got dtype {array.dtype}")
        try:
            array = np.broadcast_to(array, shape).astype(np.float64)
        except ValueError:
            raise DefinitionError(f"{where}: {what}'s value {index + 1} has shape "
                                  f"{array.shape}, which does not broadcast to its arguments' "
                                  f"shape {shape}") from None
        arrays.append(array)
    return tuple(arrays)


def finite(where: str, what: str, points: dict[str, np.ndarray],
            values: tuple[np.ndarray, ...]) -> None:
    """Refuse the first point at which a value is not finite."""
    for index, value in enumerate(values):
        bad = np.flatnonzero(~np.isfinite(value))
        if bad.size:
            raise DefinitionError(f"{where}: {what}'s value {index + 1} is "
                                  f"{float(value[bad[0]])!r} at {at(points, bad[0])}: it must "
                                  "stay finite")


def differences(f, x: np.ndarray, h: np.ndarray) -> dict[str, np.ndarray]:
    """Finite differences of ``f`` at ``x``, each over the step actually taken (x ± h
    rounds)::

        central = (f(x+h) − f(x−h)) / 2h          left = (f(x) − f(x−h)) / h
        wide = (f(x+2h) − f(x−2h)) / 4h           right = (f(x+h) − f(x)) / h

    with ``own``, central's estimated error: rounding, noise = 2U (|f(x+h)| + |f(x−h)|) / 2h
    (each value of f within 2 ulp), plus truncation, h² |f'''| / 6, which |wide − central|
    bounds three times over (wide's is four times central's: Richardson); and ``kink``, True
    where left and right disagree by more than :data:`KINK` relative (plus 4 noise): the step
    straddles a kink, and central averages two slopes."""
    up, down, far_up, far_down = x + h, x - h, x + 2 * h, x - 2 * h
    f_up, f_down, f_at = f(up), f(down), f(x)
    central = (f_up - f_down) / (up - down)
    wide = (f(far_up) - f(far_down)) / (far_up - far_down)
    left, right = (f_at - f_down) / (x - down), (f_up - f_at) / (up - x)
    noise = 2 * U * (np.abs(f_up) + np.abs(f_down)) / (up - down)
    return {"central": central, "left": left, "right": right, "noise": noise,
            "own": noise + np.abs(wide - central),
            "kink": np.abs(right - left) > KINK * np.maximum(np.abs(left), np.abs(right))
            + 4 * noise}


def compare(where: str, method: str, points: dict[str, np.ndarray], slope: np.ndarray,
             d: dict[str, np.ndarray], what: str) -> float:
    """Hold ``slope`` to the differences ``d`` in the first of ``points`` (at smooth points to
    the central one, at kinks between the one-sided ones); return the worst relative error
    where the central difference resolves it (its own estimated error is at most RTOL
    |slope|: not in a tail where φ' is below its rounding, 1e-304 against 0)."""
    kink = d["kink"]
    error = np.abs(slope - d["central"])
    tolerance = RTOL * np.abs(slope) + d["own"]
    wrong = ~kink & (error > tolerance)
    low = np.minimum(d["left"], d["right"])
    high = np.maximum(d["left"], d["right"])
    margin = KINK * np.maximum(np.abs(low), np.abs(high)) + 2 * d["noise"]
    wrong_at_kink = kink & ((slope < low - margin) | (slope > high + margin))
    if wrong.any():
        i = np.flatnonzero(wrong)[np.argmax((error / tolerance)[wrong])]
        relative = error[i] / max(abs(slope[i]), abs(d["central"][i]))
        raise DefinitionError(
            f"{where}: {method}'s {what} is {slope[i]:.17g} at {at(points, i)}, "
            f"but central differences give {d['central'][i]:.17g} (h = {H:g}): relative "
            f"error {relative:.3g}, tolerance {tolerance[i] / abs(slope[i] or 1):.3g}")
    if wrong_at_kink.any():
        i = np.flatnonzero(wrong_at_kink)[0]
        raise DefinitionError(
            f"{where}: {method}'s {what} is {slope[i]:.17g} at {at(points, i)}, a "
            f"kink (one-sided differences {d['left'][i]:.6g} and {d['right'][i]:.6g}): it "
            "must lie between them")
    resolved = ~kink & (d["own"] <= RTOL * np.abs(slope))
    scale = np.maximum(np.abs(slope), np.abs(d["central"]))[resolved]
    ratios = np.divide(error[resolved], scale, out=np.zeros_like(scale), where=scale > 0)
    return float(ratios.max(initial=0.0))


def at(points: dict[str, np.ndarray], i: int) -> str:
    """``z = 0.5`` or ``y_hat = 0.3, y = 1.0``: point ``i``."""
    return ", ".join(f"{name} = {float(values[i])!r}" for name, values in points.items())


def ulps_apart(a: np.ndarray, b: np.ndarray, scale: np.ndarray) -> np.ndarray:
    """|a − b| in ulps of ``scale`` (at least the larger of |a| and |b|); 0 where they are
    equal (infinities and NaNs of the same kind included)."""
    with np.errstate(invalid="ignore"):  # inf - inf
        far = np.abs(a - b) / np.spacing(np.maximum(np.maximum(np.abs(a), np.abs(b)), scale))
    return np.where((a == b) | (np.isnan(a) & np.isnan(b)), 0.0, np.nan_to_num(far, nan=np.inf))
