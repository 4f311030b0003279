"""Saving networks with activations of their own: each loads back as the class it was, with
every field, or is refused in one line; never as a built-in that shares its name."""

import dataclasses
import importlib
import re
import sys
import types
from dataclasses import dataclass

import numpy as np
import pytest

import tinynet
from tinynet import FileFormatError, saving, saving_activations
from tinynet.activations import Activation, LeakyReLU, Tanh
from tinynet.maths import tanh, where

X = np.random.default_rng(0).normal(size=(7, 2))


@dataclass(frozen=True, repr=False)
class LookAlikeTanh(Activation):
    """Named "tanh", but half of it: φ(z) = tanh(z) / 2."""

    name = "tanh"

    def forward_and_derivative(self, z):
        t = tanh(z)
        return t / 2, (1.0 - t * t) / 2


@dataclass(frozen=True, repr=False)
class SteeperLeaky(LeakyReLU):
    """A LeakyReLU subclass, twice as steep for z > 0."""

    def forward_and_derivative(self, z):
        slope = where(z > 0, 2.0, self.alpha)
        return z * slope, slope


@dataclass(frozen=True, repr=False)
class Shifted(Activation):
    """Two fields, a float and an int: φ(z) = gain tanh(z) + offset."""

    name = "shifted"
    gain: float = 1.0
    offset: int = 0

    def forward_and_derivative(self, z):
        t = tanh(z)
        return self.gain * t + self.offset, self.gain * (1.0 - t * t)


@dataclass(frozen=True, repr=False)
class Mirrored(Activation):
    """A field named alpha that LeakyReLU would refuse: φ(z) = z if z > 0 else alpha z, with
    alpha = -1 by default (|z|)."""

    name = "mirrored"
    alpha: float = -1.0

    def forward_and_derivative(self, z):
        slope = where(z > 0, 1.0, self.alpha)
        return z * slope, slope


@dataclass(frozen=True, repr=False)
class Doubling(Activation):
    """Its constructor doubles the gain it is given: rebuilt from its field, it would be
    another function, so it cannot be saved."""

    name = "doubling"
    gain: float = 1.0

    def __post_init__(self):
        object.__setattr__(self, "gain", 2 * self.gain)

    def forward_and_derivative(self, z):
        return self.gain * z, self.gain


@dataclass(frozen=True, repr=False)
class Derived(Shifted):
    """A field its constructor derives (init=False): twice the gain."""

    twice: float = dataclasses.field(init=False, default=0.0)

    def __post_init__(self):
        object.__setattr__(self, "twice", 2 * self.gain)


class Unfielded(Activation):
    """A subclass that is no dataclass: its parameter is no field, so no file can hold it."""

    name = "unfielded"

    def __init__(self, beta):
        object.__setattr__(self, "beta", beta)

    def forward_and_derivative(self, z):
        return self.beta * z, self.beta


CONSTRUCTED = []


class NotAnActivation:
    """A class that is no Activation: a file naming it must not get it constructed."""

    def __init__(self, *args, **kwargs):
        CONSTRUCTED.append((args, kwargs))


def network(activation, output="sigmoid"):
    return tinynet.mlp([2, 3, 1], activation=activation, output=output,
                       init="xavier_uniform", seed=3)


def rewrite(path, drop=(), **changes):
    """Write the archive at ``path`` again, entries ``drop`` left out and ``changes`` made."""
    with np.load(path) as archive:
        arrays = {name: archive[name] for name in archive.files if name not in drop}
    arrays.update(changes)
    with open(path, "wb") as file:
        np.savez(file, **arrays)


def one_line_refusal(path):
    """The FileFormatError that loading ``path`` raises, checked to be one line."""
    with pytest.raises(FileFormatError) as refused:
        tinynet.load(path)
    message = str(refused.value)
    assert "\n" not in message
    return message


