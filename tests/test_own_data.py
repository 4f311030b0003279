"""Your own data and your own pictures: data files (tinynet.data.read_split, write_split) in
tasks and the XOR command, one fit's loss curve, the decision boundary's legend, the
initializers at a terminal, case-insensitive suggestions, and --init all's summary."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tinynet
from tinynet import data, plots
from tinynet.init.__main__ import description, listing, markdown_table
from tinynet.validation import FileFormatError, UnknownNameError
from tinynet.xor import Arm, Setup, cli, figures, run_study
from tinynet.xor.report import LISTED_COMPARISONS
from tinynet.xor.task import OwnData, Task

from helpers import checkout_environment


def own_split(n=24, classes=3, features=4, seed=0) -> data.Split:
    """Every class in both parts, features of full float64 precision."""
    rng = np.random.default_rng(seed)
    y = np.arange(n) % classes
    X = rng.normal(size=(n, features)) + y[:, None]
    return data.labelled_split(X[::2], y[::2], X[1::2], y[1::2])


# --- data files ------------------------------------------------------------------------------

@pytest.mark.parametrize("suffix", [".npz", ".csv"])
def test_a_written_split_reads_back_exactly(tmp_path, suffix):
    split = own_split()
    path = data.write_split(split, tmp_path / f"mine{suffix}")
    read = data.read_split(path)
    for name, written, back in zip(data.FILE_ARRAYS, split[:4], read[:4]):
        assert np.array_equal(written, back), name
        assert back.dtype == (np.float64 if name.startswith("X") else np.int64), name
    assert (read.classes, read.name) == (3, f"mine{suffix}")
    assert read.source == f"read from {path}"


@settings(max_examples=25, deadline=None)
@given(st.lists(st.floats(allow_nan=False, allow_infinity=False, width=64), min_size=8,
                max_size=8))
def test_csv_keeps_every_digit_of_every_feature(tmp_path_factory, values):
    X = np.array(values).reshape(4, 2)
    split = data.labelled_split(X, [0, 1, 0, 1], X, [1, 0, 1, 0])
    path = data.write_split(split, tmp_path_factory.mktemp("csv") / "x.csv")
    assert np.array_equal(data.read_split(path).X, X)  # bit for bit: repr's shortest digits


def write_csv(tmp_path, text):
    path = tmp_path / "mine.csv"
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize("text,message", [
    ("a,b,split\n1,2,train\n", r"the header row must name one 'label' column"),
    ("a,label,split,label\n1,0,train,0\n", r"must name one 'label' column"),
    ("label,split\n0,train\n", r"no feature columns beside label and split"),
    ("a,label,split\n1,0,train\n2,1,validation\n", r"line 3: split must be train or test, got "
                                                   r"'validation'"),
    ("a,label,split\n1,0,train\nx,1,test\n", r"line 3, column 'a': expected a finite number, "
                                           r"got 'x'$"),
    ("a,label,split\n1,0,train\nnan,1,test\n", r"line 3, column 'a': expected a finite "
                                             r"number, got 'nan'$"),
    ("a,label,split\n1,0,train\n2,1,train\n", r"no rows with split test"),
    ("a,label,split\n1,0.5,train\n", r"line 2, column 'label': expected an integer class label, "
                                     r"got '0.5'"),
    ("a,label,split\n1,0\n", r"line 2: 2 values for the 3 columns of the header"),
])
def test_a_bad_csv_is_refused_naming_the_file_and_the_line(tmp_path, text, message):
    with pytest.raises(FileFormatError, match=message):
        data.read_split(write_csv(tmp_path, text))


def test_a_csv_with_a_class_missing_from_its_test_rows_is_refused_as_arrays_are(tmp_path):
    path = write_csv(tmp_path, "x,label,split\n0.5,0,train\n1.5,1,train\n0.1,0,test\n")
    with pytest.raises(FileFormatError, match=r"mine.csv': y_test: the test split has no "
                                              r"sample of class 1"):
        data.read_split(path)


def test_excel_s_byte_order_mark_and_pandas_float_labels_read(tmp_path):
    path = tmp_path / "excel.csv"
    path.write_text("x,label,split\n1,0.0,train\n2,1.0,train\n3,0,test\n4,1,test\n",
                    encoding="utf-8-sig")
    split = data.read_split(path)
    assert split.y.tolist() == [0, 1] and split.X[:, 0].tolist() == [1.0, 2.0]


def test_an_npz_s_float_labels_are_refused_naming_the_file(tmp_path):
    X = np.zeros((2, 2))
    np.savez(tmp_path / "floats.npz", X=X, y=np.array([0.0, 1.0]), X_test=X, y_test=[0, 1])
    with pytest.raises(FileFormatError, match=r"floats.npz': y: class labels must be integers"):
        data.read_split(tmp_path / "floats.npz")
    np.save(tmp_path / "bare.npy", X)
    (tmp_path / "bare.npy").rename(tmp_path / "bare.npz")
    with pytest.raises(FileFormatError, match=r"is not a NumPy .npz archive of arrays \(a "
                                              r"single .npy array\)"):
        data.read_split(tmp_path / "bare.npz")


def test_an_npz_must_hold_exactly_the_four_arrays(tmp_path):
    split = own_split()
    np.savez(tmp_path / "few.npz", X=split.X, y=split.y)
    with pytest.raises(FileFormatError, match=r"missing X_test, y_test$"):
        data.read_split(tmp_path / "few.npz")
    np.savez(tmp_path / "more.npz", **dict(zip(data.FILE_ARRAYS, split[:4])), w=split.y)
    with pytest.raises(FileFormatError, match=r"not expected w$"):
        data.read_split(tmp_path / "more.npz")
    (tmp_path / "text.npz").write_text("not an archive")
    with pytest.raises(FileFormatError, match=r"is not a NumPy .npz archive"):
        data.read_split(tmp_path / "text.npz")


# --- tasks -----------------------------------------------------------------------------------

def test_a_task_from_a_file_is_the_task_of_its_arrays(tmp_path):
    split = own_split()
    path = data.write_split(split, tmp_path / "mine.npz")
    from_file = Task.from_file(path, accuracy=0.5)
    from_arrays = Task(data=(split.X, split.y), test=(split.X_test, split.y_test), accuracy=0.5)
    assert from_file == from_arrays  # the same arrays by their hash
    assert isinstance(from_file.data, OwnData) and from_file.name == "mine.npz"
    assert repr(from_file.data).startswith("OwnData(mine.npz: 12 training / 12 test samples")
    assert (from_file.inputs, from_file.outputs, from_file.criterion) == (4, 3, 0.5)
    assert Task(data=split, accuracy=0.5) == from_arrays
    unchecked = split._replace(y=split.y.astype(float))  # a Split made by hand is checked too
    with pytest.raises(TypeError, match=r"^y: class labels must be integers"):
        Task(data=unchecked)


def test_a_task_refuses_arrays_without_printing_them():
    X = np.zeros((600, 2))
    with pytest.raises(TypeError) as refused:
        Task(data=X)
    assert "ndarray of shape (600, 2)" in str(refused.value)
    assert len(str(refused.value)) < 200


def test_own_data_trains_in_a_study(tmp_path):
    task = Task.from_file(data.write_split(own_split(), tmp_path / "mine.csv"))
    setup = Setup(task=task, hidden=(4,), activation="relu", output="softmax", lr=0.1,
                  epochs=5, batch_size=4, seeds=3, backend="numpy")
    study = run_study([Arm("he_normal", loss="cross_entropy")], setup)
    assert study.results[0].n == 3
    assert study.to_dict()["setup"]["task"]["data"].startswith("OwnData(mine.csv: ")


def test_the_command_learns_your_data_from_a_file(tmp_path, capsys):
    path = data.write_split(own_split(), tmp_path / "mine.npz")
    out = tmp_path / "study.json"
    cli.main(["--data", str(path), "--hidden", "4", "--batch-size", "4", "--seeds", "3",
              "--epochs", "2", "--backend", "numpy", "--json", str(out), "--no-progress"])
    report = capsys.readouterr().out
    assert report.startswith("mine.npz (12 training / 12 test samples, 3 classes)")
    written = json.loads(out.read_text())
    assert written["setup"]["task"]["data"].startswith("OwnData(mine.npz: ")
    assert written["setup"]["output"] == "softmax"


# --- pictures --------------------------------------------------------------------------------

def test_loss_curves_draws_one_fit_s_history():
    net = tinynet.mlp([2, 3, 1], init="he_normal", seed=1)
    X, y = data.xor()
    history = tinynet.fit(net, X, y, epochs=40, lr=0.1, record_every=4, backend="numpy")
    fig = figures.loss_curves(history, plateaus=False)
    lines = [line for line in fig.axes[0].get_lines() if len(line.get_xdata()) > 1]
    assert len(lines) == 1
    assert np.array_equal(lines[0].get_xdata(), 4 * np.arange(1, 11))
    assert np.allclose(lines[0].get_ydata(), history.loss)
    assert fig.axes[0].get_title() == "loss of one network"
    unrecorded = tinynet.fit(net, X, y, epochs=2, lr=0.1, record_every=None, backend="numpy")
    with pytest.raises(ValueError, match=r"no loss history: train with record_every=k \(fit"):
        figures.loss_curves(unrecorded)
    with pytest.raises(TypeError, match=r"a fit's History, got"):
        figures.loss_curves([history])


def test_the_boundary_plot_names_targets_and_wrong_points_in_a_legend():
    X, y = data.moons(40, seed=0)
    net = tinynet.mlp([2, 4, 1], init="he_normal", seed=0)  # untrained: some samples wrong
    wrong = int(((tinynet.predict(net, X, backend="numpy") > 0.5) != (y > 0.5)).sum())
    assert 0 < wrong < 40
    fig = plots.decision_boundary(net, X, y)
    texts = [text.get_text() for text in fig.axes[0].get_legend().get_texts()]
    assert texts == ["target 0", "target 1", f"wrong side of 0.5 ({wrong} of 40)"]
    markers = fig.axes[0].collections[-3:]  # the two targets' samples, then the crosses
    assert [len(m.get_offsets()) for m in markers] == [int((y == 0).sum()),
                                                       int((y == 1).sum()), wrong]
    assert plots.decision_boundary(net, X, y, legend=False).axes[0].get_legend() is None
    unlabelled = plots.decision_boundary(net, X).axes[0].get_legend().get_texts()
    assert [text.get_text() for text in unlabelled] == ["sample"]


def test_a_diverged_network_marks_no_sample_wrong():
    net = tinynet.mlp([2, 2, 1], init="he_normal", seed=0)
    net.layers[0].W[0, 0] = np.nan  # its output is NaN everywhere: on neither side of 0.5
    fig = plots.decision_boundary(net, *data.xor())
    assert fig.axes[0].get_legend().get_texts()[-1].get_text() == \
        "wrong side of 0.5 (0 of 4)"


# --- the initializers at a terminal ----------------------------------------------------------

def run_init(*argv, columns=70):
    env = {**checkout_environment(), "COLUMNS": str(columns)}
    return subprocess.run([sys.executable, "-m", "tinynet.init", *argv], capture_output=True,
                          text=True, env=env, timeout=120)


def test_python_m_tinynet_init_fits_the_terminal_and_describes_a_name():
    listed = run_init()
    assert listed.returncode == 0, listed.stderr
    assert max(map(len, listed.stdout.splitlines())) <= 70
    assert "he_normal / kaiming_normal" in listed.stdout
    described = run_init("he_normal")
    assert described.returncode == 0, described.stderr
    assert "fan_in = 2, fan_out = 8" in described.stdout
    assert "variance = 0.02, std = 0.141421" in described.stdout  # 2 / 100
    assert max(map(len, described.stdout.splitlines())) <= 70
    helped = run_init("--help")
    assert helped.returncode == 0 and helped.stdout.startswith("usage: python -m tinynet.init")
    unknown = run_init("Xavier")
    assert unknown.returncode == 2 and "did you mean 'xavier_normal'?" in unknown.stderr
    assert run_init("--markdown").stdout.strip() == markdown_table()


def test_every_description_and_the_listing_wrap_at_the_width_asked_for():
    assert max(map(len, listing(60).splitlines())) <= 60
    for name in tinynet.init.available():
        longest = max(map(len, description(name, 60).splitlines()))
        assert longest <= 60, (name, longest)


@pytest.mark.parametrize("asked,offered", [("Xavier", "xavier_normal"),
                                           ("HE_NORMAL", "he_normal"),
                                           ("Kaiming_Uniform", "kaiming_uniform"),
                                           ("LeCun", "lecun_normal")])
def test_suggestions_ignore_case(asked, offered):
    with pytest.raises(UnknownNameError, match=f"did you mean '{offered}'"):
        tinynet.init.get(asked)


# --- --init all -------------------------------------------------------------------------------

def test_init_all_summarises_hundreds_of_pairs(capsys):
    # 2-8-1 at lr 0.5 for 300 epochs: 12 seeds of an initializer that breaks symmetry all
    # learn XOR, the constant ones none, and 12 of 12 against 0 of 12 survives Holm over the
    # 465 pairs (Fisher p 1.9e-6)
    cli.main(["--init", "all", "--seeds", "12", "--epochs", "300", "--hidden", "8", "--lr",
              "0.5", "--backend", "numpy", "--no-progress"])
    report = capsys.readouterr().out
    pairs = report.split("Pairwise")[1].strip().splitlines()
    assert len(pairs) == 6, pairs
    count = len(tinynet.init.distinct())
    differ = int(re.search(rf"(\d+) of {count * (count - 1) // 2} pairs differ at the 5 % "
                           r"level after Holm", report)[1])
    assert differ > 0
    assert re.search(r"highest rate: 100\.0% \[.*he_", pairs[1]), pairs[1]
    assert pairs[2].startswith("  lowest rate: 0.0% [") and "zeros" in pairs[2], pairs[2]
    assert "not told apart from " in pairs[4] and "zeros" not in pairs[4]


def test_a_few_pairs_are_listed_one_by_one(capsys):
    cli.main(["--init", "normal,he_normal,xavier_normal", "--seeds", "2", "--epochs", "2",
              "--backend", "numpy", "--no-progress"])
    pairs = capsys.readouterr().out.split("Pairwise")[1].strip().splitlines()[1:]
    assert len(pairs) == 3 and all(" vs " in line for line in pairs)


def test_against_a_baseline_every_arms_verdict_is_listed_however_many():
    others = [name for name in tinynet.init.distinct() if name != "zeros"]
    arms = [Arm(name) for name in ["zeros", *others[:LISTED_COMPARISONS + 2]]]
    study = run_study(arms, Setup(seeds=2, epochs=2, backend="numpy"), against=0)
    against = study.report().split("Against zeros")[1].strip().splitlines()[1:]
    assert len(against) == len(arms) - 1 > LISTED_COMPARISONS  # every arm's one verdict
    assert all("zeros" in line for line in against)
