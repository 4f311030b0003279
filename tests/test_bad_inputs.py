"""A catalogue of the wrong inputs a beginner can type, over every public entry point.

Each must raise a specific exception whose message names the argument, the value and what was
expected (checked here by a pattern on the message), and nothing may be coerced silently.
"""

from dataclasses import dataclass

import numpy as np
import pytest

import tinynet
from tinynet import Layer, Network, ShapeError, TooLargeError, UnknownNameError

from tinynet.validation import FileFormatError
from tinynet.diagnostics import propagate
from tinynet.activations import Activation, LeakyReLU
from tinynet.losses import MSE
from tinynet.xor import Arm, Setup, figures, run_study, solves
from tinynet.xor.outcome import allowed_wrong
from tinynet.xor.depth import DEPTH_SETUP, DepthStudy, run_depth_study
from tinynet.xor.task import Task

from helpers import Scaled, Softplus, page

X, Y = tinynet.data.xor()


def one_cell_depth_study() -> DepthStudy:
    """A depth study of one arm ("He") at one depth, made by hand."""
    return DepthStudy(setup=DEPTH_SETUP, depths=[1], arms=["He"], n=1, successes=[[1]],
                      intervals=[[(0.2, 1.0)]], moments=[[1.0]], measured=[[1.0]],
                      held_out=[[None]])


def net():
    return tinynet.mlp([2, 3, 1], seed=0)


def fit(**overrides):
    arguments = dict(X=X, y=Y, epochs=1, lr=0.1)
    arguments.update(overrides)
    return net().fit(arguments.pop("X"), arguments.pop("y"), **arguments)


@dataclass(frozen=True, repr=False)
class OwnLeaky(LeakyReLU):
    """A user's LeakyReLU subclass: a function of its own, written with NumPy."""

    def forward(self, z):
        return np.log1p(np.exp(z))

    def derivative(self, z):
        return 1 / (1 + np.exp(-z))


@dataclass(frozen=True, repr=False)
class Huge(Activation):
    """An integer numba computes in 64 bits: 2**64, which Python folds into a constant."""

    name = "huge"

    def forward_and_derivative(self, z):
        return z * 2 ** 64, 1.0


@dataclass(frozen=True, repr=False)
class WeightedMSE(MSE):
    """A user's loss with a parameter."""

    name = "weighted_mse"
    weight: float = 1.0

    def value_and_gradient(self, y_hat, y, batch):
        diff = y_hat - y
        return self.weight * diff * diff, self.weight * 2.0 * diff / batch


def second_network():
    layers = [Layer(2, 3), Layer(3, 1, activation="sigmoid")]
    first = Network(layers, seed=0)
    return first, Network(layers, seed=1)  # while the first is alive


def raising_initializer():
    @tinynet.init.register("boom")
    def boom(shape, rng):
        raise RuntimeError("boom")
    return Layer(2, 3, init="boom")


def custom_net():
    return Network([Layer(2, 3, activation=Softplus(), init="lecun_normal"),
                    Layer(3, 1, activation="sigmoid")])


def classes(net=None, **overrides):
    """A 3-class softmax network fitted on labels (cross-entropy), with overrides."""
    arguments = dict(X=X, y=np.array([0, 1, 2, 1]), epochs=1, lr=0.1, loss="cross_entropy")
    arguments.update(overrides)
    net = net or tinynet.mlp([2, 3, 3], output="softmax", seed=0)
    return net.fit(arguments.pop("X"), arguments.pop("y"), **arguments)


def ensemble(**overrides):
    arguments = dict(networks=[net()], X=X, y=Y, epochs=1, lr=0.1)
    arguments.update(overrides)
    return tinynet.fit_ensemble(arguments.pop("networks"), arguments.pop("X"),
                                arguments.pop("y"), **arguments)