def test_a_class_named_tanh_loads_as_itself_not_as_the_built_in(tmp_path):
    net = network(LookAlikeTanh(), output=Tanh())
    path = net.save(tmp_path / "look_alike.npz")
    loaded = tinynet.load(path)
    assert type(loaded.layers[0].activation) is LookAlikeTanh
    assert type(loaded.layers[1].activation) is Tanh  # the built-in stays the built-in
    np.testing.assert_array_equal(loaded.forward(X), net.forward(X))
    with np.load(path) as archive:
        assert int(archive["version"]) == 4
        assert list(archive["activations"]) == ["tanh", "tanh"]
        assert list(archive["activation_classes"]) == ["test_saving_custom:LookAlikeTanh", ""]
        assert list(archive["activation_digests"]) == \
            [saving_activations.digest(LookAlikeTanh), ""]


def test_a_leaky_relu_subclass_loads_as_the_subclass_with_its_alpha(tmp_path):
    net = network(SteeperLeaky(alpha=0.2))
    loaded = tinynet.load(net.save(tmp_path / "steeper.npz"))
    assert type(loaded.layers[0].activation) is SteeperLeaky
    assert loaded.layers[0].activation.alpha == 0.2
    np.testing.assert_array_equal(loaded.forward(X), net.forward(X))


def test_a_class_of_two_fields_keeps_both_and_their_types(tmp_path):
    net = network(Shifted(gain=1.5, offset=-2))
    path = net.save(tmp_path / "shifted.npz")
    loaded = tinynet.load(path)
    activation = loaded.layers[0].activation
    assert type(activation) is Shifted and activation == Shifted(gain=1.5, offset=-2)
    assert type(activation.gain) is float and type(activation.offset) is int
    np.testing.assert_array_equal(loaded.forward(X), net.forward(X))
    with np.load(path) as archive:  # one plain array a field, of its own dtype
        assert archive["activation0.gain"].dtype == np.float64
        assert archive["activation0.offset"].dtype == np.int64


def test_an_activation_of_its_own_and_an_optimizers_state_are_kept_together(tmp_path):
    net = network(Shifted(gain=0.5, offset=1))
    net.fit(X, (X[:, :1] > 0).astype(float), epochs=3, lr=0.05, optimizer="adam",
            backend="numpy")
    loaded = tinynet.load(net.save(tmp_path / "trained.npz"))
    assert loaded.layers[0].activation == Shifted(gain=0.5, offset=1)
    assert loaded.optimizer_state.optimizer == net.optimizer_state.optimizer
    np.testing.assert_array_equal(loaded.optimizer_state.values, net.optimizer_state.values)


def test_a_field_named_alpha_is_the_activations_own_not_leaky_relus(tmp_path):
    """Entry ``alphas`` is LeakyReLU's slope, for built-ins only (NaN for an activation of your
    own, whose fields hold its parameters): a negative alpha of its own loads."""
    net = network(Mirrored(alpha=-0.5))
    path = net.save(tmp_path / "mirrored.npz")
    with np.load(path) as archive:
        assert np.isnan(archive["alphas"][0]) and archive["activation0.alpha"] == -0.5
    loaded = tinynet.load(path)
    assert loaded.layers[0].activation == Mirrored(alpha=-0.5)
    np.testing.assert_array_equal(loaded.forward(X), net.forward(X))


def test_networks_of_built_ins_are_written_in_the_formats_older_tinynets_read(tmp_path):
    for net, version in [(network("relu"), 1),
                         (tinynet.mlp([2, 3, 1], bias_init="normal(std=0.1)"), 2)]:
        with np.load(net.save(tmp_path / "net.npz")) as archive:
            assert int(archive["version"]) == version
            assert not [name for name in archive.files if name.startswith("activation_")]


