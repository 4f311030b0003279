"""The vector width the kernels are compiled for: 512 bits where the CPU has AVX-512.

LLVM's tuning for the CPUs with AVX-512 (Skylake-X, Ice Lake, Sapphire Rapids, Zen 4) prefers
256-bit vectors: it lowers the clock less. The kernels here are short loops over lanes of
float64 that do nothing but arithmetic, so 512-bit vectors do twice the work per instruction:
measured on the XOR ensembles, 1.04-1.28x as fast and bit-identical (``benchmarks/
bench_small.py``). :func:`prefer_wide_vectors` therefore adds ``-prefer-256-bit`` to the host's
features, through Numba's own setting ``NUMBA_CPU_FEATURES``, before the first compile.

It is a setting of the whole process (Numba has one code generator), so other Numba code in
the same process gets wide vectors too, and child processes inherit it through the
environment. It is left alone where the user chose: a ``NUMBA_CPU_FEATURES`` or
``NUMBA_CPU_NAME`` of their own, or ``NUMBA_DISABLE_JIT``. Numba keys every cached kernel by
the CPU's name and this feature string (``magic_tuple`` in ``numba.core.codegen``), so a cache
copied to another machine is compiled again there, never run on the wrong CPU
(``tests/test_target.py``). On a CPU without AVX-512 (AVX2 only, ARM) nothing changes.
"""

from __future__ import annotations

import os

__all__ = ["WIDE", "prefer_wide_vectors"]

WIDE = "-prefer-256-bit"
"""The LLVM feature added: the tuning flag that keeps AVX-512 CPUs on 256-bit vectors, off."""


def _users_own() -> str | None:
    """The variable by which the user chose the target themselves, if any."""
    for name in ("NUMBA_CPU_FEATURES", "NUMBA_CPU_NAME"):
        if os.environ.get(name):
            return name
    if os.environ.get("NUMBA_DISABLE_JIT", "0") not in ("", "0"):
        return "NUMBA_DISABLE_JIT"
    return None


def prefer_wide_vectors() -> str | None:
    """Let LLVM use 512-bit vectors if the CPU has AVX-512 and the user set none of
    ``NUMBA_CPU_FEATURES``, ``NUMBA_CPU_NAME``, ``NUMBA_DISABLE_JIT``; return the feature
    string set, or None when nothing was changed. Call it before the process's first Numba
    compile (tinynet's kernel modules call it when they are imported); later it is harmless,
    and changes nothing already compiled."""
    if _users_own() is not None:
        return None
    import llvmlite.binding as llvm

    try:
        host = llvm.get_host_cpu_features()
    except RuntimeError:  # LLVM cannot read this CPU's features: leave numba's default
        return None
    if not host.get("avx512f"):
        return None
    features = host.flatten() + "," + WIDE
    os.environ["NUMBA_CPU_FEATURES"] = features
    from numba.core import config

    config.reload_config()
    return features
