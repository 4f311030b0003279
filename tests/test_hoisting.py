"""An optimizer's per-step work done once per step (tinynet.compiled.hoisting), and kernels keyed
by what they use: a loss's or optimizer's values are read at run time, never written into a
kernel's text, and a class a network does not use is in none of its kernels (issue 40)."""

import ast
import dataclasses

import numpy as np
import pytest

import tinynet
from test_maths_once import RMSprop  # docs/contributing.md's, defined outside the package
from tinynet.activations import Activation
from tinynet.compiled import codegen, fused, hoisting, kit, render, unrolled
from tinynet.compiled.backend import check_counters
from tinynet.losses import MSE, Huber
from tinynet.maths import where
from tinynet.optimizers import SGD, Adam, Momentum, Optimizer
from tinynet.packing import layout


def split_of(optimizer: Optimizer) -> hoisting.Split:
    slots = len(optimizer.state)
    return hoisting.split(render.read(optimizer, "update", 3 + slots, 1 + slots))


def inlined(definition: render.Definition, arguments: dict[str, ast.expr]) -> list[str]:
    """The definition's results with every local (and each argument given) replaced by its
    expression: what it computes, whatever its locals."""
    values = dict(arguments)

    class Inline(ast.NodeTransformer):
        def visit_Name(self, node):
            return values.get(node.id, node)

    for local, expression in definition.assignments:
        values[local] = Inline().visit(ast.parse(ast.unparse(expression), mode="eval").body)
    return [ast.unparse(Inline().visit(ast.parse(ast.unparse(result), mode="eval").body))
            for result in definition.results]


@dataclasses.dataclass(frozen=True, repr=False)
class Drifting(Optimizer):
    """State ``clock`` counts steps through another slot, ``half``; ``trace`` reads the
    gradient, and ``tied`` reads ``trace``: two counters, two slots kept per parameter."""

    name = "drifting"
    state = ("clock", "trace", "half", "tied")
    rate: float = 0.5

    def update(self, p, g, lr, clock, trace, half, tied):
        half_next = half + 0.5
        clock_next = clock + 2.0 * half_next
        trace_next = self.rate * trace + g
        tied_next = tied + trace_next
        return p - lr / (1.0 + clock_next) * trace_next, clock_next, trace_next, half_next, \
            tied_next


@pytest.mark.parametrize("optimizer", [SGD(), Momentum(), Adam(), RMSprop(), Drifting()],
                         ids=lambda optimizer: optimizer.name)
def test_the_split_computes_what_the_definition_computes(optimizer):
    """Step values put back into the part per parameter give, operation by operation, the
    definition's results: nothing reordered, so nothing rounds differently."""
    slots = len(optimizer.state)
    definition = render.read(optimizer, "update", 3 + slots, 1 + slots)
    split = hoisting.split(definition)
    p, g, lr, *state = definition.arguments
    step_results = inlined(split.per_step, {})
    values = {hoisting.STEP_VALUE.format(k): ast.parse(text, mode="eval").body
              for k, text in enumerate(step_results[:split.step_values])}
    element = inlined(split.per_element, values)
    whole = inlined(definition, {})
    kept = split.element_slots(slots)
    assert element == [whole[0], *(whole[1 + slot] for slot in kept)]
    assert step_results[split.step_values:] == [whole[1 + slot] for slot in split.counters]


def test_adams_bias_corrections_are_computed_once_per_step_not_per_parameter():
    split = split_of(Adam())
    assert split.counters == (2,)                          # t, one number per network
    assert split.per_step.text.count("**") == 2            # β1^t and β2^t, once a step
    assert "**" not in split.per_element.text and "t_next" not in split.per_element.text
    assert "1.0 - self.beta1" not in split.per_element.text    # hoisted too
    assert split.per_element.arguments[:5] == ("p", "g", "lr", "m", "v")


