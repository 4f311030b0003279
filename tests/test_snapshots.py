"""tinynet.snapshots.fit_snapshots: the parameters after chosen epochs, the run bit for bit
the one tinynet.fit_packed and tinynet.fit make."""

import numpy as np
import pytest

import tinynet
from tinynet.packing import draw, pack
from tinynet.snapshots import fit_snapshots

SEEDS = [3, 4, 5]
SETTINGS = dict(epochs=300, lr=0.05, shuffle=True, loss="bce", optimizer="momentum")


def task():
    X, y = tinynet.data.moons(n=40, seed=1)
    like = tinynet.mlp([2, 6, 1], init="he_normal", seed=SEEDS[0])
    return like, X, y


@pytest.mark.parametrize("backend", ["numba", "numpy"])
def test_the_last_snapshot_is_fit_packed_bit_for_bit(backend):
    like, X, y = task()
    plain = draw(like, SEEDS)
    tinynet.fit_packed(like, plain, X, y, seeds=SEEDS, backend=backend, **SETTINGS)
    theta = draw(like, SEEDS)
    shots = fit_snapshots(like, theta, X, y, seeds=SEEDS, at=[0, 1, 7, 50, 299, 300],
                          backend=backend, **SETTINGS)
    assert shots.theta.shape == (6, 3, theta.shape[1])
    assert np.array_equal(shots.theta[0], draw(like, SEEDS))
    assert np.array_equal(shots.theta[-1], plain) and np.array_equal(theta, plain)
    assert shots.epochs.tolist() == [0, 1, 7, 50, 299, 300]


def test_a_snapshot_is_the_run_of_that_many_epochs_and_the_last_is_fit_s():
    like, X, y = task()
    shots = fit_snapshots(like, draw(like, SEEDS), X, y, seeds=SEEDS, at=[20, 120],
                          **SETTINGS)
    shorter = draw(like, SEEDS)
    tinynet.fit_packed(like, shorter, X, y, seeds=SEEDS, **{**SETTINGS, "epochs": 20})
    assert np.array_equal(shots.theta[0], shorter)
    net = tinynet.mlp([2, 6, 1], init="he_normal", seed=SEEDS[1])
    tinynet.fit(net, X, y, **SETTINGS)  # one network alone, the run to the end
    assert np.array_equal(fit_snapshots(like, draw(like, SEEDS), X, y, seeds=SEEDS,
                                        at=[300], **SETTINGS).theta[-1][1], pack(net))
    assert shots.result.loss.shape == (3, 0) and shots.result.epochs == 300


@pytest.mark.parametrize("at, error, words", [
    ([0, 10, 10], ValueError, r"at must increase, got at\[1\]=10 then at\[2\]=10"),
    ([0, 301], ValueError, r"at\[1\] must be an integer from 0 to 300, got 301"),
    ([], TypeError, "at must be a non-empty sequence of epochs from 0 to 300"),
    ("10", TypeError, "at must be a non-empty sequence"),
])
def test_bad_snapshot_epochs_are_refused_by_name(at, error, words):
    like, X, y = task()
    with pytest.raises(error, match=words):
        fit_snapshots(like, draw(like, SEEDS), X, y, seeds=SEEDS, at=at, **SETTINGS)
