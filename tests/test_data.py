"""The generated data sets (tinynet.data): shapes, labels, balance, seeding, the curves each
class lies on without noise, what noise does, and one-line errors."""

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import tinynet
from tinynet import data

from helpers import page

GENERATED = sorted(data.DATASETS)  # a new generator is tested without being listed here


@pytest.mark.parametrize("name", GENERATED)
@pytest.mark.parametrize("n", [2, 7, 200])
def test_shapes_labels_and_balance(name, n):
    X, y = data.DATASETS[name](n=n, seed=3)
    assert X.shape == (n, 2) and X.dtype == np.float64 and X.flags.c_contiguous
    assert y.shape == (n, 1) and set(np.unique(y)) <= {0.0, 1.0}
    assert int((y == 0).sum()) == n // 2 and int((y == 1).sum()) == n - n // 2
    assert np.isfinite(X).all()


@pytest.mark.parametrize("name", GENERATED)
def test_a_seed_gives_the_same_data_and_another_seed_other_data(name):
    generate = data.DATASETS[name]
    X, y = generate(n=50, noise=0.1, seed=1)
    X_again, y_again = generate(n=50, noise=0.1, seed=1)
    X_other, _ = generate(n=50, noise=0.1, seed=2)
    np.testing.assert_array_equal(X, X_again)
    np.testing.assert_array_equal(y, y_again)
    assert not np.array_equal(X, X_other)


def _distance_to_curve(name, X, y):
    """Each point's distance to its class's curve (noise 0: all zero)."""
    y = y[:, 0]
    if name == "moons":
        centre = np.where(y[:, None] == 0, [0.0, 0.0], [1.0, 0.5])
        return np.abs(np.hypot(*(X - centre).T) - 1.0)
    if name == "circles":
        return np.abs(np.hypot(*X.T) - np.where(y == 0, 1.0, 0.5))
    if name == "spirals":  # r = t / (3π) at angle t (+π for class 1), t in [0, 3π]: sampled
        t = np.linspace(0.0, 3 * np.pi, 20_001)
        curve = (t / (3 * np.pi))[:, None] * np.column_stack([np.cos(t), np.sin(t)])
        return np.array([np.hypot(*(curve * (1 - 2 * label) - point).T).min()
                         for point, label in zip(X, y)])
    if name == "blobs":
        return np.hypot(X[:, 0] - np.where(y == 0, -1.0, 1.0), X[:, 1])
    corners = np.round(X)  # xor: on a corner of its class
    return np.hypot(*(X - corners).T) + (np.logical_xor(*corners.T.astype(bool)) != y)


@pytest.mark.parametrize("name", GENERATED)
def test_without_noise_each_class_lies_on_its_curve_and_noise_moves_it_off(name):
    X, y = data.DATASETS[name](n=300, noise=0.0, seed=5)
    assert _distance_to_curve(name, X, y).max() < (1e-3 if name == "spirals" else 1e-12)
    X, y = data.DATASETS[name](n=1000 if name == "spirals" else 3000, noise=0.05, seed=5)
    spread = _distance_to_curve(name, X, y)
    # a point moved by N(0, 0.05²) per coordinate: its distance to a curve is about the normal
    # component |N(0, 0.05²)|, mean 0.05 sqrt(2/π) = 0.040; to a point (blobs, xor) it is
    # Rayleigh, mean 0.05 sqrt(π/2) = 0.063; with 1000+ points either mean is within ±0.003
    assert 0.01 < spread.mean() < 0.1


def test_the_four_point_xor_is_unchanged():
    X, y = data.xor()
    np.testing.assert_array_equal(X, [[0, 0], [0, 1], [1, 0], [1, 1]])
    np.testing.assert_array_equal(y[:, 0], [0, 1, 1, 0])


def test_a_network_learns_the_moons_and_draws_its_boundary():
    X, y = data.moons(n=100, noise=0.1, seed=0)
    net = tinynet.mlp([2, 16, 1], seed=0)
    net.fit(X, y, epochs=300, lr=0.1, record_every=None)
    accuracy = np.mean((net.predict(X) > 0.5) == (y > 0.5))
    assert accuracy > 0.9  # two moons at this noise are nearly separable by a small MLP
    fig = tinynet.plots.decision_boundary(net, X, y)
    zeros, ones, wrong = fig.axes[0].collections[-3:]
    assert (len(zeros.get_offsets()), len(ones.get_offsets())) == (50, 50)
    assert len(wrong.get_offsets()) == round((1 - accuracy) * 100)


@pytest.mark.parametrize("call,error,message", [
    (lambda: data.moons(n=1), ValueError, r"n must be an integer >= 2, got 1"),
    (lambda: data.circles(n=10.5), TypeError, r"n must be an integer"),
    (lambda: data.spirals(noise=-0.1), ValueError, r"noise must be a finite number >= 0"),
    (lambda: data.blobs(seed=-1), ValueError, r"seed"),
    (lambda: data.circles(factor=1.5), ValueError, r"factor must be below 1 .* got 1.5"),
    (lambda: data.spirals(turns=0), ValueError, r"turns must be a finite number > 0"),
    (lambda: data.xor(noise=0.1), ValueError, r"noise needs n"),
])
def test_bad_arguments_name_themselves(call, error, message):
    with pytest.raises(error, match=message):
        call()


