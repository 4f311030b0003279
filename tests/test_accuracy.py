"""Test accuracy over seeds (tinynet.accuracy): each number of a summary against SciPy or a
count by hand, the comparisons and their Holm adjustment, and the report's sentences."""

import numpy as np
import pytest
import scipy.stats

import tinynet
from tinynet import accuracy
from tinynet.stats import holm, wilson_interval


def test_a_summary_counts_and_intervals_as_scipy_does():
    scores = np.array([0.1, 0.12, 0.9, 0.92, 0.95, 0.5, 0.85, 0.11, 0.93, 0.88])
    s = accuracy.summarise("he", scores, classes=10, seconds=1.5)
    assert s.threshold == 0.2 and s.learned == 7 and s.n == 10  # above twice chance
    assert s.learned_interval == wilson_interval(7, 10)
    assert s.quartiles == tuple(np.quantile(scores, [0.25, 0.5, 0.75]))
    low, high = scipy.stats.t.interval(0.95, 9, loc=scores.mean(), scale=scipy.stats.sem(scores))
    assert s.mean_interval == pytest.approx((low, high), rel=1e-12)
    assert "7/10 learned (> 20%)" in repr(s)


def test_two_classes_learn_halfway_to_one_and_a_threshold_may_be_given():
    assert accuracy.summarise("a", [0.5, 0.8], classes=2).threshold == 0.75
    assert accuracy.summarise("a", [0.5, 0.8], classes=2).learned == 1
    assert accuracy.learning_threshold(3) == pytest.approx(2 / 3)
    assert accuracy.summarise("a", [0.5, 1.0], classes=2, threshold=0.4).learned == 2
    with pytest.raises(ValueError, match="one per seed, at least two"):
        accuracy.summarise("a", [0.5], classes=10)
    with pytest.raises(ValueError, match="classes must be an integer >= 2, got 1"):
        accuracy.summarise("a", [0.5, 0.6], classes=1)


def test_comparisons_are_fisher_and_mann_whitney_holm_adjusted():
    rng = np.random.default_rng(0)
    good, bad = rng.uniform(0.85, 0.95, 40), np.r_[rng.uniform(0.85, 0.95, 20), [0.1] * 20]
    same = good.copy()
    arms = [accuracy.summarise(name, scores, 10) for name, scores in
            (("good", good), ("bad", bad), ("same", same))]
    comparisons = accuracy.compare_all(arms, [good, bad, same])
    raw = [p for c in comparisons for p in (c.fisher_p, c.rank_p)]
    assert [p for c in comparisons for p in (c.fisher_adjusted, c.rank_adjusted)] == holm(raw)
    first = comparisons[0]
    assert first.fisher_p == pytest.approx(scipy.stats.fisher_exact([[40, 0], [20, 20]])[1])
    assert first.rank_p == pytest.approx(scipy.stats.mannwhitneyu(good, bad).pvalue)
    assert comparisons[1].fisher_p == 1.0 and comparisons[1].rank_p == pytest.approx(1.0)
    text = accuracy.report(arms, comparisons)
    assert "good against bad: they differ in the fraction that learns and the accuracies" in text
    assert "good against same: no difference shown" in text


def test_all_tied_accuracies_give_no_evidence():
    s = accuracy.summarise("a", [0.1, 0.1], classes=10)
    assert accuracy.compare(s, np.array([0.1, 0.1]), s, np.array([0.1, 0.1])).rank_p == 1.0


def test_held_out_accuracies_score_each_network():
    rng = np.random.default_rng(1)
    X, y = rng.normal(size=(30, 4)), rng.integers(0, 3, size=30)
    nets = [tinynet.mlp([4, 6, 3], output="softmax", seed=s) for s in range(3)]
    scores = accuracy.held_out_accuracies(nets, X, y, backend="numpy")
    expected = [np.mean(np.argmax(net.forward(X), axis=1) == y) for net in nets]
    assert scores.tolist() == expected


@pytest.mark.slow  # compiles the lane kernel of a softmax network
def test_the_digits_example_prints_the_table_and_the_comparison(tmp_path):
    from helpers import ROOT, run_python
    done = run_python([str(ROOT / "examples" / "digits.py"), "--init",
                       "he_normal,normal(std=0.01)", "--seeds", "6", "--epochs", "2",
                       "--hidden", "16"], tmp_path)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith("Split('digits': 1,442 training and 355 test samples")
    assert "64-16-10 networks, relu hidden layers, softmax output" in lines[0]
    assert lines[1].split() == ["arm", "seeds", "learned", "(95", "%", "CI)", "median", "test",
                                "acc.", "[quartiles]", "mean", "(95", "%", "CI)", "seconds"]
    assert lines[2].startswith("he_normal ") and lines[3].startswith("normal(std=0.01) ")
    assert lines[2].split()[1] == "6"
    assert lines[-1].startswith("he_normal against normal(std=0.01): ")
