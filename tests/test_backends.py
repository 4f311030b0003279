"""Backend agreement, the one suite for it: the numba backend against the NumPy reference,
ensembles against single fits, on random architectures.

The guarantees: a fit is an ensemble of one (every field of its History); member k of a
compiled ensemble is bit-identical to a compiled fit; numba and NumPy agree to 1e-12.
"""

import os
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tinynet
from helpers import ELEMENT_WISE

ACTIVATION_NAMES = ELEMENT_WISE
BACKENDS = ["numba", "numpy"]


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


def same_history(a, b):
    """Every field of two Histories equal, bit for bit, NaN equal to NaN (a diverged run)."""
    np.testing.assert_array_equal(a.loss, b.loss)
    np.testing.assert_array_equal([a.final_loss, a.diverged_epoch, a.last_wrong_epoch, a.epochs,
                                   a.record_every, a.threshold],
                                  [b.final_loss, b.diverged_epoch, b.last_wrong_epoch, b.epochs,
                                   b.record_every, b.threshold])


def same_parameters(net_a, net_b):
    for p, q in zip(net_a.parameters(), net_b.parameters()):
        np.testing.assert_array_equal(p, q)


@pytest.mark.parametrize("case", range(24))
def test_numba_fit_matches_numpy_fit(case):
    sizes, hidden, output, X, y, batch_size, shuffle = random_case(case)
    a, b = build(sizes, hidden, output, case), build(sizes, hidden, output, case)
    history_a = a.fit(X, y, epochs=40, lr=0.05, batch_size=batch_size, shuffle=shuffle,
                      threshold=0.1, backend="numba")
    history_b = b.fit(X, y, epochs=40, lr=0.05, batch_size=batch_size, shuffle=shuffle,
                      threshold=0.1, backend="numpy")
    assert history_a.diverged == history_b.diverged is False
    assert history_a.last_wrong_epoch == history_b.last_wrong_epoch
    close(history_a.loss, history_b.loss)
    for p, q in zip(a.parameters(), b.parameters()):
        close(p, q)


@pytest.mark.slow
@pytest.mark.parametrize("case,update", [
    *((case, "after_backward") for case in range(0, 24, 3)),
    *((case, "during_backward") for case in (1, 8, 11, 15, 22)),  # every output activation
])
def test_ensembles_match_single_fits(case, update):
    sizes, hidden, output, X, y, batch_size, shuffle = random_case(case)
    members = 19  # more than one block of lanes would be wasteful; an odd count pads a block
    seeds = [case * 100 + k for k in range(members)]
    settings = dict(epochs=25, lr=0.05, batch_size=batch_size, shuffle=shuffle, threshold=0.0,
                    update=update)
    by_backend = {}
    for backend in BACKENDS:
        nets = [build(sizes, hidden, output, s) for s in seeds]
        result = tinynet.fit_ensemble(nets, X, y, backend=backend, record_every=4, **settings)
        by_backend[backend] = (nets, result)
        assert not result.diverged.any()
    for k in [0, 7, members - 1]:
        for backend in BACKENDS:
            single = build(sizes, hidden, output, seeds[k])
            history = single.fit(X, y, backend=backend, record_every=4, **settings)
            nets, result = by_backend[backend]
            if backend == "numba":  # same arithmetic, bit for bit
                same_history(result[k], history)
                same_parameters(nets[k], single)
                np.testing.assert_array_equal(result.predictions[k], single.predict(X))
            else:
                close(result[k].loss, history.loss)
                assert result[k].last_wrong_epoch == history.last_wrong_epoch
                close(result.predictions[k], single.predict(X, backend="numpy"))
    (nets_a, result_a), (nets_b, result_b) = by_backend["numba"], by_backend["numpy"]
    close(result_a.loss, result_b.loss)
    close(result_a.predictions, result_b.predictions)
    np.testing.assert_array_equal(result_a.last_wrong_epoch, result_b.last_wrong_epoch)
    for net_a, net_b in zip(nets_a, nets_b):
        for p, q in zip(net_a.parameters(), net_b.parameters()):
            close(p, q)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("record_every,epochs", [(1, 30), (7, 30), (None, 30)])
