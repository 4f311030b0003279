"""Fixtures shared by the test modules, and the suite's thread settings."""

import os
import sys
from pathlib import Path

# One BLAS thread, set before NumPy loads: with two, OpenBLAS slows 10-70x whenever the other
# core is busy (Numba's threads, a second process), which made the suite's time erratic.
for variable in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(variable, "1")

# The example scripts import one another (examples/ is on the path when one runs); so here,
# with tutorial/ for its notebook maker.
for folder in ("examples", "tutorial"):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / folder))

import subprocess  # noqa: E402

import pytest  # noqa: E402

from tinynet import activations, losses, optimizers  # noqa: E402
from tinynet.init import registry  # noqa: E402

pytest_plugins = ["still_running"]  # tests/still_running.py: no test silent for a minute


@pytest.fixture
def restore_registry():
    """Let a test register initializers without leaving them behind."""
    saved = dict(registry._REGISTRY)
    yield
    registry._REGISTRY.clear()
    registry._REGISTRY.update(saved)


@pytest.fixture
def restore_registries():
    """Let a test register activations, losses and optimizers without leaving them behind."""
    saved = [(names, dict(names)) for names in
             (activations.ACTIVATIONS, losses.LOSSES, optimizers.OPTIMIZERS)]
    yield
    for names, contents in saved:
        names.clear()
        names.update(contents)


@pytest.fixture(autouse=True)
def generic_kernels_unless_marked(request, monkeypatch):
    """Train on the generic compiled kernels, except in tests marked ``unrolled``.

    Every small layout gets a kernel generated for it (tinynet.compiled.unrolled), which takes
    2-6 s to compile; the suite trains hundreds of layouts, so most tests run the generic
    kernels, and the tests marked ``unrolled`` (tests/test_unrolled.py, the README's end-to-end
    runs) hold the generated kernels bit for bit to them.
    """
    if request.node.get_closest_marker("unrolled") is None:
        from tinynet.compiled import codegen
        monkeypatch.setattr(codegen, "MAX_UNROLLED_WORK", -1)


WARM_UP_SELECTION = 500
"""Start the warm-up only for a run of at least this many tests: the fast suite, not one file."""


def pytest_collection_finish(session):
    """Start tests/warm_up.py beside the fast suite: the generic kernels that its late tests
    first train on compile on the other core meanwhile, into the cache the tests read. Not for
    the slow tests (they compile kernels of their own), nor a run of a few tests, nor with
    numba's JIT off."""
    if (len(session.items) < WARM_UP_SELECTION or os.environ.get("NUMBA_DISABLE_JIT") == "1"
            or "not slow" not in (session.config.getoption("markexpr") or "")):
        return
    from helpers import checkout_environment
    session.config.warm_up = subprocess.Popen(
        [sys.executable, str(Path(__file__).with_name("warm_up.py"))],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=checkout_environment())


def pytest_sessionfinish(session):
    warm_up = getattr(session.config, "warm_up", None)
    if warm_up is not None:
        warm_up.kill()
        warm_up.wait()

