"""tinynet's losses (MSE, BCE, Huber) and optimizers against PyTorch's, trained the same way:
200 steps from the same initial weights on the same samples in the same order, float64,
parameters equal to 1e-10 on both backends (issue 25). torch comes with the ``torch`` extra (``pip install
".[dev,torch]"``, the README's test command), not with tinynet."""

import numpy as np
import pytest

import tinynet
from test_maths_once import RMSprop  # docs/contributing.md's, defined outside the package

torch = pytest.importorskip("torch", reason="PyTorch comes with the torch extra: pip install "
                                            "'.[dev,torch]'")

pytestmark = pytest.mark.slow  # every kernel set trained against PyTorch: CI runs them (-m slow)

ACTIVATIONS = {"leaky_relu": lambda z: torch.nn.functional.leaky_relu(z, 0.01),
               "tanh": torch.tanh, "sigmoid": torch.sigmoid}


OPTIMIZERS = {"sgd": (lambda parameters, lr: torch.optim.SGD(parameters, lr=lr),
                      tinynet.optimizers.SGD()),
              "momentum": (lambda parameters, lr: torch.optim.SGD(parameters, lr=lr,
                                                                  momentum=0.8),
                           tinynet.optimizers.Momentum(momentum=0.8)),
              "adam": (lambda parameters, lr: torch.optim.Adam(parameters, lr=lr,
                                                               betas=(0.85, 0.99), eps=1e-7),
                       tinynet.optimizers.Adam(beta1=0.85, beta2=0.99, eps=1e-7)),
              "adam_defaults": (lambda parameters, lr: torch.optim.Adam(parameters, lr=lr),
                                "adam"),
              "rmsprop": (lambda parameters, lr: torch.optim.RMSprop(parameters, lr=lr,
                                                                     alpha=0.9),
                          RMSprop(alpha=0.9))}
"""PyTorch's optimizer and tinynet's, by name: hyperparameters other than the defaults, so
that each one is passed through (and Adam's defaults, by name)."""


def torch_training(net, X, y, loss, batch_size, steps, lr, optimizer="sgd", states=None,
                   lr_lambda=None):
    """``net``'s initial weights trained by PyTorch: float64 Linear layers, the activations
    and loss named, the optimizer named (:data:`OPTIMIZERS`), batches in data order, ``steps``
    steps; with ``states`` (a list), PyTorch's optimizer state per parameter is appended; with
    ``lr_lambda``, the rate of step t is lr · lr_lambda(t) (``LambdaLR``)."""
    layers = []
    for layer in net.layers:
        linear = torch.nn.Linear(layer.n_in, layer.n_out, dtype=torch.float64)
        with torch.no_grad():
            linear.weight.copy_(torch.from_numpy(layer.W))
            linear.bias.copy_(torch.from_numpy(layer.b))
        layers.append((linear, ACTIVATIONS[layer.activation.name]))
    parameters = [p for linear, _ in layers for p in linear.parameters()]
    optimizer = OPTIMIZERS[optimizer][0](parameters, lr)
    scheduler = (None if lr_lambda is None else
                 torch.optim.lr_scheduler.LambdaLR(optimizer, lr_lambda))
    criterion = {"mse": torch.nn.MSELoss(), "bce": torch.nn.BCELoss(),
                 "huber(delta=0.3)": torch.nn.HuberLoss(delta=0.3)}[loss]
    X, y = torch.from_numpy(X), torch.from_numpy(y)
    done = 0
    while done < steps:
        for start in range(0, len(X), batch_size):
            a = X[start:start + batch_size]
            for linear, activation in layers:
                a = activation(linear(a))
            optimizer.zero_grad()
            criterion(a, y[start:start + batch_size]).backward()
            optimizer.step()
            if scheduler is not None:
                scheduler.step()
            done += 1
            if done == steps:
                break
    if states is not None:
        states += [optimizer.state[p] for p in parameters]
    return [p.detach().numpy() for p in parameters]


@pytest.fixture(params=["generated", "generic"])
def kernels(request, monkeypatch):
    """Small layouts on the kernels generated for them, or on the generic ones."""
    from tinynet.compiled import codegen
    monkeypatch.setattr(codegen, "MAX_UNROLLED_WORK", 160 if request.param == "generated" else -1)
    return request.param


@pytest.mark.parametrize("backend", ["numpy", "numba"])
@pytest.mark.parametrize("loss", ["mse", "bce", "huber(delta=0.3)"])
@pytest.mark.parametrize("sizes,hidden,batch_size", [([2, 3, 1], "leaky_relu", 1),
                                                     ([2, 4, 3, 1], "tanh", 2),
                                                     ([2, 32, 1], "tanh", 1)])
def test_two_hundred_steps_as_pytorch_takes_them(backend, loss, sizes, hidden, batch_size,
                                                 kernels):
    X, y = tinynet.data.xor()
    net = tinynet.mlp(sizes, activation=hidden, output="sigmoid", init="xavier_normal", seed=3)
    expected = torch_training(net, X, y, loss, batch_size, steps=200, lr=0.5)
    epochs = 200 * batch_size // len(X)  # 200 steps: 50 epochs of 4, or 100 of 2 batches
    net.fit(X, y, epochs=epochs, lr=0.5, batch_size=batch_size, shuffle=False, loss=loss,
            backend=backend)
    for ours, theirs in zip(net.parameters(), expected):
        np.testing.assert_allclose(ours, theirs, rtol=0, atol=1e-10)
    # and the weights did move: the comparison is of trained networks
    assert not np.allclose(net.layers[0].W, tinynet.mlp(sizes, activation=hidden,
                                                        init="xavier_normal", seed=3).layers[0].W)


