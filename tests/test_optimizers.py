"""Optimizers (issue 25): each defined once (tinynet.optimizers), run by both backends and
every compiled kernel from that definition; their state carried across runs, chunks, Ctrl-C,
save and load, and ensembles; what the compiled backend cannot build refused by name."""

import csv as csv_module
import math
from dataclasses import dataclass

import numpy as np
import pytest

import tinynet
from tinynet.compiled.render import NotCompilableError
from tinynet.optimizers import SGD, Adam, Momentum, Optimizer
from tinynet.packing import draw, pack, size, stack
from tinynet.validation import ShapeError, UnknownNameError

BACKENDS = ["numpy", "numba"]


def one_neuron(w=(0.5, -0.25), b=0.1):
    """2-1 with identity output: ŷ = w·x + b, so every gradient can be written by hand."""
    net = tinynet.mlp([2, 1], output="identity", seed=0)
    net.layers[0].W[...] = [w]
    net.layers[0].b[...] = [b]
    return net


X1, Y1 = np.array([[1.0, 2.0]]), np.array([[0.3]])


def gradient(p):
    """dL/dp of MSE on the one sample, p = (w0, w1, b): 2 (ŷ − y) · (x0, x1, 1)."""
    error = 2.0 * (p[0] * X1[0, 0] + p[1] * X1[0, 1] + p[2] - Y1[0, 0])
    return np.array([error * X1[0, 0], error * X1[0, 1], error])


@pytest.mark.parametrize("backend", BACKENDS)
def test_two_momentum_steps_written_out(backend):
    lr, mu = 0.1, 0.7
    p0 = np.array([0.5, -0.25, 0.1])
    v1 = gradient(p0)                      # PyTorch: the first buffer is the gradient
    p1 = p0 - lr * v1
    v2 = mu * v1 + gradient(p1)
    p2 = p1 - lr * v2
    net = one_neuron()
    net.fit(X1, Y1, epochs=2, lr=lr, optimizer=Momentum(momentum=mu), backend=backend)
    np.testing.assert_allclose(pack(net), p2, rtol=1e-15, atol=0)
    np.testing.assert_allclose(net.optimizer_state.values[0], v2, rtol=1e-15, atol=0)


@pytest.mark.parametrize("backend", BACKENDS)
def test_two_adam_steps_written_out(backend):
    lr, b1, b2, eps = 0.1, 0.9, 0.999, 1e-8
    p, m, v = np.array([0.5, -0.25, 0.1]), np.zeros(3), np.zeros(3)
    for t in (1, 2):
        g = gradient(p)
        m = b1 * m + (1 - b1) * g
        v = b2 * v + (1 - b2) * g * g
        p = p - lr / (1 - b1 ** t) * (m / (np.sqrt(v) / math.sqrt(1 - b2 ** t) + eps))
    net = one_neuron()
    net.fit(X1, Y1, epochs=2, lr=lr, optimizer="adam", backend=backend)
    np.testing.assert_allclose(pack(net), p, rtol=1e-14, atol=0)
    m_kept, v_kept, t_kept = net.optimizer_state.values
    np.testing.assert_allclose(m_kept, m, rtol=1e-14)
    np.testing.assert_allclose(v_kept, v, rtol=1e-14)
    np.testing.assert_array_equal(t_kept, [2.0, 2.0, 2.0])
    # Adam's first step moves every parameter by about lr against its gradient, as the bias
    # correction intends: m̂ = g, √v̂ = |g|, so the step is lr · g / (|g| + ε).
    first, g = one_neuron(), gradient(np.array([0.5, -0.25, 0.1]))
    first.fit(X1, Y1, epochs=1, lr=lr, optimizer="adam", backend=backend)
    np.testing.assert_allclose(pack(first), [0.5, -0.25, 0.1] - lr * g / (np.abs(g) + eps),
                               rtol=1e-14)


@pytest.mark.parametrize("optimizer", [Momentum(0.9), Adam(), Adam(beta1=0.5, eps=1e-4)])
@pytest.mark.parametrize("update", ["after_backward", "during_backward"])
def test_numpy_and_numba_agree_after_a_thousand_steps(optimizer, update):
    X, y = tinynet.data.xor()
    nets = {backend: tinynet.mlp([2, 3, 2, 1], activation="tanh", seed=4) for backend in BACKENDS}
    for backend, net in nets.items():
        net.fit(X, y, epochs=250, lr=0.02, optimizer=optimizer, update=update, backend=backend)
    np.testing.assert_allclose(pack(nets["numba"]), pack(nets["numpy"]), rtol=0, atol=1e-12)
    np.testing.assert_allclose(nets["numba"].optimizer_state.values,
                               nets["numpy"].optimizer_state.values, rtol=1e-12, atol=1e-12)


