"""Fixtures shared by the test modules, and the suite's thread settings."""

import os

# One BLAS thread, set before NumPy loads: with two, OpenBLAS slows 10-70x whenever the other
# core is busy (Numba's threads, a second process), which made the suite's time erratic.
for variable in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(variable, "1")

import pytest  # noqa: E402

from tinynet.init import registry  # noqa: E402


@pytest.fixture
def restore_registry():
    """Let a test register initializers without leaving them behind."""
    saved = dict(registry._REGISTRY)
    yield
    registry._REGISTRY.clear()
    registry._REGISTRY.update(saved)