def test_what_reads_a_parameter_or_its_gradient_stays_per_parameter():
    assert split_of(SGD()).counters == () and split_of(SGD()).step_values == 0
    assert split_of(Momentum()).counters == () and split_of(Momentum()).step_values == 0
    split = split_of(Drifting())
    assert split.counters == (0, 2)        # clock (through half) and half; not trace or tied
    assert split.element_slots(4) == [1, 3]


def test_the_kernels_hold_no_pow_per_parameter():
    """Every kernel written for Adam computes β^t in its part per step only: as many powers
    for 2 parameters as for 33."""
    counts = []
    for sizes in ([2, 1], [2, 8, 1]):
        net = tinynet.mlp(sizes)
        maths = kit.maths_of(net, MSE(), Adam())
        net_layout = kit.layout_for(layout(net), maths)
        text = kit.source(maths)
        update_lane = text[text.index("def update_lane"):text.index("\n\n\n", text.index(
            "def update_lane"))]
        assert "**" not in update_lane and "steps[" in update_lane
        counts.append([text.count("**"),
                       unrolled.source(net_layout, maths, False, unrolled.LANES).count("**"),
                       fused.source(net_layout, maths, True).count("**")])
    assert counts[0] == counts[1] == [4, 4, 2]   # lane 0 and lane by lane; one network


@pytest.mark.parametrize("first,second", [
    (MSE(), MSE()), (Huber(delta=1.0), Huber(delta=0.25))])
@pytest.mark.parametrize("optimizer_a,optimizer_b", [
    (Adam(), Adam(beta1=0.8, beta2=0.95, eps=1e-6)), (Momentum(0.9), Momentum(0.5))])
def test_values_read_at_run_time_are_not_in_any_kernels_text(first, second, optimizer_a,
                                                             optimizer_b):
    """A second Huber delta or Adam beta is the same text, so the same compiled kernel (files
    are named by their text, and kits are keyed by Maths.key, which holds no values)."""
    net = tinynet.mlp([2, 2, 1])
    a, b = kit.maths_of(net, first, optimizer_a), kit.maths_of(net, second, optimizer_b)
    assert a.key() == b.key()
    assert kit.source(a) == kit.source(b)
    net_layout = kit.layout_for(layout(net), a)
    for during in (False, True):
        assert unrolled.source(net_layout, a, during, 56) == unrolled.source(net_layout, b,
                                                                             during, 56)
        assert fused.source(net_layout, a, during) == fused.source(net_layout, b, during)
    assert not np.array_equal(kit.hyperparameters(a), kit.hyperparameters(b)) or first == second


def test_the_loss_parameters_follow_the_optimizers_in_what_the_kernels_read():
    maths = kit.maths_of(tinynet.mlp([2, 2, 1]), Huber(delta=0.3), Adam(beta1=0.7))
    np.testing.assert_array_equal(kit.hyperparameters(maths), [0.7, 0.999, 1e-8, 0.3])
    assert "hyper[3]" in kit.source(maths)
    assert "loss_parameter0 = hyper[3]" in codegen.parameter_loads(
        layout(tinynet.mlp([2, 2, 1])), maths)


@dataclasses.dataclass(frozen=True, repr=False)
class Softsign(Activation):
    """A class registered after the fact, as a new built-in activation would be."""

    name = "softsign_test"

    def forward_and_derivative(self, z):
        size = 1.0 + abs(z)
        return z / size, where(z > 0, 1.0, 1.0) / (size * size)


def test_a_new_built_in_activation_changes_no_kernel_of_a_network_that_does_not_use_it(
        monkeypatch):
    net = tinynet.mlp([2, 3, 1])
    maths = kit.maths_of(net, MSE(), Adam())
    before = (kit.source(maths), maths.key())
    assert [type(a).__name__ for a in maths.activations] == ["LeakyReLU", "Sigmoid"]
    built_in = (*tinynet.activations.BUILT_IN, Softsign)
    monkeypatch.setattr(tinynet.activations, "BUILT_IN", built_in)
    monkeypatch.setitem(tinynet.activations.ACTIVATIONS, Softsign.name, Softsign)
    for module in (tinynet.packing, kit):                 # wherever the name was imported
        if hasattr(module, "BUILT_IN"):
            monkeypatch.setattr(module, "BUILT_IN", built_in)
    maths = kit.maths_of(net, MSE(), Adam())
    assert (kit.source(maths), maths.key()) == before
    assert "softsign" not in before[0] and "Tanh" not in before[0]


