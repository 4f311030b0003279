"""The playground's server: its studies are run_study's, seed for seed; Stop and a second Train
cancel; bad input is refused with the field's message; only its own files and only local
requests are served; the downloads; and the command that starts it."""

from __future__ import annotations

import base64
import json
import os
import re
import select
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from helpers import default_sigint, default_stop_signals
from playground_server import WAIT, Served

import tinynet
from tinynet import diagnostics, packing
from tinynet.compiled import sources
from tinynet.playground import read_form
from tinynet.playground import worker
from tinynet.playground.payload import NOT_FINITE, RESOLUTION, SAMPLE_BYTES, boundaries, \
    extent, page_bytes
from tinynet.playground.worker import Job, Trainer
from tinynet.xor import build_network, run_study
from tinynet.xor.report import finite_or_none

SMALL = {"seeds": "48", "epochs": "400", "first": "1000"}
"""A small study of the default 2-8-1 layout (the playground's, so compiled once)."""

LONG = {"seeds": "1000", "hidden": "16,16", "epochs": "20000"}
"""A study that trains for many seconds (2 x 1,000 seeds of 2-16-16-1 for 20,000 epochs), for
Stop to interrupt."""


@pytest.fixture(scope="module")
def served():
    served = Served()
    yield served
    served.close()


def unpacked(packed: dict) -> np.ndarray:
    dtype = np.dtype(packed["dtype"]).newbyteorder("<")
    return np.frombuffer(base64.b64decode(packed["base64"]), dtype).reshape(packed["shape"])


@pytest.fixture(scope="module")
def small(served):
    """The page's data for SMALL, and run_study's study of the same form in this process."""
    payload = served.result(SMALL)
    form = read_form(SMALL)
    study = run_study(form.arms, form.setup, progress=False, record_every=form.record_every)
    return payload, form, study


@pytest.mark.unrolled  # the trainer process trains on the kernels generated per layout
def test_every_seeds_outcome_is_run_studys(small):
    payload, form, study = small
    mine = finite_or_none(study.to_dict())
    theirs = payload["study"]
    for arm in (*mine["results"], *theirs["results"]):
        arm.pop("seconds")
    assert theirs == mine
    for arm, result in zip(payload["arms"], study.results):
        assert arm["outcomes"] == list(result.outcomes)
        assert (arm["successes"], arm["n"]) == (result.successes, form.setup.seeds)
        assert arm["interval"] == list(result.interval)
        np.testing.assert_array_equal(unpacked(arm["trained"]),
                                      result.trained.astype(np.float32))
        np.testing.assert_array_equal(unpacked(arm["loss"]),
                                      result.ensemble.loss.astype(np.float32))
    assert payload["verdict"] == study.comparisons[0].verdict(form.setup.seeds)


def test_the_seeds_that_differ_are_those_one_arm_solved_and_the_other_did_not(small):
    payload, _, study = small
    a, b = (result.solved for result in study.results)
    assert payload["differ"] == np.flatnonzero(a != b).tolist()


def test_the_weights_as_initialised_are_the_seeds_networks(small):
    payload, form, study = small
    for arm, result in zip(payload["arms"], study.results):
        initial = unpacked(arm["initial"])
        for index in (0, 17, form.setup.seeds - 1):
            net = study.network(result.arm.name, form.setup.first_seed + index, trained=False)
            np.testing.assert_array_equal(initial[index],
                                          packing.pack(net).astype(np.float32))


def test_a_boundary_is_the_trained_networks_output_on_the_grid(small):
    payload, form, study = small
    box = payload["grid"]["extent"]
    assert box == extent(form.setup.task.training_data()[0])
    xs, ys = np.linspace(box[0], box[1], RESOLUTION), np.linspace(box[3], box[2], RESOLUTION)
    for arm, result in zip(payload["arms"], study.results):
        boundaries = unpacked(arm["boundaries"])
        assert boundaries.shape == (form.setup.seeds, RESOLUTION, RESOLUTION)
        for index in (3, 30):
            net = study.network(result.arm.name, form.setup.first_seed + index)
            row, column = 7, 29
            output = net.predict(np.array([[xs[column], ys[row]]]))[0, 0]
            assert boundaries[index, row, column] == round(output * 250)
        assert np.all((boundaries <= 250) | (boundaries == NOT_FINITE))


