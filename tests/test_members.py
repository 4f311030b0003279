"""Ensembles of networks whose single fit calls BLAS (issue 42): each member trains as its own
single fit (the kit's ``fit_members``), the members over the cores, BLAS on one thread each;
so a member equals its single fit bit for bit, record and outputs included, the single fit's
BLAS on two threads (OpenBLAS splits a GEMM's output between its threads, each element summed
as on one)."""

import numpy as np
import pytest
from threadpoolctl import threadpool_limits

import tinynet
from tinynet.compiled import backend, single
from tinynet.packing import layout

pytestmark = pytest.mark.slow  # compiles a kit's fit_members and fit_network


def test_which_layouts_train_as_single_fits():
    wide = layout(tinynet.mlp([8, 64, 64, 2]))
    assert backend.calls_blas([8, 64, 64, 2], 16) and not backend.calls_blas([8, 64, 64, 2], 4)
    assert 16 * 64 * 64 >= single.BLAS_MIN_WORK > 4 * 64 * 64
    assert backend.lane_width(5, wide, 16) == 5  # no lanes: a member is a single fit


@pytest.mark.parametrize("loss,output", [("mse", "sigmoid"), ("cross_entropy", "softmax")])
def test_a_member_is_its_single_fit_bit_for_bit(loss, output):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 8))
    y = rng.integers(0, 2, size=40)
    targets = y if output == "softmax" else y[:, None].astype(float)
    nets = [tinynet.mlp([8, 64, 64, 2 if output == "softmax" else 1], activation="tanh",
                        output=output, seed=s) for s in range(3)]
    nets[2].layers[0].W[0, 0] = np.inf  # diverges: stops where its single fit stops
    alone = [tinynet.mlp([8, 64, 64, 2 if output == "softmax" else 1], activation="tanh",
                         output=output, seed=s) for s in range(3)]
    alone[2].layers[0].W[0, 0] = np.inf
    settings = dict(epochs=6, lr=0.5, batch_size=16,
                    loss=loss, optimizer="adam", record_every=1)
    result = tinynet.fit_ensemble(nets, X, targets, **settings)
    for k, net in enumerate(alone):
        with threadpool_limits(2, user_api="blas"):  # as a user's fit calls BLAS (the suite
            history = net.fit(X, targets, **settings)  # pins one thread: tests/conftest.py)
        for ours, theirs in zip(nets[k].parameters(), net.parameters()):
            assert np.array_equal(ours, theirs)
        assert np.array_equal(result[k].loss, history.loss, equal_nan=True)
        assert result[k].diverged_epoch == history.diverged_epoch
        assert result[k].last_wrong_epoch == history.last_wrong_epoch
        assert np.array_equal(result.predictions[k], tinynet.predict(net, X), equal_nan=True)
    assert result[2].diverged and not result[0].diverged
