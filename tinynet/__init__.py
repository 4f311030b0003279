"""tinynet: a from-scratch NumPy neural network for seeing why weight initialization matters.

    >>> import tinynet
    >>> X, y = tinynet.data.xor()
    >>> net = tinynet.mlp([2, 8, 1], init="he_leaky", seed=0)
    >>> history = net.fit(X, y, epochs=5000, lr=0.1)

Written to be read: every layer's forward and backward pass sit side by side, and every
initializer can say what variance it targets and why.
"""

from . import (activations, data, diagnostics, experiments, init, losses, plots, saving, shuffle,
               stats)
from .activations import get_activation
from .errors import ShapeError, UnknownNameError
from .layers import Layer
from .network import Network, mlp
from .ensemble import EnsembleResult, fit_ensemble
from .training import History
from .saving import FileFormatError, load

__all__ = ["Layer", "Network", "mlp", "History", "load", "FileFormatError", "fit_ensemble",
           "EnsembleResult", "ShapeError", "UnknownNameError", "get_activation", "activations",
           "data", "diagnostics", "experiments", "init", "losses", "plots", "saving", "shuffle",
           "stats"]

__version__ = "0.1.0"
