"""tinynet: a from-scratch NumPy neural network for seeing why weight initialization matters.

    >>> import tinynet
    >>> X, y = tinynet.data.xor()
    >>> net = tinynet.mlp([2, 8, 1], init="he_leaky", seed=0)
    >>> history = net.fit(X, y, epochs=5000, lr=0.1)

Written to be read: every layer's forward and backward pass sit side by side, and every
initializer can say what variance it targets and why.
"""

from . import (activations, checking, data, dense, diagnostics, experiments, init, losses,
               optimizers, packing, plots, saving, seeding, shuffle, stats, xor)
from .activations import get_activation
from .checking import GradcheckReport, gradcheck
from .layers import Layer
from .network import Network, mlp
from .results import EnsembleResult, History
from .saving import load, save
from .training import fit, fit_ensemble, fit_packed, predict
from .validation import FileFormatError, ShapeError, TooLargeError, UnknownNameError

# The model knows neither its trainer, its backends nor its file format (network.py imports
# none of them); its conveniences are these functions, with the network as first argument.
Network.fit = fit
Network.predict = predict
Network.save = save

__all__ = ["Layer", "Network", "mlp", "fit", "fit_ensemble", "fit_packed", "predict", "History",
           "EnsembleResult", "save", "load", "FileFormatError", "ShapeError", "TooLargeError",
           "UnknownNameError", "get_activation", "gradcheck", "GradcheckReport", "activations",
           "checking", "data", "dense", "diagnostics", "experiments", "init", "losses",
           "optimizers", "packing", "plots", "saving", "seeding", "shuffle", "stats", "xor"]

__version__ = "0.1.0"
