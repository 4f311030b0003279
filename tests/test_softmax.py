"""Softmax and cross-entropy, defined once (issue 42): the definition against SciPy and
PyTorch, its refusals, and 200 training steps against PyTorch's ``nn.CrossEntropyLoss`` on
both backends, generated and generic kernels, single fits and ensembles."""

import numpy as np
import pytest
import scipy.special

import tinynet
from tinynet.activations import Softmax
from tinynet.definitions import DefinitionError
from tinynet.losses import CrossEntropy
from tinynet.maths import exp, unit_max, unit_sum

torch = pytest.importorskip("torch", reason="PyTorch comes with the torch extra: pip install "
                                            "'.[dev,torch]'")
from test_against_torch import OPTIMIZERS as AGAINST_TORCH  # noqa: E402  (needs torch)

ROWS = np.array([[0.0, 0.0, 0.0], [1.0, 2.0, 3.0], [1000.0, 0.0, -1000.0], [-745.0, -746.0, 3.0],
                 [5e-324, -5e-324, 0.5]])


def test_softmax_is_scipys_and_stable_far_from_zero():
    p = Softmax().forward(ROWS)
    np.testing.assert_allclose(p, scipy.special.softmax(ROWS, axis=1), rtol=1e-15, atol=1e-300)
    assert np.all(np.isfinite(p)) and np.allclose(p.sum(axis=1), 1.0, rtol=0, atol=4e-16)
    assert p[2].tolist() == [1.0, 0.0, 0.0]  # e^-1000 underflows; nothing overflows


def test_a_row_is_computed_alone_and_with_members_axes():
    """The reductions run over the last axis only: an ensemble's (S, B, n) array gives each
    row what that row gives alone."""
    stacked = np.stack([ROWS, ROWS[::-1]])
    p = Softmax().forward(stacked)
    for s in range(2):
        for r in range(len(ROWS)):
            assert np.array_equal(p[s, r], Softmax().forward(stacked[s, r][None])[0])


def test_unit_sum_adds_in_order_from_the_first_unit():
    """np.sum adds in pairs of blocks from 8 terms on; unit_sum adds one after the other, as
    the compiled loops do: at 1 + 16 terms of 2^-53 they round differently."""
    x = np.array([[1.0] + [2.0 ** -53] * 16])
    total = 1.0
    for value in x[0, 1:]:
        total += value
    assert unit_sum(x)[0, 0] == total == 1.0
    assert unit_max(x)[0, 0] == 1.0 and exp(np.zeros(1))[0] == 1.0


def test_cross_entropy_and_its_gradient_are_pytorchs():
    rng = np.random.default_rng(0)
    z = rng.normal(scale=3.0, size=(6, 4))
    labels = np.array([0, 3, 1, 1, 2, 3])
    y = np.eye(4)[labels]
    loss = CrossEntropy()
    p = Softmax().forward(z)
    z_torch = torch.tensor(z, requires_grad=True)
    expected = torch.nn.CrossEntropyLoss()(z_torch, torch.from_numpy(labels))
    expected.backward()
    assert loss.value(p, y) == pytest.approx(expected.item(), rel=1e-14)
    np.testing.assert_allclose(loss.gradient_through_softmax(p, y, len(y)),
                               z_torch.grad.numpy(), rtol=0, atol=1e-16)


def test_check_holds_softmax_and_cross_entropy_to_their_definitions():
    report = tinynet.check(CrossEntropy(), backends=("numpy",))
    assert "gradient_through_softmax" in repr(report) and report.worst < 1e-6
    assert "finite at 7 rows" in repr(tinynet.check(Softmax(), backends=("numpy",)))


def test_check_refuses_a_wrong_gradient_through_softmax():
    class Halved(CrossEntropy):
        name = "halved"

        def value_and_gradient(self, y_hat, y, batch):
            return super().value_and_gradient(y_hat, y, batch)

        def gradient_through_softmax(self, y_hat, y, batch):
            return 0.5 * (y_hat - y) / batch

    with pytest.raises(DefinitionError, match=r"Halved.gradient_through_softmax's dL/dz_0"):
        tinynet.check(Halved(), backends=("numpy",))