def second_moments_by_hand(net, X) -> list[float]:
    """E[x²] after each of the network's layers and blocks, by its own forward pass."""
    outputs, moments = X, []
    for block in net.blocks:
        outputs = block.forward(outputs)
        moments.append(float(np.mean(outputs ** 2)))
    return moments


def test_the_second_moments_at_initialization_are_measured_and_predicted(small):
    """Measured on the training data, quartiles over the seeds; predicted by
    diagnostics.propagate for the first seed's network (its initializers' E[w²])."""
    payload, form, study = small
    X = form.setup.task.training_data()[0]
    assert payload["positions"] == ["layer 1 (8)", "output (1)"]
    for arm, result in zip(payload["arms"], study.results):
        per_seed = [second_moments_by_hand(study.network(result.arm.name, seed, trained=False),
                                           X) for seed in form.setup.seed_range]
        check_moments(arm["moments"], per_seed)
        first = study.network(result.arm.name, form.setup.first_seed, trained=False)
        assert arm["predicted_moments"] == [signal.a.predicted
                                            for signal in diagnostics.propagate(first, X).layers]


def check_moments(shown: list[dict], per_seed: list[list[float]]) -> None:
    """The page's moments are the mean over the seeds and its quartiles, per position."""
    per_seed = np.array(per_seed)
    np.testing.assert_allclose([moment["mean"] for moment in shown], per_seed.mean(axis=0),
                               rtol=1e-12)
    np.testing.assert_allclose([moment["quartiles"] for moment in shown],
                               np.percentile(per_seed, [25, 50, 75], axis=0).T, rtol=1e-12)


RESIDUAL = {"hidden": "8,8,8", "residual": "standard", "norm": "pre", "seeds": "6",
            "epochs": "30", "first": "7"}
"""Pre-norm blocks: a layer of 8, two blocks of one layer of 8, the output."""


@pytest.fixture(scope="module")
def residual():
    """The page's data for RESIDUAL, trained on the NumPy backend (the same study to
    rounding; no kernel to compile here)."""
    from dataclasses import replace

    from tinynet.playground.payload import study_payload

    form = read_form(RESIDUAL)
    study = run_study(form.arms, replace(form.setup, backend="numpy"), progress=False,
                      record_every=form.record_every)
    return study_payload(study, form.fields, form.record_every), form, study


def test_a_residual_networks_page_shows_its_blocks(residual):
    payload, form, study = residual
    X = form.setup.task.training_data()[0]
    assert payload["positions"] == ["layer 1 (8)", "block 1 (8)", "block 2 (8)", "output (1)"]
    assert payload["describe"].endswith("; the hidden layers after the first in standard "
                                        "residual blocks of 1 layer, pre-norm")
    box = payload["grid"]["extent"]
    xs, ys = np.linspace(box[0], box[1], RESOLUTION), np.linspace(box[3], box[2], RESOLUTION)
    for arm, result in zip(payload["arms"], study.results):
        net = study.network(result.arm.name, form.setup.first_seed + 4)
        assert len(net.residuals) == 2 and net.residuals[0].placement == "pre"
        output = net.predict(np.array([[xs[11], ys[5]]]))[0, 0]
        assert unpacked(arm["boundaries"])[4, 5, 11] == round(output * 250)
        assert payload["table"] == packing.layer_rows(net).table.tolist()
        np.testing.assert_array_equal(unpacked(arm["trained"])[4],
                                      packing.pack(net).astype(np.float32))
        per_seed = [second_moments_by_hand(study.network(result.arm.name, seed, trained=False),
                                           X) for seed in form.setup.seed_range]
        check_moments(arm["moments"], per_seed)
        first = study.network(result.arm.name, form.setup.first_seed, trained=False)
        predicted = [position.x.predicted for position in
                     diagnostics.stream([first], X).positions[1:]]
        assert arm["predicted_moments"] == [None, *predicted, None]


