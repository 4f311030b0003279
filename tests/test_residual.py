"""Residual blocks and LayerNorm (issue 43): the description's backward against finite
differences and against PyTorch (200 steps to 1e-10, single fits and ensembles), members
bit for bit their single fits, the named blocks' initial values, and what is refused."""

import numpy as np
import pytest

import tinynet
from tinynet.init.distributions import TRUNCATED_VARIANCE_FACTOR

try:
    import torch
except ImportError:  # the tests against PyTorch skip; the others run
    torch = None
needs_torch = pytest.mark.skipif(torch is None, reason="PyTorch comes with the torch extra: "
                                                       "pip install '.[dev,torch]'")

BLOCKS = [("standard", None, 1), ("standard", "pre", 2), ("standard", "post", 1),
          ("rezero", None, 2), ("rezero", "pre", 1), ("fixup", None, 2),
          ("deepnet", "post", 2)]
"""(residual, norm, branch): every named block, both placements, one and two layers."""


def data(samples=8, seed=0):
    """Random inputs (no row of zeros, which a post-norm's LayerNorm would scale by 1/√ε)
    and 0/1 targets."""
    rng = np.random.default_rng(seed)
    return rng.normal(size=(samples, 3)), (rng.random((samples, 1)) > 0.5) * 1.0


def network(residual, norm, branch, seed=1, activation="tanh"):
    """A 3-6-6-6-1 network of two blocks, its trained α and LayerNorms moved off their initial
    1 and 0 (and Fixup's zero layers off 0), so that every gradient is exercised."""
    net = tinynet.mlp([3, 6, 6, 6, 1], activation=activation, residual=residual, norm=norm,
                      branch=branch, seed=seed, bias_init="normal")
    rng = np.random.default_rng(seed + 100)
    for block in net.residuals:
        if block.train_scale:
            block.scale[...] = rng.uniform(0.3, 0.9)
        if block.norm is not None:
            block.norm.gain[...] = rng.uniform(0.5, 1.5, block.width)
            block.norm.bias[...] = rng.normal(0, 0.1, block.width)
    for layer in net.layers:
        if not layer.W.any():
            layer.W[...] = rng.normal(0, 0.3, layer.W.shape)
    return net


class TorchBlock(torch.nn.Module if torch is not None else object):
    """The same block written in PyTorch: ``skip·x + α·F(x)``, LayerNorm before F or after
    the sum."""

    def __init__(self, block):
        super().__init__()
        self.layers = torch.nn.ModuleList(linear(layer) for layer in block.layers)
        self.activations = [activation_of(layer) for layer in block.layers]
        self.placement, self.skip = block.placement, block.skip
        self.norm = None
        if block.norm is not None:
            self.norm = torch.nn.LayerNorm(block.width, eps=block.norm.eps, dtype=torch.float64)
            with torch.no_grad():
                self.norm.weight.copy_(torch.from_numpy(block.norm.gain))
                self.norm.bias.copy_(torch.from_numpy(block.norm.bias))
        self.scale = (torch.nn.Parameter(torch.from_numpy(block.scale.copy()))
                      if block.train_scale else block.scale)

    def forward(self, x):
        h = self.norm(x) if self.placement == "pre" else x
        for layer, activation in zip(self.layers, self.activations):
            h = activation(layer(h))
        s = self.skip * x + self.scale * h
        return self.norm(s) if self.placement == "post" else s

    def ordered_parameters(self):
        """In tinynet's order: the norm's γ and β, each layer's W and b, then α."""
        return [*((self.norm.weight, self.norm.bias) if self.norm is not None else ()),
                *(p for layer in self.layers for p in (layer.weight, layer.bias)),
                *((self.scale,) if isinstance(self.scale, torch.nn.Parameter) else ())]


def activation_of(layer):
    return {"relu": torch.relu, "tanh": torch.tanh, "sigmoid": torch.sigmoid,
            "identity": lambda z: z}[layer.activation.name]


def linear(layer):
    module = torch.nn.Linear(layer.n_in, layer.n_out, dtype=torch.float64)
    with torch.no_grad():
        module.weight.copy_(torch.from_numpy(layer.W))
        module.bias.copy_(torch.from_numpy(layer.b))
    return module


