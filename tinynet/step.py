"""One step of training, written once: a dense layer's forward and backward passes side by
side, the chain through the layers, and the step that joins them to the loss and the update.

Shapes (B = batch size; every array may carry a leading members axis, S networks at once)::

    X  (B, n_in)     W  (n_out, n_in)     b  (n_out,)     Z, A  (B, n_out)

    a layer, forward:    Z = X Wᵀ + b,   A = φ(Z)           (φ'(Z) kept for backward)
    a layer, backward:   dZ = dA ⊙ φ'(Z)                     the chain rule
                         dW = dZᵀ X,   db = Σ_rows dZ        the layer's gradients
                         [W, b take their step]              update="during_backward"
                         dX = dZ W                           the layer before's dA
    a step:              ŷ = forward(x);   ℓ, dL/dŷ = loss(ŷ, y);   backward(dL/dŷ);
                         [every W and b takes its step]      update="after_backward"

Every backend runs or renders this code, and this code only, in the words of a backend,
``ops`` (a layer's ``self.ops``; :func:`train`'s: :class:`EpochWords`): :mod:`tinynet.dense`'s
array functions for the NumPy backend, which runs it (:meth:`tinynet.Layer.backward`,
:func:`tinynet.fit` and :func:`tinynet.fit_ensemble` with ``backend="numpy"``), and
:mod:`tinynet.compiled.tracing`'s for the compiled one, whose arrays hold the names of values
and whose words write lines of code: running this step with them writes the straight-line
step of the kernels generated for a small layout (print one with :func:`tinynet.kernel_source`),
each line under a comment that names the layer and the line of this module it comes from.

The maths of each activation, loss and optimizer is not here: it is their one definition,
which ``ops`` applies. The epoch loop around the step, :func:`train`, is here, written once:
NumPy runs it, and :mod:`tinynet.compiled.epochs` writes every kernel's loop from it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from types import ModuleType
from typing import Any, Protocol

from . import blocks, dense

__all__ = ["Dense", "Norm", "Residual", "forward", "backward", "train_step", "EpochWords", "train"]


class Dense:
    """A dense layer as training sees it: ``W`` (n_out, n_in), ``b`` (n_out,), their gradients
    ``dW`` and ``db``, the ``activation``, and ``ops``, the words of the backend it runs on
    (default: NumPy's, :mod:`tinynet.dense`). :class:`tinynet.Layer` is one, with its
    initializer; the NumPy ensembles make one per layer whose arrays are views into every
    member's parameters, and the kernel generator one whose arrays hold names."""

    ops: ModuleType | Any = dense

    def __init__(self, W: Any, b: Any, dW: Any, db: Any, activation: Any,
                 ops: ModuleType | Any = dense) -> None:
        self.W, self.b, self.dW, self.db = W, b, dW, db
        self.activation = activation
        self.ops = ops
        self._X = self._Z = self._slope = None

    def forward(self, X: Any) -> Any:
        """A = φ(X Wᵀ + b), keeping X, Z and φ'(Z) for :meth:`backward`."""
        self._X = X
        self._Z = self.ops.pre_activation(X, self.W, self.b)          # Z = X Wᵀ + b
        A, self._slope = self.ops.activate(self.activation, self._Z)  # A = φ(Z), φ'(Z)
        return A

    def backward(self, dA: Any, *, given_dZ: bool = False,
                 update: Callable[["Dense"], None] | None = None,
                 input_gradient: bool = True) -> Any:
        """Given dL/dA, store dW and db; return dL/dX (None without ``input_gradient``).
        ``given_dZ``: ``dA`` is dL/dZ already (a loss's gradient through the output
        sigmoid); ``update(layer)``, if given, steps this layer before dX is computed."""
        dZ = dA if given_dZ else self.ops.backward_activation(dA, self._slope)  # dZ = dA ⊙ φ'(Z)
        self.ops.backward_parameters(dZ, self._X, self.dW, self.db)  # dW = dZᵀ X, db = Σ dZ
        if update is not None:
            update(self)                                             # W, b ← their step
        return self.ops.backward_input(dZ, self.W) if input_gradient else None  # dX = dZ W


class Norm:
    """LayerNorm over a layer's units as training sees it: ``gain`` and ``bias`` (n,), their
    gradients ``dgain`` and ``dbias``, ``eps``, and ``ops``, the words of the backend it runs on
    (NumPy's: :mod:`tinynet.blocks`)::

        forward:   x̂ = (X − μ) / √(σ² + ε),  μ, σ² the mean and variance of a row's units
                   Y = γ ⊙ x̂ + β                                          (B, n)
        backward:  dγ = Σ_rows dY ⊙ x̂,   dβ = Σ_rows dY                    the gradients
                   [γ, β take their step]                                  during_backward
                   dX = (dx̂ − mean(dx̂) − x̂ ⊙ mean(dx̂ ⊙ x̂)) / √(σ² + ε),   dx̂ = dY ⊙ γ
    """

    ops: ModuleType | Any = blocks

    def __init__(self, gain: Any, bias: Any, dgain: Any, dbias: Any, eps: float,
                 ops: ModuleType | Any = None) -> None:
        self.gain, self.bias, self.dgain, self.dbias, self.eps = gain, bias, dgain, dbias, eps
        if ops is not None:        # another backend's words (a module is not copied along)
            self.ops = ops
        self._normalized = self._inverse_std = None

    def forward(self, X: Any) -> Any:
        """Y = γ ⊙ x̂ + β, keeping x̂ and 1/√(σ² + ε) for :meth:`backward`."""
        self._normalized, self._inverse_std = self.ops.normalize(X, self.eps)  # x̂, 1/√(σ²+ε)
        return self.ops.scale_shift(self._normalized, self.gain, self.bias)     # γ ⊙ x̂ + β

    def backward(self, dY: Any, *, update: Callable[[Any], None] | None = None) -> Any:
        """Given dL/dY, store dγ and dβ; return dL/dX. ``update(norm)``, if given, steps γ
        and β before dX is computed (with the new γ)."""
        self.ops.norm_gradients(dY, self._normalized, self.dgain, self.dbias)  # dγ, dβ
        if update is not None:
            update(self)                                                     # γ, β ← their step
        return self.ops.normalize_backward(dY, self.gain, self._normalized,   # dX
                                           self._inverse_std)


class Residual:
    """A residual block as training sees it: ``Y = s·X + α·F(X)``, F the ``layers`` (each a
    :class:`Dense`) in a chain, ``s`` the skip's scale (``skip``, a constant: 1, or DeepNet's
    (2N)^¼) and ``α`` the branch's (``scale``, (1,): a constant, or trained when ``dscale``
    is its gradient, as ReZero's, which starts at 0); with a :class:`Norm` ``norm`` placed
    ``"pre"`` (``Y = s·X + α·F(LN(X))``) or ``"post"`` (``Y = LN(s·X + α·F(X))``)::

        forward:   H = LN(X) (pre) or X;   F = F(H);   S = s·X + α·F;   Y = LN(S) (post) or S
        backward:  dS = LN's backward of dY (post) or dY
                   dα = Σ dS ⊙ F                    [α takes its step]   a trained α
                   dH = F's backward of α·dS         each layer's dW, db
                   dX = s·dS + (LN's backward of dH (pre) or dH)
    """

    ops: ModuleType | Any = blocks

    def __init__(self, layers: Sequence[Dense], norm: Norm | None = None,
                 placement: str | None = None, scale: Any = 1.0, dscale: Any = None,
                 skip: float = 1.0, ops: ModuleType | Any = None) -> None:
        self.layers, self.norm, self.placement = list(layers), norm, placement
        self.scale, self.dscale, self.skip = scale, dscale, skip
        if ops is not None:        # another backend's words
            self.ops = ops
        self._branch = None

    def forward(self, X: Any) -> Any:
        """Y = s·X + α·F(H), normalized before the branch or after the sum."""
        H = self.norm.forward(X) if self.placement == "pre" else X            # LN(X) or X
        self._branch = forward(self.layers, H)                                # F(H)
        S = self.ops.skip_sum(self.skip, X, self.scale, self._branch)         # s·X + α·F
        return self.norm.forward(S) if self.placement == "post" else S        # LN(S) or S

    def backward(self, dY: Any, *, given_dZ: bool = False,
                 update: Callable[[Any], None] | None = None,
                 input_gradient: bool = True) -> Any:
        """Given dL/dY, store every gradient of the block; return dL/dX. ``update(part)``,
        if given, steps each part (the norm, this block's α, each layer) once its gradients
        are known. ``given_dZ`` and ``input_gradient`` are :meth:`Dense.backward`'s: a
        block is never the output layer, and its dX is always computed (the skip needs it)."""
        if given_dZ:
            raise ValueError("a residual block cannot be a network's output layer")
        dS = self.norm.backward(dY, update=update) if self.placement == "post" else dY
        if self.dscale is not None:
            self.ops.scale_gradient(dS, self._branch, self.dscale)            # dα = Σ dS ⊙ F
            if update is not None:
                update(self)                                                  # α ← its step
        dF = self.ops.scaled(self.scale, dS)                                  # α·dS
        dH = backward(self.layers, dF, update=update)                         # through F
        dX = self.norm.backward(dH, update=update) if self.placement == "pre" else dH
        return self.ops.skip_sum(self.skip, dS, 1.0, dX)                      # s·dS + dX


def forward(layers: Sequence[Dense], X: Any) -> Any:
    """The network's output: every layer's forward, first to last."""
    for layer in layers:
        X = layer.forward(X)
    return X


def backward(layers: Sequence[Dense], dY: Any, *, given_dZ: bool = False,
             update: Callable[[Dense], None] | None = None,
             input_gradient: bool = True) -> Any:
    """Backpropagate dL/dY through every layer, last first; return dL/dX (None without
    ``input_gradient``: training needs no gradient of its data). ``given_dZ``: ``dY`` is
    dL/dZ of the last layer; ``update`` is called for each layer once its dW and db are
    known (:meth:`Dense.backward`)."""
    first, last = layers[0], layers[-1]
    for layer in reversed(layers):
        dY = layer.backward(dY, given_dZ=given_dZ and layer is last, update=update,
                            input_gradient=input_gradient or layer is not first)
    return dY


def train_step(ops: ModuleType | Any, layers: Sequence[Dense], loss: Any, through: str | None,
               x: Any, y: Any, update_layer: Callable[[Dense], None] | None,
               update_all: Callable[[], None]) -> tuple[Any, Any]:
    """One step on a batch: forward, the loss and its gradient, backward, the update. Each
    layer steps inside the backward pass (``update_layer``: ``update="during_backward"``),
    or every layer after it (``update_all``). ``through``: the loss gives dL/dz of the
    output sigmoid or softmax, by the method named (:meth:`tinynet.losses.Loss.
    through_output`). Returns ŷ and what
    ``ops.loss`` gave for ℓ: NumPy's terms, one per output; the name of the batch's summed
    loss in the compiled words."""
    y_hat = forward(layers, x)
    terms, gradient = ops.loss(loss, through, y_hat, y)    # ℓ, dL/dŷ (dL/dz through σ, softmax)
    backward(layers, gradient, given_dZ=through is not None, update=update_layer,
             input_gradient=False)
    if update_layer is None:
        update_all()                                               # every W, b ← its step
    return y_hat, terms


class EpochWords(Protocol):
    """The words :func:`train` says, which a backend gives: NumPy's run the loop
    (:class:`tinynet.reference.Epochs`), the compiled backend's write it as a kernel's lines
    (:mod:`tinynet.compiled.epochs`), and then ``epochs`` and ``batches`` yield once, the
    names of what their loop makes, and ``diverged`` writes the stop and returns False."""

    def epochs(self) -> Iterable[Any]:
        """Each epoch, ``settings.first_epoch`` on."""

    def visit(self, epoch: Any) -> None:
        """The epoch's order of the samples: :func:`tinynet.shuffle.epoch_order`, or the
        data's."""

    def batches(self) -> Iterable[tuple[Any, Any]]:
        """Each batch's samples and targets, in that order; the epoch's summed loss starts at
        0 here."""

    def add_loss(self, terms: Any, y: Any) -> None:
        """The batch's loss into the epoch's sum, batch after batch."""

    def saw(self, y_hat: Any, y: Any, epoch: Any) -> None:
        """The epoch is the last wrong one if an output was on the wrong side
        (:func:`tinynet.verdicts.wrong_side`)."""

    def record(self, epoch: Any) -> None:
        """The epoch's loss, the sum / N, as the final loss and, in its slot
        (:func:`tinynet.verdicts.history_slot`), in the history."""

    def diverged(self, epoch: Any) -> bool:
        """Whether the run diverged (:func:`tinynet.verdicts.diverged` of the loss's and
        every parameter's :func:`~tinynet.verdicts.finite_mark`): its diverged epoch is set
        and its parameters are kept as they are; for many members, whether every one has."""

    def finish(self) -> None:
        """The trained parameters and state where the caller reads them; a diverged run's as
        they were at the end of the epoch it diverged in."""


def train(ops: EpochWords, step: Callable[[Any, Any], tuple[Any, Any]]) -> None:
    """The epoch loop: every epoch, the samples in its order, ``step(x, y) = (ŷ, ℓ)`` on each
    batch (:func:`train_step` on the network's layers), the epoch's loss and its verdicts
    (:mod:`tinynet.verdicts`); training stops once the run has diverged. In the words of a
    backend, ``ops`` (:class:`EpochWords`): :class:`tinynet.reference.Epochs` runs it on
    arrays of every member at once (a member that diverges stops there, the others go on);
    :mod:`tinynet.compiled.epochs` writes it as a kernel's loop."""
    for epoch in ops.epochs():                  # first_epoch, first_epoch + 1, ... (epochs of them)
        ops.visit(epoch)                        # the order: epoch_order(seed, epoch, N) if shuffled
        for x, y in ops.batches():              # batch_size samples at a time, in that order
            y_hat, terms = step(x, y)           # ŷ, ℓ: forward, the loss, backward, the update
            ops.add_loss(terms, y)              # total ← total + Σ ℓ, batch after batch
            ops.saw(y_hat, y, epoch)            # last_wrong_epoch ← epoch if wrong_side(ŷ, y, t)
        ops.record(epoch)                       # final_loss ← total / N; history[slot] ← it
        if ops.diverged(epoch):                 # diverged(finite_mark(loss) + Σ finite_mark(θ)):
            break                               # diverged_epoch ← epoch, and training stops
    ops.finish()                                # θ out; a diverged run's as it stopped