def payload_of(fields: dict) -> dict:
    """The page's data of a small study of ``fields`` trained on the NumPy backend here."""
    from dataclasses import replace

    from tinynet.playground.payload import study_payload

    form = read_form(fields)
    study = run_study(form.arms, replace(form.setup, backend="numpy"), progress=False,
                      record_every=form.record_every)
    return finite_or_none(study_payload(study, form.fields, form.record_every))


def test_a_normalized_block_of_constant_rows_predicts_nothing_and_the_page_is_made():
    """Zero weights: every row reaching the first LayerNorm is constant; the theory divides
    by its variance, so the page shows no prediction there, instead of failing."""
    payload = payload_of({**RESIDUAL, "a": "zeros", "b": "", "seeds": "2", "epochs": "2"})
    predicted = payload["arms"][0]["predicted_moments"]
    assert predicted[0] is None and predicted[-1] is None
    assert all(value is None or value == 0.0 for value in predicted)


def test_a_softmax_chains_hidden_layers_are_predicted():
    from tinynet.playground.payload import predicted_moments

    net = tinynet.mlp([64, 16, 16, 10], activation="relu", output="softmax", seed=3)
    X = np.random.default_rng(0).normal(size=(50, 64))
    hidden = tinynet.mlp([64, 16, 16], activation="relu", output="relu", seed=3)
    expected = [signal.a.predicted for signal in diagnostics.propagate(hidden, X).layers]
    assert predicted_moments(net, X) == [*expected, None]


def test_a_close_up_lists_each_blocks_norm_and_trained_alpha():
    from tinynet.playground.payload import block_parameters

    net = tinynet.mlp([2, 4, 4, 4, 1], residual="rezero", norm="pre", seed=1)
    theta = packing.pack(net)
    rows = block_parameters(net)
    assert [name for name, _, _ in rows] == [
        "block 1: LayerNorm γ", "block 1: LayerNorm β", "block 1: α",
        "block 2: LayerNorm γ", "block 2: LayerNorm β", "block 2: α"]
    block = net.residuals[1]
    for (_, at, size), array in zip(rows[3:], (block.norm.gain, block.norm.bias, block.scale)):
        np.testing.assert_array_equal(theta[at:at + size], np.ravel(array))


def test_a_deep_networks_forward_passes_stay_near_the_chunk_budget():
    """Each chunk of seeds counts every layer's and block's arrays (bench.LAYER_ARRAYS a
    position): 30 pre-norm blocks of 32 over the 1,600-point grid for 90 seeds peaked at
    2.2 GiB when a chunk counted one layer's three arrays."""
    import tracemalloc

    from tinynet.playground.payload import CHUNK_BYTES

    net = tinynet.mlp([2, *[32] * 31, 1], residual=True, norm="pre", seed=0)
    theta = np.tile(packing.pack(net), (90, 1))
    tracemalloc.start()
    boundaries(theta, net, [-1.0, 1.0, -1.0, 1.0])
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < 3 * CHUNK_BYTES, f"{peak / 2**20:.0f} MiB"


def test_one_initializer_alone_is_a_study_of_one_arm(served):
    payload = served.result({**SMALL, "b": ""})
    assert len(payload["arms"]) == 1
    assert payload["verdict"] is None and payload["differ"] == []


