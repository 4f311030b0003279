"""The learning-rate schedule (issue 43): linear warmup, then constant or cosine, the same on
both backends, every kernel family, and as PyTorch's LambdaLR steps it."""

import numpy as np
import pytest

import tinynet
from tinynet.schedules import decay_steps, learning_rate, step_at
from tinynet.results import Settings


def test_the_rates_are_the_formula():
    rates = [learning_rate(0.1, t, 4, 0) for t in range(6)]
    assert rates == [0.1 * (1 / 4), 0.1 * (2 / 4), 0.1 * (3 / 4), 0.1 * (4 / 4), 0.1, 0.1]
    assert learning_rate(0.1, 0, 0, 0) == 0.1 and learning_rate(0.1, 10**6, 0, 0) == 0.1
    cosine = [learning_rate(1.0, t, 2, 8) for t in range(10)]
    assert cosine[2] == 1.0 and cosine[6] == pytest.approx(0.5) and 0 < cosine[-1] < 0.04
    assert all(a > b for a, b in zip(cosine[2:], cosine[3:]))     # falling after the warmup
    settings = Settings(0, 3, 0.1, 3, False, 0.5, 0, False)
    # 7 samples in batches of 3: 3 batches an epoch; epoch 2's second batch is step 7
    assert step_at(settings, 7, 2, 3) == 7
    assert decay_steps("cosine", 3, 7, 3, 2) == 7 and decay_steps("constant", 3, 7, 3, 2) == 0


def _fit(backend, batch_size=1, optimizer="sgd", update="after_backward", seed=0, **schedule):
    X, y = tinynet.data.xor()
    net = tinynet.mlp([2, 3, 1], activation="tanh", init="xavier_normal", seed=seed)
    net.fit(X, y, epochs=60, lr=0.5, batch_size=batch_size, optimizer=optimizer,
            update=update, backend=backend, **schedule)
    return tinynet.packing.pack(net)


@pytest.mark.parametrize("schedule", [dict(warmup=30), dict(warmup=30, decay="cosine"),
                                      dict(decay="cosine")])
@pytest.mark.parametrize("batch_size,optimizer", [(1, "sgd"), (3, "adam")])
def test_the_backends_take_the_same_steps(schedule, batch_size, optimizer):
    numpy = _fit("numpy", batch_size, optimizer, **schedule)
    numba = _fit("numba", batch_size, optimizer, **schedule)
    np.testing.assert_allclose(numba, numpy, rtol=0, atol=1e-12)
    assert np.abs(numpy - _fit("numpy", batch_size, optimizer)).max() > 1e-3  # it mattered


BEFORE_SCHEDULES = {"numpy fit batch 1 sgd": "58712b11085d10c9",
                    "numpy fit batch 3 adam": "011866e415326877",
                    "numba fit batch 1 sgd": "e789d377f92fc990",
                    "numba fit batch 3 adam": "99195f163ef82d64",
                    "numba ensemble": "1d3d47cf3df73063"}
"""SHA-256 (first 16 hex digits) of the trained parameters of these runs at 7c9b4f6, the
commit before schedules: per-sample steps on the kernel generated for 2-3-1, batches of 3 by
Adam on the kit's generic kernel, an ensemble of 6 on the generated lanes, and NumPy."""


def test_no_schedule_trains_bit_for_bit_as_before_schedules_existed():
    import hashlib
    found = {}
    for backend in ("numpy", "numba"):
        for batch_size, optimizer in ((1, "sgd"), (3, "adam")):
            found[f"{backend} fit batch {batch_size} {optimizer}"] = _fit(
                backend, batch_size, optimizer, warmup=0, decay="constant")
    X, y = tinynet.data.xor()
    nets = [tinynet.mlp([2, 3, 1], activation="tanh", init="xavier_normal", seed=s)
            for s in range(6)]
    tinynet.fit_ensemble(nets, X, y, epochs=60, lr=0.5)
    found["numba ensemble"] = tinynet.packing.stack(nets)
    assert {name: hashlib.sha256(values.tobytes()).hexdigest()[:16]
            for name, values in found.items()} == BEFORE_SCHEDULES


