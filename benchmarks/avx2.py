"""The environment that makes Numba compile for an AVX2-only CPU on this host, for a benchmark's
child process.

Why: the compiled kernels' speed depends on the vector registers they are compiled for. On an
AVX-512 CPU Numba has 32 registers of 8 float64 (and tinynet lets LLVM use them all:
:mod:`tinynet.compiled.target`); an AVX2-only CPU has 16 registers of 4 float64, so a loop
over many lanes, or a kernel with many live values, spills to memory there when it does not
here. The generic ensemble kernel (:mod:`tinynet.compiled.lanes`) once ran at the hand-written
loop's pace on AVX-512 and at under half of it on AVX2. To see that without an AVX2 machine,
a benchmark runs itself again in a child process with this environment: Numba's
``NUMBA_CPU_NAME`` set to an AVX2-only CPU of the same family and ``NUMBA_CPU_FEATURES`` set
to the host's own feature string with every AVX-512 extension turned off (``+avx512*`` made
``-avx512*``). The code then runs here as it would there, instruction for instruction; only
the timings of the execution units are this host's. Numba keys its cache by both settings,
so the two kinds of kernel never mix in one cache folder.

    import subprocess, sys
    from avx2 import avx2_environment
    subprocess.run([sys.executable, "benchmarks/bench_wide.py"],
                   env={**os.environ, **avx2_environment()})
"""

from __future__ import annotations

__all__ = ["AVX2_CPU", "avx2_environment", "avx2_features"]

AVX2_CPU = "znver3"
"""LLVM's name of an AVX2-only CPU: AMD Zen 3, the generation before this host's Zen 4 (the
scheduling model stays AMD's). On an Intel host, ``"skylake"`` (not ``skylake-avx512``)."""


def avx2_features(features: str) -> str:
    """``features`` (LLVM's comma-separated ``+name``/``-name`` list) with every AVX-512
    extension turned off: ``+avx512f`` becomes ``-avx512f``, and so on; the rest unchanged."""
    return ",".join("-" + flag[1:] if flag.startswith("+avx512") else flag
                    for flag in features.split(","))


def avx2_environment(cpu: str = AVX2_CPU) -> dict[str, str]:
    """``{"NUMBA_CPU_NAME": cpu, "NUMBA_CPU_FEATURES": ...}``: Numba's settings for a child
    process that compiles as for an AVX2-only CPU named ``cpu``, with this host's features
    less AVX-512 (:func:`avx2_features`). Raises ``ValueError`` when the host has no AVX2, as
    the emulated CPU's code would not run here."""
    from numba.core.codegen import get_host_cpu_features

    host = get_host_cpu_features()
    if "+avx2" not in host.split(","):
        raise ValueError(f"avx2_environment needs a host with AVX2, got features {host!r}")
    return {"NUMBA_CPU_NAME": cpu, "NUMBA_CPU_FEATURES": avx2_features(host)}