def test_a_diverged_seed_is_an_outcome_on_the_page(served):
    payload = served.result({**SMALL, "loss": "bce", "lr": "1e10", "seeds": "8",
                             "epochs": "50"})
    for arm in payload["arms"]:
        assert arm["outcomes"] == ["diverged"] * 8
        assert arm["failures"]["diverged"] == 8 and arm["solved_epochs"] == [-1] * 8
        assert np.isnan(unpacked(arm["loss"])).any()  # the epochs after it diverged
        boundaries = unpacked(arm["boundaries"])
        assert np.all((boundaries <= 250) | (boundaries == NOT_FINITE))


def test_outputs_that_are_not_finite_are_drawn_as_such():
    form = read_form({"b": "", "hidden": "2"})
    net = build_network(form.setup, form.arms[0], 0)
    theta = np.stack([packing.pack(net)] * 2)
    theta[1, 0] = np.nan  # one weight not a number: so are the outputs
    drawn = boundaries(theta, net, [-1.0, 1.0, -1.0, 1.0])
    assert np.all(drawn[0] <= 250)
    assert np.any(drawn[1] == NOT_FINITE)


def test_stop_cancels_a_study_and_it_gives_no_results(served):
    job_id = served.start(LONG)
    served.wait(job_id, until=("running", "compiling"))
    status, job = served.json(f"api/studies/{job_id}/stop", {})
    # cancelled at once while compiling (the compile goes on in the background), else after
    # the chunk it is training
    assert status == 200 and job["state"] in ("cancelling", "cancelled")
    assert served.wait(job_id)["state"] == "cancelled"
    status, body = served.json(f"api/studies/{job_id}/result")
    assert status == 409 and "cancelled" in body["error"]


def test_a_second_train_cancels_the_first_and_their_results_never_mix(served):
    first = served.start(LONG)
    second = served.start({**SMALL, "seeds": "20"})
    assert served.wait(first)["state"] == "cancelled"
    assert served.wait(second)["state"] == "done"
    _, payload = served.json(f"api/studies/{second}/result")
    assert payload["seeds"] == 20 and payload["fields"]["hidden"] == "8"


@pytest.mark.parametrize("fields, field, words", [
    ({"epochs": "many"}, "epochs", "epochs must be an integer"),
    ({"a": "he"}, "a", "unknown initializer 'he'"),
    ({"seeds": "5000"}, "seeds", "seeds must be an integer from 1 to 1000"),
])
def test_a_refused_field_answers_400_with_its_message(served, fields, field, words):
    status, body = served.json("api/studies", fields)
    assert status == 400 and list(body["errors"]) == [field]
    assert words in body["errors"][field]
    status, body = served.json("api/check", fields)
    assert status == 200 and words in body["errors"][field]


def test_check_gives_the_query_of_a_good_form(served):
    assert served.json("api/check", {"epochs": "500"}) == (200, {"errors": {},
                                                                 "query": "epochs=500"})


@pytest.mark.parametrize("body, content_type, code, words", [
    (b"epochs=5", "application/x-www-form-urlencoded", 415, "send the fields as JSON"),
    (b"{not json", "application/json", 400, "the body is not JSON"),
    (b"[1, 2]", "application/json", 400, "a JSON object of fields, got list"),
])
def test_a_body_that_is_not_a_json_object_is_refused(served, body, content_type, code, words):
    status, answer, _ = served.request("api/studies", body=body,
                                       headers={"Content-Type": content_type})
    assert status == code and words in json.loads(answer)["errors"]["study"]


def test_a_body_too_large_is_refused_unread(served):
    status, answer, _ = served.request("api/check", body=b"{}", headers={
        "Content-Type": "application/json", "Content-Length": str(10**9)})
    assert status == 413
    assert "a JSON object of 2 to 65536 bytes, got Content-Length '1000000000'" in \
        json.loads(answer)["errors"]["study"]


def test_an_empty_body_starts_nothing(served):
    status, answer, _ = served.request("api/studies", body=b"",
                                       headers={"Content-Type": "application/json"})
    assert status == 400 and "got Content-Length '0'" in json.loads(answer)["errors"]["study"]


