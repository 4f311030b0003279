import dataclasses
import warnings

import numpy as np
import pytest

import tinynet
from tinynet.losses import mse, mse_gradient
from tinynet.shuffle import epoch_order

X_XOR, Y_XOR = tinynet.data.xor()


def manual_sgd(net, X, y, epochs, lr, batch_size, order_of_epoch):
    """The training loop written out by hand, to check fit() against."""
    losses = []
    for epoch in range(epochs):
        total = 0.0
        order = order_of_epoch(epoch)
        for start in range(0, len(X), batch_size):
            batch = order[start:start + batch_size]
            y_hat = net.forward(X[batch])
            total += mse(y_hat, y[batch]) * len(batch)
            net.backward(mse_gradient(y_hat, y[batch]))
            for layer in net.layers:
                layer.W -= lr * layer.dW
                layer.b -= lr * layer.db
        losses.append(total / len(X))
    return np.array(losses)


@pytest.mark.parametrize("shuffle", [True, False])
@pytest.mark.parametrize("batch_size", [1, 2, 3])
def test_fit_is_per_sample_sgd_in_the_documented_order(shuffle, batch_size):
    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(7, 3)), rng.normal(size=(7, 2))
    net = tinynet.mlp([3, 4, 2], output="identity", seed=1)
    twin = tinynet.mlp([3, 4, 2], output="identity", seed=1)
    history = net.fit(X, y, epochs=5, lr=0.05, batch_size=batch_size, shuffle=shuffle, seed=11)
    expected = manual_sgd(twin, X, y, 5, 0.05, batch_size,
                          (lambda e: epoch_order(11, e, 7)) if shuffle else (lambda e: np.arange(7)))
    np.testing.assert_allclose(history.loss, expected, rtol=1e-13)
    for p, q in zip(net.parameters(), twin.parameters()):
        np.testing.assert_allclose(p, q, rtol=1e-13)


def test_shuffle_draws_a_fresh_permutation_every_epoch():
    orders = {tuple(epoch_order(5, e, 4)) for e in range(50)}
    assert len(orders) > 10  # 24 possible; a fixed order would give 1


def test_small_xor_network_learns():
    net = tinynet.mlp([2, 8, 1], init="he_leaky", seed=0)
    history = net.fit(X_XOR, Y_XOR, epochs=3000, lr=0.1)
    assert not history.diverged and history.epochs == 3000
    assert history.loss[-1] < 0.01 < history.loss[0]
    np.testing.assert_array_equal(net.predict(X_XOR) > 0.5, Y_XOR > 0.5)


def test_same_seed_same_history_bit_for_bit():
    runs = []
    for _ in range(2):
        net = tinynet.mlp([2, 2, 2, 1], init="he_leaky", seed=3)
        history = net.fit(X_XOR, Y_XOR, epochs=200, lr=0.05)
        runs.append((history.loss, net.parameters()))
    np.testing.assert_array_equal(runs[0][0], runs[1][0])
    for p, q in zip(runs[0][1], runs[1][1]):
        np.testing.assert_array_equal(p, q)


def test_shuffle_seed_defaults_to_the_network_seed():
    a = tinynet.mlp([2, 3, 1], seed=4)
    b = tinynet.mlp([2, 3, 1], seed=4)
    np.testing.assert_array_equal(a.fit(X_XOR, Y_XOR, epochs=20, lr=0.1).loss,
                                  b.fit(X_XOR, Y_XOR, epochs=20, lr=0.1, seed=4).loss)