@pytest.mark.slow  # runs the example in a Python of its own (test_example_outputs: its quick run)
def test_the_example_draws_every_data_set_for_the_readme(tmp_path):
    root = Path(__file__).resolve().parents[1]
    subprocess.run([sys.executable, str(root / "examples" / "datasets.py"), "--epochs", "20",
                    "--out", str(tmp_path)], check=True, capture_output=True, timeout=300)
    assert (tmp_path / "datasets.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "(../examples/figures/datasets.png)" in page("datasets.md")
    assert (root / "examples" / "figures" / "datasets.png").is_file()


# --- the digits, split once (the extra tinynet[data]) ---------------------------------------

@pytest.mark.parametrize("name,sizes,features", [("digits", (1442, 355), 64),
                                                 ("mnist1d", (4000, 1000), 40)])
def test_the_digit_sets_are_split_once_and_the_same_every_time(name, sizes, features):
    pytest.importorskip("sklearn" if name == "digits" else "mnist1d",
                        reason="the data sets come with the extra tinynet[data]")
    np.random.seed(7)  # the global state, which mnist1d's generator seeds: put back after
    before = np.random.random()
    np.random.seed(7)
    split = getattr(data, f"_{name}").__wrapped__()  # made now, not the process's copy
    assert np.random.random() == before
    again = data.CLASSIFICATION[name]()
    again.X[0, 0] += 1.0  # a copy: the next call is the data set as made
    again = data.CLASSIFICATION[name]()
    assert (len(split.X), len(split.X_test)) == sizes and split.classes == 10
    assert split.X.shape[1] == split.X_test.shape[1] == features
    for array in split[:4]:
        assert array.flags.c_contiguous and np.isfinite(array).all()
    for ours, theirs in zip(split[:4], again[:4]):
        assert np.array_equal(ours, theirs)
    assert split.y.dtype == split.y_test.dtype == np.int64
    for labels in (split.y, split.y_test):  # every class in both, none outside 0..9
        assert set(np.unique(labels)) == set(range(10))
    train = {row.tobytes() for row in split.X}
    assert not any(row.tobytes() in train for row in split.X_test[:50])  # no sample in both


def test_digits_are_scikit_learns_pixels_over_16_stratified():
    sklearn = pytest.importorskip("sklearn.datasets", reason="the extra tinynet[data]")
    X, y = sklearn.load_digits(return_X_y=True)
    split = data.digits()
    assert split.X.min() == 0.0 and split.X.max() == 1.0
    assert sorted(map(bytes, np.vstack([split.X, split.X_test]) * 16)) == \
        sorted(map(bytes, X))  # the same images, each once
    counts = np.bincount(split.y_test)
    assert np.array_equal(counts, np.bincount(y) // 5)  # each class's fifth, rounded down


def test_mnist1d_is_the_papers_set_standardised():
    pytest.importorskip("mnist1d", reason="the extra tinynet[data]")
    split = data.mnist1d()
    values = np.concatenate([split.X, split.X_test])
    assert abs(values.mean()) < 1e-12 and abs(values.std() - 1.0) < 1e-12
    # the package's generator, pinned: a new version that draws other data changes results
    assert split.y[:10].tolist() == [2, 6, 4, 5, 6, 6, 6, 0, 3, 1]
    np.testing.assert_allclose(split.X[0, :3], [-0.33200566736939013, -0.4719103656557236,
                                                -0.778697076293495], rtol=1e-12)


def test_a_missing_package_is_named_with_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "sklearn", None)
    monkeypatch.setitem(sys.modules, "sklearn.datasets", None)
    monkeypatch.setattr(data, "_digits", data._digits.__wrapped__)  # not the process's copy
    with pytest.raises(ModuleNotFoundError, match=r"data set 'digits' needs the scikit-learn "
                                                  r"package .*pip install 'tinynet\[data\]'"):
        data.digits()


def test_a_two_dimensional_set_splits_as_the_digits_do():
    split = data.split("moons", n=50, noise=0.2, seed=3, test_seed=4)
    X, y = data.moons(n=50, noise=0.2, seed=3)
    X_test, y_test = data.moons(n=50, noise=0.2, seed=4)
    assert np.array_equal(split.X, X) and np.array_equal(split.X_test, X_test)
    assert split.y.dtype == np.int64 and np.array_equal(split.y, y[:, 0])
    assert np.array_equal(split.y_test, y_test[:, 0]) and split.classes == 2
    assert split.source == "tinynet.data.moons(n=50, noise=0.2): training seed 3, test seed 4"
    with pytest.raises(ValueError, match="test_seed must differ from seed"):
        data.split("moons", seed=2, test_seed=2)
    with pytest.raises(tinynet.UnknownNameError, match="unknown data set 'moon'"):
        data.split("moon")