def test_a_fit_is_an_ensemble_of_one(backend, record_every, epochs):
    X, y = tinynet.data.xor()
    net, member = tinynet.mlp([2, 3, 2, 1], seed=11), tinynet.mlp([2, 3, 2, 1], seed=11)
    history = net.fit(X, y, epochs=epochs, lr=0.3, backend=backend, record_every=record_every)
    result = tinynet.fit_ensemble([member], X, y, epochs=epochs, lr=0.3, backend=backend,
                                  record_every=record_every)
    same_history(result[0], history)
    same_parameters(member, net)
    assert len(history.loss) == (0 if record_every is None else epochs // record_every)


def test_record_every_keeps_every_kth_epoch_of_the_full_history():
    X, y = tinynet.data.xor()
    every_epoch = tinynet.mlp([2, 4, 1], seed=2).fit(X, y, epochs=20, lr=0.2)
    every_third = tinynet.mlp([2, 4, 1], seed=2).fit(X, y, epochs=20, lr=0.2, record_every=3)
    np.testing.assert_array_equal(every_third.loss, every_epoch.loss[2::3])
    assert every_third.final_loss == every_epoch.loss[-1] == every_epoch.final_loss


def test_print_every_runs_the_same_training_in_chunks(capsys):
    X, y = tinynet.data.xor()
    for backend in BACKENDS:
        whole = tinynet.mlp([2, 3, 1], seed=4).fit(X, y, epochs=50, lr=0.2, backend=backend)
        chunked = tinynet.mlp([2, 3, 1], seed=4).fit(X, y, epochs=50, lr=0.2, backend=backend,
                                                      print_every=7)
        same_history(chunked, whole)
    assert capsys.readouterr().out.count("loss") == 2 * 8


def test_large_case_uses_blas_and_the_sorting_path():
    # 40 samples (more than the lanes' 32-sample ranking, so np.argsort orders them) and a
    # 64 x 64 layer on batches of 16 (65,536 multiply-adds: the kernels call BLAS).
    rng = np.random.default_rng(7)
    X, y = rng.normal(size=(40, 20)), rng.uniform(-1, 1, size=(40, 3))
    sizes = [20, 64, 64, 3]
    nets = {b: [build(sizes, "tanh", "identity", s) for s in range(3)] for b in BACKENDS}
    results = {b: tinynet.fit_ensemble(nets[b], X, y, epochs=10, lr=0.02, batch_size=16,
                                       backend=b) for b in nets}
    single = build(sizes, "tanh", "identity", 1)
    history = single.fit(X, y, epochs=10, lr=0.02, batch_size=16, backend="numba")
    close(results["numba"].final_loss, results["numpy"].final_loss)
    close(results["numba"].final_loss[1], history.final_loss)
    for p, q in zip(nets["numba"][1].parameters(), single.parameters()):
        close(p, q)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("threshold", [0.5, 0.3])
def test_last_wrong_epoch_is_the_last_epoch_training_saw_a_wrong_side(backend, threshold):
    X, y = tinynet.data.xor()
    nets = [tinynet.mlp([2, 4, 1], init="he_leaky", seed=s) for s in range(6)]
    result = tinynet.fit_ensemble(nets, X, y, epochs=150, lr=0.5, threshold=threshold,
                                  backend=backend)
    assert len(set(result.last_wrong_epoch)) > 1  # the seeds differ: the test can tell
    for k in range(6):
        net = tinynet.mlp([2, 4, 1], init="he_leaky", seed=k)
        last_wrong = -1
        for epoch in range(150):  # the training loop by hand, watching each prediction
            for i in tinynet.shuffle.epoch_order(k, epoch, 4):
                y_hat = net.forward(X[i:i + 1])
                if (y_hat[0, 0] > threshold) != (y[i, 0] > threshold):
                    last_wrong = epoch
                net.backward(tinynet.losses.mse_gradient(y_hat, y[i:i + 1]))
                for p, g in zip(net.parameters(), net.gradients()):
                    p -= 0.5 * g
        assert result.last_wrong_epoch[k] == last_wrong
        np.testing.assert_allclose(result.predictions[k], net.forward(X), rtol=1e-12)


@pytest.mark.parametrize("backend", BACKENDS)
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
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        result_calm = tinynet.fit_ensemble(calm, X, y, epochs=30, lr=1e-3, backend=backend,
                                           record_every=1)
        result_wild = tinynet.fit_ensemble(wild, X, y, epochs=30, lr=1e-3, backend=backend,
                                           record_every=1)
        wild_alone = members(True)[2]
        alone = wild_alone.fit(X, y, epochs=30, lr=1e-3, backend=backend)
    assert result_wild.diverged[2] and not result_calm.diverged.any()
    assert result_wild.diverged.sum() == 1
    diverged = result_wild[2]
    assert diverged.epochs == diverged.diverged_epoch + 1 == len(diverged.loss)
    assert np.all(np.isnan(result_wild.loss[2, diverged.epochs:]))  # the record stops there
    # it ends where its own fit stops: same record, same parameters, same predictions
    if backend == "numba":
        same_history(diverged, alone)
        same_parameters(wild[2], wild_alone)
    else:  # many members and one may take differently rounded products (tinynet.dense)
        assert diverged.diverged_epoch == alone.diverged_epoch
        np.testing.assert_allclose(diverged.loss, alone.loss, rtol=1e-12)
        for p, q in zip(wild[2].parameters(), wild_alone.parameters()):
            np.testing.assert_allclose(p, q, rtol=1e-12)
    with np.errstate(all="ignore"):
        np.testing.assert_allclose(result_wild.predictions[2], wild_alone.predict(X, backend),
                                   rtol=1e-12)
    for k in [0, 1, 3, 4]:
        same_history(result_wild[k], result_calm[k])
        same_parameters(wild[k], calm[k])


@pytest.mark.slow
@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("during", [False, True], ids=["after_backward", "during_backward"])
def test_a_backend_continues_a_run_from_where_it_stopped(backend, during):
    """Two calls of 7 and 13 epochs, the second from epoch 7, train as one call of 20: the
    backends take the first epoch and continue the record and the optimizer's state (fit does
    this for print_every)."""
    from tinynet.losses import MSE
    from tinynet.optimizers import Adam
    from tinynet.results import Record, Settings
    module = tinynet.compiled.load() if backend == "numba" else tinynet.reference
    X, y = tinynet.data.xor()
    like = tinynet.mlp([2, 3, 1], seed=0)
    whole, parts = (tinynet.packing.draw(like, range(3)) for _ in range(2))
    seeds = np.arange(3)

    def epochs(first, count):
        return Settings(first, count, 0.3, 1, True, 0.5, 2, during)

    record_whole, record_parts = Record.empty(3, 20, 2), Record.empty(3, 20, 2)
    state_whole, state_parts = np.zeros((3, 3, 13)), np.zeros((3, 3, 13))  # Adam's m, v, t
    module.fit_packed(whole, state_whole, like, MSE(), Adam(), X, y, seeds, epochs(0, 20),
                      record_whole)
    module.fit_packed(parts, state_parts, like, MSE(), Adam(), X, y, seeds, epochs(0, 7),
                      record_parts)
    predictions = module.fit_packed(parts, state_parts, like, MSE(), Adam(), X, y, seeds,
                                    epochs(7, 13), record_parts)
    for field_whole, field_parts in zip(record_whole, record_parts):
        np.testing.assert_array_equal(field_parts, field_whole)
    np.testing.assert_array_equal(state_parts, state_whole)
    assert (state_whole[:, 2] == 80.0).all()  # 20 epochs of 4 steps
    np.testing.assert_array_equal(parts, whole)
    tinynet.packing.unpack(like, parts[1])
    np.testing.assert_allclose(predictions[1], like.predict(X, backend), rtol=1e-13)


@settings(max_examples=25, deadline=None, derandomize=True)
@given(sizes=st.lists(st.integers(1, 6), min_size=2, max_size=5),
       hidden=st.sampled_from(ACTIVATION_NAMES), output=st.sampled_from(ACTIVATION_NAMES),
       samples=st.integers(1, 8), shuffle=st.booleans(), seed=st.integers(0, 2**32))
def test_backends_agree_on_random_networks(sizes, hidden, output, samples, shuffle, seed):
    rng = np.random.default_rng(seed)
    X, y = rng.normal(size=(samples, sizes[0])), rng.uniform(-1, 1, size=(samples, sizes[-1]))
    batch = int(rng.integers(1, samples + 1))
    nets = [tinynet.mlp(sizes, activation=hidden, output=output, init="lecun_normal",
                        alpha=0.2, seed=seed) for _ in range(2)]
    histories = [net.fit(X, y, epochs=15, lr=0.05, batch_size=batch, shuffle=shuffle,
                         backend=backend) for net, backend in zip(nets, BACKENDS)]
    close(histories[0].loss, histories[1].loss)
    for p, q in zip(nets[0].parameters(), nets[1].parameters()):
        close(p, q)


@pytest.mark.slow
def test_kernels_run_with_the_jit_disabled():
    """With NUMBA_DISABLE_JIT=1 the kernels are plain Python: run their tests that way."""
    tests = Path(__file__).resolve().parent
    env = {**os.environ, "NUMBA_DISABLE_JIT": "1"}
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                           str(tests / "test_compiled.py")], env=env, cwd=tests.parent,
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
