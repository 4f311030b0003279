"""A dense layer: its parameters, forward ``A = φ(X Wᵀ + b)`` and its backward pass.

Shapes (B = batch size)::

    X  (B, n_in)     W  (n_out, n_in)     b  (n_out,)     Z, A  (B, n_out)

Backward, given dL/dA of shape (B, n_out)::

    dZ = dL/dA ⊙ φ'(Z)            (B, n_out)
    dW = dZᵀ X                    (n_out, n_in)
    db = Σ_b dZ                   (n_out,)
    dX = dZ W                     (B, n_in)     returned, to feed the layer before

The forward and backward passes are :class:`tinynet.step.Dense`'s, the one description of a
dense layer every backend runs or renders (on NumPy with :mod:`tinynet.dense`'s arrays); a
Layer adds the parameters, their initializer, and the checks of what it is given.
"""

from __future__ import annotations

import copy
import math
import numbers
import weakref
from collections.abc import Callable

import numpy as np

from . import init as initializers
from .activations import Activation, get_activation
from .step import Dense
from .validation import ShapeError, check_float, check_int, check_memory, check_seed

__all__ = ["Layer"]


class Layer(Dense):
    """Dense layer ``Layer(n_in, n_out, activation="leaky_relu", init="auto", alpha=0.01)``.

    ``init`` is a registered initializer name (see ``tinynet.init.available()``), an
    :class:`~tinynet.init.Initializer`, or a function ``f(shape, rng) -> array``. The weights are
    drawn at construction from ``rng`` (a ``numpy.random.Generator`` or an int seed, default 0);
    a :class:`~tinynet.network.Network` draws them again from its own generator, so pass ``rng``
    only for a layer used on its own (two such layers with the same seed and shape start
    equal); ``rng=None`` draws nothing and leaves W and b at zero, for a caller that sets them
    (as :func:`tinynet.load` does). A layer belongs to the one Network built from it: a second
    Network of the same Layer objects is refused (it would redraw the first one's weights).
    ``alpha`` is LeakyReLU's slope when ``activation`` is given by name.

    Biases start at ``bias_init``: a number (every bias that value; 0 by default, as in the
    notes) or an initializer, as ``init``, that draws them as the weights of an extra input
    that is always 1, i.e. as a weight matrix of shape ``(n_out, 1)`` (fan_in 1):
    ``bias_init="normal"`` is the learner's ``np.random.randn(n_out, 1)``.
    """

    def __init__(self, n_in: int, n_out: int, activation: str | Activation = "leaky_relu",
                 init: initializers.InitSpec = "auto", alpha: float = 0.01,
                 rng: np.random.Generator | int | None = 0,
                 bias_init: float | initializers.InitSpec = 0.0) -> None:
        self.n_in = check_int("n_in", n_in, minimum=1)
        self.n_out = check_int("n_out", n_out, minimum=1)
        check_memory(f"Layer({self.n_in}, {self.n_out}) (W, b and their gradients)",
                     16 * (self.n_in + 1) * self.n_out, "n_in · n_out is too large")
        self.activation = get_activation(activation, alpha)
        if self.activation.over_units and self.n_out < 2:
            raise ValueError(f"Layer({self.n_in}, {self.n_out}, activation={self.activation!r}): "
                             "a softmax over one unit is 1 whatever its input; give it "
                             "n_out >= 2 units (one per class), or use 'sigmoid' for one "
                             "output")
        self.init = initializers.get(init)
        self.bias_init = _bias_initializer(bias_init)
        self.W = np.zeros((self.n_out, self.n_in))
        self.b = np.zeros(self.n_out)
        self.dW = np.zeros_like(self.W)
        self.db = np.zeros_like(self.b)
        self._X: np.ndarray | None = None
        self._Z: np.ndarray | None = None
        self._slope: np.ndarray | float | None = None  # φ'(Z), from the same definition
        self._network: weakref.ref | None = None  # the Network this layer belongs to
        if rng is not None:
            self.reset_parameters(rng)

    @property
    def shape(self) -> tuple[int, int]:
        """Weight shape ``(n_out, n_in)``."""
        return (self.n_out, self.n_in)

    @property
    def bias_shape(self) -> tuple[int, int]:
        """The shape a bias initializer draws: ``(n_out, 1)``, one weight per unit on a
        constant input of 1."""
        return (self.n_out, 1)

    def reset_parameters(self, rng: np.random.Generator | int) -> None:
        """Draw ``W`` from the layer's initializer, then set ``b`` from ``bias_init``."""
        if not isinstance(rng, np.random.Generator):
            rng = np.random.default_rng(check_seed("rng", rng))
        self.reset_weights(rng)
        self.reset_biases(rng)

    def reset_weights(self, rng: np.random.Generator) -> None:
        """Draw ``W`` (n_out, n_in) from the layer's initializer."""
        self.W[...] = initializers.draw(self.init, self.shape, rng, self.activation)

    def reset_biases(self, rng: np.random.Generator) -> None:
        """Set ``b`` (n_out,) to the constant ``bias_init``, or draw it (a constant draws
        nothing from ``rng``)."""
        if isinstance(self.bias_init, float):
            self.b[...] = self.bias_init
        else:
            self.b[...] = initializers.draw(self.bias_init, self.bias_shape, rng,
                                            self.activation)[:, 0]

    def bias_label(self) -> str:
        """``bias_init`` as the summary shows it: the constant, or the initializer's name."""
        if isinstance(self.bias_init, float):
            return f"{self.bias_init:g}"
        return self.bias_init.name

    def init_std(self) -> float | None:
        """The std the initializer targets for this layer (None for a function of unknown std)."""
        return self.init.std(self.shape, self.activation)

    def describe_init(self) -> initializers.Description:
        """How this layer's weights were drawn: formula, fans, gain, std, sampler numbers."""
        return self.init.describe(self.shape, self.activation)

    def init_label(self) -> str:
        """The initializer's name; ``auto`` shows its choice, e.g. ``auto:he_leaky``."""
        if isinstance(self.init, initializers.Auto):
            return f"auto:{self.init.choice(self.activation).name}"
        return self.init.name

    def forward(self, X: np.ndarray) -> np.ndarray:
        """A = φ(X Wᵀ + b): (B, n_in) -> (B, n_out). Keeps X, Z and φ'(Z) (computed with A, by
        the activation's ``forward_and_derivative``) for :meth:`backward`: the input checked,
        then :meth:`tinynet.step.Dense.forward`."""
        if not isinstance(X, np.ndarray) or X.dtype != np.float64:
            dtype = f" of dtype {X.dtype}" if isinstance(X, np.ndarray) else ""
            raise TypeError(f"layer input X must be a float64 NumPy array, got "
                            f"{type(X).__name__}{dtype}; Network.forward converts other inputs")
        if X.ndim != 2 or X.shape[1] != self.n_in:
            raise ShapeError(f"layer input must have shape (batch, {self.n_in}), got {X.shape}")
        A = super().forward(X)  # tinynet.step.Dense.forward: Z = X Wᵀ + b, A = φ(Z), φ'(Z)
        return A.copy() if A is self._Z else A  # the identity's: the caller's own array

    @property
    def pre_activation(self) -> np.ndarray | None:
        """Z = X Wᵀ + b from the last :meth:`forward` (None before the first)."""
        return self._Z

    def backward(self, dA: np.ndarray, *, given_dZ: bool = False,
                 update: Callable[["Layer"], None] | None = None,
                 input_gradient: bool = True) -> np.ndarray | None:
        """Given dL/dA (B, n_out), store dW and db and return dL/dX (B, n_in) (None without
        ``input_gradient``: a first layer in training)::

            dZ = dA ⊙ φ'(Z),   dW = dZᵀ X,   db = Σ_b dZ,   dX = dZ W

        ``given_dZ``: ``dA`` is dL/dZ itself (a loss's gradient through the output sigmoid,
        :meth:`tinynet.losses.Loss.through_output`). ``update(layer)``, if given, is called
        once dW and db are stored, before dX: a training loop's step of this layer, so that
        dX is computed with the new W (``update="during_backward"`` in :func:`tinynet.fit`).
        """
        if self._X is None or self._Z is None:
            raise RuntimeError("backward() needs a forward() first")
        if dA.shape != self._Z.shape:
            raise ShapeError(f"dA must have the forward output's shape {self._Z.shape}, "
                             f"got {dA.shape}")
        return super().backward(dA, given_dZ=given_dZ, update=update,  # tinynet.step.Dense
                                input_gradient=input_gradient)

    def slots(self) -> list[tuple[object, str, str]]:
        """Where the layer's parameters and their gradients are: ``(self, "W", "dW")`` and
        ``(self, "b", "db")``, in the order of :meth:`parameters`."""
        return [(self, "W", "dW"), (self, "b", "db")]

    def parameters(self) -> list[np.ndarray]:
        """``[W, b]``: the arrays themselves, updated in place by training."""
        return [self.W, self.b]

    def gradients(self) -> list[np.ndarray]:
        """``[dW, db]`` from the last backward pass, matching :meth:`parameters`."""
        return [self.dW, self.db]

    def __copy__(self) -> "Layer":
        """A copy with arrays of its own (``copy.copy`` is ``copy.deepcopy``), so that it
        cannot change this layer's weights."""
        return copy.deepcopy(self)

    def __getstate__(self) -> dict:
        """A copy or a pickle belongs to no network (a weak reference cannot be pickled); a
        copied Network claims its copied layers again."""
        return {**self.__dict__, "_network": None}

    def __repr__(self) -> str:
        std = self.init_std()
        std_text = "?" if std is None else f"{std:#.4g}"
        bias = "" if self.bias_init == 0.0 else f", bias_init={self.bias_label()}"
        return (f"Layer({self.n_in} -> {self.n_out}, activation={self.activation!r}, "
                f"init={self.init_label()}, init_std={std_text}{bias})")


def _bias_initializer(bias_init: object) -> float | initializers.Initializer:
    """``bias_init`` as a finite float (a constant) or an :class:`~tinynet.init.Initializer`."""
    if isinstance(bias_init, numbers.Real) and not isinstance(bias_init, bool):
        return check_float("bias_init", bias_init, minimum=-math.inf, inclusive=False)
    if isinstance(bias_init, (str, initializers.Initializer)) or callable(bias_init):
        return initializers.get(bias_init)
    raise TypeError(f"bias_init must be a number or an initializer (a registered name such as "
                    f"'normal', an Initializer or a function f(shape, rng)), got {bias_init!r} "
                    f"of type {type(bias_init).__name__}")