def test_a_file_of_a_custom_class_is_refused_by_a_tinynet_that_reads_up_to_format_3(
        tmp_path, monkeypatch):
    path = network(LookAlikeTanh()).save(tmp_path / "look_alike.npz")
    monkeypatch.setattr(saving, "VERSION", 3)
    assert re.search(r"written in tinynet network format 4; this tinynet reads up to format 3: "
                     r"upgrade tinynet", one_line_refusal(path))


def old_file(path, version, activations, alphas):
    """A network file as tinynet wrote it in format 1, 2 or 3, before format 4: layers of
    sizes 2, 3, 1, each activation by name only."""
    rng = np.random.default_rng(1)
    arrays = {"format": np.array("tinynet-network"), "version": np.array(version),
              "sizes": np.array([2, 3, 1]), "seed": np.array(5),
              "activations": np.array(activations), "alphas": np.array(alphas),
              "inits": np.array(["xavier_uniform"] * 2), "bias_inits": np.array([0.0, 0.0]),
              "W0": rng.normal(size=(3, 2)), "b0": rng.normal(size=3),
              "W1": rng.normal(size=(1, 3)), "b1": rng.normal(size=1)}
    if version >= 2:
        arrays["bias_initializers"] = np.array(["", ""])
    if version >= 3:
        arrays.update(optimizer=np.array("adam"),
                      optimizer_hyperparameters=np.array([0.9, 0.999, 1e-8]),
                      optimizer_state=np.zeros((3, 13)))
    with open(path, "wb") as file:
        np.savez(file, **arrays)
    return arrays


@pytest.mark.parametrize("version", [1, 2, 3])
def test_files_of_formats_1_to_3_load_as_before(tmp_path, version):
    """A look-alike saved before format 4 was written as "tanh": it loads as the built-in, as
    it always did (the file cannot tell)."""
    arrays = old_file(tmp_path / "old.npz", version, ["tanh", "leaky_relu"], [0.0, 0.25])
    loaded = tinynet.load(tmp_path / "old.npz")
    assert [type(layer.activation) for layer in loaded.layers] == [Tanh, LeakyReLU]
    assert loaded.layers[1].activation.alpha == 0.25 and loaded.seed == 5
    for i, layer in enumerate(loaded.layers):
        np.testing.assert_array_equal(layer.W, arrays[f"W{i}"])
        np.testing.assert_array_equal(layer.b, arrays[f"b{i}"])
    assert (loaded.optimizer_state is not None) == (version == 3)


def test_a_custom_activation_in_an_old_format_file_is_refused_not_replaced(tmp_path):
    """A format 1 file naming no built-in (one an old tinynet wrote for a class of its own):
    refused as it was, never loaded as something else."""
    old_file(tmp_path / "old.npz", 1, ["shifted", "sigmoid"], [0.0, 0.0])
    assert "layer 0 cannot be rebuilt: unknown activation 'shifted'" in \
        one_line_refusal(tmp_path / "old.npz")


SWISH = '''
from dataclasses import dataclass

from tinynet.activations import Activation
from tinynet.maths import exp

LOOKED_UP = []


def __getattr__(name):  # PEP 562: runs if anything asks the module for a missing name
    LOOKED_UP.append(name)
    raise AttributeError(name)


@dataclass(frozen=True, repr=False)
class Swish(Activation):
    name = "swish"
    beta: float = 1.0

    def forward_and_derivative(self, z):
        s = 1.0 / (1.0 + exp(-self.beta * z))
        return z * s, s + self.beta * z * s * (1.0 - s)
'''


@pytest.fixture
def swish(tmp_path, monkeypatch):
    """A module of tmp_path's, ``saved_swish``, imported (and forgotten after the test)."""
    (tmp_path / "saved_swish.py").write_text(SWISH)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(sys, "dont_write_bytecode", True)  # an edit is always read again
    try:
        yield importlib.import_module("saved_swish")
    finally:
        sys.modules.pop("saved_swish", None)