def test_a_reduction_outside_forward_over_units_is_refused_by_name():
    from dataclasses import dataclass

    from tinynet.activations import Activation
    from tinynet.compiled.render import NotCompilableError, read

    @dataclass(frozen=True, repr=False)
    class Centred(Activation):
        name = "centred"

        def forward_and_derivative(self, z):
            return z - unit_max(z), 1.0

    with pytest.raises(NotCompilableError, match="reduces over a layer's units"):
        read(Centred(), "forward_and_derivative", 1, 2)


def digits_like(n=24, classes=3, features=4, seed=0):
    rng = np.random.default_rng(seed)
    return rng.normal(size=(n, features)), rng.integers(0, classes, size=n)


@pytest.mark.parametrize("labels,error,message", [
    (np.array([0, 1, 3, 2]), ValueError, r"y\[2\] is class 3, outside 0 to 2"),
    (np.array([0, -1, 1, 2]), ValueError, r"y\[1\] is class -1, outside 0 to 2"),
    (np.array(["cat", "dog", "cat", "cow"]), TypeError, "class labels must be integers 0 to 2, "
                                                        "got strings such as 'cat'"),
    (np.array([0.0, 1.0, 2.0, 1.0]), TypeError, r"got dtype float64; pass y.astype\(int\)"),
    (np.array([[0.5, 0.2, 0.2]] * 4), ValueError, r"each row of y to sum to 1.*y\[0\] summing "
                                                  "to 0.9"),
])
def test_bad_targets_are_one_line_errors(labels, error, message):
    X = np.zeros((4, 4))
    net = tinynet.mlp([4, 5, 3], output="softmax")
    with pytest.raises(error, match=message):
        tinynet.fit(net, X, labels, epochs=1, lr=0.1, loss="cross_entropy", backend="numpy")


def test_nan_pixels_are_refused_by_name():
    X, y = digits_like()
    X[3, 2] = np.nan
    with pytest.raises(ValueError, match=r"X.*nan|X.*NaN"):
        tinynet.fit(tinynet.mlp([4, 5, 3], output="softmax"), X, y, epochs=1, lr=0.1,
                    loss="cross_entropy", backend="numpy")


def test_softmax_and_cross_entropy_go_together():
    X, y = digits_like()
    with pytest.raises(ValueError, match="needs a softmax output layer.*output='softmax', or "
                                         "loss='bce'"):
        tinynet.fit(tinynet.mlp([4, 5, 3], output="sigmoid"), X, np.eye(3)[y], epochs=1,
                    lr=0.1, loss="cross_entropy", backend="numpy")
    with pytest.raises(ValueError, match="trains with loss='cross_entropy' only.*got loss 'mse'"):
        tinynet.fit(tinynet.mlp([4, 5, 3], output="softmax"), X, y, epochs=1, lr=0.1,
                    backend="numpy")
    with pytest.raises(ValueError, match="a softmax over one unit is 1 whatever its input"):
        tinynet.mlp([4, 5, 1], output="softmax")
    with pytest.raises(ValueError, match=r"layers\[0\]'s activation softmax .* can only be the "
                                         "output layer's"):
        tinynet.mlp([4, 5, 3], activation="softmax", output="softmax")
    with pytest.raises(ValueError, match="no element-wise derivative"):
        Softmax().derivative(ROWS)


def test_labels_and_one_hot_rows_train_alike():
    X, y = digits_like()
    nets = [tinynet.mlp([4, 5, 3], output="softmax", seed=1) for _ in range(2)]
    for net, targets in zip(nets, (y, np.eye(3)[y])):
        tinynet.fit(net, X, targets, epochs=3, lr=0.1, loss="cross_entropy", backend="numpy")
    for a, b in zip(*(net.parameters() for net in nets)):
        assert np.array_equal(a, b)


def test_gradcheck_through_softmax_and_cross_entropy():
    X, y = digits_like(n=6)
    net = tinynet.mlp([4, 5, 3], activation="tanh", output="softmax", seed=2)
    report = tinynet.gradcheck(net, X, np.eye(3)[y], loss="cross_entropy")
    assert report.passed, report


