"""The playground's --data FILE: your own data set in the page's data menu, by the file's
name, trained as a data set of many classes; a file it cannot read refused in one line."""

from __future__ import annotations

import numpy as np
import pytest
from playground_server import Served

from tinynet.data import labelled_split, write_split
from tinynet.playground import read_form
from tinynet.playground.cli import main, own_data
from tinynet.playground.form import FormError, choices

FIELDS = {"loss": "cross_entropy", "activation": "relu", "hidden": "6", "batch": "8",
          "epochs": "3", "seeds": "4", "lr": "0.1", "b": "he_normal"}


def three_classes(folder, name: str = "mine.csv"):
    """A CSV of three clusters in the plane, 60 training and 30 test samples."""
    rng = np.random.default_rng(0)
    centres = np.array([[0.0, 0.0], [3.0, 0.0], [0.0, 3.0]])
    labels = np.arange(90) % 3
    X = centres[labels] + rng.normal(0, 0.5, (90, 2))
    return write_split(labelled_split(X[:60], labels[:60], X[60:], labels[60:]),
                       folder / name)


def test_a_file_is_offered_by_its_name_and_trains_as_many_classes(tmp_path):
    own = own_data([str(three_classes(tmp_path))])
    assert list(own) == ["mine.csv"]
    assert choices(own)["data"][-1] == "mine.csv" and "mine.csv" not in choices()["data"]
    served = Served(own)
    try:
        status, options = served.json("api/options")
        assert "mine.csv" in options["choices"]["data"]
        payload = served.result({**FIELDS, "data": "mine.csv"})
        assert payload["kind"] == "classes" and payload["classes"] == 3
        assert payload["sizes"] == [2, 6, 3]
        assert [len(arm["outcomes"]) for arm in payload["arms"]] == [4, 4]
    finally:
        served.close()


def test_a_file_takes_no_n_or_noise_and_unknown_names_are_refused(tmp_path):
    own = own_data([str(three_classes(tmp_path))])
    with pytest.raises(FormError) as error:
        read_form({**FIELDS, "data": "mine.csv", "n": "50"}, own)
    assert list(error.value.errors) == ["n"]
    assert "is your file's" in error.value.errors["n"]
    with pytest.raises(FormError) as error:
        read_form({**FIELDS, "data": "mine.csv"})  # not offered: no --data
    assert list(error.value.errors) == ["data"]


def test_a_file_the_command_cannot_use_is_refused_in_one_line(tmp_path, capsys):
    assert main(["--no-browser", "--data", str(tmp_path / "missing.csv")]) == 2
    assert capsys.readouterr().err.count("\n") == 1
    mine = str(three_classes(tmp_path))
    assert main(["--no-browser", "--data", mine, "--data", mine]) == 2
    error = capsys.readouterr().err
    assert error.count("\n") == 1 and "a data set named 'mine.csv' already" in error