def torch_training(net, X, y, batch_size, steps, lr, optimizer, lr_lambda=None):
    """``net``'s initial parameters trained by PyTorch on MSE, batches in data order; with
    ``lr_lambda``, the rate of step t is lr · lr_lambda(t) (``LambdaLR``)."""
    parts = []
    for block in net.blocks:
        if isinstance(block, tinynet.Residual):
            module = TorchBlock(block)
            parts.append((module, None, module.ordered_parameters()))
        else:
            module = linear(block)
            parts.append((module, activation_of(block),
                          [module.weight, module.bias]))
    parameters = [p for _, _, ps in parts for p in ps]
    optimizer = (torch.optim.SGD(parameters, lr=lr) if optimizer == "sgd" else
                 torch.optim.Adam(parameters, lr=lr, betas=(0.85, 0.99), eps=1e-7))
    scheduler = (None if lr_lambda is None else
                 torch.optim.lr_scheduler.LambdaLR(optimizer, lr_lambda))
    X, y = torch.from_numpy(X), torch.from_numpy(y)
    done = 0
    while done < steps:
        for start in range(0, len(X), batch_size):
            a = X[start:start + batch_size]
            for module, activation, _ in parts:
                a = module(a) if activation is None else activation(module(a))
            optimizer.zero_grad()
            torch.nn.MSELoss()(a, y[start:start + batch_size]).backward()
            optimizer.step()
            if scheduler is not None:
                scheduler.step()
            done += 1
            if done == steps:
                break
    return [p.detach().numpy().reshape(-1) for p in parameters]


@pytest.mark.parametrize("residual,norm,branch", BLOCKS)
def test_the_backward_pass_is_the_derivative(residual, norm, branch):
    X, y = data()
    report = tinynet.gradcheck(network(residual, norm, branch), X, y)
    assert report.passed, report


FAST = ("rezero", "post", 2, "sgd")
"""The block and optimizer the fast suite trains on the compiled backend (one kernel, shared
by the tests below: post-norm, a trained α, two layers a branch); the slow set trains every
other on it too, as each compiles a kernel of its own (tens of seconds)."""


def cases(optimizers):
    """(residual, norm, branch, optimizer, backend) for every block and ``optimizers``, on
    both backends, the compiled one's in the slow set but for :data:`FAST`."""
    return [pytest.param(*block, optimizer, backend, marks=(
                pytest.mark.slow if backend == "numba" and (*block, optimizer) != FAST else ()))
            for block in BLOCKS for optimizer in optimizers for backend in ("numpy", "numba")]


@needs_torch
@pytest.mark.parametrize("batch_size", [1, 4])
@pytest.mark.parametrize("residual,norm,branch,optimizer,backend", cases(["sgd", "adam"]))
def test_two_hundred_steps_as_pytorch_takes_them(residual, norm, branch, optimizer, backend,
                                                 batch_size):
    X, y = data()
    net = network(residual, norm, branch)
    lr = 0.05 if optimizer == "sgd" else 0.01
    expected = torch_training(net, X, y, batch_size, steps=200, lr=lr, optimizer=optimizer)
    before = tinynet.packing.pack(net)
    net.fit(X, y, epochs=200 * batch_size // len(X), lr=lr, batch_size=batch_size,
            shuffle=False, backend=backend,
            optimizer="sgd" if optimizer == "sgd" else tinynet.optimizers.Adam(
                beta1=0.85, beta2=0.99, eps=1e-7))
    ours = tinynet.packing.pack(net)
    np.testing.assert_allclose(ours, np.concatenate(expected), rtol=0, atol=1e-10)
    assert np.abs(ours - before).max() > 1e-3  # the comparison is of trained networks


