import numpy as np

from tinynet.losses import mse, mse_gradient

from helpers import central_difference, relative_error


def test_one_sample_one_output_matches_the_notes():
    y_hat, y = np.array([[0.8]]), np.array([[1.0]])
    assert mse(y_hat, y) == (0.8 - 1.0) ** 2
    assert mse_gradient(y_hat, y)[0, 0] == 2 * (0.8 - 1.0)


def test_sum_over_outputs_mean_over_batch():
    y_hat = np.array([[1.0, 2.0], [3.0, 4.0]])
    y = np.zeros((2, 2))
    assert mse(y_hat, y) == (1 + 4 + 9 + 16) / 2


def test_gradient_matches_central_difference():
    rng = np.random.default_rng(0)
    y_hat, y = rng.normal(size=(5, 3)), rng.normal(size=(5, 3))
    numeric = central_difference(lambda: mse(y_hat, y), y_hat)
    assert relative_error(mse_gradient(y_hat, y), numeric) < 1e-8


def test_shapes_must_match_instead_of_broadcasting():
    import pytest
    from tinynet import ShapeError
    with pytest.raises(ShapeError, match=r"same shape, got \(4, 1\) and \(4,\)"):
        mse(np.zeros((4, 1)), np.ones(4))
    with pytest.raises(ShapeError):
        mse_gradient(np.zeros((4, 1)), np.ones(4))
