"""The vector width the kernels are compiled for: 512 bits where the CPU has AVX-512.

LLVM's tuning for most CPUs with AVX-512 (Skylake-X, Ice Lake, Sapphire Rapids) prefers
256-bit vectors: it lowers the clock less. The kernels here are short loops over lanes of
float64 that do nothing but arithmetic, so 512-bit vectors do twice the work per instruction:
measured on the XOR ensembles, 1.04-1.28x as fast and bit-identical (``benchmarks/
bench_small.py``, ``tests/test_target.py``). :func:`prefer_wide_vectors` therefore adds
``-prefer-256-bit`` to the host's features in Numba's own setting
(``numba.config.CPU_FEATURES``) and creates Numba's code generator at once, so that it takes
them.

It is a setting of the whole process (Numba has one code generator), so other Numba code in
the same process gets wide vectors too. It is set in Numba's configuration, not in the
environment: a change of the environment makes Numba read every setting from it again,
dropping what was set in code (tinynet's own cache folder among them); child processes that
import tinynet choose for themselves. It is left alone where the user chose: a CPU name or
features of their own (``NUMBA_CPU_NAME``, ``NUMBA_CPU_FEATURES``, or the same in
``.numba_config.yaml``), ``NUMBA_ENABLE_AVX=0``, ``NUMBA_DISABLE_JIT``, or a code generator
that already exists (something was compiled before tinynet's kernels were imported). Numba
keys every cached kernel by the CPU's name and this feature string (``magic_tuple`` in
``numba.core.codegen``), so a cache copied to another machine is compiled again there, never
run on the wrong CPU (``tests/test_target.py``). On a CPU without AVX-512 (AVX2 only, ARM)
nothing changes.
"""

from __future__ import annotations

__all__ = ["WIDE", "prefer_wide_vectors"]

WIDE = "-prefer-256-bit"
"""The LLVM feature added: the tuning flag that keeps AVX-512 CPUs on 256-bit vectors, off."""


def prefer_wide_vectors() -> str | None:
    """Let LLVM use 512-bit vectors if the CPU has AVX-512 and the user chose no target of
    their own (see the module's docstring); return the feature string set, or None when
    nothing was changed. Called by tinynet's kernel modules when they are imported, before
    their first ``@njit``."""
    from numba.core import codegen, config
    from numba.core.registry import cpu_target

    chosen = (config.CPU_NAME is not None or config.CPU_FEATURES is not None
              or config.DISABLE_JIT or not config.ENABLE_AVX)
    if chosen or "_toplevel_target_context" in vars(cpu_target):  # theirs, or too late
        return None
    features = codegen.get_host_cpu_features()  # numba's reading of this CPU
    if "+avx512f" not in features.split(","):
        return None
    config.CPU_FEATURES = f"{features},{WIDE}"
    cpu_target.target_context.codegen()  # made now, with these features
    return config.CPU_FEATURES