@needs_torch
@pytest.mark.parametrize("backend", ["numpy", "numba"])
@pytest.mark.parametrize("update", ["after_backward", "during_backward"])
def test_an_ensemble_member_is_its_pytorch_training(backend, update):
    """After the backward pass, as PyTorch steps; during it (each part steps before its dX
    is computed) the step differs from PyTorch's, so the members are compared with their
    single fits instead (below)."""
    X, y = data()
    nets = [network(*FAST[:3], seed=s) for s in range(3)]
    expected = [torch_training(net, X, y, 1, steps=200, lr=0.05, optimizer="sgd")
                for net in nets]
    tinynet.fit_ensemble(nets, X, y, epochs=25, lr=0.05, shuffle=False, backend=backend)
    for net, theirs in zip(nets, expected):
        np.testing.assert_allclose(tinynet.packing.pack(net), np.concatenate(theirs), rtol=0,
                                   atol=1e-10)


@needs_torch
@pytest.mark.parametrize("backend", ["numpy", "numba"])
@pytest.mark.parametrize("decay", ["constant", "cosine"])
def test_warmup_on_blocks_as_pytorchs_lambdalr(backend, decay):
    """Warmup of 40 steps, then constant or cosine, on both backends: PyTorch's LambdaLR
    with the same factor (tinynet.schedules.learning_rate), 200 steps, single fits and an
    ensemble's members."""
    X, y = data()
    steps, warmup = 200, 40
    cosine = steps - warmup if decay == "cosine" else 0

    def factor(t):
        return tinynet.schedules.learning_rate(1.0, t, warmup, cosine)

    nets = [network(*FAST[:3], seed=s) for s in range(2)]
    expected = [np.concatenate(torch_training(net, X, y, 1, steps=steps, lr=0.1,
                                              optimizer="sgd", lr_lambda=factor))
                for net in nets]
    settings = dict(epochs=steps // len(X), lr=0.1, shuffle=False, backend=backend,
                    warmup=warmup, decay=decay)
    nets[0].fit(X, y, **settings)
    tinynet.fit_ensemble(nets[1:], X, y, **settings)
    for net, theirs in zip(nets, expected):
        np.testing.assert_allclose(tinynet.packing.pack(net), theirs, rtol=0, atol=1e-10)


@pytest.mark.parametrize("backend", ["numpy", "numba"])
@pytest.mark.parametrize("update", ["after_backward", "during_backward"])
@pytest.mark.parametrize("batch_size,members", [(1, 2), (3, 2), (1, 8)])
def test_a_member_is_its_single_fit_bit_for_bit(backend, update, batch_size, members):
    """Two members keep each one's numbers together; eight of width 6, one sample a step,
    are stored members fastest (tinynet.reference): the same bits either way. On the
    compiled backend a member is its single fit by construction (fit_stream_members)."""
    X, y = data()
    block = ("rezero", "pre", 2) if backend == "numpy" else FAST[:3]
    singles = [network(*block, seed=s) for s in range(members)]
    members = [network(*block, seed=s) for s in range(members)]
    settings = dict(epochs=30, lr=0.05, batch_size=batch_size, update=update, backend=backend)
    for net in singles:
        net.fit(X, y, **settings)
    result = tinynet.fit_ensemble(members, X, y, **settings)
    for single, member in zip(singles, members):
        assert tinynet.packing.pack(single).tobytes() == tinynet.packing.pack(member).tobytes()
    assert np.isfinite(result.final_loss).all()


def test_prediction_is_the_forward_pass():
    X, _ = data()
    net = network("standard", "post", 2)
    expected = net.forward(X)
    np.testing.assert_array_equal(net.predict(X, backend="numpy"), expected)
    stacked = tinynet.reference.predict_packed(np.stack([tinynet.packing.pack(net)] * 2), net,
                                               None, None, X)
    np.testing.assert_array_equal(stacked, [expected, expected])
    compiled = network(*FAST[:3])   # the fast suite's kernel: its sums' order may differ
    np.testing.assert_allclose(compiled.predict(X), compiled.forward(X), rtol=0, atol=1e-14)


