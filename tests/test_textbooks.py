"""The textbooks' experiments (tinynet.xor.textbooks): the settings each book states, the
epochs to a target and the seed-by-seed comparison against SciPy, the distribution-free
interval of a median against its definition, and the activation histograms at initialization
against what the book's figures show."""

import math

import numpy as np
import pytest
import scipy.stats

from tinynet.stats import holm, median_interval
from tinynet.xor import textbooks
from tinynet.xor.textbooks import DLFS, MNIST1D_MLP, NIELSEN, adjust, epochs_to, sooner


def test_each_experiment_has_the_books_settings():
    relu = DLFS.setups["digits, relu"]
    assert relu.sizes == [64, 100, 100, 100, 100, 100, 10]
    assert (relu.lr, relu.batch_size, relu.seeds) == (0.01, 128, 100)
    assert [arm.init for arm in DLFS.arms_of("mnist1d, sigmoid")] == [
        "normal(std=0.01)", "lecun_normal", "he_normal"]
    thirty = NIELSEN.setups["digits, 30 hidden"]
    assert (thirty.sizes, thirty.activation, thirty.lr, thirty.batch_size, thirty.epochs) == (
        [64, 30, 10], "sigmoid", 0.1, 10, 30)
    assert [(arm.init, arm.bias_init) for arm in NIELSEN.arms_of("digits, 30 hidden")] == [
        ("normal", "normal"), ("lecun_normal", "normal")]
    mlp = MNIST1D_MLP.setups["mnist1d, relu"]
    assert mlp.sizes == [40, 100, 100, 10]
    assert mlp.epochs * 4000 // mlp.batch_size == 6000  # the paper's steps
    assert all(arm.optimizer.startswith("adam") and not arm.shuffle
               for arm in MNIST1D_MLP.arms_of("mnist1d, relu"))


def test_epochs_to_a_target_is_the_first_evaluation_that_reaches_it():
    accuracies = np.array([[0.5, 0.91, 0.95], [0.5, 0.6, 0.7], [0.92, np.nan, 0.99]])
    assert epochs_to(accuracies, np.array([2, 4, 6]), 0.9) == [4, None, 2]


def test_sooner_is_the_median_difference_with_the_sign_tests_interval_and_wilcoxon():
    rng = np.random.default_rng(3)
    a = [int(v) for v in rng.integers(5, 15, 60)]
    b = [v - int(d) for v, d in zip(a, rng.integers(0, 4, 60))]
    a[0], b[1] = None, None  # never reached: left out of the pairs
    found = sooner(a, b)
    differences = [x - y for x, y in zip(a, b) if x is not None and y is not None]
    assert found["pairs"] == 58 == len(differences)
    assert found["median"] == np.median(differences)
    assert found["interval"] == list(median_interval(differences))
    assert found["p"] == pytest.approx(scipy.stats.wilcoxon(differences).pvalue)
    assert found["reached"]["a"][:2] == [59, 60]
    summaries = [dict(found), {"p": 0.5}, {"pairs": 0}]
    adjust(summaries)
    assert [s.get("p_holm") for s in summaries] == [*holm([found["p"], 0.5]), None]


def test_the_median_interval_is_the_order_statistics_the_binomial_gives():
    """At n = 100 the sign test's 95 % interval is x_(40) to x_(61) (P(B <= 39) = 0.018,
    P(B <= 40) = 0.028 for B ~ Binomial(100, 1/2))."""
    values = np.arange(100.0)[::-1]
    assert median_interval(values) == (39.0, 60.0)
    k = 40
    assert scipy.stats.binom.cdf(k - 1, 100, 0.5) <= 0.025 < scipy.stats.binom.cdf(k, 100, 0.5)
    with pytest.raises(ValueError, match="enough numbers for a 95% interval"):
        median_interval([1.0, 2.0, 3.0, 4.0, 5.0])


def test_the_histograms_show_what_the_books_figures_show():
    """Fig. 6-10: sigmoid from std 1 piles its activations at 0 and 1; Fig. 6-13: ReLU from
    std 0.01 shrinks each layer by about 0.01·sqrt(100/2) ≈ 0.07; He keeps the scale."""
    saturated = textbooks.init_histograms("sigmoid", "normal", seeds=3)
    first = np.array(saturated["counts"][0]) / (3 * 1000 * 100)
    assert first[0] + first[-1] > 0.4  # the two outer bins of 30 hold over 40 %
    shrinking = textbooks.init_histograms("relu", "normal(std=0.01)", seeds=3)
    medians = [q[1] for q in shrinking["std_quartiles"]]
    ratios = np.array(medians[1:]) / np.array(medians[:-1])
    # Var(z') = n σ² E[a²] and E[a²] = Var(z)/2 for a = relu(z): the std of z, and so of a,
    # shrinks by σ·sqrt(n/2) = 0.0707 a layer; 30 % either way covers three seeds' spread
    assert np.all(np.abs(ratios / (0.01 * math.sqrt(100 / 2)) - 1) < 0.3)
    kept = textbooks.init_histograms("relu", "he_normal", seeds=3)
    he = [q[1] for q in kept["std_quartiles"]]
    assert max(he) / min(he) < 1.5
    assert len(kept["counts"]) == 5 and len(kept["counts"][0]) == 30


@pytest.mark.slow  # compiles the experiments' kernels: about a minute
def test_the_command_runs_a_quick_try_and_renders_it(tmp_path, monkeypatch):
    import json

    import textbooks as command  # examples/textbooks.py (examples/ is on the path)
    monkeypatch.chdir(tmp_path)
    command.main(["--quick", "--no-progress", "--out", str(tmp_path / "try")])
    data = json.loads((tmp_path / "try" / "textbooks.json").read_text())
    assert data["dlfs"]["studies"]["digits, relu"]["study"]["setup"]["seeds"] == 8
    for name in ("dlfs", "histograms", "nielsen", "mnist1d_mlp"):
        assert (tmp_path / "try" / f"textbooks_{name}.png").stat().st_size > 10_000
    text = command.render(data)
    assert "### MNIST-1D's MLP beside the paper's 68 %" in text
    assert text.count("Holm") >= 4