def test_a_body_without_a_length_is_refused():
    import http.client

    served = Served()
    try:
        connection = http.client.HTTPConnection("127.0.0.1", served.server.port, timeout=WAIT)
        connection.putrequest("POST", "/api/studies")
        connection.putheader("Content-Type", "application/json")
        connection.putheader("Transfer-Encoding", "chunked")
        connection.endheaders()
        connection.send(b"2\r\n{}\r\n0\r\n\r\n")
        response = connection.getresponse()
        assert response.status == 411
        assert "with a Content-Length" in json.loads(response.read())["errors"]["study"]
        assert served.server.trainer.job(1) is None  # nothing started
    finally:
        served.close()


def test_a_request_for_another_host_is_refused(served):
    status, answer, _ = served.request("api/options", headers={"Host": "evil.example:80"})
    assert status == 403 and "evil.example" in json.loads(answer)["error"]
    status, _, _ = served.request("api/options", headers={"Host": f"localhost:{served.server.port}"})
    assert status == 200


@pytest.mark.parametrize("path", ["static/../server.py", "static/form.py", "static/",
                                  "../pyproject.toml", "api/studies/99999", "api/nothing"])
def test_only_the_pages_own_files_are_served(served, path):
    status, _, _ = served.request(path)
    assert status == 404


def test_the_page_and_its_files_are_served_with_their_types(served):
    status, page, headers = served.request("")
    assert status == 200 and headers["Content-Type"].startswith("text/html")
    for name in re.findall(rb'(?:src|href)="static/([^"]+)"', page):
        status, _, headers = served.request(f"static/{name.decode()}")
        assert status == 200
        assert headers["Content-Type"].split(";")[0] in ("text/css", "text/javascript")


def test_the_page_names_no_address_outside_itself():
    from tinynet.playground.server import STATIC, _static
    for name in ["index.html", *STATIC]:
        assert not re.search(r"https?://", _static(name)), name


def test_the_downloads_are_the_study_as_json_and_as_one_html_file(served):
    job_id = served.start({**SMALL, "seeds": "9"})
    served.wait(job_id)
    _, result, _ = served.request(f"api/studies/{job_id}/result")
    status, body, headers = served.request(f"api/studies/{job_id}/study.json")
    assert status == 200 and body == result
    assert headers["Content-Disposition"] == f'attachment; filename="tinynet-study-{job_id}.json"'
    status, page, headers = served.request(f"api/studies/{job_id}/study.html")
    assert status == 200 and "attachment" in headers["Content-Disposition"]
    text = page.decode()
    assert "<script src=" not in text and 'rel="stylesheet"' not in text
    embedded = re.search(r'<script id="study-data" type="application/json">(.*?)</script>',
                         text, re.S).group(1)
    assert json.loads(embedded) == json.loads(result)


def test_only_the_last_results_are_kept(served):
    from tinynet.playground.worker import KEPT_RESULTS
    ids = []
    for _ in range(KEPT_RESULTS + 1):
        ids.append(served.start({**SMALL, "seeds": "2"}))
        served.wait(ids[-1])
    assert served.json(f"api/studies/{ids[0]}")[1]["state"] == "expired"
    assert served.json(f"api/studies/{ids[0]}/result")[0] == 409
    assert served.json(f"api/studies/{ids[-1]}/result")[0] == 200