def wide_parts(head, branch, tail, activation="tanh", blocks=3, width=8, norm="post",
               train_scale=True):
    """A network whose layers are wider than its blocks: ``head`` and ``tail`` the widths of
    the layers before and after the blocks, ``branch`` the branch's inner widths."""
    Layer, Residual = tinynet.Layer, tinynet.Residual
    sizes = [3, *head, width]
    layers = [Layer(a, b, activation) for a, b in zip(sizes, sizes[1:])]
    inner = [width, *branch, width]
    for _ in range(blocks):
        layers.append(Residual([Layer(a, b, activation) for a, b in zip(inner, inner[1:])],
                               norm=norm, scale=0.5, train_scale=train_scale))
    ends = [width, *tail, 1]
    layers += [Layer(a, b, activation if b != 1 else "sigmoid") for a, b in zip(ends, ends[1:])]
    return tinynet.Network(layers, seed=4)


@pytest.mark.parametrize("parts", [
    dict(head=[], branch=[32], tail=[]),                     # the fast suite's kernel
    pytest.param(dict(head=[32, 24], branch=[16, 5], tail=[12], norm="pre"),
                 marks=pytest.mark.slow),                    # a kernel of its own
])
@pytest.mark.parametrize("update", ["after_backward", "during_backward"])
def test_layers_wider_than_the_blocks_train_as_on_numpy(parts, update):
    """The backward pass's buffers change places block after block; each must hold the
    widest layer's dX (a 32-wide branch layer inside blocks of 8). Three blocks, so that each
    buffer takes every place. NumPy and numba differ by rounding alone (1e-12 after 20
    epochs: measured 1e-15)."""
    X, y = data()
    nets = [wide_parts(**parts) for _ in range(2)]
    for net, backend in zip(nets, ("numpy", "numba")):
        net.fit(X, y, epochs=20, lr=0.05, batch_size=3, update=update, backend=backend)
    np.testing.assert_allclose(tinynet.packing.pack(nets[1]), tinynet.packing.pack(nets[0]),
                               rtol=0, atol=1e-12)


def test_a_residual_network_learns_xor_on_numpy():
    X, y = tinynet.data.xor()
    net = tinynet.mlp([2, 8, 8, 8, 1], activation="relu", residual=True, norm="pre", seed=2)
    history = net.fit(X, y, epochs=2000, lr=0.1, backend="numpy")
    assert history.final_loss < 1e-3 and history.last_wrong_epoch < 2000


def test_the_named_blocks_start_as_their_papers_say():
    rezero = tinynet.mlp([2, 8, 8, 8, 1], activation="relu", residual="rezero", seed=0)
    assert all(block.train_scale and block.scale[0] == 0.0 for block in rezero.residuals)
    X, _ = data()
    X = X[:, :2]
    stem = rezero.layers[0]
    # α = 0: every block is the identity, so the output is the head on the first layer's
    head = rezero.layers[-1]
    np.testing.assert_allclose(rezero.forward(X),
                               head.forward(stem.forward(X)), rtol=0, atol=0)

    blocks, m = 16, 2
    fixup = tinynet.mlp([2, *[64] * (blocks + 1), 1], activation="relu", residual="fixup",
                        branch=m, seed=0)
    first, last = fixup.residuals[0].layers
    assert not last.W.any() and not fixup.layers[-1].W.any()
    # He's std √(2/64) times L^(−1/(2m−2)) = 16^(−1/2); 4,096 draws: the sample std is within
    # 4 of its standard errors (std / √(2·4096)) of the target
    target = np.sqrt(2 / 64) * blocks ** -0.5
    assert abs(first.W.std() - target) < 4 * target / np.sqrt(2 * first.W.size)

    deepnet = tinynet.mlp([2, 64, 64, 64, 64, 1], activation="relu", residual="deepnet",
                          norm="post", seed=0)
    n = 3
    assert all(block.skip == (2 * n) ** 0.25 for block in deepnet.residuals)
    beta = (8 * n) ** -0.25
    w = deepnet.residuals[0].layers[0].W
    assert abs(w.std() - beta * np.sqrt(1 / 64)) < 4 * beta / 8 / np.sqrt(2 * w.size)