def test_a_step_count_that_differs_across_a_members_parameters_is_refused():
    net = tinynet.mlp([2, 2, 1])
    maths = kit.maths_of(net, MSE(), Adam())
    state = np.zeros((3, 3, 9))
    state[1, 2, 4] = 7.0
    with pytest.raises(ValueError, match=r"^state's slot 't' of optimizer adam\(.*member 1 "
                                         r"holds 2 different values \(from 0.0 to 7.0\)"):
        check_counters(maths, state, "state")
    state[1, 2, :] = 7.0                                 # one count per member: fine
    check_counters(maths, state, "state")
    X, y = tinynet.data.xor()
    state[1, 2, 4] = 1.0
    theta = tinynet.packing.draw(net, range(3))
    with pytest.raises(ValueError, match="step count, one number per network"):
        tinynet.fit_packed(net, theta, X, y, seeds=range(3), epochs=1, lr=0.1,
                           optimizer="adam", state=state)


def test_huber_is_pytorchs_and_names_its_delta():
    torch = pytest.importorskip("torch", reason="PyTorch comes with the torch extra")
    loss = tinynet.losses.get_loss("huber(delta=0.5)")
    assert repr(loss) == "huber(delta=0.5)" and loss == Huber(0.5)
    y_hat = np.array([[0.1], [0.9], [0.3], [2.0], [-1.5]])
    y = np.array([[0.0], [1.0], [1.0], [0.0], [0.0]])
    tensor = torch.tensor(y_hat, requires_grad=True)
    expected = torch.nn.HuberLoss(delta=0.5)(tensor, torch.tensor(y))
    expected.backward()
    assert loss.value(y_hat, y) == pytest.approx(expected.item(), abs=1e-15)
    np.testing.assert_allclose(loss.gradient(y_hat, y), tensor.grad.numpy(), atol=1e-15)
    with pytest.raises(ValueError, match="huber's delta must be positive, got 0.0"):
        Huber(delta=0.0)
    with pytest.raises(TypeError, match="loss 'huber' got unknown parameter.* beta; it "
                                        "accepts delta"):
        tinynet.losses.get_loss("huber(beta=1.0)")


@pytest.mark.slow
@pytest.mark.parametrize("generated", [True, False], ids=["generated", "generic"])
def test_members_whose_step_counts_differ_train_each_as_alone(monkeypatch, generated):
    """Adam members that start from different step counts and moments (a run continued from
    different points) take the lane-by-lane path of the part per step: each member equals its
    single numba fit bit for bit and the NumPy backend to rounding, and the step count comes
    back one number per network in every parameter's slot."""
    monkeypatch.setattr(codegen, "MAX_UNROLLED_WORK", 160 if generated else -1)
    X, y = tinynet.data.xor()
    like = tinynet.mlp([2, 3, 1], seed=0)
    seeds = list(range(5))
    theta = tinynet.packing.draw(like, seeds)
    rng = np.random.default_rng(7)
    state = np.zeros((5, 3, theta.shape[1]))
    state[:, 0] = rng.normal(0, 0.1, state[:, 0].shape)          # m
    state[:, 1] = rng.uniform(0, 0.01, state[:, 1].shape)        # v
    state[:, 2] = np.array([0.0, 3.0, 3.0, 40.0, 1000.0])[:, None]  # t, per member
    trained, trained_state = theta.copy(), state.copy()
    tinynet.fit_packed(like, trained, X, y, seeds=seeds, epochs=30, lr=0.05,
                       optimizer="adam", state=trained_state)
    np.testing.assert_array_equal(trained_state[:, 2], (state[:, 2] + 120)[:, :1].repeat(
        theta.shape[1], axis=1))
    for member in range(5):
        for backend in ("numba", "numpy"):
            net = tinynet.mlp([2, 3, 1], seed=0)
            tinynet.packing.unpack(net, theta[member].copy())
            net.optimizer_state = tinynet.optimizers.State(tinynet.optimizers.Adam(),
                                                           state[member].copy())
            tinynet.fit(net, X, y, epochs=30, lr=0.05, optimizer="adam", backend=backend,
                        seed=seeds[member])
            ours = tinynet.packing.pack(net)
            if backend == "numba":
                np.testing.assert_array_equal(ours, trained[member])
                np.testing.assert_array_equal(net.optimizer_state.values,
                                              trained_state[member])
            else:
                np.testing.assert_allclose(ours, trained[member], rtol=0, atol=1e-12)


