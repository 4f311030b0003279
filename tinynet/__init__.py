"""tinynet: a from-scratch NumPy neural network for seeing why weight initialization matters.

    >>> import tinynet
    >>> X, y = tinynet.data.xor()
    >>> net = tinynet.mlp([2, 8, 1], init="he_leaky", seed=0)
    >>> history = net.fit(X, y, epochs=5000, lr=0.1)

Written to be read: every layer's forward and backward pass sit side by side, and every
initializer can say what variance it targets and why.
"""

from importlib import import_module

from . import (activations, data, dense, init, losses, optimizers, packing, registering, saving,
               seeding, shuffle, stats)
from .activations import get_activation
from .layers import Layer
from .network import Network, mlp
from .residual import LayerNorm, Residual
from .results import EnsembleResult, History
from .saving import load, save
from .training import fit, fit_ensemble, fit_packed, predict, predict_classes
from .validation import (DefinitionError, FileFormatError, ShapeError, TooLargeError,
                         UnknownNameError)

# The model knows neither its trainer, its backends nor its file format (network.py imports
# none of them); its conveniences are these functions, with the network as first argument.
Network.fit = fit
Network.predict = predict
Network.predict_classes = predict_classes
Network.save = save

# Checking a definition needs the registries' base classes, so the registries do not import
# the check: their register functions live in tinynet.registering, and become theirs here.
activations.register = registering.activation
losses.register = registering.loss
optimizers.register = registering.optimizer

__all__ = ["Layer", "Residual", "LayerNorm", "Network", "mlp", "fit", "fit_ensemble",
           "fit_packed", "predict", "predict_classes", "History",
           "EnsembleResult", "save", "load", "FileFormatError", "ShapeError", "TooLargeError",
           "UnknownNameError", "get_activation", "gradcheck", "GradcheckReport", "check",
           "DefinitionError", "kernel_source", "activations",
           "checking", "data", "dense", "diagnostics", "experiments", "init", "losses",
           "optimizers", "packing", "plots", "saving", "seeding", "shuffle", "stats", "xor"]

__version__ = "0.1.0"

LAZY = ("checking", "diagnostics", "experiments", "plots", "xor")
"""The submodules imported on first use (``tinynet.xor``, ``from tinynet import plots``), not by
``import tinynet``: the XOR bench is a harness around the library (its study figures with it,
in ``tinynet.xor.figures``), and the plots, the gradient check and the signal diagnostics are
tools a fit does not need; loading them on every start cost a sixth of ``import tinynet``
(tests/test_import_weight.py and tests/test_architecture.py keep them out). The library never
imports the harness: the layers point one way, from ``tinynet.xor`` down."""

LAZY_NAMES = {"gradcheck": "checking", "GradcheckReport": "checking", "check": "definitions",
              "kernel_source": "kernels"}
"""Names of :data:`LAZY` submodules that ``tinynet`` exports: name -> its submodule."""


def __getattr__(name: str) -> object:
    """Import a submodule of :data:`LAZY`, or the one a name of :data:`LAZY_NAMES` is in, when
    first asked for (PEP 562); the submodule (the import binds it) or the name (bound here)
    becomes an attribute of the package, so this runs once per name."""
    if name in LAZY:
        return import_module(f"{__name__}.{name}")
    if name in LAZY_NAMES:
        value = getattr(import_module(f"{__name__}.{LAZY_NAMES[name]}"), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    """The package's names, those not yet imported included."""
    return sorted({*globals(), *LAZY, *LAZY_NAMES})