def test_a_class_whose_module_is_not_imported_is_refused_and_nothing_is_imported(
        tmp_path, swish):
    net = network(swish.Swish(beta=1.5))
    path = net.save(tmp_path / "swish.npz")
    del sys.modules["saved_swish"]  # a new process, which has not imported it
    message = one_line_refusal(path)
    assert re.search(r"swish.npz: layer 0's activation class 'saved_swish:Swish' is not "
                     r"loaded: .*import saved_swish before loading", message)
    assert "saved_swish" not in sys.modules  # the file's module name was not imported
    sys.modules["saved_swish"] = swish  # imported, as the message says
    loaded = tinynet.load(path)
    assert type(loaded.layers[0].activation) is swish.Swish
    assert loaded.layers[0].activation.beta == 1.5
    np.testing.assert_array_equal(loaded.forward(X), net.forward(X))


@pytest.mark.parametrize("named,message", [
    ("saved_swish:Missing", r"'saved_swish:Missing' is not loaded: module saved_swish has no "
                            r"Missing"),
    ("saved_swish:Swish.beta", "'saved_swish:Swish.beta' names a float, not a class"),
    ("saved_swish:Swish.Inner", "is not loaded: module saved_swish has no Swish.Inner"),
    ("collections:OrderedDict", "'collections:OrderedDict' is not a subclass of "
                                "tinynet.activations.Activation"),
    ("test_saving_custom:NotAnActivation", "is not a subclass of tinynet.activations.Activation"),
    ("tinynet.activations:Activation", "is not a subclass of tinynet.activations.Activation"),
    ("os:system", "'os:system' names a builtin_function_or_method, not a class"),
    ("os:path.join", "'os:path.join' names a function, not a class"),
    ("os:path.nothing", "'os:path.nothing' is not loaded: module os has no path.nothing"),
    ("saved_swish", "'saved_swish' is not of the form module:ClassName"),
    ("saved_swish:Swish()", "is not of the form module:ClassName"),
    ("saved swish:Swish", "is not of the form module:ClassName"),
])
def test_a_file_naming_anything_but_a_loaded_activation_class_is_refused_untouched(
        tmp_path, swish, named, message):
    path = network(swish.Swish()).save(tmp_path / "swish.npz")
    rewrite(path, activation_classes=np.array([named, ""]))
    CONSTRUCTED.clear()
    assert re.search(rf"layer 0's activation class .*{message}", one_line_refusal(path))
    assert CONSTRUCTED == [] and swish.LOOKED_UP == []  # nothing constructed, nothing asked


@pytest.mark.parametrize("value,message", [
    (np.array(np.nan), r"its field 'gain' must be one finite real number, got array\(nan\)"),
    (np.array(-np.inf), r"its field 'gain' must be one finite real number, got array\(-inf\)"),
    (np.array([1.0, 2.0]), r"its field 'gain' must be one finite real number, got array\(\[1"),
    (np.array("1.5"), r"its field 'gain' must be one finite real number, got array\('1.5'"),
    (np.array(True), r"its field 'gain' must be one finite real number, got array\(True\)"),
])
def test_a_tampered_field_is_refused_in_one_line(tmp_path, value, message):
    path = network(Shifted(gain=1.5, offset=2)).save(tmp_path / "shifted.npz")
    rewrite(path, **{"activation0.gain": value})
    assert re.search(rf"shifted.npz: layer 0's activation class "
                     rf"'test_saving_custom:Shifted': {message}", one_line_refusal(path))


@pytest.mark.parametrize("drop,add,message", [
    (["activation0.offset"], {}, r"takes the fields \(gain, offset\) but the file holds "
                                 r"\(gain\)"),
    ([], {"activation0.scale": np.array(2.0)}, r"takes the fields \(gain, offset\) but the file "
                                               r"holds \(gain, offset, scale\)"),
])
def test_fields_missing_or_left_over_are_refused(tmp_path, drop, add, message):
    path = network(Shifted(gain=1.5, offset=2)).save(tmp_path / "shifted.npz")
    rewrite(path, drop, **add)
    assert re.search(message, one_line_refusal(path))