@pytest.mark.slow
@pytest.mark.parametrize("optimizer", ["momentum", "adam"])
@pytest.mark.parametrize("backend", BACKENDS)
def test_an_ensemble_member_is_its_single_fit_bit_for_bit(optimizer, backend):
    """Shuffled, minibatches of 3 on 7 samples, one member diverging (a huge initial weight):
    each member, parameters and state, equals its fit alone, bit for bit, the diverged one
    where its fit stopped."""
    same = np.testing.assert_array_equal
    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(7, 2)), (rng.random((7, 1)) > 0.5).astype(float)
    make = [lambda s=s: tinynet.mlp([2, 4, 1], activation="relu", output="identity", seed=s)
            for s in range(6)]
    nets = [build() for build in make]
    nets[2].layers[0].W[...] = 1e155  # overflows to inf within the first steps
    result = tinynet.fit_ensemble(nets, X, y, epochs=40, lr=0.05, batch_size=3,
                                  optimizer=optimizer, backend=backend)
    assert result.diverged[2] and not result.diverged[[0, 1, 3, 4, 5]].any()
    for index, build in enumerate(make):
        alone = build()
        if index == 2:
            alone.layers[0].W[...] = 1e155
        history = alone.fit(X, y, epochs=40, lr=0.05, batch_size=3, optimizer=optimizer,
                            backend=backend)
        same(pack(alone), pack(nets[index]))
        same(alone.optimizer_state.values, nets[index].optimizer_state.values)
        assert history.diverged_epoch == result.diverged_epoch[index]
        same(history.final_loss, result.final_loss[index])


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_run_in_two_fits_is_the_run_in_one(backend, monkeypatch):
    """The state carries from one fit to the next (in data order: a fit numbers its epochs
    from 0, and shuffled orders depend on the epoch), and from chunk to chunk within one."""
    X, y = tinynet.data.xor()
    whole, halves, chunked = (tinynet.mlp([2, 3, 1], seed=1) for _ in range(3))
    whole.fit(X, y, epochs=60, lr=0.05, optimizer="adam", shuffle=False, backend=backend)
    halves.fit(X, y, epochs=25, lr=0.05, optimizer="adam", shuffle=False, backend=backend)
    halves.fit(X, y, epochs=35, lr=0.05, optimizer="adam", shuffle=False, backend=backend)
    np.testing.assert_array_equal(pack(whole), pack(halves))
    np.testing.assert_array_equal(whole.optimizer_state.values, halves.optimizer_state.values)
    # fit_packed takes the state explicitly, and trains it in place
    theta = draw(whole, [1, 1])
    state = np.zeros((2, 3, size(whole)))
    for epochs in (25, 35):
        tinynet.fit_packed(whole, theta, X, y, seeds=[1, 1], epochs=epochs, lr=0.05,
                           optimizer="adam", shuffle=False, state=state, backend=backend)
    np.testing.assert_array_equal(theta[1], pack(halves))
    np.testing.assert_array_equal(state[1], halves.optimizer_state.values)
    # shuffled, in chunks of one epoch: the run in one chunk
    shuffled = tinynet.mlp([2, 3, 1], seed=1)
    shuffled.fit(X, y, epochs=20, lr=0.05, optimizer="adam", backend=backend)
    module = tinynet.reference if backend == "numpy" else __import__(
        "tinynet.compiled.backend", fromlist=["backend"])
    monkeypatch.setattr(module, "FIT_CHUNK_WORK", 1)
    chunked.fit(X, y, epochs=20, lr=0.05, optimizer="adam", backend=backend)
    np.testing.assert_array_equal(pack(chunked), pack(shuffled))
    np.testing.assert_array_equal(chunked.optimizer_state.values,
                                  shuffled.optimizer_state.values)


def test_another_optimizer_starts_from_a_fresh_state():
    X, y = tinynet.data.xor()
    net, fresh = tinynet.mlp([2, 3, 1], seed=1), tinynet.mlp([2, 3, 1], seed=1)
    net.fit(X, y, epochs=5, lr=0.05, optimizer=Momentum(0.5))
    for mine, theirs in zip(fresh.parameters(), net.parameters()):
        mine[...] = theirs
    net.fit(X, y, epochs=5, lr=0.05, optimizer=Momentum(0.9))  # other hyperparameters
    fresh.fit(X, y, epochs=5, lr=0.05, optimizer=Momentum(0.9))
    np.testing.assert_array_equal(pack(net), pack(fresh))
    net.fit(X, y, epochs=5, lr=0.05)                             # plain SGD keeps none
    assert net.optimizer_state is None
    net.reset_parameters()
    assert net.optimizer_state is None


