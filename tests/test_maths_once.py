"""Every activation, loss and optimizer is defined once, and every backend is built from that
definition:
one defined outside the package (here, the ones docs/contributing.md shows) trains on the
compiled backend as on NumPy, or is refused by name; nothing unknown ever runs as something
else (issue 25)."""

import importlib.util
import linecache
import re
import tempfile
import textwrap
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest

import tinynet
from tinynet.activations import Activation, LeakyReLU
from tinynet.compiled import kit, render
from tinynet.compiled.render import NotCompilableError
from tinynet.losses import MSE, Loss
from tinynet.maths import exp, log1p, tanh, where

from helpers import ROOT
from helpers import Softplus as NumpySoftplus


@dataclass(frozen=True, repr=False)
class HalfLeaky(LeakyReLU):
    """A built-in's subclass with maths of its own: it must run as itself, not as LeakyReLU."""

    name = "half_leaky"

    def forward_and_derivative(self, z):
        slope = where(z > 0, 0.5, self.alpha)
        return z * slope, slope


def documented() -> ModuleType:
    """The code blocks of docs/contributing.md, as a module (the compiled backend reads a
    definition's source, so it must come from a file)."""
    text = (ROOT / "docs" / "contributing.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", text, re.DOTALL)
    folder = Path(tempfile.mkdtemp(prefix="tinynet-docs-"))
    (folder / "contributing_blocks.py").write_text("\n\n".join(blocks))
    spec = importlib.util.spec_from_file_location("contributing_blocks",
                                                  folder / "contributing_blocks.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


DOCUMENTED = documented()
Softplus, LogCosh, RMSprop = DOCUMENTED.Softplus, DOCUMENTED.LogCosh, DOCUMENTED.RMSprop


@pytest.fixture(params=["generated", "generic"])
def kernels(request, monkeypatch):
    """Small layouts on the kernels generated for them, or on the generic ones (which the
    suite uses unless a test asks: tests/conftest.py)."""
    from tinynet.compiled import codegen
    monkeypatch.setattr(codegen, "MAX_UNROLLED_WORK", 160 if request.param == "generated" else -1)
    return request.param


def steps(sizes, activation, loss="mse", epochs=250, batch_size=1, seed=0):
    """1,000 per-sample steps (250 epochs of XOR) on both backends: the two networks."""
    X, y = tinynet.data.xor()
    trained = []
    for backend in ("numpy", "numba"):
        net = tinynet.mlp(sizes, activation=activation, output="sigmoid", init="lecun_normal",
                          seed=seed)
        net.fit(X, y, epochs=epochs, lr=0.1, batch_size=batch_size, backend=backend, loss=loss)
        trained.append(net)
    return trained


def agree(a, b, tolerance=1e-12):
    for p, q in zip(a.parameters(), b.parameters()):
        np.testing.assert_allclose(p, q, rtol=0, atol=tolerance)


@pytest.mark.slow
def test_an_activation_defined_outside_the_package_compiles_and_trains_as_on_numpy(kernels):
    """2-32-1 goes to the generic kernel (too big to unroll), 2-3-1 to either."""
    numpy_net, numba_net = steps([2, 32, 1], Softplus(beta=2.0))
    agree(numpy_net, numba_net)
    X, _ = tinynet.data.xor()
    np.testing.assert_allclose(numba_net.predict(X), numpy_net.predict(X, backend="numpy"),
                               rtol=0, atol=1e-13)
    agree(*steps([2, 3, 1], Softplus(beta=0.5)))
    # a different beta is the same compiled kernel, and trains differently
    assert not np.allclose(steps([2, 3, 1], Softplus(beta=3.0))[1].layers[0].W,
                           steps([2, 3, 1], Softplus(beta=0.5))[1].layers[0].W)


@pytest.mark.slow
def test_an_ensemble_of_a_new_activation_is_each_single_fit_bit_for_bit(kernels):
    X, y = tinynet.data.xor()
    for sizes in ([2, 3, 1], [2, 24, 1]):  # either kernel, then the generic one
        nets = [tinynet.mlp(sizes, activation=Softplus(), output="sigmoid", init="lecun_normal",
                            seed=s) for s in range(3)]
        tinynet.fit_ensemble(nets, X, y, epochs=40, lr=0.3)
        alone = tinynet.mlp(sizes, activation=Softplus(), output="sigmoid", init="lecun_normal",
                            seed=2)
        alone.fit(X, y, epochs=40, lr=0.3)
        for p, q in zip(nets[2].parameters(), alone.parameters()):
            np.testing.assert_array_equal(p, q)


def test_the_documented_optimizer_trains_as_on_numpy(kernels):
    """docs/contributing.md's RMSprop, defined outside the package: 1,000 steps on both
    backends agree to 1e-12 (and PyTorch's RMSprop: tests/test_against_torch.py)."""
    X, y = tinynet.data.xor()
    trained = {}
    for backend in ("numpy", "numba"):
        net = tinynet.mlp([2, 3, 1], activation="tanh", init="lecun_normal", seed=2)
        net.fit(X, y, epochs=250, lr=0.01, optimizer=RMSprop(alpha=0.9), backend=backend)
        trained[backend] = net
    agree(trained["numpy"], trained["numba"])


@pytest.mark.slow
def test_a_subclass_of_a_built_in_runs_its_own_maths(kernels):
    numpy_net, numba_net = steps([2, 4, 1], HalfLeaky(0.1))
    agree(numpy_net, numba_net)
    plain = steps([2, 4, 1], LeakyReLU(0.1))[1]
    assert not np.allclose(plain.layers[0].W, numba_net.layers[0].W)


@pytest.mark.slow
def test_a_loss_defined_outside_the_package_compiles_and_trains_as_on_numpy(kernels):
    for sizes in ([2, 3, 1], [2, 24, 1]):
        agree(*steps(sizes, "tanh", loss=LogCosh()))
    numpy_net, numba_net = steps([2, 3, 1], "tanh", loss=LogCosh(), epochs=60, batch_size=3)
    agree(numpy_net, numba_net)
    # the record is the loss asked for: LogCosh's value, not MSE's
    X, y = tinynet.data.xor()
    net = tinynet.mlp([2, 3, 1], activation="tanh", seed=0)
    before = net.predict(X)
    history = net.fit(X, y, epochs=1, lr=0.1, batch_size=4, loss=LogCosh())  # one step
    assert history.final_loss == pytest.approx(LogCosh().value(before, y), rel=1e-12)
    assert history.final_loss != pytest.approx(MSE().value(before, y), rel=1e-3)


def test_a_numpy_only_activation_is_refused_by_name_and_trains_on_numpy():
    X, y = tinynet.data.xor()
    net = tinynet.mlp([2, 3, 1], activation=NumpySoftplus(), init="lecun_normal", seed=0)
    message = (r"^backend 'numba' cannot run layers\[0\]'s activation softplus \(Softplus\): "
               r"it defines forward and derivative.*pass backend='numpy'$")
    for call in (lambda: net.fit(X, y, epochs=1, lr=0.1),
                 lambda: tinynet.fit_ensemble([net], X, y, epochs=1, lr=0.1),
                 lambda: net.predict(X)):
        with pytest.raises(NotCompilableError, match=message):
            call()
    before = net.layers[0].W.copy()
    net.fit(X, y, epochs=3, lr=0.1, backend="numpy")
    assert not np.array_equal(before, net.layers[0].W)


@dataclass(frozen=True, repr=False)
class CallsNumPy(Activation):
    name = "calls_numpy"

    def forward_and_derivative(self, z):
        s = np.logaddexp(0.0, z)
        return s, 1.0 - exp(-s)


@dataclass(frozen=True, repr=False)
class Loops(Activation):
    name = "loops"

    def forward_and_derivative(self, z):
        for _ in range(2):
            z = z * 1.0
        return z, 1.0


@dataclass(frozen=True, repr=False)
class ReadsAGlobal(Activation):
    name = "reads_a_global"

    def forward_and_derivative(self, z):
        return z * SCALE, SCALE


SCALE = 2.0


@dataclass(frozen=True, repr=False)
class ShadowsExp(Activation):
    name = "shadows_exp"

    def forward_and_derivative(self, z):
        exp = np.exp  # noqa: F841 (a local called exp is not tinynet.maths.exp)
        return z, 1.0


@dataclass(frozen=True, repr=False)
class OneResult(Activation):
    name = "one_result"

    def forward_and_derivative(self, z):
        return z


@dataclass(frozen=True, repr=False)
class TextParameter(Activation):
    """A parameter that is text, let through by a check of the class's own (made, it would
    be refused: tests/test_activations.py): the compiled backend still refuses it."""

    name = "text_parameter"
    mode: str = "fast"

    def __post_init__(self) -> None:
        pass

    def forward_and_derivative(self, z):
        return z, 1.0


@pytest.mark.parametrize("activation,reason", [
    (CallsNumPy(), r"\(line \d+\): it calls np.logaddexp, which is not in tinynet.maths"),
    (Loops(), r"only assignments to one name"),
    (ReadsAGlobal(), r"it reads SCALE, which is neither an argument, a local nor a parameter"),
    (OneResult(), r"must take 1 argument\(s\) after self and return 2 values, not 1 and 1"),
    (TextParameter(), r"its parameter mode='fast' is not a number"),
], ids=lambda value: getattr(value, "name", ""))
def test_what_the_compiled_backend_cannot_build_is_refused_by_name(activation, reason):
    X, y = tinynet.data.xor()
    net = tinynet.mlp([2, 3, 1], activation=activation, init="lecun_normal", seed=0)
    with pytest.raises(NotCompilableError, match=f"^backend 'numba' cannot run layers\\[0\\]'s "
                                                 f"activation {activation.name}.*{reason}.*"
                                                 "backend='numpy'$"):
        net.fit(X, y, epochs=1, lr=0.1)
    if not isinstance(activation, OneResult):  # NumPy runs what it is given
        net.fit(X, y, epochs=1, lr=0.1, backend="numpy")


def test_a_local_named_like_a_maths_function_is_not_that_function():
    with pytest.raises(NotCompilableError, match=r"it assigns exp, a name of tinynet.maths"):
        kit.check(tinynet.mlp([2, 1], output=ShadowsExp(), init="lecun_normal"), MSE())


def test_the_definition_is_what_the_kernels_are_written_from():
    """The kit's source holds each definition's lines, as written, with exp as vector_exp and
    where as a conditional; no activation codes, no fallback."""
    text = kit.source(kit.Maths([LeakyReLU(), tinynet.activations.Sigmoid()], MSE()))
    assert "e__0 = vector_exp(-abs(z))" in text
    assert "d__1 = 1.0 + e__0" in text
    assert "return ((1.0 if z >= 0 else e__0) / d__1, e__0 / (d__1 * d__1))" in text
    assert "positive__0 = z > 0" in text
    assert "return (z if positive__0 else parameters[0] * z, 1.0 if positive__0 else " \
        "parameters[0])" in text
    assert "diff__0 = y_hat - y" in text
    assert "return (diff__0 * diff__0, 2.0 / batch * diff__0)" in text
    definition = render.read(LeakyReLU(0.3), "forward_and_derivative", 1, 2)
    lines, results = definition.instantiate({"z": "z0_1_2"}, {"alpha": "param0_0"}, "_0_1_2")
    assert lines == ["positive__0_0_1_2 = z0_1_2 > 0"]
    assert results == ["z0_1_2 if positive__0_0_1_2 else param0_0 * z0_1_2",
                       "1.0 if positive__0_0_1_2 else param0_0"]


def test_the_compiled_package_has_no_activation_codes_or_fallback():
    """The activation switch with its `else: identity` existed in five places (issue 25)."""
    from pathlib import Path
    folder = Path(tinynet.__file__).parent
    for path in [*folder.glob("*.py"), *(folder / "compiled").glob("*.py")]:
        text = path.read_text()
        for word in ("IDENTITY", "LEAKY_RELU", "SIGMOID", "activate_derivative", ".codes",
                     "# identity"):
            assert word not in text, (path.name, word)


def test_losses_by_name_and_as_objects():
    X, y = tinynet.data.xor()
    default, named, given = (tinynet.mlp([2, 2, 1], seed=1) for _ in range(3))
    default.fit(X, y, epochs=20, lr=0.1)
    named.fit(X, y, epochs=20, lr=0.1, loss="mse")
    given.fit(X, y, epochs=20, lr=0.1, loss=MSE())
    for other in (named, given):
        for p, q in zip(default.parameters(), other.parameters()):
            np.testing.assert_array_equal(p, q)
    with pytest.raises(tinynet.UnknownNameError, match="loss"):
        default.fit(X, y, epochs=1, lr=0.1, loss="msee")


def test_an_activation_class_has_one_definition():
    """forward_and_derivative, or forward and derivative together: a class that overrides
    one of forward and derivative would train with one function and report another."""
    with pytest.raises(TypeError, match=r"OnlyForward defines forward: define "
                                        r"forward_and_derivative\(self, z\), or"):
        class OnlyForward(LeakyReLU):
            def forward(self, z):
                return z
    with pytest.raises(TypeError, match=r"Both defines derivative, forward, "
                                        r"forward_and_derivative"):
        class Both(Activation):
            def forward(self, z):
                return z

            def derivative(self, z):
                return z

            def forward_and_derivative(self, z):
                return z, 1.0

    class Overrides(NumpySoftplus):  # maths once again: its forward is its definition's
        def forward_and_derivative(self, z):
            return z, 1.0
    z = np.array([-1.0, 2.0])
    np.testing.assert_array_equal(Overrides().forward(z), z)
    np.testing.assert_array_equal(Overrides().derivative(z), [1.0, 1.0])


def test_networks_of_the_same_activation_classes_share_one_kit():
    """The kit is keyed by the maths a network uses (issue 40): the classes of its layers in
    order, not their sizes or parameters; a class it does not use is not in it."""
    sources = {kit.source(kit.maths_of(tinynet.mlp(sizes, activation=hidden, output=output,
                                                   alpha=alpha), MSE()))
               for sizes, hidden, output, alpha in [([2, 2, 1], "leaky_relu", "sigmoid", 0.01),
                                                    ([2, 16, 16, 1], "leaky_relu", "sigmoid",
                                                     0.2),
                                                    ([3, 5, 2], "leaky_relu", "sigmoid", 0.0)]}
    assert len(sources) == 1
    (text,) = sources
    assert "LeakyReLU" in text and "Sigmoid" in text and "Tanh" not in text
    assert kit.source(kit.maths_of(tinynet.mlp([2, 2, 1], activation="tanh"), MSE())) \
        not in sources
    assert kit.source(kit.maths_of(tinynet.mlp([2, 2, 1]), tinynet.losses.BCE())) not in sources


@dataclass(frozen=True, repr=False)
class NamesLikeTheKernels(Activation):
    """Its argument is x and it has locals named z, parameters and t: the kernels' own names
    for the pre-activation, the parameters and the targets, which it must not overwrite."""

    name = "names_like_the_kernels"

    def forward_and_derivative(self, x):
        z = x * 0.5
        parameters = z + 1.0
        t = tanh(parameters)
        return t, 0.5 * (1.0 - t * t)


@dataclass(frozen=True, repr=False)
class SquaredNamesLikeTheKernels(Loss):
    """Arguments (p, t, n) and locals y, t_0_0 and a2_0_0: the generated kernels call their
    targets t_0_0 and outputs a2_0_0, the kit its arguments y_hat, y and batch."""

    name = "squared_names_like_the_kernels"

    def value_and_gradient(self, p, t, n):
        y = p - t
        t_0_0 = y * y
        a2_0_0 = 2.0 * y
        return t_0_0, a2_0_0 / n


@dataclass(frozen=True, repr=False)
class SigmoidInSteps(Activation):
    """A sigmoid whose exp's local is assigned again after the exp (each assignment a local
    of its own in the kernels: the ensemble kernel keeps each exp's value across its loop)."""

    name = "sigmoid_in_steps"

    def forward_and_derivative(self, z):
        e = exp(-abs(z))
        e = e * 1.0
        s = where(z >= 0, 1.0, e) / (1.0 + e)
        s = s + 0.0
        return s, e / ((1.0 + e) * (1.0 + e))


@pytest.mark.slow
def test_a_definition_may_use_any_name_the_kernels_use(kernels):
    X, y = tinynet.data.xor()
    sizes = [2, 3, 1]
    for hidden, output, loss in [(NamesLikeTheKernels(), "sigmoid", "mse"),
                                 ("tanh", "sigmoid", SquaredNamesLikeTheKernels()),
                                 (SigmoidInSteps(), SigmoidInSteps(), "mse")]:
        runs = {}
        for backend in ("numpy", "numba"):
            nets = [tinynet.mlp(sizes, activation=hidden, output=output, init="lecun_normal",
                                seed=s) for s in range(3)]
            runs[backend] = nets, tinynet.fit_ensemble(nets, X, y, epochs=60, lr=0.3,
                                                       record_every=1, loss=loss)
        (numpy_nets, numpy_result), (numba_nets, numba_result) = runs["numpy"], runs["numba"]
        np.testing.assert_allclose(numba_result.loss, numpy_result.loss, rtol=1e-12)
        np.testing.assert_array_equal(numba_result.last_wrong_epoch,
                                      numpy_result.last_wrong_epoch)
        for a, b in zip(numpy_nets, numba_nets):
            agree(a, b)


@dataclass(frozen=True, repr=False)
class WeightedBCE(tinynet.losses.BCE):
    """A subclass with a loss of its own: it must not train on BCE's gradient through the
    sigmoid, which is its parent's, not its own."""

    name = "weighted_bce"

    def value_and_gradient(self, y_hat, y, batch):
        diff = y_hat - y
        return 3.0 * diff * diff, 6.0 * diff / batch


@pytest.mark.slow
def test_a_subclass_of_bce_with_its_own_loss_trains_on_its_own_gradient(kernels):
    assert tinynet.losses.BCE().through_sigmoid() and not WeightedBCE().through_sigmoid()
    X, y = tinynet.data.xor()
    trained = {}
    for loss in (WeightedBCE(), "bce"):
        for backend in ("numpy", "numba"):
            net = tinynet.mlp([2, 3, 1], activation="tanh", init="lecun_normal", seed=2)
            net.fit(X, y, epochs=50, lr=0.3, loss=loss, backend=backend)
            trained[str(loss), backend] = net
    agree(trained["weighted_bce", "numpy"], trained["weighted_bce", "numba"])
    assert not np.allclose(trained["weighted_bce", "numba"].layers[0].W,
                           trained["bce", "numba"].layers[0].W)


@dataclass(frozen=True, repr=False)
class TermOfTheBatch(Loss):
    name = "term_of_the_batch"

    def value_and_gradient(self, y_hat, y, batch):
        scaled = (y_hat - y) / batch
        return scaled * scaled, 2.0 * scaled / batch


@dataclass(frozen=True, repr=False)
class NumpyLoss(Loss):
    name = "numpy_loss"

    def value_and_gradient(self, y_hat, y, batch):
        return np.square(y_hat - y), 2.0 * (y_hat - y) / batch


@dataclass(frozen=True, repr=False)
class ReassignsItsArgument(Activation):
    name = "reassigns_its_argument"

    def forward_and_derivative(self, z):
        z = z * 2.0
        return z, 2.0


@pytest.mark.parametrize("loss,reason", [
    (TermOfTheBatch(), r"loss term_of_the_batch \(TermOfTheBatch\): its term depends on the "
                       r"batch size batch"),
    (NumpyLoss(), r"loss numpy_loss \(NumpyLoss\): NumpyLoss.value_and_gradient \(line \d+\): "
                  r"it calls np.square, which is not in tinynet.maths"),
], ids=["term of the batch", "numpy call"])
def test_a_loss_the_compiled_backend_cannot_build_is_refused_by_name(loss, reason):
    X, y = tinynet.data.xor()
    net = tinynet.mlp([2, 2, 1], seed=0)
    with pytest.raises(NotCompilableError, match=f"^backend 'numba' cannot run {reason}.*"
                                                 "backend='numpy'$"):
        net.fit(X, y, epochs=1, lr=0.1, loss=loss)
    net.fit(X, y, epochs=1, lr=0.1, loss=loss, backend="numpy")


def test_a_definition_that_assigns_its_argument_is_refused():
    with pytest.raises(NotCompilableError, match=r"it assigns its argument z"):
        kit.check(tinynet.mlp([2, 1], output=ReassignsItsArgument(), init="lecun_normal"),
                  MSE())


@dataclass(frozen=True, repr=False)
class SoftplusLoss(Loss):
    """A loss that calls exp: the ensemble kernel cuts its step at the exp, between the
    step's running sum of the loss and the next sample's term."""

    name = "softplus_loss"

    def value_and_gradient(self, y_hat, y, batch):
        e = exp(-abs(y_hat - y))
        return abs(y_hat - y) + log1p(e), where(y_hat >= y, 1.0, -1.0) / ((1.0 + e) * batch)


@pytest.mark.slow
def test_a_loss_that_calls_exp_trains_each_ensemble_member_as_numpy_does(kernels):
    X, y = tinynet.data.xor()
    runs = {}
    for backend in ("numpy", "numba"):
        nets = [tinynet.mlp([2, 2, 1], seed=s) for s in range(10)]
        runs[backend] = nets, tinynet.fit_ensemble(nets, X, y, epochs=30, lr=0.3,
                                                   batch_size=2, loss=SoftplusLoss(),
                                                   backend=backend)
    np.testing.assert_allclose(runs["numba"][1].final_loss, runs["numpy"][1].final_loss,
                               rtol=1e-12)
    for a, b in zip(runs["numpy"][0], runs["numba"][0]):
        agree(a, b)


class MaximumMixin:
    def forward_and_derivative(self, z):
        return where(z > 0, z, 0.0), where(z > 0, 1.0, 0.0)


def test_an_activation_cannot_take_two_definitions_from_two_bases():
    with pytest.raises(TypeError, match=r"inherits forward_and_derivative and forward or "
                                        r"derivative from different bases"):
        class Mixed(MaximumMixin, NumpySoftplus):
            pass
    with pytest.raises(TypeError, match=r"Hidden defines nothing"):
        class Hidden(Activation, MaximumMixin):  # Activation's own comes first
            name = "hidden"

    class Unnamed(Activation):  # an abstract base of one's own: no name, no definition yet
        bounds = (0.0, 1.0)

    class Kinked(NumpySoftplus):  # a NumPy-only activation with another derivative
        def derivative(self, z):
            return np.ones_like(z)
    np.testing.assert_array_equal(Kinked().derivative(np.zeros(2)), [1.0, 1.0])
    assert Unnamed.bounds == (0.0, 1.0)


@dataclass(frozen=True, repr=False)
class NamesItsLocalLikeTheExp(Activation):
    name = "names_its_local_like_the_exp"

    def forward_and_derivative(self, z):
        vector_exp = exp(z)
        return vector_exp, vector_exp


def test_a_local_named_as_the_kernels_write_exp_is_refused():
    with pytest.raises(NotCompilableError, match=r"it assigns vector_exp, a name of "
                                                 r"tinynet.maths or of the kernels"):
        kit.check(tinynet.mlp([2, 1], output=NamesItsLocalLikeTheExp(), init="lecun_normal"),
                  MSE())


def test_a_definition_whose_file_changed_since_its_import_is_refused(tmp_path):
    """The compiled backend reads a definition's source from its file: edited after the
    import, the lines it reads are not the code NumPy runs, and it must say so, not build
    them."""
    module = tmp_path / "edited_activation.py"
    module.write_text(textwrap.dedent('''\
        from dataclasses import dataclass
        from tinynet.activations import Activation


        @dataclass(frozen=True, repr=False)
        class Doubling(Activation):
            name = "doubling"

            def forward_and_derivative(self, z):
                return 2.0 * z, 2.0
        '''))
    spec = importlib.util.spec_from_file_location("edited_activation", module)
    edited = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(edited)
    module.write_text(module.read_text().replace("2.0 * z, 2.0", "3.0 * z, 3.0"))
    linecache.checkcache(str(module))
    net = tinynet.mlp([2, 1], output=edited.Doubling(), init="lecun_normal")
    with pytest.raises(NotCompilableError, match="its source file has changed since it was "
                                                 "imported"):
        kit.check(net, MSE())
