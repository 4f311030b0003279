"""Train on the generic kernels: the benchmarks' way to time the generic lane and one-network
kernels (tinynet.compiled.lanes and single, through the kit) on layouts small enough for a
kernel generated per layout."""

from __future__ import annotations

import contextlib
import importlib
from collections.abc import Iterator
from types import ModuleType

__all__ = ["generic_kernels"]


@contextlib.contextmanager
def generic_kernels(package: ModuleType) -> Iterator[None]:
    """Inside the block, ``package`` (tinynet, or an earlier version of it imported under
    another name) trains every layout on its generic kernels, as every layout did before the
    kernels generated per layout: its ``compiled.codegen.MAX_UNROLLED_WORK`` is -1."""
    codegen = importlib.import_module(f"{package.__name__}.compiled.codegen")
    saved, codegen.MAX_UNROLLED_WORK = codegen.MAX_UNROLLED_WORK, -1
    try:
        yield
    finally:
        codegen.MAX_UNROLLED_WORK = saved