@pytest.mark.parametrize("backend", BACKENDS)
def test_ctrl_c_puts_the_state_back_with_the_parameters(backend, monkeypatch):
    X, y = tinynet.data.xor()
    net = tinynet.mlp([2, 3, 1], seed=2)
    net.fit(X, y, epochs=3, lr=0.05, optimizer="adam", backend=backend)
    before, state_before = pack(net), net.optimizer_state.values.copy()
    if backend == "numba":
        import tinynet.compiled.backend as module
    else:
        import tinynet.reference as module
    real, calls = module.fit_one, []

    def interrupted(*args):
        calls.append(1)
        if len(calls) == 3:  # two chunks have trained the network and its state
            raise KeyboardInterrupt
        real(*args)

    monkeypatch.setattr(module, "FIT_CHUNK_WORK", 1)
    monkeypatch.setattr(module, "fit_one", interrupted)
    with pytest.raises(KeyboardInterrupt):
        net.fit(X, y, epochs=10, lr=0.05, optimizer="adam", backend=backend)
    assert len(calls) == 3
    np.testing.assert_array_equal(pack(net), before)
    np.testing.assert_array_equal(net.optimizer_state.values, state_before)


def test_save_and_load_keep_the_state(tmp_path):
    X, y = tinynet.data.xor()
    net = tinynet.mlp([2, 3, 1], seed=2)
    net.fit(X, y, epochs=7, lr=0.05, optimizer=Adam(beta2=0.99))
    loaded = tinynet.load(net.save(tmp_path / "adam"))
    assert loaded.optimizer_state.optimizer == Adam(beta2=0.99)
    np.testing.assert_array_equal(loaded.optimizer_state.values, net.optimizer_state.values)
    for each in (net, loaded):
        each.fit(X, y, epochs=5, lr=0.05, optimizer=Adam(beta2=0.99))
    np.testing.assert_array_equal(pack(loaded), pack(net))
    plain = tinynet.mlp([2, 3, 1], seed=2)
    assert tinynet.load(plain.save(tmp_path / "plain")).optimizer_state is None


def test_a_file_with_a_garbled_state_is_refused(tmp_path):
    X, y = tinynet.data.xor()
    net = tinynet.mlp([2, 3, 1], seed=2)
    net.fit(X, y, epochs=2, lr=0.05, optimizer="momentum")
    path = net.save(tmp_path / "net")
    arrays = dict(np.load(path))
    arrays["optimizer_state"] = arrays["optimizer_state"][:, :-1]
    np.savez(tmp_path / "bad.npz", **arrays)
    with pytest.raises(tinynet.FileFormatError, match="optimizer_state"):
        tinynet.load(tmp_path / "bad.npz")
    arrays = dict(np.load(path), optimizer=np.array("rmsprop"))
    np.savez(tmp_path / "unknown.npz", **arrays)
    with pytest.raises(tinynet.FileFormatError, match="'optimizer' must name"):
        tinynet.load(tmp_path / "unknown.npz")


# --- optimizers defined outside the package ---------------------------------------------------

@dataclass(frozen=True, repr=False)
class Nesterov(Optimizer):
    """Nesterov momentum as PyTorch writes it: v ← μ v + g, p ← p − lr (g + μ v)."""

    name = "nesterov"
    state = ("velocity",)
    momentum: float = 0.9

    def update(self, p, g, lr, velocity):
        velocity_next = self.momentum * velocity + g
        return p - lr * (g + self.momentum * velocity_next), velocity_next


@dataclass(frozen=True, repr=False)
class SignDescent(Optimizer):
    """Written with NumPy: the compiled backend cannot build it."""

    name = "sign"

    def update(self, p, g, lr):
        return p - lr * np.sign(g)


