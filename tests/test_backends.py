"""The numba backend and the ensembles against the NumPy reference, on random architectures."""

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import tinynet
from tinynet.activations import ACTIVATIONS

ACTIVATION_NAMES = sorted(ACTIVATIONS)


def random_case(case: int):
    """A random architecture (depth 1-4, widths 1-16), activations, data and settings."""
    rng = np.random.default_rng(1000 + case)
    sizes = list(rng.integers(1, 17, size=rng.integers(2, 6)))
    hidden = ACTIVATION_NAMES[case % len(ACTIVATION_NAMES)]
    output = ACTIVATION_NAMES[(case // len(ACTIVATION_NAMES)) % len(ACTIVATION_NAMES)]
    n = int(rng.integers(1, 9))
    X = rng.normal(size=(n, sizes[0]))
    y = rng.uniform(-1, 1, size=(n, sizes[-1]))
    batch_size = int(rng.integers(1, n + 1))
    shuffle = bool(case % 2)
    return sizes, hidden, output, X, y, batch_size, shuffle


def build(sizes, hidden, output, seed):
    return tinynet.mlp(sizes, activation=hidden, output=output, init="lecun_normal", alpha=0.2,
                       seed=seed)


def close(a, b):
    """Agreement of two backends after training: 1e-12, relative to the size of the numbers.
    Loops and BLAS round dot products differently by an ulp or so, and SGD carries such
    differences along, amplifying them by up to about 1e4 in 40 epochs of these cases (the
    worst ensemble member of case 6 reaches 7e-12 after 40 epochs): the ensemble tests train
    for 25."""
    np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("case", range(24))
def test_numba_fit_matches_numpy_fit(case):
    sizes, hidden, output, X, y, batch_size, shuffle = random_case(case)
    a, b = build(sizes, hidden, output, case), build(sizes, hidden, output, case)
    history_a = a.fit(X, y, epochs=40, lr=0.05, batch_size=batch_size, shuffle=shuffle,
                      backend="numba")
    history_b = b.fit(X, y, epochs=40, lr=0.05, batch_size=batch_size, shuffle=shuffle,
                      backend="numpy")
    assert history_a.diverged == history_b.diverged is False
    close(history_a.loss, history_b.loss)
    for p, q in zip(a.parameters(), b.parameters()):
        close(p, q)


@pytest.mark.parametrize("case", range(0, 24, 3))
def test_ensembles_match_single_fits(case):
    sizes, hidden, output, X, y, batch_size, shuffle = random_case(case)
    members = 19  # more than one block of lanes would be wasteful; an odd count pads a block
    seeds = [case * 100 + k for k in range(members)]
    by_backend = {}
    for backend in ["numba", "numpy"]:
        nets = [build(sizes, hidden, output, s) for s in seeds]
        result = tinynet.fit_ensemble(nets, X, y, epochs=25, lr=0.05, batch_size=batch_size,
                                      shuffle=shuffle, backend=backend)
        by_backend[backend] = (nets, result)
        assert not result.diverged.any()
    for k in [0, 7, members - 1]:
        single = build(sizes, hidden, output, seeds[k])
        history = single.fit(X, y, epochs=25, lr=0.05, batch_size=batch_size, shuffle=shuffle,
                             backend="numba")
        nets, result = by_backend["numba"]
        assert result.final_loss[k] == history.loss[-1]  # same arithmetic, bit for bit
        for p, q in zip(nets[k].parameters(), single.parameters()):
            np.testing.assert_array_equal(p, q)
        np.testing.assert_array_equal(result.predictions[k], single.predict(X, backend="numba"))
        close(result.predictions[k], single.predict(X, backend="numpy"))
    (nets_a, result_a), (nets_b, result_b) = by_backend["numba"], by_backend["numpy"]
    close(result_a.final_loss, result_b.final_loss)
    close(result_a.predictions, result_b.predictions)
    for net_a, net_b in zip(nets_a, nets_b):
        for p, q in zip(net_a.parameters(), net_b.parameters()):
            close(p, q)


def test_large_case_uses_blas_and_the_sorting_path():
    # 40 samples (more than the lanes' 32-sample ranking, so np.argsort orders them) and a
    # 64 x 64 layer on batches of 16 (65,536 multiply-adds: the kernels call BLAS).
    rng = np.random.default_rng(7)
    X, y = rng.normal(size=(40, 20)), rng.uniform(-1, 1, size=(40, 3))
    sizes = [20, 64, 64, 3]
    nets = {b: [build(sizes, "tanh", "identity", s) for s in range(3)] for b in ["numba", "numpy"]}
    results = {b: tinynet.fit_ensemble(nets[b], X, y, epochs=10, lr=0.02, batch_size=16,
                                       backend=b) for b in nets}
    single = build(sizes, "tanh", "identity", 1)
    history = single.fit(X, y, epochs=10, lr=0.02, batch_size=16, backend="numpy")
    close(results["numba"].final_loss, results["numpy"].final_loss)
    close(results["numba"].final_loss[1], history.loss[-1])
    for p, q in zip(nets["numba"][1].parameters(), single.parameters()):
        close(p, q)


@pytest.mark.parametrize("backend", ["numba", "numpy"])
def test_ensemble_xor_outcomes(backend):
    X, y = tinynet.data.xor()
    nets = [tinynet.mlp([2, 3, 1], init="he_leaky", seed=s) for s in range(40)]
    result = tinynet.fit_ensemble(nets, X, y, epochs=3000, lr=0.1, backend=backend)
    assert 0 < result.solved.sum() < 40
    for k in range(40):
        correct = np.all((nets[k].forward(X) > 0.5) == (y > 0.5))
        assert result.solved[k] == correct
        assert (result.solved_epoch[k] >= 0) == correct and result.solved_epoch[k] <= 3000
    assert "EnsembleResult(members=40, epochs=3000" in repr(result)


def test_solved_epoch_is_when_training_stopped_seeing_wrong_sides():
    X, y = tinynet.data.xor()
    nets = [tinynet.mlp([2, 4, 1], init="he_leaky", seed=s) for s in range(8)]
    result = tinynet.fit_ensemble(nets, X, y, epochs=400, lr=0.5)
    for k in np.flatnonzero(result.solved):
        net = tinynet.mlp([2, 4, 1], init="he_leaky", seed=k)
        last_wrong = -1
        for epoch in range(400):  # the training loop by hand, watching each prediction
            for i in tinynet.shuffle.epoch_order(k, epoch, 4):
                y_hat = net.forward(X[i:i + 1])
                if (y_hat[0, 0] > 0.5) != (y[i, 0] > 0.5):
                    last_wrong = epoch
                net.backward(tinynet.losses.mse_gradient(y_hat, y[i:i + 1]))
                for p, g in zip(net.parameters(), net.gradients()):
                    p -= 0.5 * g
        assert result.solved_epoch[k] == last_wrong + 1


@pytest.mark.parametrize("backend", ["numba", "numpy"])
def test_a_diverging_member_does_not_touch_the_others(backend):
    X, y = tinynet.data.xor()

    def members(with_wild_one):
        nets = [tinynet.mlp([2] + [8] * 20 + [1], activation="relu", output="identity",
                            init="he_normal", seed=s) for s in range(5)]
        if with_wild_one:
            nets[2] = tinynet.mlp([2] + [8] * 20 + [1], activation="relu", output="identity",
                                  init="normal(std=10)", seed=2)
        return nets

    calm, wild = members(False), members(True)
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        result_calm = tinynet.fit_ensemble(calm, X, y, epochs=30, lr=1e-3, backend=backend)
        result_wild = tinynet.fit_ensemble(wild, X, y, epochs=30, lr=1e-3, backend=backend)
    assert result_wild.diverged[2] and not result_calm.diverged.any()
    assert result_wild.diverged.sum() == 1
    for k in [0, 1, 3, 4]:
        assert result_wild.final_loss[k] == result_calm.final_loss[k]
        for p, q in zip(wild[k].parameters(), calm[k].parameters()):
            np.testing.assert_array_equal(p, q)


def test_bad_ensembles():
    X, y = tinynet.data.xor()
    with pytest.raises(ValueError, match="at least one Network"):
        tinynet.fit_ensemble([], X, y, epochs=1, lr=0.1)
    with pytest.raises(tinynet.ShapeError, match=r"networks\[1\] \(2-3-1.*differs from "
                                                 r"networks\[0\] \(2-2-1"):
        tinynet.fit_ensemble([tinynet.mlp([2, 2, 1]), tinynet.mlp([2, 3, 1])], X, y,
                             epochs=1, lr=0.1)
    net = tinynet.mlp([2, 2, 1])
    with pytest.raises(ValueError, match=r"networks\[1\] is the same Network object"):
        tinynet.fit_ensemble([net, net], X, y, epochs=1, lr=0.1)
    with pytest.raises(ValueError, match=r"seeds must give one seed per network \(1\), got 2"):
        tinynet.fit_ensemble([net], X, y, epochs=1, lr=0.1, seeds=[1, 2])
    with pytest.raises(tinynet.UnknownNameError, match="unknown backend 'cuda'"):
        tinynet.fit_ensemble([net], X, y, epochs=1, lr=0.1, backend="cuda")
    with pytest.raises(tinynet.UnknownNameError, match="unknown backend 'jax'; expected one of: numba, numpy"):
        net.fit(X, y, epochs=1, lr=0.1, backend="jax")


def test_kernels_run_with_the_jit_disabled():
    """With NUMBA_DISABLE_JIT=1 the kernels are plain Python: run their tests that way."""
    tests = Path(__file__).resolve().parent
    env = {**os.environ, "NUMBA_DISABLE_JIT": "1"}
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                           str(tests / "test_kernels.py")], env=env, cwd=tests.parent,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert " passed" in done.stdout and "failed" not in done.stdout


def test_numba_backend_without_numba_says_what_to_do(monkeypatch):
    import importlib

    def missing(name):
        raise ModuleNotFoundError("No module named 'numba'", name="numba")

    monkeypatch.setattr(importlib, "import_module", missing)
    X, y = tinynet.data.xor()
    with pytest.raises(ModuleNotFoundError, match=r"backend='numba' needs the numba package.*"
                                                   r"pass backend='numpy'"):
        tinynet.mlp([2, 2, 1]).fit(X, y, epochs=1, lr=0.1)
