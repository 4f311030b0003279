"""The vector width of the kernels (tinynet.compiled.target): 512-bit vectors where the CPU has
AVX-512, the user's own Numba target left alone, settings made in code kept, and cached kernels
keyed by the CPU features, so that a cache built for one CPU is compiled again, not run, under
another. Each case runs in a fresh Python: the choice is made before the first compile."""

import json
import platform
import subprocess
import sys

import pytest
from helpers import checkout_environment
from numba.core.codegen import get_host_cpu_features

from tinynet.compiled.target import WIDE

HOST = get_host_cpu_features()   # numba's reading of this CPU, as a feature string
AVX512 = "+avx512f" in HOST.split(",")
NUMBA_TARGET = ("NUMBA_CPU_FEATURES", "NUMBA_CPU_NAME", "NUMBA_DISABLE_JIT", "NUMBA_ENABLE_AVX")

REPORT = """
import json, os, sys
import numpy as np
import numba
numba.config.THREADING_LAYER = "workqueue"   # settings made in code, before tinynet
numba.config.CACHE_DIR = os.environ["CHOSEN_CACHE_DIR"]
from tinynet.compiled import scalars
scalars.power_of_two(np.float64(3.0))
from numba.core.registry import cpu_target
print(json.dumps({"tuple": list(cpu_target.target_context.codegen().magic_tuple()),
                  "threading_layer": numba.config.THREADING_LAYER,
                  "cache_dir": numba.config.CACHE_DIR,
                  "hits": sum(scalars.power_of_two.stats.cache_hits.values()),
                  "misses": sum(scalars.power_of_two.stats.cache_misses.values())}))
"""


def report(cache_dir, **env) -> dict:
    """Import the kernels in a fresh Python with ``env`` and report the features Numba compiled
    for, the settings made in code, and whether power_of_two came from the cache."""
    environment = {k: v for k, v in checkout_environment().items() if k not in NUMBA_TARGET}
    environment.pop("NUMBA_CACHE_DIR", None)
    environment["CHOSEN_CACHE_DIR"] = str(cache_dir)
    environment.update(env)
    done = subprocess.run([sys.executable, "-c", REPORT], capture_output=True, text=True,
                          env=environment, timeout=300, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_wide_vectors_where_the_cpu_has_avx512(tmp_path):
    seen = report(tmp_path)
    if AVX512:
        assert seen["tuple"][2] == HOST + "," + WIDE
    else:  # nothing to gain: numba's default target, untouched
        assert seen["tuple"][2] == HOST


def test_settings_made_in_code_are_kept(tmp_path):
    """Choosing the features must not make Numba read its settings from the environment again
    (which dropped tinynet's own cache folder, and any setting made in code)."""
    seen = report(tmp_path)
    assert seen["threading_layer"] == "workqueue"
    assert seen["cache_dir"] == str(tmp_path)
    assert any(tmp_path.iterdir())   # and the cache went there


@pytest.mark.parametrize("env", [{"NUMBA_CPU_FEATURES": HOST}, {"NUMBA_CPU_NAME": "generic"},
                                 {"NUMBA_ENABLE_AVX": "0"}],
                         ids=["own features", "generic CPU", "no AVX"])
def test_the_users_own_target_is_left_alone(tmp_path, env):
    seen = report(tmp_path, **env)
    assert WIDE not in seen["tuple"][2]
    if "NUMBA_CPU_NAME" in env:
        assert seen["tuple"][1:] == ["generic", ""]
    if "NUMBA_ENABLE_AVX" in env:
        assert "+avx512f" not in seen["tuple"][2].split(",")


@pytest.mark.slow  # three fresh Pythons, two of them compiling
@pytest.mark.skipif(platform.machine().lower() not in ("x86_64", "amd64"),
                    reason="the other CPU below is described by x86 feature names")
def test_a_cache_built_for_other_cpu_features_is_compiled_again(tmp_path):
    first = report(tmp_path)
    assert first["misses"] == 1 and first["hits"] == 0   # compiled, and saved
    again = report(tmp_path)
    assert again["hits"] == 1 and again["misses"] == 0   # the same CPU: loaded
    other = HOST.replace("+avx512f", "-avx512f").replace("+avx2", "-avx2")  # an older CPU
    elsewhere = report(tmp_path, NUMBA_CPU_FEATURES=other)
    assert elsewhere["tuple"][2] == other
    assert elsewhere["misses"] == 1 and elsewhere["hits"] == 0   # not the first one's code


TRAIN = """
import sys
import numpy as np
import tinynet
from tinynet.packing import draw
like = tinynet.mlp([2, 3, 1], seed=0)
theta = draw(like, range(100))
tinynet.fit_packed(like, theta, *tinynet.data.xor(), seeds=range(100), epochs=60, lr=0.5)
sys.stdout.write(theta.tobytes().hex())
"""


@pytest.mark.slow
@pytest.mark.skipif(not AVX512, reason="only a CPU with AVX-512 has the two widths to compare")
def test_wide_and_narrow_vectors_train_the_same_networks_bit_for_bit(tmp_path):
    """The lanes never add across each other, so the vector width cannot change a result:
    100 seeds of 2-3-1 (the kernel generated for the layout, shuffled epochs, sigmoid's exp)
    trained with 512-bit vectors and with numba's default 256-bit ones, each run compiling
    into caches of its own."""
    runs = []
    for name, features in (("wide", None), ("narrow", HOST)):
        environment = {k: v for k, v in checkout_environment().items()
                       if k not in NUMBA_TARGET}
        environment["NUMBA_CACHE_DIR"] = str(tmp_path / name / "numba")
        environment["TINYNET_KERNEL_DIR"] = str(tmp_path / name / "kernels")
        if features is not None:
            environment["NUMBA_CPU_FEATURES"] = features
        done = subprocess.run([sys.executable, "-c", TRAIN], capture_output=True, text=True,
                              env=environment, timeout=600, check=True)
        runs.append(done.stdout)
    assert len(runs[0]) == 2 * 8 * 100 * 13
    assert runs[0] == runs[1]