CATALOGUE = [
    # Layer
    ("layer n_in zero", lambda: Layer(0, 2), ValueError, r"n_in must be an integer >= 1, got 0"),
    ("layer n_out negative", lambda: Layer(2, -3), ValueError, r"n_out must be .* got -3"),
    ("layer n_in float", lambda: Layer(2.0, 2), TypeError, r"n_in must be an integer .*float"),
    ("layer n_out bool", lambda: Layer(2, True), TypeError, r"n_out must be an integer .*bool"),
    ("layer unknown activation", lambda: Layer(2, 2, activation="softsign"), UnknownNameError,
     r"unknown activation 'softsign'; expected one of: identity, leaky_relu"),
    ("layer alpha negative", lambda: Layer(2, 2, alpha=-0.1), ValueError,
     r"alpha must be a finite number >= 0.0, got -0.1"),
    ("layer alpha nan", lambda: Layer(2, 2, alpha=float("nan")), ValueError,
     r"alpha must be a finite number >= 0.0, got nan"),
    ("layer unknown init", lambda: Layer(2, 2, init="xavier"), UnknownNameError,
     r"unknown initializer 'xavier'.*did you mean"),
    ("layer init not callable", lambda: Layer(2, 2, init=3.0), TypeError,
     r"init must be an initializer name, an Initializer or a function"),
    ("layer bias_init inf", lambda: Layer(2, 2, bias_init=float("inf")), ValueError,
     r"bias_init must be a finite number, got inf"),
    ("layer bias_init a list", lambda: Layer(2, 2, bias_init=[0.1, 0.2]), TypeError,
     r"bias_init must be a number or an initializer .* got \[0.1, 0.2\] of type list"),
    ("layer bias_init unknown", lambda: Layer(2, 2, bias_init="randn"), UnknownNameError,
     r"unknown initializer 'randn'"),
    ("layer bias_init wrong shape", lambda: Layer(2, 3, bias_init=lambda shape, rng: np.zeros(3)),
     ValueError, r"initializer '<lambda>' returned shape \(3,\), expected \(3, 1\)"),
    ("layer init wrong shape", lambda: Layer(3, 2, init=lambda shape, rng: np.zeros((3, 2))),
     ValueError, r"initializer '<lambda>' returned shape \(3, 2\), expected \(2, 3\)"),
    ("layer init not finite", lambda: Layer(2, 2, init=tinynet.init.FunctionInitializer(
        "nan_init", lambda shape, rng: np.full(shape, np.nan))), ValueError,
     r"'nan_init' must return finite real numbers"),
    ("layer forward list", lambda: Layer(2, 3).forward([[1.0, 2.0]]), TypeError,
     r"layer input X must be a float64 NumPy array, got list"),
    ("layer forward complex", lambda: Layer(2, 3).forward(np.ones((1, 2), dtype=complex)),
     TypeError, r"float64 NumPy array, got ndarray of dtype complex128"),
    ("layer forward width", lambda: Layer(2, 3).forward(np.ones((1, 3))), ShapeError,
     r"layer input must have shape \(batch, 2\), got \(1, 3\)"),
    ("leaky_relu alpha inf", lambda: LeakyReLU(float("inf")), ValueError,
     r"LeakyReLU's alpha must be a finite number, got inf"),
    ("layer rng negative", lambda: Layer(2, 2, rng=-1), ValueError,
     r"rng must be an integer from 0 to 9223372036854775807, got -1"),
    # Network and mlp
    ("network empty", lambda: Network([]), ValueError, r"layers must hold at least one Layer"),
    ("network not layers", lambda: Network([Layer(2, 2), 5]), TypeError,
     r"layers\[1\] must be a tinynet Layer or Residual, got 5"),
    ("network chain", lambda: Network([Layer(2, 3), Layer(2, 1)]), ShapeError,
     r"layers\[1\] takes 2 inputs but layers\[0\] gives 3 outputs"),
    ("network same layer twice", lambda: (lambda layer: Network([layer, layer]))(Layer(2, 2)),
     ValueError, r"layers\[1\] is the same Layer object as layers\[0\]"),
    ("network seed negative", lambda: Network([Layer(2, 2)], seed=-5), ValueError,
     r"seed must be an integer from 0 to 9223372036854775807, got -5"),
    ("network seed too big", lambda: Network([Layer(2, 2)], seed=2**63), ValueError,
     r"seed must be an integer from 0 to 9223372036854775807, got 9223372036854775808"),
    ("mlp sizes too short", lambda: tinynet.mlp([2]), ValueError,
     r"sizes must be a sequence of at least two layer sizes such as \[2, 2, 1\], got \[2\]"),
    ("mlp sizes a string", lambda: tinynet.mlp("2,2,1"), ValueError,
     r"sizes must be a sequence .* got '2,2,1'"),
    ("mlp zero width", lambda: tinynet.mlp([2, 0, 1]), ValueError, r"sizes\[1\] must be .* got 0"),
    ("mlp unknown output", lambda: tinynet.mlp([2, 1], output="softsign"), UnknownNameError,
     r"unknown activation 'softsign'"),
    # forward and predict
    ("forward 1-D X", lambda: net().forward(np.ones(2)), ShapeError,
     r"X must be 2-D with shape \(batch, features\), got shape \(2,\)"),
    ("forward 3-D X", lambda: net().forward(np.ones((1, 1, 2))), ShapeError,
     r"X must be 2-D .* got shape \(1, 1, 2\)"),
    ("forward wrong width", lambda: net().forward(np.ones((4, 3))), ShapeError,
     r"X must have 2 columns \(the network's input size\), got shape \(4, 3\)"),
    ("forward strings", lambda: net().forward([["a", "b"]]), TypeError,
     r"X must hold real numbers, got an array of dtype <U1"),
    ("forward complex", lambda: net().forward(np.ones((1, 2)) * 1j), TypeError,
     r"X must hold real numbers.*complex128"),
    ("forward objects", lambda: net().forward(np.array([[None, 1]])), TypeError,
     r"X must hold real numbers.*object"),
    ("predict wrong width", lambda: net().predict(np.ones((2, 3))), ShapeError,
     r"X must have 2 columns \(the network's input size\), got shape \(2, 3\)"),
    ("predict unknown backend", lambda: net().predict(X, backend="numbaa"), UnknownNameError,
     r"unknown backend 'numbaa'.*did you mean 'numba'"),
    # fit
    ("fit empty data", lambda: fit(X=np.ones((0, 2)), y=np.ones((0, 1))), ShapeError,
     r"X must hold at least one sample, got shape \(0, 2\)"),
    ("fit nan X", lambda: fit(X=[[0, 0], [0, np.nan], [1, 0], [1, 1]]), ValueError,
     r"X must be finite, got nan at index \(1, 1\)"),
    ("fit inf y", lambda: fit(y=[[0], [1], [np.inf], [0]]), ValueError,
     r"y must be finite, got inf at index \(2, 0\)"),
    ("fit y rows", lambda: fit(y=np.ones((3, 1))), ShapeError,
     r"X and y must have the same number of samples, got X \(4, 2\) and y \(3, 1\)"),
    ("fit y 1-D rows", lambda: fit(y=np.ones(3)), ShapeError, r"got X \(4, 2\) and y \(3,\)"),
    ("fit y too wide", lambda: fit(y=np.ones((4, 2))), ShapeError,
     r"y must have 1 columns \(the network's output size\), got shape \(4, 2\)"),
    ("fit y complex", lambda: fit(y=np.ones((4, 1)) * 1j), TypeError, r"y must hold real"),
    ("fit X wrong width", lambda: fit(X=np.ones((4, 3))), ShapeError,
     r"X must have 2 columns \(the network's input size\), got shape \(4, 3\)"),
    ("fit X strings", lambda: fit(X=np.array([["a", "b"]] * 4)), TypeError,
     r"X must hold real numbers, got an array of dtype <U1"),
    ("fit epochs zero", lambda: fit(epochs=0), ValueError, r"epochs must be an integer from 1 to 9007199254740992, got 0"),
    ("fit epochs float", lambda: fit(epochs=10.0), TypeError,
     r"epochs must be an integer from 1 to 9007199254740992, got 10.0 of type float"),
    ("fit lr zero", lambda: fit(lr=0), ValueError, r"lr must be a finite number > 0.0, got 0.0"),
    ("fit lr negative", lambda: fit(lr=-0.5), ValueError, r"lr must be .* got -0.5"),
    ("fit lr inf", lambda: fit(lr=float("inf")), ValueError,
     r"lr must be a finite number > 0.0, got inf"),
    ("fit lr nan", lambda: fit(lr=float("nan")), ValueError,
     r"lr must be a finite number > 0.0, got nan"),
    ("fit lr string", lambda: fit(lr="0.1"), TypeError, r"lr must be a real number, got '0.1'"),
    ("fit batch zero", lambda: fit(batch_size=0), ValueError,
     r"batch_size must be an integer >= 1, got 0"),
    ("fit batch too big", lambda: fit(batch_size=5), ValueError,
     r"batch_size must be at most the number of samples \(4\), got 5"),
    ("fit shuffle string", lambda: fit(shuffle="no"), TypeError,
     r"shuffle must be True or False, got 'no'"),
    ("fit seed negative", lambda: fit(seed=-1), ValueError,
     r"seed must be an integer from 0 to 9223372036854775807, got -1"),
    ("fit unknown backend", lambda: fit(backend="torch"), UnknownNameError,
     r"unknown backend 'torch'; expected one of: numba, numpy"),
    ("fit unknown update", lambda: fit(update="before_backward"), UnknownNameError,
     r"unknown update 'before_backward'; expected one of: after_backward, during_backward"),
    ("fit print_every zero", lambda: fit(print_every=0), ValueError,
     r"print_every must be an integer from 1 to 9007199254740992, got 0"),
    ("fit threshold nan", lambda: fit(threshold=float("nan")), ValueError,
     r"threshold must be a finite number, got nan"),
    ("fit threshold string", lambda: fit(threshold="0.5"), TypeError,
     r"threshold must be a real number, got '0.5'"),
    ("fit record_every zero", lambda: fit(record_every=0), ValueError,
     r"record_every must be an integer from 1 to 9007199254740992, got 0"),
    ("fit record_every float", lambda: fit(record_every=1.5), TypeError,
     r"record_every must be an integer from 1 to 9007199254740992, got 1.5 of type float"),
    ("fit not a network", lambda: tinynet.fit("net", X, Y, epochs=1, lr=0.1), TypeError,
     r"net must be a tinynet Network, got 'net' of type str"),
    ("predict not a network", lambda: tinynet.predict([net()], X), TypeError,
     r"net must be a tinynet Network, got a list$"),
    ("save not a network", lambda: tinynet.save(None, "x.npz"), TypeError,
     r"net must be a tinynet Network, got None of type NoneType"),
    ("fit own activation on numba", lambda: custom_net().fit(X, Y, epochs=1, lr=0.1),
     ValueError, r"^backend 'numba' cannot run layers\[0\]'s activation softplus \(Softplus\): "
                 r"it defines forward and derivative, not forward_and_derivative written with "
                 r"tinynet.maths, which the compiled kernels are built from; pass "
                 r"backend='numpy'$"),
    ("predict own activation on numba", lambda: custom_net().predict(X), ValueError,
     r"cannot run layers\[0\]'s activation softplus"),
    # ensembles
    ("ensemble empty", lambda: ensemble(networks=[]), ValueError,
     r"networks must hold at least one Network, got an empty sequence"),
    ("ensemble not networks", lambda: ensemble(networks=[net(), "net"]), TypeError,
     r"networks\[1\] must be a tinynet Network, got 'net'"),
    ("ensemble mixed shapes", lambda: ensemble(networks=[net(), tinynet.mlp([2, 4, 1])]),
     ShapeError, r"networks\[1\] \(2-4-1.*differs from networks\[0\] \(2-3-1"),
    ("ensemble mixed activations",
     lambda: ensemble(networks=[net(), tinynet.mlp([2, 3, 1], activation="tanh")]), ShapeError,
     r"share one shape and one set of activations"),
    ("ensemble same network twice", lambda: (lambda n: ensemble(networks=[n, n]))(net()),
     ValueError, r"networks\[1\] is the same Network object as networks\[0\]"),
    ("ensemble record_every zero", lambda: ensemble(record_every=0), ValueError,
     r"record_every must be an integer from 1 to 9007199254740992, got 0"),
    ("ensemble own activation on numba", lambda: ensemble(networks=[custom_net()]), ValueError,
     r"backend 'numba' cannot run layers\[0\]'s activation softplus"),
    ("ensemble seeds count", lambda: ensemble(seeds=[1, 2]), ValueError,
     r"seeds must give one seed per network \(1\), got 2"),
    ("ensemble seeds not a sequence", lambda: ensemble(seeds=7), TypeError,
     r"seeds must be a sequence of integer seeds, got 7"),
    ("ensemble seed negative", lambda: ensemble(seeds=[-4]), ValueError,
     r"seeds\[0\] must be an integer from 0 to 9223372036854775807, got -4"),
    ("ensemble epochs zero", lambda: ensemble(epochs=0), ValueError,
     r"epochs must be an integer from 1 to 9007199254740992, got 0"),
    ("ensemble lr negative", lambda: ensemble(lr=-1.0), ValueError,
     r"lr must be a finite number > 0.0, got -1.0"),
    ("ensemble batch zero", lambda: ensemble(batch_size=0), ValueError,
     r"batch_size must be an integer >= 1, got 0"),
    ("ensemble bad y", lambda: ensemble(y=np.ones((4, 3))), ShapeError,
     r"y must have 1 columns \(the network's output size\), got shape \(4, 3\)"),
    ("ensemble unknown backend", lambda: ensemble(backend="nmba"), UnknownNameError,
     r"unknown backend 'nmba'; expected one of: numba, numpy \(did you mean 'numba'\?\)"),
    ("ensemble progress not callable", lambda: ensemble(progress=5), TypeError,
     r"progress must be a function of the number of epochs done, or None; got 5"),
    # registry
    ("registry unknown name", lambda: tinynet.init.get("lecun"), UnknownNameError,
     r"unknown initializer 'lecun'.*did you mean 'lecun_"),
    ("registry bad spec", lambda: tinynet.init.get("normal(std=)"), ValueError,
     r"not of the form name or name\(key=value, ...\)"),
    ("registry bad parameter", lambda: tinynet.init.get("normal(mean=1)"), TypeError,
     r"'normal' got unknown parameter\(s\) mean; it accepts std"),
    ("registry bad value", lambda: tinynet.init.get("orthogonal(gain=0)"), ValueError,
     r"gain must be a finite number > 0.0, got 0.0"),
    ("registry code in spec", lambda: tinynet.init.get("normal(std=open('x'))"), ValueError,
     r"must be a literal number or string"),
    ("registry bad name", lambda: tinynet.init.register("my-init", lambda s, r: 0), ValueError,
     r"name must be a Python identifier"),
    ("registry duplicate", lambda: tinynet.init.register("normal", lambda s, r: 0), ValueError,
     r"'normal' is already registered"),
    ("registry not callable", lambda: tinynet.init.register("thing", 42), TypeError,
     r"initializer must be an Initializer or a function"),
    ("gain unknown activation", lambda: tinynet.init.calculate_gain("softplus"), UnknownNameError,
     r"unknown activation 'softplus'"),
    # diagnostics
    ("diagnostics wrong X", lambda: propagate(net(), np.ones((4, 5))), ShapeError,
     r"X must have 2 columns .* got shape \(4, 5\)"),
    ("diagnostics gradient rows", lambda: propagate(net(), X, output_gradient=np.ones((1, 1))),
     ValueError, r"output_gradient must have one row per sample of X \(4\), got 1"),
    ("diagnostics nan X", lambda: propagate(net(), [[np.nan, 0]]), ValueError,
     r"X must be finite, got nan at index \(0, 0\)"),
    ("diagnostics weight_variance", lambda: propagate(net(), X, weight_variance="target"),
     UnknownNameError, r"unknown weight_variance 'target'; expected one of: actual, init"),
    # the XOR harness
    ("study seeds zero", lambda: Setup(seeds=0), ValueError,
     r"seeds must be an integer >= 1, got 0"),
    ("study epochs zero", lambda: Setup(epochs=0), ValueError,
     r"epochs must be an integer from 1 to 9007199254740992, got 0"),
    ("study lr zero", lambda: Setup(lr=0.0), ValueError,
     r"lr must be a finite number > 0.0, got 0.0"),
    ("study alpha negative", lambda: Setup(alpha=-1.0), ValueError,
     r"alpha must be a finite number >= 0.0, got -1.0"),
    ("study hidden zero", lambda: Setup(hidden=(2, 0)), ValueError,
     r"hidden\[1\] must be an integer >= 1, got 0"),
    ("study unknown backend", lambda: Setup(backend="gpu"), UnknownNameError,
     r"unknown backend 'gpu'; expected one of: numba, numpy"),
    ("study unknown init", lambda: run_study([Arm("he")], Setup(seeds=1, epochs=1)),
     UnknownNameError, r"unknown initializer 'he'; expected one of: .*did you mean"),
    ("study unknown output init",
     lambda: run_study([Arm("he_normal", "xavir_normal")], Setup(seeds=1, epochs=1)),
     UnknownNameError, r"did you mean 'xavier_normal'"),
    ("study arm not an Arm", lambda: run_study(["normal"], Setup(seeds=2, epochs=2)),
     TypeError, r"arms\[0\] must be a tinynet.xor Arm, got 'normal' of type str"),
    ("study one Arm, not a list", lambda: run_study(Arm("normal"), Setup(seeds=2, epochs=2)),
     TypeError, r"arms must be a sequence of tinynet.xor Arm objects, got Arm\("),
    ("study setup a dict", lambda: run_study([Arm("normal")], {"seeds": 2}), TypeError,
     r"setup must be a tinynet.xor Setup, got \{'seeds': 2\} of type dict"),
    ("study no arms", lambda: run_study([], Setup(seeds=1, epochs=1)), ValueError,
     r"arms must hold at least one Arm"),
    ("study batch larger than the task", lambda: Setup(batch_size=5), ValueError,
     r"batch_size must be an integer from 1 to 4, got 5"),
    ("study task a string", lambda: Setup(task="circles"), TypeError,
     r"task must be a tinynet.xor Task, got 'circles' of type str"),
    ("task unknown data set", lambda: Task("mnist"), UnknownNameError,
     r"unknown data set 'mnist'; expected one of: blobs, circles, digits, mnist1d, moons, "
     r"spirals, xor \(did you mean 'mnist1d'\?\)"),
    ("task accuracy above 1", lambda: Task("moons", accuracy=1.5), ValueError,
     r"accuracy must be a fraction in \(0, 1\], got 1.5"),
    ("task accuracy zero", lambda: Task("moons", accuracy=0.0), ValueError,
     r"accuracy must be a finite number > 0.0, got 0.0"),
    ("task held out on the training seed", lambda: Task("moons", seed=3, held_out_seed=3),
     ValueError, r"held_out_seed must differ from seed \(3\), or the held-out set is the "
                 r"training set; got 3"),
    ("task noise on XOR's four points", lambda: Task("xor", noise=0.1), ValueError,
     r"noise needs n, the number of samples to draw; got noise=0.1 without n"),
    ("task one sample", lambda: Task("circles", n=1), ValueError,
     r"n must be an integer >= 2, got 1"),
    ("depth study depths zero", lambda: run_depth_study(depths=[0]), ValueError,
     r"depths\[0\] must be an integer >= 1, got 0"),
    ("depth study no hidden layer", lambda: run_depth_study(Setup(hidden=())), ValueError,
     r"setup.hidden must give at least one hidden layer, whose width the depth study uses, "
     r"such as \(16,\); got \(\)"),
    ("allowed wrong accuracy above 1", lambda: allowed_wrong(1.5, 4), ValueError,
     r"accuracy must be a fraction in \(0, 1\], got 1.5"),
    ("solves accuracy nan", lambda: solves(np.zeros((1, 4, 1)), np.zeros((4, 1)),
                                           accuracy=float("nan")),
     ValueError, r"accuracy must be a finite number > 0.0, got nan"),
    ("depth study unknown arm", lambda: one_cell_depth_study().rates("He-leaky"),
     ValueError, r"arm must be one of this study's arms, \[.*\]; got 'He-leaky'"),
    ("arm unknown update", lambda: Arm("normal", update="layerwise"), UnknownNameError,
     r"unknown update 'layerwise'; expected one of: after_backward, during_backward"),
    ("arm bias_init a number", lambda: Arm("normal", bias_init=0.1), TypeError,
     r"bias_init must be a registered initializer name such as 'he_leaky', got 0.1"),
    ("arm norm without residual", lambda: Arm("normal", norm="pre"), ValueError,
     r"norm='pre' and branch=1 are a residual block's: give residual= \(a name of "
     r"tinynet.network.RESIDUALS\) with them"),
    ("arm unknown residual", lambda: Arm("normal", residual="dense"), UnknownNameError,
     r"unknown residual 'dense'; expected one of: deepnet, fixup, rezero, standard"),
    ("arm branch 0", lambda: Arm("normal", residual="standard", branch=0), ValueError,
     r"branch must be an integer >= 1, got 0"),
    ("arm warmup negative", lambda: Arm("normal", warmup=-5), ValueError,
     r"warmup must be an integer >= 0, got -5"),
    ("arm blocks that do not divide the layers",
     lambda: run_study([Arm("normal", residual="standard", branch=2)],
                       Setup(hidden=(4, 4, 4, 4), seeds=1, epochs=1)),
     ValueError, r"groups the hidden layers after the first into blocks of 2: give hidden "
                 r"layers of one width, 1 \+ a multiple of 2 of them; got \(4, 4, 4, 4\)"),
    ("compiled layer between blocks",
     lambda: tinynet.Network([tinynet.Layer(2, 4), tinynet.Residual([tinynet.Layer(4, 4)]),
                              tinynet.Layer(4, 4), tinynet.Residual([tinynet.Layer(4, 4)]),
                              tinynet.Layer(4, 1)]).fit(X, Y, epochs=1, lr=0.1),
     tinynet.compiled.render.NotCompilableError,
     r"backend 'numba' runs layers, then a run of residual blocks, then layers; "
     r"net.blocks\[2\] is Layer\(4 -> 4, .*between blocks; pass backend='numpy'"),
    ("seed ranges overlap",
     lambda: tinynet.xor.run_seed_ranges([Arm("normal")], Setup(seeds=100), [0, 99]),
     ValueError, r"first_seeds 0 and 99 give overlapping ranges of 100 seeds; expected first "
                 r"seeds at least 100 apart"),
    ("seed ranges one range",
     lambda: tinynet.xor.run_seed_ranges([Arm("normal")], Setup(seeds=10), [5]),
     ValueError, r"first_seeds must hold at least 2 seeds, got \[5\]"),
    # statistics
    ("wilson more successes than n", lambda: tinynet.stats.wilson_interval(11, 10), ValueError,
     r"successes must be at most n \(10\), got 11"),
    ("wilson negative successes", lambda: tinynet.stats.wilson_interval(-1, 4), ValueError,
     r"successes must be an integer >= 0, got -1"),
    ("seeds_needed rate above one", lambda: tinynet.stats.seeds_needed(1.2, 0.5), ValueError,
     r"rate_a must be a probability from 0 to 1, got 1.2"),
    ("seeds_needed power one", lambda: tinynet.stats.seeds_needed(0.2, 0.5, power=1.0),
     ValueError, r"power must be a probability strictly between 0 and 1, got 1.0"),
    ("fisher n zero", lambda: tinynet.stats.fisher_exact_p(0, 0, 1, 1), ValueError,
     r"n_a must be an integer >= 1, got 0"),
    ("equal proportions one group", lambda: tinynet.stats.equal_proportions_p([3], [10]),
     ValueError, r"successes and n must list the same number \(at least 2\) of groups, got 1 "
                 r"and 1"),
    # past the first catalogue (issue 15): ranges, memory, masks, names, ownership
    ("layer n_in 2**63", lambda: Layer(2**63, 1), TooLargeError,
     r"Layer\(9223372036854775808, 1\) \(W, b and their gradients\) would need .*, more than "
     r"this machine's .* of memory"),
    ("layer alpha 10**400", lambda: Layer(2, 2, alpha=10**400), ValueError,
     r"alpha must be a finite number >= 0.0, got 1000.*\(401 characters\) \(too large for a "
     r"float\)"),
    ("layer bias_init 10**400", lambda: Layer(2, 2, bias_init=10**400), ValueError,
     r"bias_init must be a finite number, got 1000.* \(too large for a float\)"),
    ("fit lr 10**400", lambda: fit(lr=10**400), ValueError,
     r"lr must be a finite number > 0.0, got 1000.* \(too large for a float\)"),
    ("fit epochs 2**63", lambda: fit(epochs=2**63), ValueError,
     r"epochs must be an integer from 1 to 9007199254740992, got 9223372036854775808"),
    ("fit epochs 2**64", lambda: fit(epochs=2**64), ValueError,
     r"epochs must be an integer from 1 to 9007199254740992, got 18446744073709551616"),
    ("fit epochs 10**12 recording every epoch", lambda: fit(epochs=10**12), TooLargeError,
     r"record_every=1 keeps 1,000,000,000,000 losses per network .* would need 7.3 TiB.*; pass "
     r"a larger record_every, or record_every=None"),
    ("fit record_every 2**64", lambda: fit(record_every=2**64), ValueError,
     r"record_every must be an integer from 1 to 9007199254740992"),
    ("fit print_every 2**64", lambda: fit(print_every=2**64), ValueError,
     r"print_every must be an integer from 1 to 9007199254740992"),
    ("fit ragged X", lambda: fit(X=[[0, 1], [1]], y=[0, 1]), ShapeError,
     r"X must be a rectangular \(batch, features\) array; its rows have different lengths"),
    ("fit masked X", lambda: fit(X=np.ma.masked_array(X, mask=X > 0)), TypeError,
     r"X is a masked array; tinynet does not skip masked values"),
    ("fit masked y", lambda: fit(y=np.ma.masked_array(Y, mask=Y > 0)), TypeError,
     r"y is a masked array"),
    ("ensemble epochs 2**63", lambda: ensemble(epochs=2**63), ValueError,
     r"epochs must be an integer from 1 to 9007199254740992, got 9223372036854775808"),
    ("ensemble masked seeds",
     lambda: ensemble(seeds=np.ma.masked_array([1], mask=[True])), TypeError,
     r"seeds is a masked array"),
    ("ensemble array seed negative", lambda: ensemble(seeds=np.array([-1])), ValueError,
     r"seeds\[0\] must be an integer from 0 to 9223372036854775807, got -1"),
    ("ensemble range of seeds too short", lambda: ensemble(seeds=range(0)), ValueError,
     r"seeds must give one seed per network \(1\), got 0"),
    ("leaky_relu subclass on numba",
     lambda: tinynet.predict(Network([Layer(2, 1, activation=OwnLeaky(0.01), init="normal")]),
                             X), ValueError,
     r"backend 'numba' cannot run layers\[0\]'s activation .* \(OwnLeaky\): it defines "
     r"forward and derivative, not forward_and_derivative.*; pass backend='numpy'"),
    ("a layer in a second network", second_network, ValueError,
     r"layers\[0\] \(Layer\(2 -> 3.*\)\) already belongs to a Network \(seed 0\); a Layer "
     r"belongs to one Network"),
    ("network parameters wrong shape",
     lambda: Network([Layer(2, 1)], parameters=[np.zeros((2, 1)), np.zeros(1)]), ShapeError,
     r"parameters\[0\] must be a real array of shape \(1, 2\), got float64 \(2, 1\)"),
    ("network parameters too few", lambda: Network([Layer(2, 1)], parameters=[np.zeros((1, 2))]),
     TypeError, r"parameters must be a list of 2 arrays \[W0, b0, W1, ...\]"),
    ("fit_packed theta float32",
     lambda: tinynet.fit_packed(net(), np.zeros((1, 13), np.float32), X, Y, seeds=[0],
                                epochs=1, lr=0.1), TypeError,
     r"theta must be a writeable C-contiguous float64 NumPy array \(members, 13\), trained in "
     r"place, got a float32 array of shape \(1, 13\)"),
    ("fit_packed theta wrong width",
     lambda: tinynet.fit_packed(net(), np.zeros((1, 12)), X, Y, seeds=[0], epochs=1, lr=0.1),
     ShapeError, r"theta must have shape \(members >= 1, 13\), got \(1, 12\)"),
    ("fit_packed theta a list",
     lambda: tinynet.fit_packed(net(), [[0.0] * 13], X, Y, seeds=[0], epochs=1, lr=0.1),
     TypeError, r"theta must be a writeable C-contiguous float64 NumPy array .* got a list"),
    ("fit_packed one seed short",
     lambda: tinynet.fit_packed(net(), np.zeros((2, 13)), X, Y, seeds=[0], epochs=1, lr=0.1),
     ValueError, r"seeds must give one seed per network \(2\), got 1"),
    ("draw a negative seed", lambda: tinynet.packing.draw(net(), [0, -5]), ValueError,
     r"seeds\[1\] must be an integer from 0 to 9223372036854775807, got -5"),
    ("init spec too long", lambda: tinynet.init.get("-" * 100_000), ValueError,
     r"initializer spec must be at most 1000 characters, got 100000"),
    ("init spec nested too deep", lambda: tinynet.init.get("normal(std=" + "[" * 500 + ")"),
     ValueError, r"initializer spec .* is not of the form name or name\(key=value, ...\)"),
    ("init spec 400-digit literal", lambda: Layer(2, 2, init="normal(std=" + "9" * 400 + ")"),
     ValueError, r"std must be a finite number > 0.0, got 999.*\(400 characters\) \(too large "
                 r"for a float\)"),
    ("an initializer that raises", raising_initializer, tinynet.init.InitError,
     r"initializer 'boom' failed to draw a \(3, 2\) weight matrix for a leaky_relu\(alpha=0.01\) "
     r"layer: RuntimeError: boom"),
    ("setup hidden a number", lambda: Setup(hidden=2), TypeError,
     r"hidden must be a sequence of layer widths such as \(2, 2\), got 2"),
    ("setup epochs 2**63", lambda: Setup(epochs=2**63), ValueError,
     r"epochs must be an integer from 1 to 9007199254740992, got 9223372036854775808"),
    ("setup hidden 10**20", lambda: Setup(hidden=(10**20,)), TooLargeError,
     r"one network of 2-100000000000000000000-1 \(its parameters and their gradients\) would "
     r"need .*; use narrower hidden layers"),
    ("study of more seeds than memory", lambda: run_study([Arm("normal")], Setup(seeds=10**15)),
     TooLargeError, r"1 arm of 1,000,000,000,000,000 seeds of 2-2-2-1 \(424 bytes a seed, and "
                    r"[0-9,]+ for the kernels' scratch\) "
                    r"would need .*; use fewer seeds"),
    ("sweep of more seeds than memory",
     lambda: tinynet.xor.run_sweep([Arm("normal")], [Setup(seeds=10**14)] * 20), TooLargeError,
     r"20 studies of 1 arm would need .*; use fewer seeds"),
    ("study setup None", lambda: run_study([Arm("normal")], setup=None), TypeError,
     r"setup must be a tinynet.xor Setup, got None"),
    ("rates plot of no study", lambda: figures.rates([]), ValueError,
     r"studies must hold at least one Study, got an empty sequence"),
    ("holm p-value above one", lambda: tinynet.stats.holm([0.5, 2.0]), ValueError,
     r"p_values\[1\] must be a probability from 0 to 1, got 2.0"),
    ("holm masked", lambda: tinynet.stats.holm(np.ma.masked_array([0.1, 0.2], mask=[0, 1])),
     TypeError, r"p_values is a masked array"),
    ("equal proportions masked",
     lambda: tinynet.stats.equal_proportions_p(np.ma.masked_array([1, 2], mask=[0, 1]),
                                               [10, 10]),
     TypeError, r"successes is a masked array"),
    ("wilson masked successes",
     lambda: tinynet.stats.wilson_interval(np.ma.masked_array([5], mask=[1])[0], 10), TypeError,
     r"successes must be an integer >= 0, got masked of type MaskedConstant"),
    ("wilson confidence level negative",
     lambda: tinynet.stats.wilson_interval(5, 10, confidence_level=-1), ValueError,
     r"confidence_level must be a probability strictly between 0 and 1, got -1"),
    # issue 39: the parameters of activations, losses and optimizers, and what numba computes
    ("own activation parameter nan", lambda: Scaled(float("nan")), ValueError,
     r"^Scaled's beta must be a finite number, got nan$"),
    ("own activation parameter inf", lambda: Scaled(np.inf), ValueError,
     r"^Scaled's beta must be a finite number, got inf$"),
    ("own activation parameter text", lambda: Scaled("2.0"), ValueError,
     r"^Scaled's beta must be a finite number, got '2.0' of type str$"),
    ("own activation parameter 10**400", lambda: Scaled(10**400), ValueError,
     r"^Scaled's beta must be a finite number, got 1000.* \(too large for a float\)$"),
    ("leaky_relu alpha text", lambda: LeakyReLU("0.1"), ValueError,
     r"^LeakyReLU's alpha must be a finite number, got '0.1' of type str$"),
    ("own loss parameter -inf", lambda: WeightedMSE(-np.inf), ValueError,
     r"^WeightedMSE's weight must be a finite number, got -inf$"),
    ("adam eps 10**400", lambda: tinynet.optimizers.Adam(eps=10**400), ValueError,
     r"^Adam's eps must be a finite number, got 1000.* \(too large for a float\)$"),
    # many classes: softmax and cross-entropy
    ("fit label out of range", lambda: classes(y=np.array([0, 1, 3, 1])), ValueError,
     r"^y\[2\] is class 3, outside 0 to 2 \(the output layer has 3 units, one per class\)$"),
    ("fit label negative", lambda: classes(y=np.array([0, -1, 2, 1])), ValueError,
     r"^y\[1\] is class -1, outside 0 to 2"),
    ("fit label strings", lambda: classes(y=np.array(["cat", "dog", "cow", "dog"])),
     TypeError, r"^y: class labels must be integers 0 to 2, got strings such as 'cat'; number "
                r"them first \(np.unique\(y, return_inverse=True\)\[1\]\)$"),
    ("fit label floats", lambda: classes(y=np.array([0.0, 1.0, 2.0, 1.0])), TypeError,
     r"^y: class labels must be integers 0 to 2, got dtype float64; pass y.astype\(int\)"),
    ("fit one-hot rows not summing to 1", lambda: classes(y=np.full((4, 3), 0.5)), ValueError,
     r"^loss 'cross_entropy' needs each row of y to sum to 1 .* got y\[0\] summing to 1.5$"),
    ("fit nan pixels", lambda: classes(X=[[0, 0], [0, np.nan], [1, 0], [1, 1]]), ValueError,
     r"X .*nan|X.*NaN"),
    ("fit cross-entropy on a sigmoid", lambda: fit(loss="cross_entropy"), ValueError,
     r"^loss 'cross_entropy' needs a softmax output layer .* output layer's activation is "
     r"sigmoid: use output='softmax', or loss='bce' for a sigmoid output$"),
    ("fit softmax with mse", lambda: classes(loss="mse"), ValueError,
     r"^a softmax output trains with loss='cross_entropy' only .* got loss 'mse'$"),
    ("layer softmax of one unit", lambda: Layer(2, 1, activation="softmax"), ValueError,
     r"^Layer\(2, 1, activation=softmax\): a softmax over one unit is 1 whatever its input"),
    ("mlp softmax hidden", lambda: tinynet.mlp([2, 3, 3], activation="softmax",
                                               output="softmax"), ValueError,
     r"^layers\[0\]'s activation softmax is defined over its units .* only be the output "
     r"layer's, trained with loss='cross_entropy'$"),
    ("kernel_source softmax with mse",
     lambda: tinynet.kernel_source(tinynet.mlp([2, 3, 3], output="softmax")), ValueError,
     r"^a softmax output trains with loss='cross_entropy' only"),
    # evaluation on a test set, and studies of many classes
    ("fit evaluate_every without test", lambda: classes(evaluate_every=1), ValueError,
     r"^evaluate_every=1 evaluates on a test set; give test=\(X_test, y_test\) as well$"),
    ("fit test not a pair", lambda: classes(test=X), TypeError,
     r"^test must be a tuple \(X_test, y_test\), got ndarray$"),
    ("fit test label out of range", lambda: classes(test=(X, np.array([0, 1, 5, 1]))),
     ValueError, r"^y_test\[2\] is class 5, outside 0 to 2"),
    ("fit test wrong columns", lambda: classes(test=(np.ones((2, 3)), np.array([0, 1]))),
     ShapeError, r"^X_test must have 2 columns"),
    ("fit test lengths differ", lambda: classes(test=(X, np.array([0, 1]))), ShapeError,
     r"^X_test and y_test must have the same number of samples, got X_test \(4, 2\) and "
     r"y_test \(2,\)$"),
    ("fit evaluate_every zero", lambda: classes(test=(X, np.array([0, 1, 2, 1])),
                                                evaluate_every=0), ValueError,
     r"^evaluate_every must be an integer from 1 to \d+, got 0$"),
    ("own data test split with a class missing",
     lambda: Task(data=(X, np.array([0, 1, 2, 1])), test=(X, np.array([0, 1, 1, 0]))),
     ValueError, r"^y_test: the test split has no sample of class 2 \(of classes 0 to 2\); "
                 r"every class needs a test sample, or it could not be scored$"),
    ("own data training split with a class missing",
     lambda: Task(data=(X, np.array([0, 0, 2, 0])), test=(X, np.array([0, 1, 2, 1]))),
     ValueError, r"^y: the training split has no sample of class 1"),
    ("own data string labels",
     lambda: Task(data=(X, np.array(list("abab"))), test=(X, np.array([0, 1, 0, 1]))),
     TypeError, r"^y: class labels must be integers from 0, got strings such as 'a'; number "
                r"them first \(np.unique\(y, return_inverse=True\)\[1\]\)$"),
    ("own data negative label",
     lambda: Task(data=(X, np.array([0, 1, -1, 1])), test=(X, np.array([0, 1, 0, 1]))),
     ValueError, r"^y\[2\] is class -1; class labels count from 0$"),
    ("own data nan pixels",
     lambda: Task(data=([[0, np.nan], [0, 1], [1, 0], [1, 1]], np.array([0, 1, 0, 1])),
                  test=(X, np.array([0, 1, 0, 1]))), ValueError, r"^X .*(nan|NaN)"),
    ("own data without a test split", lambda: Task(data=(X, np.array([0, 1, 0, 1]))),
     TypeError, r"^your own data is data=\(X, y\) with test=\(X_test, y_test\), got data as "
                r"a tuple of 2 and test=NoneType$"),
    ("own data test columns differ",
     lambda: Task(data=(X, np.array([0, 1, 0, 1])), test=(np.ones((2, 3)), np.array([0, 1]))),
     ShapeError, r"^X_test must have the 2 columns of X, got 3 \(shape \(2, 3\)\)$"),
    ("own data as one array", lambda: Task(data=X), TypeError,
     r"^data must be a data set's name such as 'moons', your own data=\(X, y\) with "
     r"test=\(X_test, y_test\), or a tinynet.data.Split; got ndarray of shape \(4, 2\)$"),
    ("own data as a list", lambda: Task(data=[X, Y]), TypeError,
     r"data=\(X, y\) with test=\(X_test, y_test\).* got list of 2 items$"),
    ("own data file of another kind", lambda: Task.from_file("data.txt"), FileFormatError,
     r"^'data.txt': expected a .npz or .csv file of your own data, got a .txt$"),
    ("own data file not there", lambda: Task.from_file("nothere.npz"), FileNotFoundError,
     r"^no such file 'nothere.npz' \(your own data: a .npz or .csv file\)$"),
    ("initializer name in the wrong case", lambda: tinynet.init.get("Xavier_Uniform"),
     UnknownNameError, r"unknown initializer 'Xavier_Uniform'.*did you mean 'xavier_uniform'"),
    ("test with a named data set", lambda: Task("moons", test=(X, Y)), ValueError,
     r"^test=\(X_test, y_test\) goes with your own data=\(X, y\); data set 'moons' has its "
     r"own$"),
    ("digits with a seed", lambda: Task("digits", seed=3), ValueError,
     r"^seed is not a setting of data set 'digits', which has a fixed training and test "
     r"split; got seed=3, leave it out$"),
    ("digits with a sigmoid output", lambda: Setup(task=Task("digits")), ValueError,
     r"^task 'digits' has 10 outputs: give output='softmax', not 'sigmoid' \(and arms with "
     r"loss='cross_entropy'\)$"),
    ("moons with a softmax output", lambda: Setup(task=Task("moons"), output="softmax"),
     ValueError, r"^task 'moons' has 1 output: give output='sigmoid', not 'softmax'$"),
    ("digits study with mse",
     lambda: run_study([Arm("he_normal")], Setup(task=Task("digits"), output="softmax",
                                                 seeds=2, epochs=1)), ValueError,
     r"^a softmax output trains with loss='cross_entropy' only"),
    ("study evaluate_every on moons",
     lambda: run_study([Arm("he_normal")], Setup(task=Task("moons"), seeds=2, epochs=1),
                       evaluate_every=1), ValueError,
     r"^evaluate_every=1 evaluates on a test set of a task of many classes .*; task 'moons' "
     r"has none$"),
    # residual blocks, their norms and the learning rate's schedule (issue 43)
    ("residual branch width", lambda: tinynet.Residual([Layer(4, 3)]), ShapeError,
     r"a residual branch must give back its input's width: layers\[0\] takes 4 inputs, "
     r"layers\[-1\] gives 3"),
    ("residual branch chain", lambda: tinynet.Residual([Layer(4, 3), Layer(2, 4)]), ShapeError,
     r"layers\[1\] takes 2 inputs but layers\[0\] gives 3"),
    ("residual norm unknown", lambda: tinynet.Residual([Layer(4, 4)], norm="middle"),
     UnknownNameError, r"unknown norm 'middle'; expected one of: post, pre"),
    ("residual scale nan", lambda: tinynet.Residual([Layer(4, 4)], scale=float("nan")),
     ValueError, r"scale must be a finite number, got nan"),
    ("residual skip zero", lambda: tinynet.Residual([Layer(4, 4)], skip=0.0), ValueError,
     r"skip must be a finite number > 0.0, got 0.0"),
    ("residual train_scale not bool", lambda: tinynet.Residual([Layer(4, 4)], train_scale=1),
     TypeError, r"train_scale must be True or False, got 1"),
    ("residual softmax branch",
     lambda: tinynet.Residual([Layer(4, 4, activation="softmax")]), ValueError,
     r"layers\[0\]'s activation softmax is defined over its units"),
    ("residual last", lambda: Network([Layer(2, 4), tinynet.Residual([Layer(4, 4)])]),
     ValueError, r"layers\[-1\] is a Residual block: a network ends with a Layer"),
    ("layernorm eps zero", lambda: tinynet.LayerNorm(4, eps=0.0), ValueError,
     r"eps must be a finite number > 0.0, got 0.0"),
    ("mlp residual unequal widths", lambda: tinynet.mlp([2, 8, 4, 1], residual=True),
     ValueError, r"sizes must have at least two hidden sizes, all equal, for residual blocks"),
    ("mlp residual unknown", lambda: tinynet.mlp([2, 4, 4, 1], residual="densenet"),
     UnknownNameError, r"unknown residual 'densenet'; expected one of: deepnet, fixup, "
                       r"rezero, standard"),
    ("mlp norm without residual", lambda: tinynet.mlp([2, 4, 4, 1], norm="pre"), ValueError,
     r"norm='pre' and branch=1 are a residual block's: pass residual=True"),
    ("mlp fixup with a norm", lambda: tinynet.mlp([2, 4, 4, 1], residual="fixup", norm="pre"),
     ValueError, r"residual='fixup' is for networks without normalization, got norm='pre'"),
    ("mlp deepnet without post-norm", lambda: tinynet.mlp([2, 4, 4, 1], residual="deepnet"),
     ValueError, r"residual='deepnet' scales a post-norm block's skip: pass norm='post'"),
    ("fixup one layer a branch", lambda: tinynet.init.get("fixup(branch_layers=1)"),
     ValueError, r"branch_layers must be an integer >= 2, got 1"),
    ("residual blocks of two kinds on numba",
     lambda: Network([Layer(2, 4), tinynet.Residual([Layer(4, 4)]),
                      tinynet.Residual([Layer(4, 4)], norm="pre"), Layer(4, 1)]).fit(
         X, Y, epochs=1, lr=0.1),
     tinynet.compiled.render.NotCompilableError,
     r"backend 'numba' runs blocks of one kind \(branch length, norm, trained α\) in a "
     r"network; net.blocks\[2\] is Residual\(4 -> 4: x \+ 1·F\(LN\(x\)\).*pass "
     r"backend='numpy'"),
    ("residual saved", lambda: tinynet.save(tinynet.mlp([2, 4, 4, 1], residual=True), "x"),
     ValueError, r"tinynet.save cannot store residual blocks yet \(net.blocks\[1\] is Residual"),
    ("residual propagated", lambda: propagate(tinynet.mlp([2, 4, 4, 1], residual=True), X),
     ValueError, r"propagate follows a chain of layers; it does not follow residual blocks"),
    ("ensemble of other blocks",
     lambda: tinynet.fit_ensemble([tinynet.mlp([2, 4, 4, 1], residual=True),
                                   tinynet.mlp([2, 4, 4, 1], residual="rezero")], X, Y,
                                  epochs=1, lr=0.1, backend="numpy"),
     ShapeError, r"networks\[1\] .*blocks \['x \+ α·F\(x\)'\]\) differs from networks\[0\]"),
    ("residual layer twice",
     lambda: (lambda layer: Network([Layer(2, 4), tinynet.Residual([layer]),
                                     tinynet.Residual([layer]), Layer(4, 1)]))(Layer(4, 4)),
     ValueError, r"layers\[2\].layers\[0\] is the same Layer object as layers\[1\]"
                 r".layers\[0\]"),
    ("residual layer of another network",
     lambda: (lambda net: Network([Layer(2, 4), tinynet.Residual([net.layers[1]]),
                                   Layer(4, 1)]))(tinynet.mlp([2, 4, 4, 1])),
     ValueError, r"layers\[1\].layers\[0\] \(Layer\(4 -> 4.*already belongs to a Network"),
    ("residual scale 0 not trained", lambda: tinynet.Residual([Layer(4, 4)], scale=0.0),
     ValueError, r"scale=0.0 with train_scale=False makes a branch that never learns"),
    ("mlp fixup one layer a branch", lambda: tinynet.mlp([2, 4, 4, 1], residual="fixup"),
     ValueError, r"residual='fixup' needs branch >= 2 .*got branch=1"),
    ("layout of blocks", lambda: tinynet.packing.layout(tinynet.mlp([2, 4, 4, 1],
                                                                    residual=True)),
     ValueError, r"a Layout describes a chain of layers; this network has residual blocks"),
    ("ensemble of other branch widths",
     lambda: tinynet.fit_ensemble(
         [Network([Layer(2, 8), tinynet.Residual([Layer(8, a), Layer(a, b), Layer(b, 8)]),
                   Layer(8, 1)], seed=s) for s, (a, b) in enumerate([(2, 4), (4, 2)])],
         X, Y, epochs=1, lr=0.1, backend="numpy"),
     ShapeError, r"networks\[1\] .* differs from networks\[0\]"),
    ("warmup beyond the run", lambda: tinynet.mlp([2, 2, 1]).fit(X, Y, epochs=3, lr=0.1,
                                                                 warmup=13),
     ValueError, r"warmup must be at most the run's 12 steps \(3 epochs of 4 batches\), got 13"),
    ("warmup negative", lambda: tinynet.mlp([2, 2, 1]).fit(X, Y, epochs=1, lr=0.1, warmup=-1),
     ValueError, r"warmup must be an integer from 0"),
    ("decay unknown",
     lambda: tinynet.fit_ensemble([tinynet.mlp([2, 2, 1])], X, Y, epochs=1, lr=0.1,
                                  decay="linear"),
     UnknownNameError, r"unknown decay 'linear'; expected one of: constant, cosine"),
    ("an integer beyond 64 bits in a definition",
     lambda: tinynet.predict(tinynet.mlp([2, 1], output=Huge(), init="normal"), X),
     ValueError, r"^backend 'numba' cannot run layers\[0\]'s activation huge \(Huge\): "
                 r"Huge.forward_and_derivative \(line \d+\): its integer 2 \*\* 64 is outside "
                 r"the 64-bit integers .*backend='numpy'$"),
]


