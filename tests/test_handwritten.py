"""The hand-written bar of benchmarks/bench_small.py: its scalar loop runs on either exp, by
name, and trains what tinynet's single fit trains."""

import importlib
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import tinynet
from helpers import checkout_environment

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"


@pytest.fixture(scope="module")
def handwritten():
    """benchmarks/handwritten.py, imported from the checkout."""
    sys.path.insert(0, str(BENCHMARKS))
    try:
        yield importlib.import_module("handwritten")
    finally:
        sys.path.remove(str(BENCHMARKS))


def test_an_unknown_exp_is_refused_by_name(handwritten):
    theta = tinynet.packing.pack(tinynet.mlp([2, 2, 1], seed=3))
    X, y = tinynet.data.xor()
    with pytest.raises(ValueError, match=r"^exp must be one of 'math.exp', 'vector_exp', "
                                         r"got 'exp2'$"):
        handwritten.train_one(theta, [2, 2, 1], X, y, 1, 0.01, exp="exp2")


@pytest.mark.slow
@pytest.mark.parametrize("sizes", [[2, 2, 1], [2, 8, 1]])
@pytest.mark.parametrize("exp", ["vector_exp", "math.exp"])
def test_the_scalar_loop_trains_what_a_single_fit_trains(handwritten, sizes, exp):
    """Within 1e-12 after 20 epochs of XOR on either exp, not bit for bit: the loop writes
    the sigmoid as 1 / (1 + e^-z) and its slope as s (1 - s), and adds the bias first."""
    net = tinynet.mlp(sizes, seed=3)
    theta = tinynet.packing.pack(net)
    X, y = tinynet.data.xor()
    tinynet.fit(net, X, y, epochs=20, lr=0.01, shuffle=False, backend="numba")
    theirs = handwritten.train_one(theta, sizes, X, y, 20, 0.01, exp=exp)
    assert np.abs(theirs - tinynet.packing.pack(net)).max() <= 1e-12
    assert not np.array_equal(theirs, theta)  # it trained


@pytest.mark.slow
def test_a_second_process_runs_the_scalar_loop_from_numbas_cache(tmp_path):
    """Nothing is compiled, or added to numba's cache, the second time: a compiled function
    that takes the exp as an argument would be keyed by the exp's address in memory, and
    compiled anew (and cached once more) by every process."""
    script = ("import sys, tinynet; sys.path.insert(0, sys.argv[1]); import handwritten; "
              "X, y = tinynet.data.xor(); theta = tinynet.packing.pack(tinynet.mlp([2, 2, 1])); "
              "[handwritten.train_one(theta, [2, 2, 1], X, y, 1, 0.01, exp=exp) "
              "for exp in handwritten.EXPS]")
    environment = {**checkout_environment(), "NUMBA_CACHE_DIR": str(tmp_path / "numba"),
                   "TINYNET_KERNEL_DIR": str(tmp_path / "kernels")}
    files = []
    for _ in range(2):
        subprocess.run([sys.executable, "-c", script, str(BENCHMARKS)], check=True,
                       env=environment, timeout=600)
        files.append(sorted(path.name for path in (tmp_path / "numba").rglob("*")))
    assert files[0] and files[1] == files[0]