def test_a_constructor_that_refuses_the_fields_is_a_file_format_error(tmp_path):
    path = network(SteeperLeaky(alpha=0.2)).save(tmp_path / "steeper.npz")
    rewrite(path, **{"activation0.alpha": np.array(-1.0)})
    assert re.search(r"layer 0's activation class 'test_saving_custom:SteeperLeaky' cannot be "
                     r"rebuilt from its fields: ValueError: .*alpha must be a finite number "
                     r">= 0.0",
                     one_line_refusal(path))


def with_field(activation, name, value):
    """``activation`` with field ``name`` set to ``value`` after construction (whatever its
    constructor would accept)."""
    object.__setattr__(activation, name, value)
    return activation


def local_class():
    @dataclass(frozen=True, repr=False)
    class Local(Activation):
        name = "local"

        def forward_and_derivative(self, z):
            return z, 1.0

    return Local()


@pytest.mark.parametrize("activation,message", [
    (with_field(Shifted(), "gain", "big"), r"layer 0's activation test_saving_custom:Shifted "
                                           r"cannot be saved: its field 'gain' is 'big' \(str\); "
                                           r"fields must be finite real numbers"),
    (with_field(Shifted(), "gain", np.nan), r"its field 'gain' is nan \(float\)"),
    (with_field(Shifted(), "offset", True), r"its field 'offset' is True \(bool\)"),
    (with_field(Shifted(), "offset", 2**70), r"its field 'offset' is 1180591620717411303424 "
                                             r"\(int\)"),
    (with_field(Shifted(), "gain", np.array([1.0])), r"its field 'gain' is array\(\[1.\]\) "
                                                     r"\(ndarray\)"),
    (Doubling(gain=1.5), r"Doubling cannot be saved: rebuilt from its fields it would be "
                         r"Doubling\(gain=6.0\), not Doubling\(gain=3.0\)"),
    (Unfielded(2.0), r"Unfielded cannot be saved: rebuilt from its fields \(none\) it raises "
                     r"TypeError: .*missing 1 required positional argument: 'beta'"),
    (local_class(), r"test_saving_custom:local_class.<locals>.Local cannot be saved: loading "
                    r"finds a class by module and name among the modules imported, which does "
                    r"not lead back to this one; define it at the top level of a module"),
])
def test_an_activation_that_would_not_load_as_it_is_is_refused_at_save(tmp_path, activation,
                                                                       message):
    with pytest.raises(ValueError) as refused:
        network(activation).save(tmp_path / "net.npz")
    assert re.search(message, str(refused.value)) and "\n" not in str(refused.value)
    assert not list(tmp_path.iterdir())


def test_fields_that_are_not_constructor_arguments_are_recomputed(tmp_path):
    """A field with init=False is derived by the constructor: the file holds the fields the
    constructor takes, and the rebuilt activation derives the rest as the saved one did."""
    path = network(Derived(gain=0.75)).save(tmp_path / "derived.npz")
    with np.load(path) as archive:
        assert sorted(n for n in archive.files if n.startswith("activation0.")) == \
            ["activation0.gain", "activation0.offset"]
    activation = tinynet.load(path).layers[0].activation
    assert type(activation) is Derived and activation.twice == 1.5


@dataclass(frozen=True, repr=False)
class ScriptAct(Activation):
    """A script's ``Act``: φ(z) = gain z."""

    __module__, __qualname__ = "__main__", "Act"  # as if defined in the running script
    name = "act"
    gain: float = 1.0

    def forward_and_derivative(self, z):
        return self.gain * z, self.gain


@dataclass(frozen=True, repr=False)
class OtherScriptAct(Activation):
    """Another script's ``Act``: the same fields, other maths (φ(z) = tanh(gain z))."""

    __module__, __qualname__ = "__main__", "Act"
    name = "act"
    gain: float = 1.0

    def forward_and_derivative(self, z):
        t = tanh(self.gain * z)
        return t, self.gain * (1.0 - t * t)