@pytest.mark.parametrize("case", CATALOGUE, ids=[case[0] for case in CATALOGUE])
def test_bad_input_is_refused_with_a_clear_message(case, restore_registry):
    _, call, exception, message = case
    with pytest.raises(exception, match=message):
        call()


def test_the_catalogue_is_large_and_the_readme_counts_it():
    assert len(CATALOGUE) >= 150
    assert f"a catalogue of {len(CATALOGUE)} such cases" in page("library.md")


# --- integer and float32 inputs: converted exactly, never truncated -------------------------

def test_integer_and_float32_inputs_are_converted_exactly():
    reference = tinynet.mlp([2, 3, 1], seed=0).forward(X)
    for dtype in [np.int8, np.int64, np.uint16, np.float32, bool]:
        np.testing.assert_array_equal(tinynet.mlp([2, 3, 1], seed=0).forward(X.astype(dtype)),
                                      reference)


def test_float32_training_data_train_as_float64():
    a = tinynet.mlp([2, 3, 1], seed=2)
    b = tinynet.mlp([2, 3, 1], seed=2)
    np.testing.assert_array_equal(a.fit(X.astype(np.float32), Y.astype(np.float32),
                                        epochs=20, lr=0.1).loss,
                                  b.fit(X, Y, epochs=20, lr=0.1).loss)
    assert a.layers[0].W.dtype == np.float64
