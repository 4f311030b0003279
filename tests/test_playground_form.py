"""The playground's form: every field checked by the library, one message per refused field,
the study it makes, and the limits."""

import functools
from urllib.parse import parse_qsl

import pytest

from tinynet import data
from tinynet.playground import worker
from tinynet.playground.payload import FLOAT_CHARS, SAMPLE_BYTES
from tinynet.playground.form import DEFAULTS, MAX_FIELD_CHARS, MAX_PAGE_BYTES, MAX_SAMPLES, \
    MAX_SEEDS, MAX_WORK, FormError, read_form, samples_of
from tinynet.xor import Arm, Setup, Task


def refused(values: dict) -> dict:
    with pytest.raises(FormError) as caught:
        read_form(values)
    return caught.value.errors


def test_the_defaults_are_two_initializers_on_a_2_8_1_xor_network():
    form = read_form({})
    assert [arm.init for arm in form.arms] == ["normal", "he_normal"]
    assert form.setup == Setup(hidden=(8,), lr=0.03, epochs=2000, seeds=100)
    assert form.setup.task == Task()
    assert form.query == ""
    assert form.record_every == 20  # 2,000 epochs in about RECORDS = 100 points


def test_every_field_reaches_the_study():
    form = read_form({"data": "moons", "n": "64", "noise": "0.2", "hidden": "4, 3",
                      "activation": "tanh", "a": "xavier_uniform", "b": "lecun_normal",
                      "loss": "bce", "optimizer": "momentum", "lr": "0.1", "epochs": "300",
                      "batch": "8", "shuffle": "1", "seeds": "7", "first": "40"})
    assert form.setup == Setup(hidden=(4, 3), activation="tanh", lr=0.1, epochs=300, seeds=7,
                               first_seed=40, batch_size=8,
                               task=Task("moons", n=64, noise=0.2))
    assert form.arms == (Arm("xavier_uniform", loss="bce", optimizer="momentum", shuffle=True,
                             label="A: xavier_uniform"),
                         Arm("lecun_normal", loss="bce", optimizer="momentum", shuffle=True,
                             label="B: lecun_normal"))


def test_no_b_is_one_arm_and_an_empty_hidden_is_no_hidden_layer():
    form = read_form({"b": "", "hidden": ""})
    assert len(form.arms) == 1
    assert form.setup.sizes == [2, 1]


def test_the_query_holds_what_differs_from_the_defaults_and_reads_back():
    fields = {"hidden": "2,2", "epochs": "500", "b": ""}
    form = read_form(fields)
    assert dict(parse_qsl(form.query, keep_blank_values=True)) == fields
    assert read_form(dict(parse_qsl(form.query, keep_blank_values=True))) == form


@pytest.mark.parametrize("field, text, words", [
    ("epochs", "abc", ["epochs must be an integer", "'abc'"]),
    ("epochs", "0", ["epochs must be an integer from 1", "got 0"]),
    ("lr", "-1", ["lr must be a finite number > 0", "-1.0"]),
    ("lr", "fast", ["lr must be a real number", "'fast'"]),
    ("a", "hee", ["unknown initializer 'hee'", "he_normal"]),
    ("b", "glorot", ["unknown initializer 'glorot'"]),
    ("hidden", "8,x", ["hidden[1] must be an integer", "'x'"]),
    ("hidden", "0", ["hidden[0] must be an integer >= 1", "got 0"]),
    ("data", "moon", ["unknown data set 'moon'", "did you mean 'moons'"]),
    ("noise", "0.1", ["noise needs n"]),
    ("activation", "swish", ["unknown activation 'swish'"]),
    ("loss", "ce", ["unknown loss 'ce'"]),
    ("optimizer", "adamw", ["unknown optimizer 'adamw'"]),
    ("batch", "5", ["batch_size must be an integer from 1 to 4", "got 5"]),
    ("shuffle", "maybe", ["shuffle must be 1 (on) or 0 (off)", "'maybe'"]),
    ("seeds", str(MAX_SEEDS + 1), [f"seeds must be an integer from 1 to {MAX_SEEDS}"]),
    ("first", "-1", ["first_seed must be an integer from 0", "got -1"]),
])
def test_a_bad_field_gets_the_librarys_message_beside_it(field, text, words):
    errors = refused({field: text})
    assert list(errors) == [field]
    for word in words:
        assert word in errors[field]
    assert "\n" not in errors[field]


def test_residual_blocks_reach_both_arms():
    form = read_form({"hidden": "8,8,8,8,8", "residual": "rezero", "branch": "2"})
    for arm in form.arms:
        assert (arm.residual, arm.norm, arm.branch) == ("rezero", None, 2)
    form = read_form({"hidden": "8,8,8", "residual": "standard", "norm": "post"})
    assert [(arm.residual, arm.norm, arm.branch) for arm in form.arms] == [
        ("standard", "post", 1)] * 2
    assert read_form(dict(parse_qsl(form.query, keep_blank_values=True))) == form


