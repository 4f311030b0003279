"""The compiled backend builds what the definitions say now, and only what it can build
(issue 39): kernels keyed by the maths as written, so that a method edited in place compiles
anew; integers numba cannot compute refused by name before anything runs; names of any text
written safely into the kernels' sources."""

import ast
import gc
import importlib.util
import linecache
import types
import weakref
from dataclasses import dataclass

import numba
import numpy as np
import pytest

import tinynet
from tinynet.activations import Activation
from tinynet.compiled import codegen, fused, kit, unrolled
from tinynet.compiled.render import NotCompilableError
from tinynet.losses import MSE
from tinynet.maths import where
from tinynet.packing import layout

from helpers import Scaled

X, Y = tinynet.data.xor()

SCALING = '''\
from dataclasses import dataclass

from tinynet.activations import Activation


@dataclass(frozen=True, repr=False)
class Scaling(Activation):
    name = "scaling"
    factor: float = 1.0

    def forward_and_derivative(self, z):
        return {k} * self.factor * z, {k} * self.factor
'''


def scaling_module(path, k):
    """The module of ``path``, written with slope ``k`` and imported (again): what IPython's
    ``%autoreload`` does when the file is saved."""
    path.write_text(SCALING.format(k=k))
    linecache.checkcache(str(path))
    spec = importlib.util.spec_from_file_location("scaling_activation", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def edit_in_place(path, cls, k, how):
    """Give ``cls`` slope ``k`` as ``%autoreload`` does: its method's code replaced, or the
    method itself."""
    new = scaling_module(path, k).Scaling.forward_and_derivative
    if how == "code":
        cls.forward_and_derivative.__code__ = new.__code__
    else:
        cls.forward_and_derivative = new


@pytest.mark.parametrize("how", ["code", "method"])
def test_a_method_edited_in_place_gets_kernels_of_its_own(tmp_path, monkeypatch, how):
    """Every in-process kernel cache (the kit, the fused and the unrolled kernels) is keyed by
    the definitions as written: after the edit each writes, and would compile, a new source,
    where it used to hand back the kernel of the old maths."""
    written = []

    def load_module(text, directory):
        written.append(text)
        return types.SimpleNamespace(forward_network=None)

    def kernel(text, entry, net_layout, directory, what):
        written.append(text)
        return lambda *arguments: None

    monkeypatch.setattr(kit, "load_module", load_module)
    monkeypatch.setattr(codegen, "kernel", kernel)
    path = tmp_path / "scaling_activation.py"
    Scaling = scaling_module(path, 2.0).Scaling
    net = tinynet.mlp([2, 1], output=Scaling(), init="lecun_normal")

    def build():
        """Ask each cache for its kernel of ``net``; return the sources written meanwhile."""
        maths = kit.maths_of(net, MSE())
        net_layout = kit.layout_for(layout(net), maths)
        settings = types.SimpleNamespace(update_during_backward=False)
        count = len(tinynet.packing.pack(net))
        kit.load(maths)
        fused.fit_network(np.zeros(count), np.zeros((0, count)), np.zeros(0), net_layout,
                          maths, X, Y, 0, settings, ())
        unrolled.fit_lanes(np.zeros((count, 1)), np.zeros((0, count, 1)), np.zeros(0),
                           net_layout, maths, X, Y, np.zeros(1, np.int64), settings,
                           [np.zeros(1)], np.zeros((1, 4, 1)), cores=1)
        new, written[:] = list(written), []
        return new

    before = build()
    assert len(before) == 3 and all("2.0 * parameters" in text or "2.0 * param" in text
                                    for text in before)
    assert build() == []  # loaded once per process
    edit_in_place(path, Scaling, 3.0, how)
    after = build()
    assert len(after) == 3
    assert all("3.0 *" in text and "2.0 * param" not in text for text in after)
    np.testing.assert_array_equal(Scaling(2.0).forward(np.array([1.0])), [6.0])  # NumPy's


@pytest.mark.slow
def test_a_method_edited_in_place_trains_its_new_maths_compiled(tmp_path):
    path = tmp_path / "scaling_activation.py"
    Scaling = scaling_module(path, 2.0).Scaling
    net = tinynet.mlp([2, 3, 1], activation=Scaling(0.5), output=SquaredLocal(),
                      init="lecun_normal", seed=1)  # an integer local's arithmetic, as NumPy's
    before = tinynet.predict(net, X, "numpy")
    np.testing.assert_allclose(tinynet.predict(net, X), before, rtol=1e-12)
    edit_in_place(path, Scaling, 3.0, "code")
    edited = tinynet.predict(net, X, "numpy")
    assert not np.allclose(edited, before)
    np.testing.assert_allclose(tinynet.predict(net, X), edited, rtol=1e-12)


# --- integers numba computes in 64 bits -----------------------------------------------------

@dataclass(frozen=True, repr=False)
class Huge(Activation):
    name = "huge"

    def forward_and_derivative(self, z):
        scale = 2 ** 64
        return z * scale, scale


@dataclass(frozen=True, repr=False)
class Wrapping(Activation):
    """2**200 is not folded into a constant by Python: numba computes it in 64 bits, as 0."""

    name = "wrapping"

    def forward_and_derivative(self, z):
        return z * 2 ** 200, 1.0


@dataclass(frozen=True, repr=False)
class Overflowing(Activation):
    name = "overflowing"

    def forward_and_derivative(self, z):
        return z * 3 ** 41, 1.0


@dataclass(frozen=True, repr=False)
class LongLiteral(Activation):
    name = "long_literal"

    def forward_and_derivative(self, z):
        return z, 18446744073709551616 - 18446744073709551615


@dataclass(frozen=True, repr=False)
class SquaredHuge(Activation):
    """Each line's integers fit in 64 bits; a * a does not, and numba's wraps to 0."""

    name = "squared_huge"

    def forward_and_derivative(self, z):
        a = 2 ** 40
        return z * (a * a) * 2.0 ** -80, 1.0


@dataclass(frozen=True, repr=False)
class AliasedHuge(Activation):
    name = "aliased_huge"

    def forward_and_derivative(self, z):
        a = 2 ** 40
        b = a
        return z * (b * a) * 2.0 ** -80, 1.0


@dataclass(frozen=True, repr=False)
class SquaredLocal(Activation):
    """An integer local whose square fits in 64 bits: φ(z) = z."""

    name = "squared_local"

    def forward_and_derivative(self, z):
        a = 2 ** 20
        return z * (a * a) * 2.0 ** -40, 1.0


@dataclass(frozen=True, repr=False)
class Unbounded(Activation):
    """An integer of a value not known until it runs (2 or 1), in integer arithmetic."""

    name = "unbounded"

    def forward_and_derivative(self, z):
        k = where(z > 0, 2, 1)
        return z * (k * 3), 1.0


@dataclass(frozen=True, repr=False)
class CountedComparisons(Activation):
    """True + True: 2 in numba, True (logical or) in NumPy."""

    name = "counted_comparisons"

    def forward_and_derivative(self, z):
        return z * ((z > 0) + (z > 0)), 1.0


@dataclass(frozen=True, repr=False)
class SmallIntegers(Activation):
    name = "small_integers"

    def forward_and_derivative(self, z):
        return z * 2 ** 62 * 2 ** -70, -(2 ** 3) * 0 + 1


@pytest.mark.parametrize("activation,integer", [
    (Huge(), r"2 \*\* 64"),
    (Overflowing(), r"3 \*\* 41 = 36472996377170786403"),
    (Wrapping(), r"2 \*\* 200"),
    (LongLiteral(), r"18446744073709551616"),
    (SquaredHuge(), r"a \* a = 1208925819614629174706176"),
    (AliasedHuge(), r"b \* a = 1208925819614629174706176"),
], ids=lambda value: getattr(value, "name", ""))
def test_an_integer_numba_cannot_compute_is_refused_before_anything_runs(activation, integer):
    net = tinynet.mlp([2, 1], output=activation, init="lecun_normal")
    name = type(activation).__name__
    message = (f"^backend 'numba' cannot run layers\\[0\\]'s activation {activation.name} "
               f"\\({name}\\): {name}.forward_and_derivative \\(line \\d+\\): its integer "
               f"{integer} is outside the 64-bit integers .*backend='numpy'$")
    with pytest.raises(NotCompilableError, match=message):
        tinynet.predict(net, X)
    assert np.all(np.isfinite(tinynet.predict(net, X, backend="numpy")))  # NumPy runs it


def test_integers_within_64_bits_are_written_as_they_are():
    """(The compiled SquaredLocal agrees with NumPy's: the slow test above.)"""
    kit.check(tinynet.mlp([2, 1], output=SmallIntegers(), init="lecun_normal"), MSE())
    assert "z * 2 ** 62 * 2 ** (-70)" in kit.source(kit.Maths([SmallIntegers()], MSE()))
    kit.check(tinynet.mlp([2, 1], output=SquaredLocal(), init="lecun_normal"), MSE())
    text = kit.source(kit.Maths([SquaredLocal()], MSE()))
    assert "a__0 = 2 ** 20" in text and "z * (a__0 * a__0) * 2.0 ** (-40)" in text


@pytest.mark.parametrize("activation,computed", [
    (Unbounded(), r"k \* 3"),
    (CountedComparisons(), r"\(z > 0\) \+ \(z > 0\)"),
], ids=lambda value: getattr(value, "name", ""))
def test_integer_arithmetic_the_checker_cannot_bound_is_refused(activation, computed):
    """k is 2 or 1, a comparison 1 or 0, integers whose value is known only as it runs:
    arithmetic on them is refused in one line, not left to numba's 64 bits (or to its
    True + True, which NumPy computes as True)."""
    net = tinynet.mlp([2, 1], output=activation, init="lecun_normal")
    name = type(activation).__name__
    with pytest.raises(NotCompilableError, match=(
            f"^backend 'numba' cannot run layers\\[0\\]'s activation {activation.name} "
            f"\\({name}\\): {name}.forward_and_derivative \\(line \\d+\\): it computes "
            f"{computed} in integers from a value it cannot bound \\(a comparison, or a where "
            r"of integers\): write the integers as floats \(1.0, not 1\); .*backend='numpy'$")):
        tinynet.predict(net, X)
    assert np.all(np.isfinite(tinynet.predict(net, X, backend="numpy")))  # NumPy runs it


# --- names written into the kernels' sources ------------------------------------------------

@dataclass(frozen=True, repr=False)
class OddlyNamed(Activation):
    name = 'tri"""ple\nline\\ "quoted" σ'

    def forward_and_derivative(self, z):
        return z, 1.0


@dataclass(frozen=True, repr=False)
class OddlyNamedLoss(MSE):
    name = 'loss"""\n'


def test_any_name_is_written_safely_into_the_generated_sources():
    net = tinynet.mlp([2, 1], output=OddlyNamed(), init="lecun_normal")
    maths = kit.maths_of(net, OddlyNamedLoss())
    net_layout = kit.layout_for(layout(net), maths)
    docstrings = []
    for text in (kit.source(maths), fused.source(net_layout, maths, False),
                 unrolled.source(net_layout, maths, False, unrolled.LANES)):
        tree = ast.parse(text)  # a SyntaxError before the names were escaped
        docstrings += [ast.get_docstring(node, clean=False) or "" for node in ast.walk(tree)
                       if isinstance(node, (ast.Module, ast.FunctionDef))]
    assert f"{OddlyNamed.name}: OddlyNamed.forward_and_derivative" in docstrings  # as it is
    assert f"{OddlyNamedLoss.name}: OddlyNamedLoss.value_and_gradient" in docstrings
    headers = [doc for doc in docstrings if doc.startswith("Generated by tinynet.compiled.")]
    assert len(headers) == 3
    assert all(OddlyNamedLoss.name in doc for doc in headers)
    assert all(OddlyNamed.name in doc or repr(OddlyNamed.name) in doc for doc in headers)


NUMBA_SAYS = ("Failed in nopython mode pipeline (step: nopython frontend)\n\x1b[1m\x1b[1mInt value "
              "is too large: 18446744073709551616\n\x1b[1m\nFile \"tinynet_kernel_0.py\", line "
              "9:\x1b[0m\n\x1b[1mdef activation_5(z, parameters):\n    <source elided>\n"
              "    scale__0 = 2 ** 64\n    \x1b[1m^\x1b[0m\x1b[0m\n\x1b[0m\nDuring: typing")


@pytest.mark.parametrize("entry", ["predict", "fit", "fit_ensemble"])
def test_what_numba_cannot_type_is_refused_by_name_not_raised_raw(monkeypatch, entry):
    """Whatever the renderer lets through that numba cannot type (its TypingError comes as
    the kernel compiles, at its first call) is refused in one line, naming the definitions."""
    def untypable(*arguments):
        raise numba.core.errors.TypingError(NUMBA_SAYS)

    monkeypatch.setattr(kit, "entry", lambda maths, name: untypable)
    net = tinynet.mlp([2, 3, 1], activation=Scaled(2.0), init="lecun_normal")
    run = {"predict": lambda: tinynet.predict(net, X),
           "fit": lambda: net.fit(X, Y, epochs=1, lr=0.1),
           "fit_ensemble": lambda: tinynet.fit_ensemble([net], X, Y, epochs=1, lr=0.1)}[entry]
    with pytest.raises(NotCompilableError, match=r"^backend 'numba' cannot run scaled "
                                                 r"\(Scaled\), mse \(MSE\), sgd \(SGD\): numba "
                                                 r"cannot type the kernel written from them "
                                                 r"\(Int value is too large: "
                                                 r"18446744073709551616, at scale__0 = 2 \*\* "
                                                 r"64\); pass backend='numpy'$"):
        run()


def test_the_definitions_kernels_are_keyed_by_are_cached_for_a_bounded_number_of_classes():
    """A kernel's key looks each definition's text up by class: a notebook that makes
    classes over and over does not keep every one alive."""
    first = type("Scaled0", (Scaled,), {})
    kit.Maths([first()], MSE()).key()
    alive = weakref.ref(first)
    del first
    for index in range(1, 300):
        kit.Maths([type(f"Scaled{index}", (Scaled,), {})()], MSE()).key()
    gc.collect()
    assert alive() is None
