"""Fixtures shared by the test modules."""

import pytest

from tinynet.init import registry


@pytest.fixture
def restore_registry():
    """Let a test register initializers without leaving them behind."""
    saved = dict(registry._REGISTRY)
    yield
    registry._REGISTRY.clear()
    registry._REGISTRY.update(saved)