@pytest.mark.parametrize("values, field, words", [
    ({"residual": "resnet"}, "residual", ["unknown residual 'resnet'", "standard"]),
    ({"residual": "standard", "norm": "middle"}, "norm", ["unknown norm 'middle'", "post"]),
    ({"residual": "standard", "branch": "0"}, "branch", ["branch must be an integer >= 1",
                                                         "got 0"]),
    ({"norm": "pre"}, "norm", ["norm 'pre' is a residual block's", "choose a residual block"]),
    ({"branch": "2"}, "branch", ["branch 2 is a residual block's"]),
    ({"hidden": "8,8,8", "residual": "fixup", "branch": "2", "norm": "pre"}, "residual",
     ["residual='fixup' is for networks without normalization", "norm='pre'"]),
    ({"hidden": "8,8,8", "residual": "deepnet"}, "residual", ["pass norm='post'"]),
    ({"hidden": "8,8", "residual": "standard", "branch": "2"}, "hidden",
     ["residual blocks group the hidden layers after the first into blocks of 2",
      "got (8, 8)"]),
    ({"hidden": "8", "residual": "standard"}, "hidden", ["1 + a multiple of 1"]),
])
def test_residual_fields_are_refused_beside_the_field_they_are_about(values, field, words):
    errors = refused(values)
    assert list(errors) == [field]
    for word in words:
        assert word in errors[field]


def test_every_refused_field_is_named_at_once():
    errors = refused({"epochs": "x", "lr": "0", "a": "nope"})
    assert set(errors) == {"epochs", "lr", "a"}


def test_n_is_checked_with_the_data_set_it_belongs_to():
    assert "n must be an integer >= 2" in refused({"data": "moons", "n": "1"})["n"]
    errors = refused({"data": "moons", "n": "x", "noise": "0.1", "batch": "8"})
    assert list(errors) == ["n"]  # noise and batch are fine; n's message is shown beside n


def test_a_study_above_the_work_limit_is_refused_with_the_numbers():
    values = {"data": "moons", "n": "1000", "epochs": "20000", "seeds": "1000"}
    work = 2 * 1000 * 20000 * 1000 * 33
    assert work > MAX_WORK
    message = refused(values)["study"]
    assert f"{work:.3g}" in message and f"{MAX_WORK:.2g}" in message
    assert "fewer seeds, epochs or samples" in message


def test_the_last_seed_past_the_seed_range_is_shown_beside_first():
    errors = refused({"first": str(2**63 - 50), "seeds": "100"})
    assert list(errors) == ["first"]
    assert "last seed" in errors["first"]


def test_unknown_fields_and_values_that_are_not_text_are_refused():
    assert "unknown field(s) 'speed'" in refused({"speed": "1"})["study"]
    assert "epochs must be sent as text, got 100" in refused({"epochs": 100})["epochs"]


def test_thousands_of_unknown_fields_are_named_five_and_counted():
    message = refused({f"x{index:04}": "1" for index in range(6000)})["study"]
    assert message.startswith("unknown field(s) 'x0000', 'x0001', 'x0002', 'x0003', 'x0004' "
                              "and 5,995 more; the fields are data, n, noise,")
    assert len(message) < 300


def test_an_n_of_200_digits_is_shown_cut_in_the_middle():
    message = refused({"data": "moons", "n": "9" * 200})["n"]
    assert message.endswith("got 99999999999999999999...99999999999999999999 (200 characters)")


def test_a_bad_noise_is_named_even_when_the_study_is_over_the_work_limit(monkeypatch):
    counted_generators(monkeypatch, fail=True)
    errors = refused({"data": "moons", "n": "1000", "noise": "-1", "epochs": "20000",
                      "seeds": "1000"})
    assert errors["noise"] == "noise must be a finite number >= 0.0, got -1.0"
    assert "above the playground's limit" in errors["study"]


def test_the_defaults_name_every_field_the_reader_reads():
    form = read_form(dict(DEFAULTS))
    assert set(form.fields) == set(DEFAULTS)


def test_the_docs_state_the_limits_the_form_applies():
    from pathlib import Path
    docs = (Path(__file__).resolve().parents[1] / "docs" / "playground.md").read_text()
    assert f"1 to {MAX_SEEDS:,} per initializer" in docs
    assert MAX_SAMPLES == 10**5 and "**samples**: at most 100,000" in docs
    assert MAX_FIELD_CHARS == 200 and "at most 200 characters" in docs
    assert MAX_WORK == 2.5e11 and "at most 2.5 × 10¹¹" in docs
    assert read_form({}).work == 5.28e7 and "The default study is 5.3 × 10⁷" in docs
    assert MAX_PAGE_BYTES == 32 * 2**20 and "at most 32 MiB a study" in docs
    assert SAMPLE_BYTES == 77 and FLOAT_CHARS == 24 and "(77 bytes: three float64" in docs
    assert read_form({"hidden": "32,32", "seeds": "1000"})  # "enough for" holds
    assert worker.MAX_SECONDS == 300 and "longer than 300 s" in docs
    assert f"it keeps the last {worker.KEPT_RESULTS})" in docs


