"""Evaluation during training (tinynet.evaluation): evaluating every k epochs changes no bit of
the training, and each score is the loss and accuracy of the trained parameters computed by
hand from tinynet.predict; divergence is NaN, not an error; on both backends."""

import numpy as np
import pytest

import tinynet
from tinynet.evaluation import Evaluation, scores
from tinynet.losses import CrossEntropy
from tinynet.packing import pack
from tinynet.results import EnsembleResult

RNG = np.random.default_rng(7)
X, X_TEST = RNG.normal(size=(40, 4)), RNG.normal(size=(25, 4))
Y, Y_TEST = RNG.integers(0, 3, size=40), RNG.integers(0, 3, size=25)
TRAINING = dict(epochs=7, lr=0.2, batch_size=8, loss="cross_entropy", record_every=1)


def networks(count=5):
    return [tinynet.mlp([4, 6, 3], activation="tanh", output="softmax", init="xavier_normal",
                        seed=seed) for seed in range(count)]


def by_hand(net, X, labels):
    """A network's cross-entropy and accuracy from its predictions, written out."""
    p = tinynet.predict(net, X, backend="numpy")
    loss = -np.mean(np.log(p[np.arange(len(labels)), labels]))
    return loss, np.mean(np.argmax(p, axis=1) == labels)


def test_evaluating_changes_no_bit_of_the_training_and_scores_the_trained_networks():
    plain, evaluated = networks(), networks()
    before = tinynet.fit_ensemble(plain, X, Y, backend="numpy", **TRAINING)
    after = tinynet.fit_ensemble(evaluated, X, Y, backend="numpy", test=(X_TEST, Y_TEST),
                                 evaluate_every=3, **TRAINING)
    for a, b in zip(plain, evaluated):
        np.testing.assert_array_equal(pack(a), pack(b))
    np.testing.assert_array_equal(before.loss, after.loss)
    np.testing.assert_array_equal(before.predictions, after.predictions)
    assert before.evaluation is None
    evaluation = after.evaluation
    assert evaluation.epochs.tolist() == [3, 6, 7]  # and the last epoch, which 3 does not divide
    for member, net in enumerate(evaluated):  # the last column: the trained networks
        test_loss, test_accuracy = by_hand(net, X_TEST, Y_TEST)
        train_loss, train_accuracy = by_hand(net, X, Y)
        assert evaluation.test_loss[member, -1] == pytest.approx(test_loss, rel=1e-12)
        assert evaluation.train_loss[member, -1] == pytest.approx(train_loss, rel=1e-12)
        assert evaluation.test_accuracy[member, -1] == test_accuracy
        assert evaluation.train_accuracy[member, -1] == train_accuracy


def test_an_earlier_column_is_the_network_after_that_many_epochs():
    evaluated, stopped = networks(2), networks(2)
    result = tinynet.fit_ensemble(evaluated, X, Y, backend="numpy", test=(X_TEST, Y_TEST),
                                  evaluate_every=3, **TRAINING)
    tinynet.fit_ensemble(stopped, X, Y, backend="numpy", **{**TRAINING, "epochs": 3})
    for member, net in enumerate(stopped):
        assert result.evaluation.test_loss[member, 0] == pytest.approx(
            by_hand(net, X_TEST, Y_TEST)[0], rel=1e-12)


def test_a_single_fit_is_evaluated_as_its_ensemble_member():
    net, (member,) = networks(1)[0], networks(1)
    history = net.fit(X, Y, backend="numpy", seed=0, test=(X_TEST, Y_TEST), evaluate_every=2,
                      print_every=3, **TRAINING)
    result = tinynet.fit_ensemble([member], X, Y, backend="numpy", seeds=[0],
                                  test=(X_TEST, Y_TEST), evaluate_every=2, **TRAINING)
    for name in ("epochs", "train_loss", "train_accuracy", "test_loss", "test_accuracy"):
        np.testing.assert_array_equal(getattr(history.evaluation, name),
                                      getattr(result[0].evaluation, name))
    assert history.evaluation.epochs.tolist() == [2, 4, 6, 7]


