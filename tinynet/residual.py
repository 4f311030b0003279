"""A residual block and its LayerNorm: their parameters, their checks and what a learner
prints. The forward and backward passes are :class:`tinynet.step.Residual`'s and
:class:`tinynet.step.Norm`'s, the one description every backend runs or renders.

    >>> import tinynet
    >>> block = tinynet.Residual([tinynet.Layer(8, 8, "relu")], norm="pre")
    >>> block
    Residual(8 -> 8: x + 1·F(LN(x)), F = [Layer(8 -> 8, activation=relu, ...)])

``Residual(layers, norm=None, scale=1.0, train_scale=False, skip=1.0)`` computes
``skip·x + α·F(x)``, F the layers in a chain (their first takes the block's width, their last
gives it back), α = ``scale``: He et al.'s residual block is the default (α = 1, s = 1);
ReZero and SkipInit train α from 0 (``scale=0.0, train_scale=True``); Fixup trains it from 1;
DeepNet scales the skip by (2N)^¼ (``skip``) under a post-norm. ``norm="pre"`` normalizes
the branch's input (``x + α·F(LN(x))``, the pre-LN Transformer), ``"post"`` the sum
(``LN(x + α·F(x))``, the original Transformer's).
"""

from __future__ import annotations

import copy
import math
import weakref
from collections.abc import Sequence

import numpy as np

from . import step
from .layers import Layer
from .validation import (ShapeError, check_chain, check_choice, check_float, check_int,
                         check_sequence)

__all__ = ["LayerNorm", "Residual", "NORMS"]

NORMS = ("pre", "post")
"""Where a residual block's LayerNorm goes: before its branch, or after its sum."""


class LayerNorm(step.Norm):
    """``LayerNorm(n, eps=1e-5)``: each row's n units normalized to mean 0 and variance 1, then
    ``γ ⊙ x̂ + β``, γ (``gain``) starting at 1 and β (``bias``) at 0, as ``torch.nn.LayerNorm``
    (the biased variance, ε inside the square root)."""

    INITIAL = {"gain": 1.0, "bias": 0.0}
    """Where γ and β start (:meth:`reset_parameters`, and :func:`tinynet.packing.draw`)."""

    def __init__(self, n: int, eps: float = 1e-5) -> None:
        self.n = check_int("n", n, minimum=1)
        eps = check_float("eps", eps, minimum=0.0, inclusive=False)
        super().__init__(np.ones(self.n), np.zeros(self.n), np.zeros(self.n), np.zeros(self.n),
                         eps)

    def reset_parameters(self) -> None:
        """γ = 1, β = 0 (:data:`INITIAL`)."""
        for name, value in self.INITIAL.items():
            getattr(self, name)[...] = value

    def slots(self) -> list[tuple[object, str, str]]:
        """Where its parameters and their gradients are (as :meth:`tinynet.Layer.slots`)."""
        return [(self, "gain", "dgain"), (self, "bias", "dbias")]

    def parameters(self) -> list[np.ndarray]:
        """``[gain, bias]``: the arrays themselves."""
        return [self.gain, self.bias]

    def gradients(self) -> list[np.ndarray]:
        """``[dgain, dbias]`` from the last backward pass."""
        return [self.dgain, self.dbias]

    def __repr__(self) -> str:
        return f"LayerNorm({self.n}, eps={self.eps:g})"