def test_a_compile_is_told_to_the_listener_and_shown_as_the_jobs_state(tmp_path):
    class Kernel:  # what announce_compiling reads of a numba dispatcher whose cache is empty
        class _cache:
            class _cache_file:
                _index_path = str(tmp_path / "missing.nbi")

    class Later(Kernel):
        class _cache:
            class _cache_file:
                _index_path = str(tmp_path / "missing too.nbi")

    heard = []
    with sources.compiling_told_to(lambda *told: heard.append(told)):
        sources.announce_compiling(Kernel, "layout [2, 8, 1]", "test", tmp_path)
    sources.announce_compiling(Later, "after the block", "test", tmp_path)
    assert heard == [("layout [2, 8, 1]", sources.COMPILE_TIME)]

    job = Job(1, 2, 2000, generation=1)
    Trainer._update(None, job, "compiling", heard[0])
    status = job.status()
    assert status["state"] == "compiling"
    assert status["compiling"]["what"] == "layout [2, 8, 1]"
    assert status["compiling"]["usually"] == sources.COMPILE_TIME


def test_run_study_refuses_on_chunk_with_an_executor_and_stops_when_it_raises():
    from concurrent.futures import ThreadPoolExecutor

    form = read_form({**SMALL, "b": ""})
    with pytest.raises(ValueError, match="on_chunk .* with an executor"):
        run_study(form.arms, form.setup, on_chunk=print, executor=ThreadPoolExecutor(1))
    with pytest.raises(TypeError, match="on_chunk must be a function"):
        run_study(form.arms, form.setup, on_chunk=3)

    class Stop(Exception):
        pass

    calls = []

    def stop(arm, done):
        calls.append((arm, done))
        raise Stop

    with pytest.raises(Stop):
        run_study(form.arms, form.setup, on_chunk=stop, progress=False)
    assert calls == [(0, form.setup.epochs)]  # one chunk: the whole of this small run


def test_a_study_stopped_after_its_last_chunk_is_cancelled_not_done():
    job = Job(1, 2, 2000, generation=1, state="cancelling")
    Trainer._update(None, job, "done", b"{}")
    assert job.state == "cancelled" and job.result is None


def trained_in_this_process(fields: dict, cancelled: int = 0) -> list:
    """What :func:`train_studies` sends for one study of ``fields``, run in a thread here."""
    import multiprocessing
    import threading

    ours, theirs = multiprocessing.Pipe()
    flag = multiprocessing.Value("q", cancelled, lock=False)
    thread = threading.Thread(target=worker.train_studies, args=(theirs, flag), daemon=True)
    thread.start()
    ours.send((1, read_form(fields)))
    messages = [ours.recv()]
    while messages[-1][0] not in ("done", "cancelled", "failed"):
        messages.append(ours.recv())
    ours.close()  # the trainer's next recv ends it
    thread.join(WAIT)
    return messages


def test_a_study_past_the_time_limit_stops_with_a_message(monkeypatch):
    monkeypatch.setattr(worker, "MAX_SECONDS", -1)
    messages = trained_in_this_process({**SMALL, "b": ""})
    kind, job_id, message = messages[-1]
    assert (kind, job_id) == ("failed", 1)
    assert message == ("the study ran past the playground's limit of -1 s and was stopped at "
                       "epoch 400 of arm A; use fewer seeds, epochs or samples")


def test_a_study_whose_page_data_came_out_past_the_limit_fails_with_a_message(monkeypatch):
    monkeypatch.setattr(worker, "MAX_PAGE_BYTES", 1000)
    kind, job_id, message = trained_in_this_process({**SMALL, "b": ""})[-1]
    assert (kind, job_id) == ("failed", 1)
    assert re.fullmatch(r"the page's data came out at [0-9,]+ bytes, above the playground's "
                        r"limit of 1,000; use fewer seeds or narrower layers", message)


def test_a_sample_takes_at_most_sample_bytes_of_the_page_data_whatever_its_numbers():
    form = read_form({"data": "moons", "n": "2000", "noise": "1e300", "seeds": "1"})
    X, y = form.setup.task.training_data()
    data = json.dumps({"X": X.tolist(), "y": y.ravel().tolist()}, separators=(",", ":"))
    assert len(data) - len('{"X":[],"y":[]}') <= SAMPLE_BYTES * len(X)