@pytest.mark.parametrize("kernels", ["generated", pytest.param("generic",
                                                                marks=pytest.mark.slow)])
def test_an_ensemble_member_is_its_scheduled_single_fit(kernels, monkeypatch):
    """On the lanes of the kernels generated for the layout, and on the kit's generic ones
    (the slow set: they compile a kit of their own)."""
    if kernels == "generic":
        from tinynet.compiled import codegen
        monkeypatch.setattr(codegen, "MAX_UNROLLED_WORK", -1)
    X, y = tinynet.data.xor()
    nets = [tinynet.mlp([2, 3, 1], activation="tanh", init="xavier_normal", seed=s)
            for s in range(6)]
    tinynet.fit_ensemble(nets, X, y, epochs=60, lr=0.5, warmup=30, decay="cosine")
    for seed, net in enumerate(nets):
        alone = _fit("numba", seed=seed, warmup=30, decay="cosine")
        assert tinynet.packing.pack(net).tobytes() == alone.tobytes()


def test_a_fit_in_parts_keeps_the_whole_runs_schedule():
    """Evaluated every 7 epochs, the run goes in parts; the cosine is the whole run's."""
    X, y = tinynet.data.xor()
    whole, parts = (tinynet.mlp([2, 3, 1], activation="tanh", seed=4) for _ in range(2))
    whole.fit(X, y, epochs=30, lr=0.5, warmup=10, decay="cosine")
    parts.fit(X, y, epochs=30, lr=0.5, warmup=10, decay="cosine", test=(X, y),
              evaluate_every=7)
    assert tinynet.packing.pack(whole).tobytes() == tinynet.packing.pack(parts).tobytes()


@pytest.mark.parametrize("backend", ["numpy", "numba"])
@pytest.mark.parametrize("decay", ["constant", "cosine"])
def test_two_hundred_steps_as_pytorchs_lambdalr_takes_them(backend, decay):
    pytest.importorskip("torch", reason="PyTorch comes with the torch extra: pip install "
                                        "'.[dev,torch]'")
    from test_against_torch import torch_training
    X, y = tinynet.data.xor()
    net = tinynet.mlp([2, 3, 1], activation="tanh", init="xavier_normal", seed=3)
    warmup, cosine = 50, decay_steps(decay, 50, 4, 1, 50)
    expected = torch_training(net, X, y, "mse", 1, steps=200, lr=0.5,
                              lr_lambda=lambda t: learning_rate(1.0, t, warmup, cosine))
    net.fit(X, y, epochs=50, lr=0.5, shuffle=False, warmup=warmup, decay=decay,
            backend=backend)
    for ours, theirs in zip(net.parameters(), expected):
        np.testing.assert_allclose(ours, theirs, rtol=0, atol=1e-10)


def test_a_study_takes_the_schedule_and_writes_it_only_when_set():
    from tinynet.xor import Arm, Setup
    from tinynet.xor.arms import build_network, setup_dict
    from tinynet.xor.blocks import train
    setup = Setup(seeds=6, epochs=300, lr=0.1, warmup=200, decay="cosine")
    assert "warmup" not in setup_dict(Setup()) and "decay" not in setup_dict(Setup())
    assert setup_dict(setup)["warmup"] == 200 and Setup.from_dict(setup_dict(setup)) == setup
    assert "lr 0.1 (warmup 200 steps, then cosine decay)" in setup.describe()
    arm = Arm("he_leaky")
    _, theta = train(arm, setup)
    X, y = tinynet.data.xor()
    net = build_network(setup, arm, 3)
    net.fit(X, y, epochs=300, lr=0.1, shuffle=arm.shuffle, warmup=200, decay="cosine")
    assert tinynet.packing.pack(net).tobytes() == theta[3].tobytes()