def test_a_test_set_alone_evaluates_once_at_the_end():
    result = tinynet.fit_ensemble(networks(2), X, Y, backend="numpy", test=(X_TEST, Y_TEST),
                                  **TRAINING)
    assert result.evaluation.epochs.tolist() == [7]
    assert result.evaluation.test_accuracy.shape == (2, 1)


def test_a_diverged_member_scores_nan_from_its_divergence_on():
    nets = networks(3)
    nets[1].layers[1].W[0, 0] = np.inf  # a softmax of inf is NaN: diverges in the first epoch
    result = tinynet.fit_ensemble(nets, X, Y, backend="numpy", test=(X_TEST, Y_TEST),
                                  evaluate_every=2, **TRAINING)
    assert result.diverged.tolist() == [False, True, False]
    assert np.all(np.isnan(result.evaluation.test_accuracy[1]))
    assert np.all(np.isfinite(result.evaluation.test_accuracy[[0, 2]]))


def test_scores_count_a_non_finite_output_as_wrong_and_read_single_outputs_by_side():
    outputs = np.array([[[0.2, 0.8], [np.nan, 0.1]]])
    y = np.array([[0.0, 1.0], [1.0, 0.0]])
    assert scores(outputs, y, CrossEntropy())[1].tolist() == [0.5]
    single = np.array([[[0.7], [0.4], [0.6]]])
    assert scores(single, np.array([[1.0], [0.0], [0.0]]), tinynet.losses.MSE())[1] \
        == pytest.approx([2 / 3])


def test_results_in_parts_join_with_their_evaluations():
    parts = [tinynet.fit_ensemble(networks(2), X, Y, backend="numpy", test=(X_TEST, Y_TEST),
                                  evaluate_every=3, **TRAINING) for _ in range(2)]
    joined = EnsembleResult.concatenate(parts)
    assert joined.evaluation.members == 4
    np.testing.assert_array_equal(joined.evaluation.test_loss[2:], parts[1].evaluation.test_loss)
    plain = tinynet.fit_ensemble(networks(1), X, Y, backend="numpy", **TRAINING)
    with pytest.raises(ValueError, match=r"parts\[1\] was not evaluated during training"):
        EnsembleResult.concatenate([parts[0], plain])
    shorter = Evaluation.empty(1, 7, 2)
    with pytest.raises(ValueError, match=r"parts\[1\] was evaluated after epochs \[2, 4, 6, 7\]"):
        Evaluation.concatenate([parts[0].evaluation, shorter])
    assert repr(parts[0].evaluation) == ("Evaluation(members=2, evaluated after 3 runs of "
                                         "epochs, last at epoch 7)")


@pytest.mark.slow  # compiles the cross-entropy kits' kernels
@pytest.mark.parametrize("hidden", [6, 64], ids=["lanes", "members as single fits"])
def test_the_compiled_backend_evaluates_as_numpy_and_changes_no_bit_either(hidden):
    X_wide, X_test_wide = RNG.normal(size=(96, 64)), RNG.normal(size=(30, 64))
    y_wide, y_test_wide = RNG.integers(0, 3, size=96), np.arange(30) % 3

    def trained(backend, **evaluation):
        nets = [tinynet.mlp([64, hidden, 3], activation="relu", output="softmax",
                            init="he_normal", seed=seed) for seed in range(4)]
        result = tinynet.fit_ensemble(nets, X_wide, y_wide, backend=backend, shuffle=True,
                                      **{**TRAINING, "batch_size": 32}, **evaluation)
        return nets, result

    evaluation = dict(test=(X_test_wide, y_test_wide), evaluate_every=2)
    plain, _ = trained("numba")
    compiled, result = trained("numba", **evaluation)
    for a, b in zip(plain, compiled):
        np.testing.assert_array_equal(pack(a), pack(b))
    _, reference = trained("numpy", **evaluation)
    for name in ("train_loss", "test_loss", "train_accuracy", "test_accuracy"):
        np.testing.assert_allclose(getattr(result.evaluation, name),
                                   getattr(reference.evaluation, name), rtol=1e-9)
