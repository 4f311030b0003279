"""The playground's form: every field checked by the library, one message per refused field,
the study it makes, and the limits."""

from urllib.parse import parse_qsl

import pytest

from tinynet.playground import worker
from tinynet.playground.form import DEFAULTS, MAX_PAGE_BYTES, MAX_SEEDS, MAX_WORK, FormError, read_form
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


def test_the_defaults_name_every_field_the_reader_reads():
    form = read_form(dict(DEFAULTS))
    assert set(form.fields) == set(DEFAULTS)


def test_the_docs_state_the_limits_the_form_applies():
    from pathlib import Path
    docs = (Path(__file__).resolve().parents[1] / "docs" / "playground.md").read_text()
    assert f"1 to {MAX_SEEDS:,} per initializer" in docs
    assert MAX_WORK == 2.5e11 and "at most 2.5 × 10¹¹" in docs
    assert read_form({}).work == 5.28e7 and "The default study is 5.3 × 10⁷" in docs
    assert MAX_PAGE_BYTES == 32 * 2**20 and "at most 32 MiB a study" in docs
    assert read_form({"hidden": "32,32", "seeds": "1000"})  # "enough for" holds
    assert worker.MAX_SECONDS == 300 and "longer than 300 s" in docs
    assert f"it keeps the last {worker.KEPT_RESULTS})" in docs
