"""One seed of a playground study watched: trained again by tinynet.snapshots.fit_snapshots
on the study's own settings, so its last snapshot is the study's trained network; the replay's
numbers are the library's forward pass; and Stop during a compile answers at once."""

from __future__ import annotations

import time

import numpy as np
import pytest
from playground_server import Served
from test_playground_api import unpacked

from tinynet.evaluation import scores
from tinynet.losses import get_loss
from tinynet.packing import draw
from tinynet.playground import read_form
from tinynet.playground.form import FormError
from tinynet.playground.payload import boundaries, extent, outputs_at
from tinynet.playground.watch import UNIT_RESOLUTION, Watch, snapshot_epochs, unit_maps, \
    watch_payload
from tinynet.xor import build_network, run_study

SMALL = {"seeds": "12", "epochs": "300", "first": "40", "data": "moons", "n": "60",
         "shuffle": "1"}


def test_the_snapshot_epochs_start_at_0_thick_early_and_end_at_the_last():
    assert snapshot_epochs(2000)[:8] == [0, 1, 2, 3, 4, 5, 6, 7]
    assert snapshot_epochs(2000)[-1] == 2000 and len(snapshot_epochs(2000)) <= 40
    assert snapshot_epochs(1) == [0, 1]
    assert snapshot_epochs(3) == [0, 1, 2, 3]


def test_a_watched_seed_ends_as_the_study_trained_it_bit_for_bit():
    form = read_form(SMALL)
    study = run_study(form.arms, form.setup, progress=False)
    seed = 45
    payload = watch_payload(Watch(form, seed))
    assert payload["epochs"] == snapshot_epochs(300) and payload["widths"] == [2, 8, 1]
    X, y = form.setup.task.training_data()
    for arm, result, shown in zip(form.arms, study.results, payload["arms"], strict=True):
        theta = unpacked(shown["theta"])
        like = build_network(form.setup, arm, seed)
        assert np.array_equal(theta[0], draw(like, [seed])[0])
        assert np.array_equal(theta[-1], result.trained[seed - 40])  # the study's, every bit
        outputs = next(outputs_at(theta, like, X))[1][-1]
        losses, accuracies = scores(outputs, y, get_loss(arm.loss))
        assert shown["loss"] == pytest.approx(losses.tolist(), rel=1e-12)
        assert shown["accuracy"] == accuracies.tolist()
        assert np.array_equal(unpacked(shown["output"]), boundaries(theta, like, extent(X)))
        maps, scales = unit_maps(theta, like, extent(X))
        assert unpacked(shown["units"][0]).shape == (len(theta), 8, UNIT_RESOLUTION,
                                                     UNIT_RESOLUTION)
        assert np.array_equal(unpacked(shown["units"][0]), maps[0])


def test_a_units_map_is_its_output_over_the_plane_scaled_by_its_largest():
    form = read_form({**SMALL, "hidden": "3"})
    like = build_network(form.setup, form.arms[0], 7)
    theta = draw(like, [7])
    box = [-1.0, 1.0, -1.0, 1.0]
    maps, scales = unit_maps(theta, like, box)
    top_left = np.array([[-1.0, 1.0]])  # the grid's first point
    W, b = like.layers[0].W, like.layers[0].b  # leaky_relu of W x + b
    z = top_left @ W.T + b
    a = np.where(z > 0, z, 0.01 * z)[0]
    assert maps[0][0, :, 0, 0].tolist() == np.rint(125 + 125 * a / scales[0][0]).tolist()
    assert np.all(np.abs(maps[0].astype(int) - 125).max(axis=(-2, -1)) == 125)


def test_a_watch_is_refused_by_name():
    form = read_form({"data": "digits", "loss": "cross_entropy", "activation": "relu",
                      "seeds": "2", "epochs": "1", "batch": "32"})
    with pytest.raises(FormError) as error:
        Watch(form, 0)
    assert list(error.value.errors) == ["data"]
    with pytest.raises(FormError, match="seed must be") as error:
        Watch(read_form(SMALL), -1)


