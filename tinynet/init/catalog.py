"""The built-in initializers: every scheme in the notes, registered by name.

Each variance-scaling family comes in three distributions with the same variance: ``_normal``,
``_uniform`` and ``_truncated_normal`` (variance-corrected). ``glorot_*`` and ``kaiming_*`` are
aliases of ``xavier_*`` and ``he_*`` (``Entry.alias_of``): the same scheme under PyTorch's and
Keras's other names, drawing the same weights. ``he_leaky`` (normal) keeps the notes' name.

The He/Kaiming entries take PyTorch's ``kaiming_*_`` parameters: ``a`` (leaky_relu's negative
slope), ``mode`` (fan_in or fan_out) and ``nonlinearity``, Var(w) = gain(nonlinearity, a)² / fan,
with PyTorch's defaults a=0, mode='fan_in', nonlinearity='leaky_relu' (gain sqrt(2)). Since
``he_*`` and ``kaiming_*`` are one entry under two names, ``he_normal`` takes them as well.

Where Keras's names for these differ from tinynet's: :mod:`tinynet.init.keras`.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from ..validation import UnknownNameError, check_float, check_int
from .distributions import DISTRIBUTIONS, TRUNCATED_VARIANCE_FACTOR
from .gains import NONLINEARITIES, squared_gain, unknown_nonlinearity
from .registry import Entry, add_entry
from .schemes import (Auto, Constant, FixedStd, Initializer, LeakyHe, Orthogonal,
                      TorchLinearDefault, VarianceScaling)

__all__ = ["register_builtins", "KAIMING_MODES", "kaiming_scale", "BERT_STD"]

# prefix, alias prefix, scale, fan mode, when to use it, where it comes from
_FAMILIES = [
    ("lecun", None, 1.0, "fan_in", "linear layers: keeps E[z²] going forward",
     "LeCun et al. 1998"),
    ("xavier", "glorot", 1.0, "fan_avg", "sigmoid, tanh, identity: balances forward and backward",
     "Glorot & Bengio 2010"),
    ("xavier_geometric", None, 1.0, "fan_geo_avg",
     "non-square m→n→m stacks: keeps the round trip exact", "fan-averaging note"),
    ("xavier_contraharmonic", None, 1.0, "fan_contraharmonic",
     "the note's (m²+n²)/(m+n) average", "fan-averaging note"),
    ("he", "kaiming", 2.0, "fan_in", "ReLU layers: ReLU halves E[z²]", "He et al. 2015"),
]


def _positive(name: str, value: object) -> float:
    return check_float(name, value, minimum=0.0, inclusive=False)


def _fixed_std(distribution: str) -> Callable[..., Initializer]:
    def factory(std: float = 1.0) -> FixedStd:
        return FixedStd(distribution, _positive("std", std), distribution)
    return factory


def _scaled(name: str, scale: float, mode: str, distribution: str,
            with_gain: bool) -> Callable[..., Initializer]:
    if with_gain:  # as torch.nn.init.xavier_*_(gain=...): Var = gain² · scale / fan
        def factory(gain: float = 1.0) -> VarianceScaling:
            gain = _positive("gain", gain)
            if gain > 1e100:
                raise ValueError(f"gain must be at most 1e100, got {gain!r}")
            return VarianceScaling(name, scale * gain * gain, mode, distribution)
    else:
        def factory() -> VarianceScaling:
            return VarianceScaling(name, scale, mode, distribution)
    return factory


KAIMING_MODES = ("fan_in", "fan_out")
"""The fan modes of ``torch.nn.init.kaiming_*_`` (``variance_scaling`` takes every fan mode)."""


def kaiming_scale(a: object = 0.0, nonlinearity: object = "leaky_relu") -> float:
    """gain² for ``kaiming_*(a=..., nonlinearity=...)``, as ``calculate_gain(nonlinearity, a)``
    squared (2 / (1 + a²) for leaky_relu, exactly 2.0 at the default a = 0)."""
    a = check_float("a", a, minimum=0.0, inclusive=True)
    if a > 1e100:
        raise ValueError(f"a must be at most 1e100, got {a!r}")
    if not isinstance(nonlinearity, str) or nonlinearity not in NONLINEARITIES:
        raise unknown_nonlinearity("nonlinearity", nonlinearity)
    if nonlinearity != "leaky_relu":
        if a != 0:
            raise ValueError(f"a must be 0 unless nonlinearity='leaky_relu' (a is its negative "
                             f"slope; PyTorch ignores it), got a={a!r} with "
                             f"nonlinearity={nonlinearity!r}")
        return squared_gain(nonlinearity)
    return squared_gain("leaky_relu", a)


def _kaiming(name: str, distribution: str) -> Callable[..., Initializer]:
    def factory(a: float = 0.0, mode: str = "fan_in",
                nonlinearity: str = "leaky_relu") -> VarianceScaling:
        scale = kaiming_scale(a, nonlinearity)
        if not isinstance(mode, str) or mode not in KAIMING_MODES:
            raise UnknownNameError("mode", mode, KAIMING_MODES,
                                   "variance_scaling(mode=...) takes the other fan modes")
        return VarianceScaling(name, scale, mode, distribution)
    return factory


def _he_leaky(name: str, distribution: str) -> Callable[..., Initializer]:
    def factory(alpha: float | None = None) -> LeakyHe:
        if alpha is not None:
            alpha = check_float("alpha", alpha, minimum=0.0, inclusive=True)
        return LeakyHe(name, distribution, alpha)
    return factory


def _variance_scaling(scale: float = 1.0, mode: str = "fan_in",
                      distribution: str = "normal") -> VarianceScaling:
    return VarianceScaling("variance_scaling", _positive("scale", scale), mode, distribution)


def _orthogonal(gain: float = 1.0) -> Orthogonal:
    return Orthogonal("orthogonal", _positive("gain", gain))


def _constant(value: float = 0.0) -> Constant:
    return Constant("constant", check_float("value", value, minimum=-float("inf"),
                                            inclusive=False))


def _fixup(blocks: int = 1, branch_layers: int = 2) -> VarianceScaling:
    """He's Var = 2 / fan_in times L^(−2/(2m−2)): the std scaled by L^(−1/(2m−2)) for the
    layers of a residual branch of m layers but its last (which Fixup sets to 0), L blocks."""
    blocks = check_int("blocks", blocks, minimum=1)
    branch_layers = check_int("branch_layers", branch_layers, minimum=2)
    factor = blocks ** (-1.0 / (2 * branch_layers - 2))
    return VarianceScaling("fixup", 2.0 * factor * factor, "fan_in", "normal")


def _deepnet(blocks: int = 1) -> VarianceScaling:
    """Xavier's normal with gain β = (8N)^(−1/4), N blocks: DeepNet's branch weights."""
    beta = (8.0 * check_int("blocks", blocks, minimum=1)) ** -0.25
    return VarianceScaling("deepnet", beta * beta, "fan_avg", "normal")


BERT_STD = 0.02
"""BERT's ``initializer_range``: its weights are TensorFlow's ``truncated_normal(stddev=0.02)``,
N(0, 0.02²) cut at ±2 · 0.02, which realises 0.02 · √γ(2) = 0.0176."""


def _auto() -> Auto:
    xavier = VarianceScaling("xavier_normal", 1.0, "fan_avg", "normal")
    he = VarianceScaling("he_normal", 2.0, "fan_in", "normal")
    he_leaky = LeakyHe("he_leaky", "normal")
    return Auto("auto", {"identity": xavier, "sigmoid": xavier, "tanh": xavier,
                         "softmax": xavier, "relu": he, "leaky_relu": he_leaky})


def _entries() -> list[Entry]:
    entries = []
    for distribution in DISTRIBUTIONS:
        words = distribution.replace("_", " ")
        entries.append(Entry(distribution, _fixed_std(distribution),
                             f"fixed std whatever the fans ({words})",
                             "np.random.randn, the learner's baseline" if distribution == "normal"
                             else "baseline"))
        for prefix, alias, scale, mode, use, source in _FAMILIES:
            for family in filter(None, (prefix, alias)):
                name = f"{family}_{distribution}"
                factory = _kaiming(name, distribution) if prefix == "he" else \
                    _scaled(name, scale, mode, distribution, with_gain=prefix.startswith("xavier"))
                entries.append(Entry(name, factory, f"{use} ({words})", source,
                                     alias_of="" if family == prefix else
                                     f"{prefix}_{distribution}"))
        name = "he_leaky" if distribution == "normal" else f"he_leaky_{distribution}"
        entries.append(Entry(name, _he_leaky(name, distribution),
                             f"LeakyReLU layers, α from the layer ({words})",
                             "He et al. 2015; the notes"))
    entries += [
        Entry("variance_scaling", _variance_scaling,
              "generic: Var = scale / fan, any fan mode and distribution", "Keras, JAX"),
        Entry("orthogonal", _orthogonal, "deep linear or tanh stacks: an exact isometry",
              "Saxe et al. 2014"),
        Entry("torch_linear_default", lambda: TorchLinearDefault("torch_linear_default"),
              "what torch.nn.Linear does: U(±1/sqrt(fan_in)), kaiming_uniform_(a=sqrt(5))",
              "PyTorch's default"),
        Entry("zeros", lambda: Constant("zeros", 0.0),
              "shows symmetry: every unit of a layer stays the same", "demonstration"),
        Entry("ones", lambda: Constant("ones", 1.0),
              "every weight 1: no symmetry breaking either", "torch ones_, Keras Ones"),
        Entry("constant", _constant, "every weight the same value", "demonstration"),
        Entry("fixup", _fixup,
              "residual branches without normalization: He times L^(-1/(2m-2)), L blocks of "
              "m layers (the branch's last layer starts at 0)", "Zhang et al. 2019, Fixup"),
        Entry("deepnet", _deepnet,
              "post-norm residual branches: Xavier normal with gain (8N)^(-1/4), N blocks "
              "(the skip scaled by (2N)^(1/4))", "Wang et al. 2022, DeepNet"),
        Entry("bert", lambda: FixedStd("bert", BERT_STD * math.sqrt(TRUNCATED_VARIANCE_FACTOR),
                                       "truncated_normal"),
              "N(0, 0.02²) cut at ±0.04, TensorFlow's truncated_normal(stddev=0.02)",
              "Devlin et al. 2019, BERT"),
        Entry("auto", _auto, "by activation: Xavier for sigmoid/tanh/identity, He for relu, "
                             "He-leaky for leaky_relu", "the notes' final choice"),
    ]
    return entries


def register_builtins() -> None:
    """Add every built-in entry to the registry."""
    for entry in _entries():
        add_entry(entry)
