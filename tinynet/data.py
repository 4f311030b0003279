"""Small data sets for experiments."""

from __future__ import annotations

import numpy as np

__all__ = ["xor"]


def xor() -> tuple[np.ndarray, np.ndarray]:
    """The four XOR samples: X (4, 2) = (0,0), (0,1), (1,0), (1,1) and y (4, 1) = 0, 1, 1, 0."""
    X = np.array([[0.0, 0.0], [0.0, 1.0], [1.0, 0.0], [1.0, 1.0]])
    y = np.array([[0.0], [1.0], [1.0], [0.0]])
    return X, y