@pytest.mark.slow
@pytest.mark.unrolled  # the generated kernels; the generic ones write the same definition
def test_an_optimizer_defined_outside_the_package_compiles_and_trains_as_on_numpy():
    """(every optimizer's, tests/test_unrolled.py: a kit compile per class saved here)"""
    X, y = tinynet.data.xor()
    nets = {backend: tinynet.mlp([2, 3, 1], activation="tanh", seed=5) for backend in BACKENDS}
    for backend, net in nets.items():
        net.fit(X, y, epochs=250, lr=0.02, optimizer=Nesterov(0.8), backend=backend)
    np.testing.assert_allclose(pack(nets["numba"]), pack(nets["numpy"]), rtol=0, atol=1e-12)
    plain = tinynet.mlp([2, 3, 1], activation="tanh", seed=5)
    plain.fit(X, y, epochs=250, lr=0.02, optimizer=Momentum(0.8))
    assert np.abs(pack(plain) - pack(nets["numba"])).max() > 1e-6  # not momentum's maths
    members = [tinynet.mlp([2, 3, 1], activation="tanh", seed=5) for _ in range(3)]
    tinynet.fit_ensemble(members, X, y, epochs=250, lr=0.02, optimizer=Nesterov(0.8))
    np.testing.assert_array_equal(stack(members)[1], pack(nets["numba"]))


def test_an_optimizer_the_compiled_backend_cannot_build_is_refused_by_name():
    X, y = tinynet.data.xor()
    net = tinynet.mlp([2, 2, 1], seed=0)
    before = pack(net)
    with pytest.raises(NotCompilableError, match=r"optimizer sign \(SignDescent\).*np.sign"
                                                 r".*backend='numpy'"):
        net.fit(X, y, epochs=3, lr=0.1, optimizer=SignDescent())
    np.testing.assert_array_equal(pack(net), before)  # refused before anything ran
    net.fit(X, y, epochs=3, lr=0.1, optimizer=SignDescent(), backend="numpy")
    assert not np.array_equal(pack(net), before)


def test_bad_optimizers_and_states_are_refused_by_name():
    X, y = tinynet.data.xor()
    net = tinynet.mlp([2, 2, 1], seed=0)
    with pytest.raises(UnknownNameError, match="optimizer.*'rmsprop'.*adam"):
        net.fit(X, y, epochs=1, lr=0.1, optimizer="rmsprop")
    with pytest.raises(ValueError, match="Momentum's momentum must be a finite number, got nan"):
        Momentum(momentum=math.nan)
    with pytest.raises(ValueError, match="Adam's eps must be a finite number, got '1e-8'"):
        Adam(eps="1e-8")
    theta = draw(net, [0, 1])
    with pytest.raises(ShapeError, match=r"state must have shape \(2, 3, 9\).*adam.*got "
                                         r"\(2, 2, 9\)"):
        tinynet.fit_packed(net, theta, X, y, seeds=[0, 1], epochs=1, lr=0.1, optimizer="adam",
                           state=np.zeros((2, 2, 9)))
    with pytest.raises(TypeError, match="state must be a writeable C-contiguous float64"):
        tinynet.fit_packed(net, theta, X, y, seeds=[0, 1], epochs=1, lr=0.1, optimizer="adam",
                           state=np.zeros((2, 3, 9), dtype=np.float32))


def test_names_and_reprs():
    assert tinynet.optimizers.get_optimizer("sgd") == SGD()
    assert repr(SGD()) == "sgd"
    assert repr(Adam()) == "adam(beta1=0.9, beta2=0.999, eps=1e-08)"
    assert repr(Momentum(0.5)) == "momentum(momentum=0.5)"
    X, y = tinynet.data.xor()
    net = tinynet.mlp([2, 2, 1], seed=0)
    net.fit(X, y, epochs=1, lr=0.1, optimizer="momentum")
    assert repr(net.optimizer_state) == \
        "State(momentum(momentum=0.9): velocity of 9 parameters)"


# --- what a student reads is what runs -------------------------------------------------------

@pytest.mark.parametrize("method", ["forward", "backward"])
def test_the_numpy_fit_runs_the_layers_own_passes(method, monkeypatch):
    """net.fit(backend="numpy") trains through Layer.forward and Layer.backward: a layer whose
    pass is broken breaks the fit (and a changed pass changes what it learns)."""
    X, y = tinynet.data.xor()

    def broken(self, *args, **kwargs):
        raise RuntimeError(f"Layer.{method} ran")

    with monkeypatch.context() as patch:
        patch.setattr(tinynet.Layer, method, broken)
        with pytest.raises(RuntimeError, match=f"Layer.{method} ran"):
            tinynet.mlp([2, 2, 1], seed=0).fit(X, y, epochs=1, lr=0.1, backend="numpy")
    real = tinynet.Layer.backward
    halved = {}

    def half_gradients(self, dA, **kwargs):
        return real(self, dA * 0.5, **kwargs)

    for patched in (False, True):
        with monkeypatch.context() as patch:
            if patched:
                patch.setattr(tinynet.Layer, "backward", half_gradients)
            net = tinynet.mlp([2, 2, 1], output="identity", seed=0)
            net.fit(X, y, epochs=3, lr=0.1, backend="numpy")
            halved[patched] = pack(net)
    assert not np.array_equal(halved[False], halved[True])