def counted_generators(monkeypatch, fail: bool = False) -> list[str]:
    """Replace every data set generator with one that records its calls (and, if ``fail``,
    fails the test when called); return the list of calls."""
    calls = []
    for name, generator in list(data.DATASETS.items()):
        @functools.wraps(generator)  # the same signature: the form reads the default n there
        def drawing(*args, generator=generator, name=name, **kwargs):
            calls.append(name)
            assert not fail, f"{name} was drawn: {kwargs}"
            return generator(*args, **kwargs)
        monkeypatch.setitem(data.DATASETS, name, drawing)
    return calls


@pytest.mark.parametrize("values, field, words", [
    ({"data": "moons", "n": str(10**8)}, "n",
     f"n must be at most {MAX_SAMPLES:,} in the playground (the page draws every sample), got "
     "100,000,000"),
    ({"data": "xor", "n": str(3 * 10**7), "epochs": "x"}, "n", "got 30,000,000"),
    ({"data": "circles", "n": str(MAX_SAMPLES), "seeds": "1000"}, "study",
     "seeds x epochs x samples x parameters is 1.32e+13 over the arms, above the playground's "
     "limit of 2.5e+11"),
])
def test_a_form_over_the_limits_is_refused_before_anything_is_drawn(monkeypatch, values, field,
                                                                    words):
    calls = counted_generators(monkeypatch, fail=True)
    errors = refused(values)
    assert words in errors[field]
    assert calls == []


def test_a_form_draws_its_data_set_once(monkeypatch):
    calls = counted_generators(monkeypatch)
    form = read_form({"data": "moons", "n": "500", "batch": "8"})
    assert calls == ["moons"] and form.setup.task.samples == 500


@pytest.mark.parametrize("name", list(data.DATASETS))
def test_the_samples_are_known_before_the_draw(name):
    assert samples_of(name, None) == Task(name).samples
    assert samples_of(name, 10) == Task(name, n=10).samples == 10


def test_a_field_longer_than_its_limit_is_refused_with_its_length():
    assert refused({"n": "9" * 5000}) == {"n": f"n must be at most {MAX_FIELD_CHARS} characters, "
                                                "got 5,000"}
    assert "hidden must be sent as text, got [8, 8" in refused({"hidden": [8] * 1000})["hidden"]


DIGITS = {"data": "digits", "epochs": "2", "loss": "cross_entropy", "seeds": "6",
          "batch": "32", "lr": "0.1", "activation": "relu"}


def test_the_digits_train_a_softmax_and_refuse_what_does_not_fit_them():
    form = read_form(DIGITS)
    assert form.setup.sizes == [64, 8, 10] and form.setup.output == "softmax"
    assert form.setup.task == Task("digits")
    assert refused({**DIGITS, "loss": "mse"})["loss"].startswith(
        "data set digits trains a softmax output: a softmax output trains with "
        "loss='cross_entropy' only")
    assert refused({**DIGITS, "n": "50"}) == {
        "n": "n is not a setting of data set 'digits', which has a fixed training and test "
             "split; got n=50, leave it out"}
    assert refused({**DIGITS, "noise": "0.1"})["noise"].startswith(
        "noise is not a setting of data set 'digits'")
    assert refused({"data": "moons", "loss": "cross_entropy"})["loss"].startswith(
        "data set moons trains a sigmoid output: loss 'cross_entropy' needs a softmax output")
    assert samples_of("digits", None) == 1442
    # the work counts the digits' 64 inputs and 10 outputs: 64·8 + 8 + 8·10 + 10 = 610
    assert form.work == 2 * 6 * 2 * 1442 * 610


def test_a_digits_page_is_within_its_estimate_and_scores_every_seed():
    """The page's data of a digits study (trained on the NumPy backend here: the same study
    to rounding, and no kernel to compile) against page_bytes, its confusion matrices
    against the seeds' test accuracies."""
    import json
    from dataclasses import replace

    import numpy as np

    from tinynet.playground.payload import page_bytes, study_payload
    from tinynet.xor import run_study
    from tinynet.xor.report import finite_or_none

    form = read_form(DIGITS)
    sizes, estimates = [], []
    for seeds in (6, 12):
        setup = replace(form.setup, backend="numpy", seeds=seeds)
        study = run_study(form.arms, setup, record_every=form.record_every,
                          evaluate_every=form.record_every)
        payload = study_payload(study, form.fields, form.record_every)
        sizes.append(len(json.dumps(finite_or_none(payload), separators=(",", ":"))))
        estimates.append(page_bytes(setup, form.arms, form.record_every))
    assert sizes[1] < estimates[1] + 20_000  # + the study's summary, as for XOR
    assert sizes[1] - sizes[0] <= estimates[1] - estimates[0]  # per seed: at most the estimate
    assert payload["kind"] == "classes" and payload["evaluated"] == [1, 2]
    for arm, result in zip(payload["arms"], study.results):
        matrices = np.frombuffer(__import__("base64").b64decode(arm["confusion"]["base64"]),
                                 dtype="<u2").reshape(12, 10, 10)
        right = np.trace(matrices, axis1=1, axis2=2) / 355
        np.testing.assert_allclose(right, result.test_accuracy)
        assert arm["outcomes"] == [str(kind) for kind in result.outcomes]
