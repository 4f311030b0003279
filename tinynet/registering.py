"""Your own activation, loss or optimizer by name: ``tinynet.activations.register``,
``tinynet.losses.register`` and ``tinynet.optimizers.register``.

Each takes a class, checks it (:func:`tinynet.definitions.admit`, then
:func:`tinynet.check` on NumPy) and puts it in ``ACTIVATIONS``, ``LOSSES`` or
``OPTIMIZERS``, the dictionaries that ``get_activation``, ``get_loss``, ``get_optimizer`` and
everything that takes a name (``run_study``, the CLI with ``--import``, the playground, a
cluster's workers) read; it returns the class unchanged, so that it works as a decorator::

    @tinynet.activations.register
    @dataclass(frozen=True, repr=False)
    class Softplus(tinynet.activations.Activation):
        name = "softplus"
        ...

They live here, and ``tinynet/__init__.py`` makes each an attribute of its registry's module,
because checking a definition needs the base classes that those modules define: the imports
point one way (``tinynet.definitions`` imports the registries, never the other way round).
"""

from __future__ import annotations

from .activations import ACTIVATIONS, Activation
from .definitions import add
from .losses import LOSSES, Loss
from .optimizers import OPTIMIZERS, Optimizer

__all__ = ["activation", "loss", "optimizer"]


def activation(cls: type[Activation], *, replace: bool = False) -> type[Activation]:
    """``tinynet.activations.register``: make the activation class ``cls`` available by its
    ``name`` (``activation="softplus"``) and return it. A name another class holds is refused
    unless ``replace=True``. By name, an activation is made with its defaults
    (``leaky_relu`` takes ``get_activation``'s ``alpha``)."""
    return add(cls, ACTIVATIONS, "activation", replace)


def loss(cls: type[Loss], *, replace: bool = False) -> type[Loss]:
    """``tinynet.losses.register``: make the loss class ``cls`` available by its ``name``
    (``loss="log_cosh"``, a spec ``"log_cosh(scale=2)"``) and return it. A name another class
    holds is refused unless ``replace=True``."""
    return add(cls, LOSSES, "loss", replace)


def optimizer(cls: type[Optimizer], *, replace: bool = False) -> type[Optimizer]:
    """``tinynet.optimizers.register``: make the optimizer class ``cls`` available by its
    ``name`` (``optimizer="rmsprop"``, a spec ``"rmsprop(alpha=0.9)"``) and return it. A name
    another class holds is refused unless ``replace=True``."""
    return add(cls, OPTIMIZERS, "optimizer", replace)