def test_bert_is_a_truncated_normal_of_std_002():
    w = tinynet.init.draw(tinynet.init.get("bert"), (300, 300), np.random.default_rng(0),
                          tinynet.get_activation("relu"))
    assert np.abs(w).max() <= 0.04
    # realised std 0.02·√γ(2) = 0.01759; 90,000 draws: within 4 standard errors
    target = 0.02 * np.sqrt(TRUNCATED_VARIANCE_FACTOR)
    assert abs(w.std() - target) < 4 * target / np.sqrt(2 * w.size)


def test_the_compiled_backend_refuses_what_it_cannot_run_by_name():
    """It runs layers, a run of blocks of one kind, then layers."""
    X, y = tinynet.data.xor()
    Layer, Residual = tinynet.Layer, tinynet.Residual

    def block(**kwargs):
        return Residual([Layer(4, 4, "relu")], **kwargs)

    between = tinynet.Network([Layer(2, 4), block(), Layer(4, 4), block(), Layer(4, 1)])
    kinds = tinynet.Network([Layer(2, 4), block(), block(norm="pre"), Layer(4, 1)])
    for net, message in [(between, r"net.blocks\[2\] is Layer\(4 -> 4.*between blocks"),
                         (kinds, r"blocks of one kind .*net.blocks\[2\] is Residual\(4 -> 4: "
                                 r"x \+ 1·F\(LN\(x\)\)")]:
        with pytest.raises(tinynet.compiled.render.NotCompilableError,
                           match=message + r".*backend='numpy'"):
            net.fit(X, y, epochs=1, lr=0.1)


def test_a_printed_network_shows_its_blocks():
    net = tinynet.mlp([2, 8, 8, 8, 1], activation="relu", residual="rezero", norm="pre",
                      branch=2, seed=1)
    text = repr(net)
    assert "residual: x + α·F(LN(x))" in text and "1.norm" in text and "2.α" in text
    assert f"{net.n_parameters} parameters" in text
    assert net.n_parameters == 24 + 2 * (16 + 2 * 72 + 1) + 9
    assert repr(net.residuals[0]).startswith("Residual(8 -> 8: x + α·F(LN(x)) from 0")


def test_a_residual_network_copies_and_pickles():
    import copy
    import pickle
    net = network("rezero", "post", 2)
    for other in (copy.deepcopy(net), pickle.loads(pickle.dumps(net)), copy.copy(net)):
        assert tinynet.packing.pack(other).tobytes() == tinynet.packing.pack(net).tobytes()
        assert other.residuals[0].layers[0] is not net.residuals[0].layers[0]
        X, _ = data()
        np.testing.assert_array_equal(other.forward(X), net.forward(X))


def test_fixups_branches_learn_with_relu():
    """Fixup's branch ends with a linear layer at 0, as the paper's: with a ReLU there, its
    pre-activation 0 would have slope 0, and the branch would never move."""
    X, y = tinynet.data.xor()
    net = tinynet.mlp([2, 8, 8, 8, 1], activation="relu", residual="fixup", branch=2, seed=0)
    last = net.residuals[0].layers[-1]
    assert last.activation.name == "identity" and not last.W.any()
    net.fit(X, y, epochs=200, lr=0.1, backend="numpy")
    assert np.abs(last.W).max() > 1e-3 and net.residuals[0].scale[0] != 1.0


def test_a_student_prints_the_code_that_runs():
    """kernel_source gives the stream module's file byte for byte: the blocks as one loop,
    each line group under the line of tinynet/step.py it comes from."""
    from pathlib import Path

    from tinynet.compiled import kit, stream
    from tinynet.compiled.blockruns import structure_of

    net = network(*FAST[:3])
    first, text = tinynet.kernel_source(net, ensemble=True).split("\n", 1)
    assert "fit_stream_members" in first
    for line in ("for block in range(blocks):", "for block in range(blocks - 1, -1, -1):",
                 "Residual.backward (step.py", "Norm.forward (step.py",
                 "single.normalize_backward(dY, gain, normalized, inverse_std, dY)"):
        assert line in text
    maths = kit.maths_of(net, tinynet.losses.MSE())
    module = stream.load(maths, structure_of(net))
    assert Path(module.__file__).read_text(encoding="utf-8") == text