@dataclass(frozen=True, repr=False)
class ImpostorSwish(Activation):
    """Swish's field (beta), other maths: φ(z) = beta z."""

    name = "swish"
    beta: float = 1.0

    def forward_and_derivative(self, z):
        return self.beta * z, self.beta


def as_script_act(monkeypatch, cls):
    """Make ``cls`` the class the running script calls ``Act`` (``__main__:Act``)."""
    monkeypatch.setattr(sys.modules["__main__"], "Act", cls, raising=False)


def test_a_class_whose_name_now_holds_a_newer_class_says_so_at_save(tmp_path, monkeypatch):
    """A notebook cell run again: the network holds the first class, ``__main__:Act`` the
    second; loading would find the second, so saving refuses, saying what happened."""
    net = network(ScriptAct(gain=2.0))
    as_script_act(monkeypatch, OtherScriptAct)
    with pytest.raises(ValueError, match=r"__main__:Act cannot be saved: that name now holds "
                       r"another class \(was its cell or module run again\?\)") as refused:
        net.save(tmp_path / "net.npz")
    assert "\n" not in str(refused.value) and not list(tmp_path.iterdir())


DIFFERS = "the class of that name here has a definition that differs from the one the network " \
    "was saved with"


def test_another_scripts_class_of_the_saved_name_is_refused_not_loaded(tmp_path, monkeypatch):
    """``__main__:Act`` names whatever the loading script calls Act: one of other maths, with
    the same fields, is refused by its definition's digest."""
    as_script_act(monkeypatch, ScriptAct)
    path = network(ScriptAct(gain=1.5)).save(tmp_path / "act.npz")
    assert type(tinynet.load(path).layers[0].activation) is ScriptAct  # the saving script
    as_script_act(monkeypatch, OtherScriptAct)  # another script, of its own Act
    message = one_line_refusal(path)
    assert f"act.npz: layer 0's activation class '__main__:Act': {DIFFERS}" in message


def test_a_look_alike_installed_under_the_saved_module_name_is_refused(tmp_path, swish,
                                                                       monkeypatch):
    path = network(swish.Swish(beta=1.5)).save(tmp_path / "swish.npz")
    impostor = types.ModuleType("saved_swish")
    impostor.Swish = ImpostorSwish
    monkeypatch.setitem(sys.modules, "saved_swish", impostor)
    assert f"layer 0's activation class 'saved_swish:Swish': {DIFFERS}" in one_line_refusal(path)


def reimported(tmp_path, text):
    """Module ``saved_swish`` written as ``text`` and imported again, as a new process would."""
    (tmp_path / "saved_swish.py").write_text(text)
    del sys.modules["saved_swish"]
    importlib.invalidate_caches()
    return importlib.import_module("saved_swish")


def test_a_class_edited_since_it_was_saved_is_refused(tmp_path, swish):
    """Its fields are the same (beta): only the definition changed, beta dropped from the
    sigmoid."""
    net = network(swish.Swish(beta=1.5))
    path = net.save(tmp_path / "swish.npz")
    edited = SWISH.replace("exp(-self.beta * z)", "exp(-z)")
    assert edited != SWISH
    reimported(tmp_path, edited)
    assert f"layer 0's activation class 'saved_swish:Swish': {DIFFERS}" in one_line_refusal(path)
    reimported(tmp_path, SWISH)  # the definition it was saved with: loads again
    np.testing.assert_array_equal(tinynet.load(path).forward(X), net.forward(X))


REFORMATTED = SWISH.replace('''    def forward_and_derivative(self, z):
        s = 1.0 / (1.0 + exp(-self.beta * z))
        return z * s, s + self.beta * z * s * (1.0 - s)
''', '''    def forward_and_derivative( self,z ):
        """Swish, and its derivative."""  # a docstring and comments are no maths


        s = 1.0/( 1.0+exp( -self.beta*z ) )   # the sigmoid of beta z
        return (z*s,
                s + self.beta*z*s*(1.0 - s))
''')