class Residual(step.Residual):
    """``Residual(layers, norm=None, scale=1.0, train_scale=False, skip=1.0, eps=1e-5)``: the
    block ``skip·x + α·F(x)`` (see the module's docstring); ``layers`` are
    :class:`~tinynet.Layer` s whose chain maps the block's width to itself."""

    def __init__(self, layers: Sequence[Layer], norm: str | None = None, scale: float = 1.0,
                 train_scale: bool = False, skip: float = 1.0, eps: float = 1e-5) -> None:
        layers = check_sequence("layers", layers, Layer, "tinynet Layer", distinct=True)
        check_chain(layers)
        width = layers[0].n_in
        if layers[-1].n_out != width:
            raise ShapeError(f"a residual branch must give back its input's width: layers[0] "
                             f"takes {width} inputs, layers[-1] gives {layers[-1].n_out}")
        for index, layer in enumerate(layers):
            if layer.activation.over_units:
                raise ValueError(f"layers[{index}]'s activation {layer.activation!r} is defined "
                                 "over its units: it can only be a network's output layer's")
        if norm is not None:
            norm = check_choice("norm", norm, NORMS)
        self.initial_scale = check_float("scale", scale, minimum=-math.inf, inclusive=False)
        if not isinstance(train_scale, (bool, np.bool_)):
            raise TypeError(f"train_scale must be True or False, got {train_scale!r}")
        skip = check_float("skip", skip, minimum=0.0, inclusive=False)
        if self.initial_scale == 0.0 and not train_scale:
            raise ValueError("scale=0.0 with train_scale=False makes a branch that never "
                             "learns (its gradient is α·dS = 0); pass train_scale=True, as "
                             "ReZero does, or a scale other than 0")
        self.width = width
        super().__init__(layers, LayerNorm(width, eps) if norm else None, norm,
                         np.array([self.initial_scale]) if train_scale else self.initial_scale,
                         np.zeros(1) if train_scale else None, skip)
        self._network: weakref.ref | None = None

    @property
    def n_in(self) -> int:
        """The block's width, in and out."""
        return self.width

    @property
    def n_out(self) -> int:
        """The block's width, in and out."""
        return self.width

    @property
    def train_scale(self) -> bool:
        """Whether α is trained (a parameter) or a constant."""
        return self.dscale is not None

    def reset_parameters(self) -> None:
        """The norm's γ = 1, β = 0 and α its initial value (the layers are drawn by their
        network)."""
        if self.norm is not None:
            self.norm.reset_parameters()
        if self.train_scale:
            self.scale[...] = self.initial_scale

    def slots(self) -> list[tuple[object, str, str]]:
        """Where its parameters and their gradients are, in order: the norm's γ and β, each
        layer's W and b, then α if trained (as :meth:`tinynet.Layer.slots`)."""
        return [*(self.norm.slots() if self.norm else ()),
                *(slot for layer in self.layers for slot in layer.slots()),
                *(((self, "scale", "dscale"),) if self.train_scale else ())]

    def parameters(self) -> list[np.ndarray]:
        """The arrays of :meth:`slots`: the norm's ``[gain, bias]``, each layer's ``[W, b]``,
        then ``[scale]`` if trained."""
        return [getattr(owner, name) for owner, name, _ in self.slots()]

    def gradients(self) -> list[np.ndarray]:
        """The gradients of :meth:`parameters`, in its order."""
        return [getattr(owner, name) for owner, _, name in self.slots()]

    def signature(self) -> tuple:
        """What the blocks of an ensemble's members share: the norm's placement and ε, the
        branch's layer shapes, the skip's scale, and α (a constant's value, or trained)."""
        return (self.placement, self.norm.eps if self.norm else None,
                tuple(layer.shape for layer in self.layers), self.skip,
                "trained" if self.train_scale else self.initial_scale)

    def formula(self) -> str:
        """The block's sum as a learner reads it: ``x + 1·F(LN(x))``."""
        skip = "" if self.skip == 1.0 else f"{self.skip:.4g}·"
        alpha = "α" if self.train_scale else f"{self.initial_scale:g}"
        inner = "F(LN(x))" if self.placement == "pre" else "F(x)"
        total = f"{skip}x + {alpha}·{inner}"
        return f"LN({total})" if self.placement == "post" else total

    def __copy__(self) -> "Residual":
        """A copy with arrays of its own (``copy.copy`` is ``copy.deepcopy``)."""
        return copy.deepcopy(self)

    def __getstate__(self) -> dict:
        """A copy or a pickle belongs to no network."""
        return {**self.__dict__, "_network": None}

    def __repr__(self) -> str:
        start = f" from {self.initial_scale:g}" if self.train_scale else ""
        layers = ", ".join(f"Layer({layer.n_in} -> {layer.n_out}, activation="
                           f"{layer.activation!r}, ...)" for layer in self.layers)
        return f"Residual({self.width} -> {self.width}: {self.formula()}{start}, F = [{layers}])"