def test_the_trainer_reports_a_study_as_the_page_reads_it():
    kinds = [kind for kind, _, _ in trained_in_this_process({**SMALL, "seeds": "3"})]
    assert kinds[0] == "running" and kinds[-1] == "done"
    assert set(kinds[1:-1]) <= {"progress", "compiling"}
    assert trained_in_this_process(SMALL, cancelled=1) == [("cancelled", 1, None)]


@pytest.mark.slow  # starts two trainer processes
def test_a_trainer_that_died_fails_its_study_and_the_next_train_starts_another():
    served = Served()
    try:
        job_id = served.start(LONG)
        served.wait(job_id, until=("running", "compiling"))
        served.server.trainer._process.kill()
        job = served.wait(job_id)
        assert job["state"] == "failed"
        assert job["error"] == ("the trainer process stopped (exit code -9); Train starts a "
                                "new one")
        assert served.result({**SMALL, "seeds": "2"})["seeds"] == 2
    finally:
        served.close()


def test_a_dead_trainers_reader_fails_its_own_studies_not_those_sent_to_its_successor():
    import multiprocessing
    import threading

    class Gone:  # a trainer process that has exited
        exitcode = -9

        def join(self, timeout=None):
            pass

    trainer = Trainer.__new__(Trainer)  # the jobs alone, no process
    trainer._lock = threading.Lock()
    trainer._jobs = {1: Job(1, 2, 2000, generation=1, state="running"),
                     2: Job(2, 2, 2000, generation=2, state="queued")}
    ours, theirs = multiprocessing.Pipe()
    theirs.close()  # the first process has gone: its pipe ends
    trainer._read(ours, Gone(), generation=1)
    assert trainer._jobs[1].state == "failed" and "exit code -9" in trainer._jobs[1].error
    assert trainer._jobs[2].state == "queued"


def test_the_page_data_is_at_most_the_size_the_form_estimates(small):
    payload, form, _ = small
    estimate = page_bytes(form.setup, form.arms, form.record_every)
    size = len(json.dumps(payload, separators=(",", ":")))
    assert 0.8 * estimate < size < estimate + 20_000  # + the study's summary


# --- the command --------------------------------------------------------------------------

def start(*arguments: str, browser: str | None = None) -> tuple[subprocess.Popen, str]:
    """Start the command (with ``--no-browser`` unless ``browser`` gives the command that
    Python's ``webbrowser`` is to run, as $BROWSER); return it and its first line."""
    environment = {**os.environ, "BROWSER": browser} if browser else None
    options = [] if browser else ["--no-browser"]
    process = subprocess.Popen([sys.executable, "-m", "tinynet.playground", *options,
                                *arguments], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True, env=environment, preexec_fn=default_stop_signals)
    return process, line_of(process)


def line_of(process: subprocess.Popen) -> str:
    """The next line ``process`` prints, waiting at most :data:`WAIT` seconds for it."""
    if not select.select([process.stdout], [], [], WAIT)[0]:
        process.kill()
        raise AssertionError(f"the command printed no line in {WAIT} s")
    return process.stdout.readline()


def test_the_command_prints_its_address_serves_and_stops_at_ctrl_c_with_one_line():
    process, first = start()
    try:
        url = re.fullmatch(r"tinynet playground at (http://127\.0\.0\.1:\d+/) \(Ctrl-C stops "
                           r"it\)\n", first).group(1)
        import urllib.request
        with urllib.request.urlopen(url, timeout=WAIT) as response:
            assert b"tinynet playground" in response.read()
    finally:
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=WAIT)
    assert process.returncode == 0
    assert out == "\ntinynet playground stopped\n"
    assert err == ""


def test_the_command_opens_the_address_in_the_browser(tmp_path):
    opened = tmp_path / "opened"
    opener = tmp_path / "browser.sh"
    opener.write_text(f'#!/bin/sh\necho "$1" > {opened}\n')
    opener.chmod(0o755)
    process, first = start(browser=f"{opener} %s")
    try:
        deadline = time.monotonic() + WAIT
        while not opened.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
    finally:
        process.send_signal(signal.SIGINT)
        process.communicate(timeout=WAIT)
    assert opened.read_text().strip() == first.split()[3]