@pytest.mark.parametrize("update", ["after_backward", "during_backward"])
@pytest.mark.parametrize("loss", ["mse", "bce"])
def test_a_numpy_single_fit_is_its_ensemble_member_bit_for_bit(update, loss):
    """The single fit (the layers' own passes) and the ensemble (dense's functions with a
    members axis, members fastest in memory) do the same arithmetic: ordered sums while a
    product has at most tinynet.dense.ORDERED_MAX terms."""
    rng = np.random.default_rng(1)
    X, y = rng.normal(size=(9, 3)), (rng.random((9, 2)) > 0.5).astype(float)
    for batch_size in (1, 4):
        nets = [tinynet.mlp([3, 5, 4, 2], activation="tanh", seed=s) for s in range(7)]
        result = tinynet.fit_ensemble(nets, X, y, epochs=30, lr=0.1, batch_size=batch_size,
                                      update=update, loss=loss, backend="numpy",
                                      record_every=1)
        alone = tinynet.mlp([3, 5, 4, 2], activation="tanh", seed=4)
        history = alone.fit(X, y, epochs=30, lr=0.1, batch_size=batch_size, update=update,
                            loss=loss, backend="numpy")
        np.testing.assert_array_equal(pack(alone), pack(nets[4]))
        np.testing.assert_array_equal(history.loss, result.loss[4])
        assert history.last_wrong_epoch == result.last_wrong_epoch[4]


def test_the_cli_trains_an_arm_by_the_optimizer_it_is_given(tmp_path, capsys):
    """``--optimizer momentum --momentum 0.5``: the arm's name and the CSV say so, and the
    rates are those of a study run from Python with that optimizer."""
    from tinynet.xor import Arm, Setup, run_study
    from tinynet.xor.cli import main

    csv = tmp_path / "study.csv"
    main(["--optimizer", "momentum", "--momentum", "0.5", "--seeds", "20", "--epochs", "300",
          "--lr", "0.1", "--csv", str(csv)])
    assert "he_leaky, momentum(momentum=0.5)" in capsys.readouterr().out
    header, row = list(csv_module.reader(csv.read_text().splitlines()))
    assert row[header.index("optimizer")] == "momentum(momentum=0.5)"
    study = run_study([Arm("he_leaky", optimizer="momentum(momentum=0.5)")],
                      Setup(seeds=20, epochs=300, lr=0.1), progress=False)
    assert int(row[header.index("successes")]) == study.results[0].successes
    assert Arm("he_leaky", optimizer="adam").optimizer == "adam(beta1=0.9, beta2=0.999, eps=1e-08)"


@dataclass(frozen=True, repr=False)
class Forgetting(Optimizer):
    """Momentum whose update forgets to return its state: on NumPy the state stayed 0 and it
    trained as plain SGD (issue 41)."""

    name = "forgetting"
    state = ("velocity",)
    momentum: float = 0.9

    def update(self, p, g, lr, velocity):
        return p - lr * (self.momentum * velocity + g)


@pytest.mark.parametrize("backend", BACKENDS)
def test_an_update_that_forgets_to_return_its_state_is_refused_on_both_backends(backend):
    X, y = tinynet.data.xor()
    net = tinynet.mlp([2, 2, 1], seed=0)
    expected = {"numpy": r"optimizer Forgetting's update must return 2 value\(s\) \(the new p, "
                         r"then velocity\), got 1: a state it does not return would stay 0",
                "numba": r"backend 'numba' cannot run optimizer forgetting\(momentum=0.9\) "
                         r"\(Forgetting\).*return 2 values, not 4 and 1"}[backend]
    with pytest.raises(ValueError, match=expected):
        net.fit(X, y, epochs=2, lr=0.1, optimizer=Forgetting(), backend=backend)
    with pytest.raises(ValueError, match=expected):
        tinynet.fit_ensemble([tinynet.mlp([2, 2, 1], seed=s) for s in (0, 1)], X, y, epochs=2,
                             lr=0.1, optimizer=Forgetting(), backend=backend)


def test_step_refuses_an_update_returning_too_many_values():
    @dataclass(frozen=True, repr=False)
    class Talkative(Optimizer):
        name = "talkative"

        def update(self, p, g, lr):
            return p - lr * g, g

    theta = np.zeros(3)
    with pytest.raises(ValueError, match=r"Talkative's update must return 1 value\(s\) \(the new "
                                         r"p\), got 2"):
        Talkative().step(theta, np.ones(3), [], 0.1)
