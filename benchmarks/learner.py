"""The baseline of the speed comparisons: the notes' hand-written NumPy network, one sample
at a time, as a learner writes it (column vectors, W (n_out, n_in), LeakyReLU hidden layers,
a sigmoid output, MSE, per-sample SGD on a shuffled epoch)."""

from __future__ import annotations

import numpy as np

__all__ = ["LearnerLayer", "learner_loop"]


class LearnerLayer:
    """The notes' hand-written layer: column vectors, W (n_out, n_in), one sample at a time."""

    def __init__(self, n_in: int, n_out: int, activation: str, rng: np.random.Generator):
        self.W = rng.normal(0.0, 1.0, (n_out, n_in))
        self.b = np.zeros((n_out, 1))
        self.activation = activation

    def forward(self, x):
        self.x = x
        self.z = np.dot(self.W, x) + self.b
        if self.activation == "sigmoid":
            return 1.0 / (1.0 + np.exp(-self.z))
        return np.where(self.z > 0, self.z, 0.01 * self.z)

    def backward(self, grad, lr):
        if self.activation == "sigmoid":
            s = 1.0 / (1.0 + np.exp(-self.z))
            dz = grad * s * (1.0 - s)
        else:
            dz = grad * np.where(self.z > 0, 1.0, 0.01)
        dx = np.dot(self.W.T, dz)
        self.W -= lr * np.dot(dz, self.x.T)
        self.b -= lr * dz
        return dx


def learner_loop(sizes, seeds, epochs, X, y):
    for seed in seeds:
        rng = np.random.default_rng(seed)
        layers = [LearnerLayer(m, n, "sigmoid" if i == len(sizes) - 2 else "leaky_relu", rng)
                  for i, (m, n) in enumerate(zip(sizes[:-1], sizes[1:]))]
        for _ in range(epochs):
            for i in rng.permutation(len(X)):
                out = X[i].reshape(-1, 1)
                for layer in layers:
                    out = layer.forward(out)
                grad = 2.0 * (out - y[i].reshape(-1, 1))
                for layer in reversed(layers):
                    grad = layer.backward(grad, 0.01)