@pytest.mark.slow
def test_a_second_huber_delta_compiles_nothing(tmp_path, monkeypatch, capfd):
    monkeypatch.setenv("TINYNET_KERNEL_DIR", str(tmp_path))
    X, y = tinynet.data.xor()
    files = []
    for delta in (1.0, 0.25):
        net = tinynet.mlp([2, 2, 1], seed=1)
        tinynet.fit(net, X, y, epochs=3, lr=0.1, loss=Huber(delta=delta), optimizer="adam",
                    backend="numba")
        tinynet.fit_ensemble([tinynet.mlp([2, 2, 1], seed=s) for s in range(3)], X, y,
                             epochs=3, lr=0.1, loss=Huber(delta=delta), optimizer="adam")
        said = capfd.readouterr().err
        assert ("compiling" in said) == (delta == 1.0), said
        files.append(sorted(tmp_path.glob("tinynet_kernel_*.py")))
    assert files[0] and files[0] == files[1]             # no kernel written for the second


@dataclasses.dataclass(frozen=True, repr=False)
class Trading(Optimizer):
    """Two counters, each new value read from the other's old one (a ← b + 1, b ← 2a + 1):
    a kernel that set one before reading it for the other would count wrong."""

    name = "trading"
    state = ("a", "b")

    def update(self, p, g, lr, a, b):
        return p - lr * g / (1.0 + a + b), b + 1.0, 2.0 * a + 1.0


@pytest.mark.slow
@pytest.mark.parametrize("generated", [True, False], ids=["generated", "generic"])
def test_counters_that_read_each_other_step_from_their_old_values(monkeypatch, generated):
    """Every kernel (single fit and ensemble, lane by lane when members' counts differ) reads
    all counters' old values before it sets any, as the NumPy backend does."""
    monkeypatch.setattr(codegen, "MAX_UNROLLED_WORK", 160 if generated else -1)
    assert split_of(Trading()).counters == (0, 1)
    X, y = tinynet.data.xor()
    like = tinynet.mlp([2, 2, 1], seed=0)
    theta = tinynet.packing.draw(like, range(3))
    state = np.zeros((3, 2, theta.shape[1]))
    state[1] = 5.0                                        # member 1 starts elsewhere
    results = {}
    for backend in ("numba", "numpy"):
        trained, trained_state = theta.copy(), state.copy()
        tinynet.fit_packed(like, trained, X, y, seeds=range(3), epochs=3, lr=0.1,
                           optimizer=Trading(), state=trained_state, backend=backend)
        results[backend] = trained, trained_state
        net = tinynet.mlp([2, 2, 1], seed=0)
        tinynet.packing.unpack(net, theta[1].copy())
        net.optimizer_state = tinynet.optimizers.State(Trading(), state[1].copy())
        net.fit(X, y, epochs=3, lr=0.1, optimizer=Trading(), backend=backend, seed=1)
        np.testing.assert_allclose(net.optimizer_state.values, trained_state[1], rtol=0, atol=0)
    np.testing.assert_array_equal(results["numba"][1], results["numpy"][1])
    np.testing.assert_allclose(results["numba"][0], results["numpy"][0], rtol=0, atol=1e-12)