def test_without_a_browser_the_command_says_to_open_the_address():
    process, _ = start(browser=str(Path("/nonexistent/browser")))
    try:
        second = line_of(process)
    finally:
        process.send_signal(signal.SIGINT)
        process.communicate(timeout=WAIT)
    assert second == "(no browser found here: open the address in one)\n"


def trainers_of(pid: int) -> list[int]:
    """The processes that process ``pid`` spawned to train (Linux's /proc)."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            parent = int(stat.read_text().rsplit(")", 1)[1].split()[1])
            command = (stat.parent / "cmdline").read_bytes()
        except (OSError, IndexError, ValueError):
            continue  # gone meanwhile
        if parent == pid and b"spawn_main" in command:
            found.append(int(stat.parent.name))
    return found


@pytest.mark.parametrize("stop", [signal.SIGTERM, signal.SIGHUP], ids=["SIGTERM", "SIGHUP"])
def test_sigterm_or_sighup_stops_the_command_as_ctrl_c_does_and_its_trainer_with_it(stop):
    process, _ = start()
    trainers = trainers_of(process.pid)
    assert len(trainers) == 1
    process.send_signal(stop)  # a service manager's stop; the terminal closed
    out, err = process.communicate(timeout=WAIT)
    assert (process.returncode, out, err) == (0, "\ntinynet playground stopped\n", "")
    assert not Path(f"/proc/{trainers[0]}").exists()


def ignoring_sighup() -> None:
    """A preexec_fn: the child starts as under ``nohup``, SIGHUP ignored (SIGINT default)."""
    default_sigint()
    signal.signal(signal.SIGHUP, signal.SIG_IGN)


def test_a_command_started_with_sighup_ignored_outlives_its_terminal():
    process = subprocess.Popen([sys.executable, "-m", "tinynet.playground", "--no-browser"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               preexec_fn=ignoring_sighup)
    try:
        url = line_of(process).split()[3]
        process.send_signal(signal.SIGHUP)  # the terminal closed: nohup's reason to be
        import urllib.request
        with urllib.request.urlopen(url + "api/options", timeout=WAIT) as response:
            assert response.status == 200  # still serving, after the hang-up was delivered
        assert process.poll() is None
    finally:
        process.send_signal(signal.SIGTERM)
        out, err = process.communicate(timeout=WAIT)
    assert (process.returncode, out, err) == (0, "\ntinynet playground stopped\n", "")


def test_a_loopback_address_is_served_without_a_warning():
    process, first = start("--host", "127.0.0.2")
    try:
        assert first.startswith("tinynet playground at http://127.0.0.2:")
    finally:
        process.send_signal(signal.SIGINT)
        _, err = process.communicate(timeout=WAIT)
    assert err == ""


def test_another_host_is_served_with_a_warning():
    process, first = start("--host", "0.0.0.0")
    try:
        assert first.startswith("tinynet playground at http://127.0.0.1:")
    finally:
        process.send_signal(signal.SIGINT)
        _, err = process.communicate(timeout=WAIT)
    assert "warning: serving on 0.0.0.0: anyone who can reach this machine" in err


def test_a_port_that_cannot_be_used_is_an_error_of_one_line():
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        process, _ = start("--port", str(port))
        _, err = process.communicate(timeout=WAIT)
    assert process.returncode == 1
    assert err.startswith(f"error: cannot listen on 127.0.0.1:{port}: ")
    assert err.count("\n") == 1


def test_a_port_out_of_range_is_refused():
    process, _ = start("--port", "70000")
    _, err = process.communicate(timeout=WAIT)
    assert process.returncode == 2 and "--port must be from 0 to 65535, got 70000" in err