@pytest.fixture(scope="module")
def served():
    served = Served()
    yield served
    served.close()


def test_the_api_watches_a_seed_of_the_study_it_trained(served):
    study = served.result(SMALL)
    job_id = served.start_watch({**SMALL, "seed": "47"})
    job = served.wait(job_id)
    assert job["state"] == "done" and job["kind"] == "watch"
    status, payload = served.json(f"api/studies/{job_id}/result")
    assert status == 200 and payload["seed"] == 47
    for arm, shown in zip(study["arms"], payload["arms"], strict=True):
        last = unpacked(shown["theta"])[-1].astype(np.float32)  # the page's weights: float32
        assert np.array_equal(last, unpacked(arm["trained"])[7])
        assert np.array_equal(unpacked(shown["output"])[-1], unpacked(arm["boundaries"])[7])
    status, body = served.json("api/watch", {**SMALL, "seed": "x"})
    assert status == 400 and list(body["errors"]) == ["seed"]


def test_stop_during_a_compile_answers_at_once(tmp_path, monkeypatch):
    """A trainer with empty kernel caches compiles for tens of seconds; Stop cancels the
    study at once, and says the compile goes on in the background (2 s: the issue's bound on
    the answer, not a speed measurement)."""
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path / "numba"))
    monkeypatch.setenv("TINYNET_KERNEL_DIR", str(tmp_path / "kernels"))
    served = Served()  # its trainer process starts with these caches
    try:
        job_id = served.start({"seeds": "4", "epochs": "50"})
        job = served.wait(job_id, until=("compiling", "done", "failed"))
        assert job["state"] == "compiling", job
        started = time.monotonic()
        status, stopped = served.json(f"api/studies/{job_id}/stop", {})
        _, polled = served.json(f"api/studies/{job_id}")
        answered = time.monotonic() - started
        assert status == 200 and stopped["state"] == polled["state"] == "cancelled"
        assert stopped["background"] == job["compiling"]["what"]
        assert answered < 2.0
    finally:
        served.close()


def test_a_drawn_2d_set_is_judged_by_accuracy_and_xor_by_wrong_points(served):
    moons = served.result({**SMALL, "n": "80"})
    assert list(moons["failure_labels"]) == ["below_criterion", "diverged"]
    assert moons["failure_labels"]["below_criterion"][0] == "below 95%"
    form = read_form({**SMALL, "n": "80"})
    X, y = form.setup.task.training_data()
    for arm, shown in zip(form.arms, moons["arms"], strict=True):
        accuracy = unpacked(shown["train_accuracy"])
        like = build_network(form.setup, arm, 40)
        trained = unpacked(shown["trained"]).astype(np.float64)
        outputs = next(outputs_at(trained, like, X))[1][-1]
        near = scores(outputs, y, get_loss(arm.loss))[1]  # from the float32 weights: close
        assert np.allclose(accuracy, near, atol=2 / len(X))
        solved = np.array(shown["outcomes"]) == "solved"
        assert set(shown["outcomes"]) <= {"solved", "below_criterion", "diverged"}
        assert np.all(accuracy[solved] >= 0.95) and np.all(accuracy[~solved] < 0.95)
        assert shown["failures"]["below_criterion"] == np.sum(~solved)
    xor = served.result({"seeds": "4", "epochs": "50"})
    assert list(xor["failure_labels"]) == ["one_wrong", "two_wrong", "three_or_more_wrong",
                                           "diverged"]
    assert "train_accuracy" not in xor["arms"][0]


@pytest.mark.parametrize("fields, field, message", [
    ({"epochs": "2000000"}, "epochs",
     "epochs must be an integer from 1 to 1,000,000, got 2,000,000"),
    ({"epochs": "0"}, "epochs", "epochs must be an integer from 1 to 1,000,000, got 0"),
    ({"first": "-1"}, "first", "first_seed must be an integer from 0 to 2⁶³ − 1, got -1"),
])
def test_the_limits_read_in_words(fields, field, message):
    with pytest.raises(FormError) as error:
        read_form(fields)
    assert error.value.errors == {field: message}