def test_an_ensemble_member_is_its_pytorch_training(kernels):
    """BCE on the ensemble kernels: each member as PyTorch trains it alone."""
    X, y = tinynet.data.xor()
    nets = [tinynet.mlp([2, 3, 1], activation="tanh", init="xavier_normal", seed=s)
            for s in range(5)]
    expected = [torch_training(net, X, y, "bce", 1, steps=200, lr=0.5) for net in nets]
    tinynet.fit_ensemble(nets, X, y, epochs=50, lr=0.5, shuffle=False, loss="bce")
    for net, theirs in zip(nets, expected):
        for ours, their in zip(net.parameters(), theirs):
            np.testing.assert_allclose(ours, their, rtol=0, atol=1e-10)


def test_bce_through_a_saturated_sigmoid_stays_finite(kernels):
    """ŷ rounds to 1 (z = 40): dL/dŷ · σ'(z) would be (ŷ − y)/0 · 0; the gradient through the
    sigmoid, ŷ − y, is finite on both backends, and the loss is PyTorch's clamped log."""
    X, y = np.array([[1.0, 0.0]]), np.array([[0.0]])
    for backend in ("numpy", "numba"):
        net = tinynet.mlp([2, 1], output="sigmoid", seed=0)
        net.layers[0].W[...] = [[40.0, 0.0]]
        history = net.fit(X, y, epochs=1, lr=0.1, loss="bce", backend=backend)
        assert not history.diverged and history.final_loss == 100.0  # -log(0) clamped at 100
        assert net.layers[0].W[0, 0] == pytest.approx(40.0 - 0.1, rel=1e-15)


@pytest.mark.parametrize("backend", ["numpy", "numba"])
@pytest.mark.parametrize("optimizer,loss,sizes,hidden,batch_size", [
    ("momentum", "mse", [2, 3, 1], "leaky_relu", 1),
    ("momentum", "mse", [2, 32, 1], "tanh", 1),
    ("adam", "mse", [2, 3, 1], "leaky_relu", 1),
    ("adam", "bce", [2, 4, 3, 1], "tanh", 2),
    ("adam_defaults", "mse", [2, 32, 1], "tanh", 1),
    ("rmsprop", "mse", [2, 3, 1], "tanh", 1),
])  # each optimizer on each kind of layout; every (loss, optimizer) pair is a compile of its
def test_two_hundred_optimizer_steps_as_pytorch_takes_them(backend, optimizer, loss, sizes,
                                                           hidden, batch_size):  # own
    """Momentum and Adam, in two runs of 100 steps (the state carried from the first fit to
    the second in ``net.optimizer_state``), against one PyTorch run of 200: the parameters,
    and the state, momentum's velocities and Adam's moments and step count."""
    X, y = tinynet.data.xor()
    net = tinynet.mlp(sizes, activation=hidden, output="sigmoid", init="xavier_normal", seed=3)
    states = []
    expected = torch_training(net, X, y, loss, batch_size, steps=200, lr=0.05,
                              optimizer=optimizer, states=states)
    ours = OPTIMIZERS[optimizer][1]
    epochs = 100 * batch_size // len(X)  # 100 steps
    for _ in range(2):
        net.fit(X, y, epochs=epochs, lr=0.05, batch_size=batch_size, shuffle=False, loss=loss,
                optimizer=ours, backend=backend)
    for mine, theirs in zip(net.parameters(), expected):
        np.testing.assert_allclose(mine, theirs, rtol=0, atol=1e-10)
    names = net.optimizer_state.optimizer.state
    for slot, name in enumerate(names):
        theirs = {"velocity": "momentum_buffer", "m": "exp_avg", "v": "exp_avg_sq",
                  "t": "step", "square_average": "square_avg"}[name]
        flat = np.concatenate([np.broadcast_to(state[theirs].detach().numpy(),
                                               np.shape(p)).ravel()
                               for state, p in zip(states, net.parameters())])
        np.testing.assert_allclose(net.optimizer_state.values[slot], flat, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("optimizer", ["momentum", "adam"])
def test_an_ensemble_member_is_its_pytorch_training_by_an_optimizer(optimizer):
    """Momentum and Adam on the ensemble kernels, shuffled off: each member as PyTorch
    trains it alone."""
    X, y = tinynet.data.xor()
    nets = [tinynet.mlp([2, 3, 1], activation="tanh", init="xavier_normal", seed=s)
            for s in range(5)]
    expected = [torch_training(net, X, y, "mse", 1, steps=200, lr=0.05, optimizer=optimizer)
                for net in nets]
    tinynet.fit_ensemble(nets, X, y, epochs=50, lr=0.05, shuffle=False,
                         optimizer=OPTIMIZERS[optimizer][1])
    for net, theirs in zip(nets, expected):
        for ours, their in zip(net.parameters(), theirs):
            np.testing.assert_allclose(ours, their, rtol=0, atol=1e-10)
