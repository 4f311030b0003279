"""Small two-dimensional data sets, generated and seeded: nothing is downloaded.

Every generator but the four-point :func:`xor` takes ``n`` (samples), ``noise`` (the standard
deviation of Gaussian noise added to each coordinate) and ``seed`` (of the
``numpy.random.Generator`` that draws them), and returns X (n, 2) float64 and y (n, 1) in
{0, 1}: ``n // 2`` samples of class 0 and the rest of class 1, in random order. The same
arguments give the same data; a second draw with another seed is a held-out set from the same
distribution. With ``noise=0`` every point lies exactly on its class's curve:

==========  ================================================================================
xor         the four corners of the unit square (``n`` given: corners drawn at random)
moons       two interleaved half circles: (cos t, sin t) and (1 − cos t, 0.5 − sin t)
circles     two concentric circles, radius 1 (class 0) and ``factor`` (class 1)
spirals     two interleaved spirals r = t / (2π turns) at angle t and t + π
blobs       two Gaussian clouds around (−1, 0) and (1, 0), with standard deviation ``noise``
==========  ================================================================================
"""

from __future__ import annotations

import numpy as np

from .validation import check_float, check_int, check_memory, check_seed

__all__ = ["xor", "moons", "circles", "spirals", "blobs", "DATASETS"]


def xor(n: int | None = None, noise: float = 0.0,
        seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """The four XOR samples: X (4, 2) = (0,0), (0,1), (1,0), (1,1) and y (4, 1) = 0, 1, 1, 0.

    Given ``n``, ``n`` samples instead: corners of class 0 ((0,0), (1,1)) and of class 1
    ((0,1), (1,0)) drawn at random, each point moved by N(0, noise²) noise."""
    if n is None:
        if noise != 0.0:
            raise ValueError(f"noise needs n, the number of samples to draw; got noise={noise!r} "
                             "without n")
        X = np.array([[0.0, 0.0], [0.0, 1.0], [1.0, 0.0], [1.0, 1.0]])
        return X, np.array([[0.0], [1.0], [1.0], [0.0]])
    rng, labels, noise = _start(n, noise, seed)
    corner = rng.integers(0, 2, size=n).astype(float)  # which of the class's two corners
    X = np.column_stack([corner, np.where(labels == 1, 1.0 - corner, corner)])
    return _finish(rng, X, labels, noise)


def moons(n: int = 200, noise: float = 0.1, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Two interleaved half circles: class 0 (cos t, sin t), class 1 (1 − cos t, 0.5 − sin t),
    t uniform in [0, π]."""
    rng, labels, noise = _start(n, noise, seed)
    t = rng.uniform(0.0, np.pi, size=n)
    X = np.where(labels[:, None] == 0, np.column_stack([np.cos(t), np.sin(t)]),
                 np.column_stack([1.0 - np.cos(t), 0.5 - np.sin(t)]))
    return _finish(rng, X, labels, noise)


def circles(n: int = 200, noise: float = 0.05, seed: int = 0,
            factor: float = 0.5) -> tuple[np.ndarray, np.ndarray]:
    """Two concentric circles: class 0 on radius 1, class 1 on radius ``factor`` (0 < factor
    < 1), at uniform angles."""
    factor = check_float("factor", factor, minimum=0.0, inclusive=False)
    if factor >= 1.0:
        raise ValueError(f"factor must be below 1 (the inner circle's radius), got {factor!r}")
    rng, labels, noise = _start(n, noise, seed)
    angle = rng.uniform(0.0, 2.0 * np.pi, size=n)
    radius = np.where(labels == 0, 1.0, factor)
    return _finish(rng, radius[:, None] * np.column_stack([np.cos(angle), np.sin(angle)]),
                   labels, noise)


def spirals(n: int = 200, noise: float = 0.05, seed: int = 0,
            turns: float = 1.5) -> tuple[np.ndarray, np.ndarray]:
    """Two interleaved spirals of ``turns`` turns: at angle t (uniform in [0, 2π turns]) the
    radius is t / (2π turns), from 0 to 1; class 1 is class 0 turned by π."""
    turns = check_float("turns", turns, minimum=0.0, inclusive=False)
    rng, labels, noise = _start(n, noise, seed)
    t = rng.uniform(0.0, 2.0 * np.pi * turns, size=n)
    angle = t + np.pi * labels
    radius = t / (2.0 * np.pi * turns)
    return _finish(rng, radius[:, None] * np.column_stack([np.cos(angle), np.sin(angle)]),
                   labels, noise)


def blobs(n: int = 200, noise: float = 0.5, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Two Gaussian clouds: class 0 around (−1, 0), class 1 around (1, 0), each coordinate with
    standard deviation ``noise`` (noise 0: every point on its centre)."""
    rng, labels, noise = _start(n, noise, seed)
    centres = np.column_stack([np.where(labels == 0, -1.0, 1.0), np.zeros(n)])
    return _finish(rng, centres, labels, noise)


DATASETS = {"xor": xor, "moons": moons, "circles": circles, "spirals": spirals, "blobs": blobs}
"""Every generator, by name."""


def _start(n: int, noise: float, seed: int) -> tuple[np.random.Generator, np.ndarray, float]:
    """Check the common arguments; return the generator, the labels (n // 2 zeros, then ones)
    and the noise."""
    n = check_int("n", n, minimum=2)
    check_memory(f"a data set of n={n:,} samples", 8 * 8 * n, "draw fewer samples")
    noise = check_float("noise", noise, minimum=0.0, inclusive=True)
    rng = np.random.default_rng(check_seed("seed", seed))
    return rng, (np.arange(n) >= n // 2).astype(float), noise


def _finish(rng: np.random.Generator, X: np.ndarray, labels: np.ndarray,
            noise: float) -> tuple[np.ndarray, np.ndarray]:
    """Add the noise, shuffle the rows, and return X (n, 2) and y (n, 1)."""
    X = X + rng.normal(0.0, noise, size=X.shape) if noise > 0 else X.astype(float)
    order = rng.permutation(len(X))
    return np.ascontiguousarray(X[order]), labels[order][:, None].copy()