def test_predict_classes_is_the_most_probable_class():
    X, y = digits_like()
    net = tinynet.mlp([4, 5, 3], output="softmax", seed=1)
    p = tinynet.predict(net, X, backend="numpy")
    assert np.array_equal(tinynet.predict_classes(net, X, backend="numpy"), p.argmax(axis=1))
    assert np.allclose(p.sum(axis=1), 1.0)


# --- 200 steps against PyTorch --------------------------------------------------------------

OPTIMIZERS = {name: AGAINST_TORCH[name] for name in ("sgd", "momentum", "adam")}
"""PyTorch's optimizer and tinynet's, by name (tests/test_against_torch.py's), each with
hyperparameters other than the defaults."""


def torch_training(net, X, labels, batch_size, steps, lr, optimizer):
    """``net``'s initial weights trained by PyTorch on ``nn.CrossEntropyLoss`` of the last
    Linear's z (PyTorch applies the softmax inside the loss), hidden layers tanh, batches in
    data order, float64."""
    linears = []
    for layer in net.layers:
        linear = torch.nn.Linear(layer.n_in, layer.n_out, dtype=torch.float64)
        with torch.no_grad():
            linear.weight.copy_(torch.from_numpy(layer.W))
            linear.bias.copy_(torch.from_numpy(layer.b))
        linears.append(linear)
    parameters = [p for linear in linears for p in linear.parameters()]
    step = OPTIMIZERS[optimizer][0](parameters, lr)
    criterion = torch.nn.CrossEntropyLoss()
    X, labels = torch.from_numpy(X), torch.from_numpy(labels)
    done = 0
    while done < steps:
        for start in range(0, len(X), batch_size):
            a = X[start:start + batch_size]
            for linear in linears[:-1]:
                a = torch.tanh(linear(a))
            step.zero_grad()
            criterion(linears[-1](a), labels[start:start + batch_size]).backward()
            step.step()
            done += 1
            if done == steps:
                break
    return [p.detach().numpy() for p in parameters]


@pytest.mark.parametrize("optimizer", list(OPTIMIZERS))
@pytest.mark.parametrize("batch_size", [1, 4])
def test_two_hundred_numpy_steps_as_pytorch_takes_them(optimizer, batch_size):
    X, y = digits_like(n=8)
    net = tinynet.mlp([4, 5, 3], activation="tanh", output="softmax", init="xavier_normal",
                      seed=3)
    expected = torch_training(net, X, y, batch_size, 200, 0.2, optimizer)
    tinynet.fit(net, X, y, epochs=200 * batch_size // len(X), lr=0.2, batch_size=batch_size,
                shuffle=False, loss="cross_entropy", optimizer=OPTIMIZERS[optimizer][1],
                backend="numpy")
    for ours, theirs in zip(net.parameters(), expected):
        np.testing.assert_allclose(ours, theirs, rtol=0, atol=1e-10)
    assert not np.allclose(net.layers[-1].b, 0.0)  # trained: the biases moved from 0


@pytest.mark.slow
@pytest.mark.parametrize("optimizer", list(OPTIMIZERS))
@pytest.mark.parametrize("kernels,batch_size", [("generated", 1), ("generic", 1),
                                                ("generic", 4)])  # minibatches: generic only