def test_the_same_definition_reformatted_still_loads(tmp_path, swish):
    net = network(swish.Swish(beta=1.5))
    path = net.save(tmp_path / "swish.npz")
    assert REFORMATTED != SWISH
    module = reimported(tmp_path, REFORMATTED)
    loaded = tinynet.load(path)
    assert type(loaded.layers[0].activation) is module.Swish
    np.testing.assert_array_equal(loaded.forward(X), net.forward(X))


@dataclass(frozen=True, repr=False)
class ShiftedChild(Shifted):
    """Inherits Shifted's forward_and_derivative."""

    name = "shifted_child"


@dataclass(frozen=True, repr=False)
class NumPyRamp(Activation):
    """NumPy's forward and derivative (no forward_and_derivative)."""

    name = "numpy_ramp"

    def forward(self, z):
        return np.maximum(z, 0.0)

    def derivative(self, z):
        return (z > 0).astype(float)


@dataclass(frozen=True, repr=False)
class NumPyRampOtherDerivative(NumPyRamp):
    """The same forward, another derivative."""

    def derivative(self, z):
        return (z >= 0).astype(float)


def test_the_digest_is_of_the_methods_the_class_resolves_whoever_defines_them(tmp_path):
    digest = saving_activations.digest
    assert digest(ShiftedChild) == digest(Shifted) != digest(LookAlikeTanh)
    assert digest(NumPyRampOtherDerivative) != digest(NumPyRamp)  # derivative counts too
    net = network(ShiftedChild(gain=2.0))
    loaded = tinynet.load(net.save(tmp_path / "child.npz"))
    assert type(loaded.layers[0].activation) is ShiftedChild
    np.testing.assert_array_equal(loaded.forward(X), net.forward(X))


def test_a_class_whose_source_cannot_be_read_is_refused_at_save(tmp_path, monkeypatch):
    """A class typed at a prompt or in ``python -c``: no file could be checked on load."""
    module = types.ModuleType("typed_at_a_prompt")
    monkeypatch.setitem(sys.modules, "typed_at_a_prompt", module)
    exec(compile(SWISH, "<string>", "exec"), vars(module))
    with pytest.raises(ValueError) as refused:
        network(module.Swish()).save(tmp_path / "net.npz")
    message = str(refused.value)
    assert re.search(r"layer 0's activation typed_at_a_prompt:Swish cannot be saved: the source "
                     r"of its forward_and_derivative cannot be read \(was it typed at a prompt "
                     r"or in python -c\?\).*so loading could not check that the class it finds "
                     r"computes what the network was trained with", message)
    assert "\n" not in message and not list(tmp_path.iterdir())


def test_a_class_whose_source_cannot_be_read_on_load_is_refused(tmp_path, swish, monkeypatch):
    """The loading process typed the class at a prompt: its definition cannot be checked."""
    path = network(swish.Swish(beta=1.5)).save(tmp_path / "swish.npz")
    typed = types.ModuleType("saved_swish")
    monkeypatch.setitem(sys.modules, "saved_swish", typed)
    exec(compile(SWISH, "<string>", "exec"), vars(typed))
    assert re.search(r"layer 0's activation class 'saved_swish:Swish' cannot be checked against "
                     r"the definition the network was saved with: the source of its "
                     r"forward_and_derivative cannot be read", one_line_refusal(path))


def test_a_file_of_a_class_but_no_digests_is_refused(tmp_path):
    path = network(Shifted()).save(tmp_path / "shifted.npz")
    rewrite(path, drop=["activation_digests"])
    assert "describes 2 layers but its entry 'activation_digests' is None" in \
        one_line_refusal(path)
