"""The machine a benchmark ran on, in one sentence for its table: the CPU's name, what LLVM
calls it, its vector extensions, the vector width Numba compiled for and the core count (the
results in ``benchmarks/results`` come from more than one machine: compare only rows measured
on the same one)."""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["cpu_name", "describe"]


def cpu_name() -> str:
    """The CPU's model name as the kernel reports it (``/proc/cpuinfo``), else the platform's."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    import platform
    return platform.processor() or platform.machine()


def describe() -> str:
    """``"CPU AMD EPYC (LLVM: znver4; AVX-512 in the CPU), 512-bit vectors compiled, 2
    cores"``: call it after tinynet's kernels are loaded, so that the width is what they were
    compiled with."""
    import llvmlite.binding as llvm
    from numba.core import config
    from numba.core.registry import cpu_target

    from tinynet.compiled import target

    features = cpu_target.target_context.codegen().magic_tuple()[2]
    name = config.CPU_NAME or llvm.get_host_cpu_name()
    has = "AVX-512" if "+avx512f" in features.split(",") else \
        "AVX2, no AVX-512" if "+avx2" in features.split(",") else "no AVX2"
    wide = "+avx512f" in features.split(",") and target.WIDE in features.split(",")
    return (f"CPU {cpu_name()} (LLVM: {name}; {has} as compiled for), "
            f"{'512' if wide else '256' if '+avx2' in features else '128'}-bit vectors "
            f"preferred, {os.cpu_count()} cores")
