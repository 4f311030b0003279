"""Keras's initializer names beside tinynet's: which entry a Keras name means, and what differs
between the two, for the suggestion an unknown name gets (``get("HeNormal")`` suggests
``he_normal`` and says that Keras truncates it)."""

from __future__ import annotations

__all__ = ["KERAS_NAMES"]

_KERAS_TRUNCATED = ("Keras's {keras} draws from a truncated normal (cut at ±2σ, σ divided by "
                    "0.8796 so the variance is exactly {variance}); tinynet's {name} is a plain "
                    "normal of that variance: Keras's {keras} is tinynet's {truncated}")

KERAS_NAMES: dict[str, tuple[str, str]] = {
    "he_normal": ("he_normal", _KERAS_TRUNCATED.format(
        keras="HeNormal", variance="2/fan_in", name="he_normal",
        truncated="he_truncated_normal")),
    "lecun_normal": ("lecun_normal", _KERAS_TRUNCATED.format(
        keras="LecunNormal", variance="1/fan_in", name="lecun_normal",
        truncated="lecun_truncated_normal")),
    "glorot_normal": ("glorot_normal", _KERAS_TRUNCATED.format(
        keras="GlorotNormal", variance="2/(fan_in + fan_out)", name="glorot_normal",
        truncated="glorot_truncated_normal")),
    "variance_scaling": ("variance_scaling", (
        "Keras's VarianceScaling defaults to distribution='truncated_normal' and reads "
        "'normal' as truncated; tinynet's variance_scaling defaults to a plain normal: pass "
        "distribution='truncated_normal' for Keras's")),
    "truncated_normal": ("truncated_normal", (
        "Keras's TruncatedNormal(stddev=s) cuts N(0, s²) at ±2s without correction, so its "
        "std is 0.8796·s (default s = 0.05); tinynet's truncated_normal(std=s) has std s")),
    "random_normal": ("normal", "Keras's RandomNormal defaults to stddev=0.05, tinynet's normal "
                                "to std=1: write normal(std=0.05)"),
    "random_uniform": ("uniform", "Keras's RandomUniform takes bounds (default ±0.05), tinynet's "
                                  "uniform(std=s) draws from U(±sqrt(3)·s)"),
}
"""Keras's initializer names (snake_case, as Keras also spells them) whose tinynet namesake
differs, or is named otherwise: ``keras name -> (tinynet name, what differs)``. Keras's other
names (HeUniform, GlorotUniform, LecunUniform, Orthogonal, Zeros, Ones, Constant) are
tinynet's in snake_case and draw the same distribution."""