def test_divergence_stops_training_without_warnings():
    net = tinynet.mlp([2, 16, 16, 16, 1], activation="relu", output="identity",
                      init="normal", seed=0)
    X = np.full((4, 2), 10.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        history = net.fit(X, np.ones((4, 1)), epochs=1000, lr=10.0)
    assert history.diverged
    assert history.epochs < 1000
    assert not np.isfinite(history.loss[-1])
    assert "diverged=True" in repr(history)


def test_one_dimensional_targets_for_a_single_output():
    net = tinynet.mlp([2, 3, 1], seed=0)
    twin = tinynet.mlp([2, 3, 1], seed=0)
    np.testing.assert_array_equal(net.fit(X_XOR, Y_XOR.ravel(), epochs=5, lr=0.1).loss,
                                  twin.fit(X_XOR, Y_XOR, epochs=5, lr=0.1).loss)


def test_integer_data_is_converted_exactly():
    net = tinynet.mlp([2, 3, 1], seed=0)
    twin = tinynet.mlp([2, 3, 1], seed=0)
    np.testing.assert_array_equal(
        net.fit(X_XOR.astype(int), Y_XOR.astype(int), epochs=5, lr=0.1).loss,
        twin.fit(X_XOR, Y_XOR, epochs=5, lr=0.1).loss)


def test_print_every(capsys):
    tinynet.mlp([2, 2, 1]).fit(X_XOR, Y_XOR, epochs=10, lr=0.1, print_every=5)
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 2 and lines[0].startswith("epoch  5/10  loss ")


def test_print_every_reports_the_epoch_training_diverged_in(capsys):
    net = tinynet.mlp([1, 1], output="identity", init="constant(value=1.0)", seed=0)
    with np.errstate(all="ignore"):
        history = net.fit([[1e150]], [[0.0]], epochs=9, lr=1e10, print_every=4)
    assert history.diverged_epoch == 0
    assert capsys.readouterr().out.splitlines() == [f"epoch 1/9  loss {history.final_loss:.6g}"
                                                    "  (diverged)"]


def test_divergence_is_caught_when_only_a_parameter_overflows():
    # One sample, one identity weight w = 1, x = 1e150: the loss (1e150)² = 1e300 is finite
    # (it is computed before the update), but the update 2e300 · lr = 2e310 overflows w to -inf.
    net = tinynet.mlp([1, 1], output="identity", init="constant(value=1.0)", seed=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        history = net.fit([[1e150]], [[0.0]], epochs=5, lr=1e10)
    assert history.epochs == 1 and np.isfinite(history.loss[0])
    assert history.diverged and np.isinf(net.layers[0].W[0, 0])


def test_history_compares_without_error():
    a = tinynet.mlp([2, 2, 1]).fit(X_XOR, Y_XOR, epochs=2, lr=0.1)
    assert (a == a) is True and (a == dataclasses.replace(a, loss=a.loss.copy())) is False


# --- long runs: chunks, Ctrl-C, seeds from anything iterable --------------------------------

@pytest.mark.parametrize("backend", ["numba", "numpy"])
def test_a_fit_in_small_chunks_is_the_same_fit(backend, monkeypatch):
    X, y = tinynet.data.xor()
    whole = tinynet.mlp([2, 3, 1], seed=5)
    history = whole.fit(X, y, epochs=50, lr=0.1, backend=backend)
    module = tinynet.reference if backend == "numpy" else tinynet.compiled.load()
    real = module.fit_one
    monkeypatch.setattr(module, "FIT_CHUNK_WORK", 7 * 13 * 4)  # 7 epochs of a 2-3-1 on 4 samples
    calls = []
    monkeypatch.setattr(module, "fit_one", lambda *args: calls.append(module.fit_one) or
                        real(*args))
    pieces = tinynet.mlp([2, 3, 1], seed=5)
    chunked = pieces.fit(X, y, epochs=50, lr=0.1, backend=backend)
    assert len(calls) == 8  # 50 epochs in chunks of 7
    np.testing.assert_array_equal(chunked.loss, history.loss)
    np.testing.assert_array_equal(tinynet.packing.pack(pieces), tinynet.packing.pack(whole))


def test_ctrl_c_during_a_fit_puts_the_network_back(monkeypatch):
    X, y = tinynet.data.xor()
    net = tinynet.mlp([2, 3, 1], seed=5)
    before = tinynet.packing.pack(net)
    backend = tinynet.compiled.load()
    monkeypatch.setattr(backend, "FIT_CHUNK_WORK", 13 * 4)  # one epoch a chunk
    real, calls = backend.fit_one, []

    def interrupted(*args):
        calls.append(1)
        if len(calls) == 3:  # two chunks have trained the network
            raise KeyboardInterrupt
        real(*args)

    monkeypatch.setattr(backend, "fit_one", interrupted)
    with pytest.raises(KeyboardInterrupt):
        net.fit(X, y, epochs=10, lr=0.1)
    np.testing.assert_array_equal(tinynet.packing.pack(net), before)


def test_seeds_may_come_from_a_generator_or_an_array():
    X, y = tinynet.data.xor()
    results = []
    for seeds in ([3, 4, 5], (s for s in range(3, 6)), np.arange(3, 6), range(3, 6)):
        nets = [tinynet.mlp([2, 2, 1], seed=s) for s in range(3)]
        results.append(tinynet.fit_ensemble(nets, X, y, epochs=5, lr=0.1, seeds=seeds).loss)
    for loss in results[1:]:
        np.testing.assert_array_equal(loss, results[0])
