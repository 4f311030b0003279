"""Studies on tasks with a test set (tinynet.xor on digits, MNIST-1D or your own arrays): each
seed's outcome is its test accuracy, computed again here from the kept networks; arms are
compared by Fisher and Mann-Whitney with Holm over both; the command line takes --data
digits; a study states its memory and seconds before it starts."""

import json
from dataclasses import replace

import numpy as np
import pytest
import scipy.stats

import tinynet
from tinynet import accuracy
from tinynet.stats import holm
from tinynet.xor import Arm, Setup, Task, classification_setup, run_study
from tinynet.xor.cli import main
from tinynet.xor.report import RankedComparison

SETUP = replace(classification_setup("digits"), hidden=(8,), epochs=2, seeds=6,
                backend="numpy")
ARMS = [Arm("he_normal", loss="cross_entropy", shuffle=True),
        Arm("normal(std=0.01)", loss="cross_entropy", shuffle=True)]


@pytest.fixture(scope="module")
def study():
    return run_study(ARMS, SETUP, evaluate_every=1)


def test_a_digits_task_is_its_fixed_split_learned_above_twice_chance():
    task = Task("digits")
    split = tinynet.data.digits()
    X, y = task.training_data()
    np.testing.assert_array_equal(X, split.X)
    np.testing.assert_array_equal(task.held_out_data()[1], split.y_test)
    assert (task.inputs, task.outputs, task.classes, task.criterion) == (64, 10, 10, 0.2)
    assert SETUP.sizes == [64, 8, 10] and task.classification
    assert task.describe() == ("digits (1,442 training / 355 test samples, 10 classes), "
                               "learned: test accuracy > 20%")


def test_each_seeds_outcome_is_the_test_accuracy_of_its_kept_network(study):
    split = tinynet.data.digits()
    for index, result in enumerate(study.results):
        nets = [study.network(index, seed) for seed in study.seeds]
        again = accuracy.held_out_accuracies(nets, split.X_test, split.y_test, backend="numpy")
        np.testing.assert_array_equal(result.test_accuracy, again)
        assert result.successes == int(np.sum(again > 0.2))
        np.testing.assert_array_equal(result.solved, again > 0.2)
        evaluation = result.ensemble.evaluation
        assert evaluation.epochs.tolist() == [1, 2]  # evaluate_every=1
        np.testing.assert_array_equal(evaluation.test_accuracy[:, -1], again)


def test_arms_are_compared_by_fisher_and_mann_whitney_holm_over_both(study):
    (comparison,) = study.comparisons
    a, b = study.results
    assert isinstance(comparison, RankedComparison)
    assert comparison.p == pytest.approx(scipy.stats.fisher_exact(
        [[a.successes, a.n - a.successes], [b.successes, b.n - b.successes]])[1])
    rank = scipy.stats.mannwhitneyu(a.test_accuracy, b.test_accuracy).pvalue
    assert comparison.rank_p == pytest.approx(rank)
    assert [comparison.p_holm, comparison.rank_p_holm] == holm([comparison.p, comparison.rank_p])
    assert comparison.median_a == np.median(a.test_accuracy)
    report = study.report()
    assert "Mann-Whitney on test accuracy, both two-sided; Holm-adjusted over 2 tests" in report
    assert comparison.verdict(6) in report
    assert "test acc. median [q1, q3]" in report


def test_the_json_keeps_every_seeds_test_accuracy_and_loss(study):
    written = json.loads(study.to_json())
    first = written["results"][0]
    assert first["test_accuracy"] == study.results[0].test_accuracy
    assert len(first["test_loss"]) == 6
    assert written["setup"]["task"]["data"] == "digits"
    assert Setup.from_dict(written["setup"]) == SETUP
    assert written["comparisons"][0]["rank_p_holm"] == study.comparisons[0].rank_p_holm


def test_your_own_arrays_are_a_task_too():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(90, 3))
    y = (X[:, 0] > 0).astype(int) + (X[:, 1] > 0.5).astype(int)
    task = Task(data=(X[:60], y[:60]), test=(X[60:], y[60:]))
    assert task == Task(data=(X[:60], y[:60]), test=(X[60:], y[60:]))  # the same arrays
    assert task.classes == 3 and task.criterion == pytest.approx(2 / 3)
    setup = Setup(task=task, hidden=(6,), activation="tanh", output="softmax", lr=0.2,
                  epochs=20, batch_size=10, seeds=4, backend="numpy")
    result = run_study([Arm("xavier_normal", loss="cross_entropy")], setup).results[0]
    assert len(result.test_accuracy) == 4
    assert all(0.0 <= value <= 1.0 for value in result.test_accuracy)
    written = json.loads(run_study([Arm("xavier_normal", loss="cross_entropy")],
                                   replace(setup, seeds=2)).to_json())
    assert written["setup"]["task"]["data"].startswith("OwnData(60 training / 30 test "
                                                       "samples, 3 inputs, 3 classes, sha256 ")


def test_a_study_with_progress_states_its_memory_and_seconds_first(capsys):
    run_study(ARMS[:1], replace(SETUP, seeds=2, epochs=1), progress=True)
    first = capsys.readouterr().err.splitlines()[0]
    assert first.startswith("1 arm of 2 seeds of 64-8-10 on digits, 1 epochs: about ")
    assert " MB, about " in first and "s here (one epoch of 2 seeds timed)" in first


def test_the_command_line_runs_a_digits_study(tmp_path, capsys):
    main(["--data", "digits", "--backend", "numpy", "--seeds", "4", "--epochs", "2",
          "--hidden", "8", "--init", "he_normal,normal(std=0.01)", "--json",
          str(tmp_path / "d.json"), "--curves", str(tmp_path / "c.png"), "--no-progress"])
    out = capsys.readouterr().out
    assert out.startswith("digits (1,442 training / 355 test samples, 10 classes), learned: "
                          "test accuracy > 20%, 64-8-10 (relu hidden, softmax output), lr 0.1, "
                          "batches of 32, 2 epochs, 4 seeds (0-3), backend numpy")
    assert "he_normal, cross_entropy loss, shuffled" in out  # shuffled by default here
    written = json.loads((tmp_path / "d.json").read_text())
    assert [r["arm"]["init"] for r in written["results"]] == ["he_normal", "normal(std=0.01)"]
    assert (tmp_path / "c.png").stat().st_size > 10_000


def test_the_command_line_refuses_evaluation_without_a_test_set(capsys):
    with pytest.raises(SystemExit) as stop:
        main(["--data", "moons", "--evaluate-every", "2"])
    assert stop.value.code == 2
    assert "--evaluate-every 2: evaluates on a test set; give --data digits or mnist1d" in \
        capsys.readouterr().err