def test_two_hundred_compiled_steps_and_ensemble_members_as_pytorch(optimizer, kernels,
                                                                    batch_size, monkeypatch):
    """One fit and each member of an ensemble of three, on the compiled backend (small
    layouts on the kernels generated for them, or on the generic ones), against PyTorch's
    200 steps; and each member bit for bit its own single fit."""
    from tinynet.compiled import codegen
    monkeypatch.setattr(codegen, "MAX_UNROLLED_WORK", 160 if kernels == "generated" else -1)
    assert codegen.supports(tinynet.packing.layout(tinynet.mlp(
        [4, 5, 3], output="softmax")), batch_size) == (kernels == "generated")
    X, y = digits_like(n=8)
    nets = [tinynet.mlp([4, 5, 3], activation="tanh", output="softmax", init="xavier_normal",
                        seed=s) for s in range(3)]
    expected = [torch_training(net, X, y, batch_size, 200, 0.2, optimizer) for net in nets]
    alone = tinynet.mlp([4, 5, 3], activation="tanh", output="softmax", init="xavier_normal",
                        seed=0)
    settings = dict(epochs=200 * batch_size // len(X), lr=0.2, batch_size=batch_size,
                    shuffle=False, loss="cross_entropy", optimizer=OPTIMIZERS[optimizer][1])
    tinynet.fit(alone, X, y, **settings)
    tinynet.fit_ensemble(nets, X, y, **settings)
    for ours, theirs, single in zip(nets[0].parameters(), expected[0], alone.parameters()):
        np.testing.assert_allclose(single, theirs, rtol=0, atol=1e-10)
        assert np.array_equal(ours, single)
    for net, theirs in zip(nets, expected):
        for ours, their in zip(net.parameters(), theirs):
            np.testing.assert_allclose(ours, their, rtol=0, atol=1e-10)


@pytest.mark.slow
def test_a_digits_network_learns_on_both_backends_alike():
    """64-32-10 on the 8x8 digits, 5 epochs of minibatch 32: the two backends agree to
    rounding and the network beats chance (10 %) by far."""
    digits = tinynet.data.digits()
    trained = []
    for backend in ("numpy", "numba"):
        net = tinynet.mlp([64, 32, 10], activation="relu", output="softmax", init="he_normal",
                          seed=0)
        tinynet.fit(net, digits.X, digits.y, epochs=5, lr=0.1, batch_size=32,
                    loss="cross_entropy", backend=backend)
        trained.append(net)
    for a, b in zip(*(net.parameters() for net in trained)):
        np.testing.assert_allclose(a, b, rtol=0, atol=1e-12)
    accuracy = np.mean(tinynet.predict_classes(trained[1], digits.X_test) == digits.y_test)
    assert accuracy > 0.8


def test_an_activation_over_units_defines_that_alone():
    from tinynet.activations import Activation

    with pytest.raises(TypeError, match="defines forward and is over a layer's units"):
        class Both(Activation):
            name = "both"

            def forward_over_units(self, z):
                return z

            def forward(self, z):
                return z

    class Cooler(Softmax):  # a subclass keeps the definition it inherits
        name = "cooler"

    assert Cooler.over_units and np.array_equal(Cooler().forward(ROWS), Softmax().forward(ROWS))


def test_kernel_source_refuses_a_softmax_without_cross_entropy_and_prints_its_loops():
    net = tinynet.mlp([4, 5, 3], output="softmax")
    with pytest.raises(ValueError, match="trains with loss='cross_entropy' only"):
        tinynet.kernel_source(net)
    generated = tinynet.kernel_source(net, loss="cross_entropy")
    generic = tinynet.kernel_source(net, loss="cross_entropy", batch_size=4, ensemble=True)
    assert "softmax: Softmax.forward_over_units" in generated and "unit_sum__r1" in generated
    assert "def over_units_lanes(A, k, rows, n, parameters):" in generic
    assert "for u in range(1, n):" in generic


def test_another_activation_over_units_is_refused_where_it_would_run_as_softmax():
    """Only the built-in Softmax has a gradient through it (p − y) and a kernel that knows
    it: a subclass trains nowhere and predicts on NumPy only, refused by name elsewhere."""
    class Hot(Softmax):
        name = "hot"

    net = tinynet.mlp([4, 5, 3], output=Hot(), init="xavier_normal", seed=1)
    X, y = digits_like()
    message = r"output activation hot \(Hot\) is over a layer's units but is not tinynet's Softmax"
    with pytest.raises(ValueError, match=message):
        tinynet.fit(net, X, y, epochs=1, lr=0.1, loss="cross_entropy", backend="numpy")
    with pytest.raises(ValueError, match=message):
        tinynet.predict(net, X)
    with pytest.raises(ValueError, match=message):
        tinynet.kernel_source(net, loss="cross_entropy")
    p = tinynet.predict(net, X, backend="numpy")  # NumPy runs its forward_over_units
    assert np.array_equal(p, net.forward(X))
    assert np.array_equal(p, Softmax().forward(net.layers[-1].pre_activation))
