"""The initializer registry. The generic tests run over every registered name, so a new
built-in entry is covered without writing a test for it."""

import math

import numpy as np
import pytest
from scipy import stats

import tinynet
from tinynet import Layer, UnknownNameError
from tinynet.activations import get_activation
from tinynet.init import (FAN_MODES, TRUNCATED_VARIANCE_FACTOR, calculate_gain, fan, fans,
                          get_distribution, second_moment_gain)
from tinynet.init.distributions import DISTRIBUTIONS, TRUNCATION, truncated_variance_factor

LEAKY = get_activation("leaky_relu", alpha=0.01)
# Every registered name, plus specs with parameters, so that parameters are exercised too.
NAMES = tinynet.init.available() + [
    "normal(std=0.5)", "uniform(std=2.0)", "truncated_normal(std=0.3)", "xavier_uniform(gain=2)",
    "he_leaky(alpha=0.3)", "he_leaky_uniform(alpha=0.5)", "orthogonal(gain=2.0)",
    "constant(value=0.3)", "variance_scaling(scale=3, mode='fan_out', distribution='uniform')",
    "kaiming_normal(a=0.2)", "kaiming_uniform(mode='fan_out', nonlinearity='tanh')",
    "he_truncated_normal(nonlinearity='relu', mode='fan_out')",
]
KURTOSIS = {"normal": 3.0, "uniform": 1.8, "truncated_normal": 2.3655, None: 3.0}
BIG_SHAPES = [(300, 500), (500, 300)]  # non-square both ways, so a fan_in/fan_out swap shows


def draw(name, shape, seed=0, activation=LEAKY):
    return tinynet.init.get(name)(shape, np.random.default_rng(seed), activation)


# --- generic: every registered entry ----------------------------------------------------

@pytest.mark.parametrize("name", NAMES)
def test_shape_dtype_and_determinism(name):
    for shape in [(3, 7), (7, 3), (1, 1)]:
        w = tinynet.init.draw(tinynet.init.get(name), shape, np.random.default_rng(5), LEAKY)
        assert w.shape == shape and w.dtype == np.float64
        np.testing.assert_array_equal(w, draw(name, shape, seed=5))
    if tinynet.init.get(name).variance((3, 7), LEAKY) > 0:
        assert not np.array_equal(draw(name, (3, 7), seed=5), draw(name, (3, 7), seed=6))


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("shape", BIG_SHAPES, ids=["300x500", "500x300"])
def test_mean_and_variance_match_the_target(name, shape):
    # N = 150,000 weights. The sample variance's relative standard error is sqrt((κ - 1)/N)
    # with κ the kurtosis (3 normal, 1.8 uniform, 2.3655 truncated normal): 0.0037, 0.0023
    # and 0.0030; we allow 5 standard errors. The mean's standard error is std/sqrt(N); we
    # allow 5 of them. Orthogonal weights are not independent, but their sum of squares is
    # exact, so the normal's allowance is ample for them.
    initializer = tinynet.init.get(name)
    w = draw(name, shape)
    target_var = initializer.variance(shape, LEAKY)
    target_mean = initializer.mean(shape, LEAKY)
    if target_var == 0:
        assert np.all(w == target_mean)
        return
    kurtosis = KURTOSIS[initializer.distribution]
    assert abs(np.var(w) / target_var - 1) < 5 * math.sqrt((kurtosis - 1) / w.size)
    assert abs(np.mean(w) - target_mean) < 5 * math.sqrt(target_var / w.size)


DISTRIBUTED = [name for name in NAMES if tinynet.init.get(name).distribution is not None]


def scipy_distribution(name, std):
    """SciPy's frozen distribution for tinynet's ``name`` at ``std``, built from the numbers
    the sampler is called with (``parameters(std)``), so a KS test checks them too."""
    p = get_distribution(name).parameters(std)
    if name == "normal":
        return stats.norm(scale=p["sigma"])
    if name == "uniform":
        return stats.uniform(loc=-p["bound"], scale=2 * p["bound"])
    assert name == "truncated_normal"
    return stats.truncnorm(-p["cut"] / p["sigma"], p["cut"] / p["sigma"], scale=p["sigma"])


# Kolmogorov-Smirnov at level 0.1 %: for N = 150,000 weights the critical value of
# D = max |F_N(x) - F(x)| is 1.95/sqrt(N) = 0.0050, i.e. a correct sampler fails with
# probability 0.001 (seeds are fixed, so each test is deterministic).
KS_LEVEL = 0.001


@pytest.mark.parametrize("name", DISTRIBUTED)
def test_distribution_shape_kolmogorov_smirnov(name):
    # Every entry's weights against its own distribution at its target std.
    initializer = tinynet.init.get(name)
    shape = BIG_SHAPES[0]
    w = draw(name, shape, seed=1).ravel()
    reference = scipy_distribution(initializer.distribution, initializer.std(shape, LEAKY))
    assert stats.kstest(w, reference.cdf).pvalue > KS_LEVEL


@pytest.mark.parametrize("name", sorted(DISTRIBUTIONS))
def test_parameters_realise_the_std(name):
    for std in [0.01, 0.7, 3.0]:
        assert scipy_distribution(name, std).std() == pytest.approx(std, rel=1e-12)
        assert scipy_distribution(name, std).mean() == pytest.approx(0, abs=1e-15)


@pytest.mark.parametrize("sampled", sorted(DISTRIBUTIONS))
@pytest.mark.parametrize("reference", sorted(DISTRIBUTIONS))
def test_kolmogorov_smirnov_tells_the_distributions_apart(sampled, reference):
    # The KS test above can fail: between the three distributions at equal variance D is
    # 0.017 (normal vs truncated), 0.043 (uniform vs truncated) and 0.057 (uniform vs normal),
    # 3.5 to 11 times the critical value 0.0050; a std 5 % off gives D = 0.013 to 0.025.
    w = get_distribution(sampled).sample(np.random.default_rng(1), BIG_SHAPES[0], 0.7).ravel()
    p_value = stats.kstest(w, scipy_distribution(reference, 0.7).cdf).pvalue
    assert (p_value > KS_LEVEL) == (sampled == reference)
    if sampled == reference:
        for wrong in [0.95 * 0.7, 1.05 * 0.7]:
            assert stats.kstest(w, scipy_distribution(reference, wrong).cdf).pvalue < KS_LEVEL


@pytest.mark.parametrize("name", DISTRIBUTED)
def test_the_name_says_the_distribution(name):
    base = name.split("(")[0]
    expected = next((d for d in ["truncated_normal", "uniform"] if base.endswith(d)), "normal")
    if base == "torch_linear_default":  # named after what it copies: U(±1/sqrt(fan_in))
        expected = "uniform"
    if base == "bert":  # named after BERT, whose weights are a truncated normal
        expected = "truncated_normal"
    if base == "variance_scaling":
        expected = tinynet.init.parse_spec(name)[1].get("distribution", "normal")
    assert tinynet.init.get(name).distribution == expected


def test_orthogonal_is_unbiased():
    # Without the sign fix QR returns Q with a biased first entry: mean(W[0, 0]) over seeds is
    # about -0.38 for 4 x 4. With it, W[0, 0] has mean 0 and variance 1/4: over 2000 seeds the
    # mean's standard error is 0.5/sqrt(2000) = 0.011, and we allow 4.5 of them.
    orthogonal = tinynet.init.get("orthogonal")
    first = [orthogonal((4, 4), np.random.default_rng(s), LEAKY)[0, 0] for s in range(2000)]
    assert abs(np.mean(first)) < 0.05


@pytest.mark.parametrize("name", NAMES)
def test_every_entry_describes_itself(name):
    initializer = tinynet.init.get(name)
    for shape in [(2, 2), (3, 7)]:
        d = initializer.describe(shape, LEAKY)
        assert (d.fan_in, d.fan_out) == (shape[1], shape[0])
        assert d.variance == initializer.variance(shape, LEAKY)
        assert d.std == pytest.approx(math.sqrt(d.variance), rel=1e-15)
        assert str(d).startswith(d.name) and d.formula in str(d)
        assert d.sampler


# --- building blocks ------------------------------------------------------------------

# PyTorch's documented torch.nn.init.calculate_gain values.
TORCH_GAINS = {"linear": 1.0, "identity": 1.0, "sigmoid": 1.0, "tanh": 5.0 / 3.0,
               "relu": math.sqrt(2.0), "leaky_relu": math.sqrt(2.0 / (1.0 + 0.01 ** 2)),
               "selu": 3.0 / 4.0,
               **{f"conv{k}d": 1.0 for k in (1, 2, 3)},
               **{f"conv_transpose{k}d": 1.0 for k in (1, 2, 3)}}


@pytest.mark.parametrize("nonlinearity", sorted(TORCH_GAINS))
def test_gain_values_are_pytorchs(nonlinearity):
    assert calculate_gain(nonlinearity) == TORCH_GAINS[nonlinearity]


def test_gain_values_are_exact():
    assert sorted(TORCH_GAINS) == list(tinynet.init.NONLINEARITIES)
    # The published bug sqrt(2 / 1 + alpha**2) would give sqrt(2.0001) here, not sqrt(2/1.0001).
    assert calculate_gain("leaky_relu") == math.sqrt(2.0 / 1.0001)
    assert calculate_gain("leaky_relu", 0.5) == math.sqrt(2.0 / 1.25)
    assert calculate_gain("leaky_relu", param=0) == math.sqrt(2.0)
    assert calculate_gain("leaky_relu", np.float64(0.2)) == math.sqrt(2.0 / 1.04)
    # A tinynet Activation stands for its name; a LeakyReLU brings its own alpha.
    assert calculate_gain(get_activation("leaky_relu", alpha=0.2)) == math.sqrt(2.0 / 1.04)
    assert calculate_gain(get_activation("tanh")) == 5.0 / 3.0
    assert calculate_gain(get_activation("relu")) == math.sqrt(2.0)


@pytest.mark.parametrize("args,exc,message", [
    (("leaky_relu", True), TypeError, "param must be a real number, got True of type bool"),
    (("leaky_relu", "0.1"), TypeError, "param must be a real number, got '0.1' of type str"),
    (("leaky_relu", -0.1), ValueError, r"param must be a finite number >= 0.0, got -0.1"),
    (("leaky_relu", float("nan")), ValueError, r"param must be a finite number >= 0.0, got nan"),
    (("relu", 0.2), ValueError, r"param must be None for nonlinearity 'relu': only leaky_relu "
                                r"takes one, its negative slope \(PyTorch ignores it\), got 0.2"),
    ((get_activation("leaky_relu", alpha=0.2), 0.3), ValueError,
     r"param must be None when nonlinearity is an Activation \(leaky_relu\(alpha=0.2\) brings "
     r"its own alpha\), got 0.3"),
    (("softplus",), UnknownNameError, r"unknown activation 'softplus'; expected one of: conv1d"),
    (("Tanh",), UnknownNameError, r"unknown activation 'Tanh'.*did you mean 'tanh'"),
    ((3,), UnknownNameError, r"unknown activation 3"),
])
def test_calculate_gain_refuses_bad_arguments(args, exc, message):
    with pytest.raises(exc, match=message) as error:
        calculate_gain(*args)
    assert "\n" not in str(error.value)


def test_second_moment_gains():
    assert second_moment_gain("identity") == pytest.approx(1.0, rel=1e-12)
    assert second_moment_gain("relu") == pytest.approx(math.sqrt(2.0), rel=1e-12)
    assert second_moment_gain("leaky_relu", alpha=0.3) == pytest.approx(
        math.sqrt(2 / 1.09), rel=1e-12)
    assert second_moment_gain("tanh") == pytest.approx(1.59254, abs=5e-6)
    assert second_moment_gain("sigmoid") == pytest.approx(1.84623, abs=5e-6)


def test_truncation_constants():
    assert truncated_variance_factor(2.0) == pytest.approx(TRUNCATED_VARIANCE_FACTOR, rel=1e-15)
    assert TRUNCATED_VARIANCE_FACTOR == 0.7737413035499232
    assert 1 / math.sqrt(TRUNCATED_VARIANCE_FACTOR) == pytest.approx(1.1368472343385565, rel=1e-15)
    assert truncated_variance_factor(50.0) == pytest.approx(1.0)
    for c in [0.5, 1.0, TRUNCATION, 3.0, 6.0]:
        assert truncated_variance_factor(c) == pytest.approx(stats.truncnorm(-c, c).var(),
                                                             rel=1e-13)


def test_truncated_normal_stays_inside_the_cut_with_the_target_variance():
    # Variance tolerance as in test_mean_and_variance_match_the_target (5 standard errors).
    # Without the correction the variance would be 0.774 of the target: far outside it.
    w = get_distribution("truncated_normal").sample(np.random.default_rng(3), (300, 500), 0.5)
    sigma = 0.5 / math.sqrt(TRUNCATED_VARIANCE_FACTOR)
    assert np.max(np.abs(w)) <= 2 * sigma
    assert np.max(np.abs(w)) > 1.99 * sigma  # redrawn, so values reach right up to the cut
    assert abs(np.var(w) / 0.25 - 1) < 0.019


def test_uniform_bound():
    assert get_distribution("uniform").parameters(2.0)["bound"] == math.sqrt(3.0) * 2.0
    w = tinynet.init.get("xavier_uniform")((300, 500), np.random.default_rng(0), LEAKY)
    assert np.max(np.abs(w)) <= math.sqrt(6 / 800)


@pytest.mark.parametrize("shape", [(4, 9), (9, 4), (6, 6)])
def test_orthogonal_rows_or_columns_are_orthonormal(shape):
    w = tinynet.init.get("orthogonal(gain=2.0)")(shape, np.random.default_rng(0), LEAKY)
    small = w @ w.T if shape[0] <= shape[1] else w.T @ w
    np.testing.assert_allclose(small, 4.0 * np.eye(min(shape)), atol=1e-12)


def test_fans_and_fan_averages():
    assert fans((5, 3)) == (3, 5)  # (n_out, n_in): fan_in = 3, fan_out = 5
    m, n = 3, 5
    assert fan("fan_in", (n, m)) == 3 and fan("fan_out", (n, m)) == 5
    assert fan("fan_avg", (n, m)) == 4
    assert fan("fan_geo_avg", (n, m)) == math.sqrt(15)
    assert fan("fan_contraharmonic", (n, m)) == 34 / 8
    harmonic, rms = 2 * m * n / (m + n), math.sqrt((m * m + n * n) / 2)
    assert harmonic < fan("fan_geo_avg", (n, m)) < fan("fan_avg", (n, m)) < rms \
        < fan("fan_contraharmonic", (n, m))
    for mode in FAN_MODES:  # every average of m and m is m
        assert fan(mode, (7, 7)) == pytest.approx(7)


def test_contraharmonic_fan_minimises_the_notes_objective():
    # t = 1/fan minimises (m t - 1)² + (n t - 1)²: the derivative 2m(mt-1) + 2n(nt-1) is zero.
    m, n = 64, 1024
    t = 1 / fan("fan_contraharmonic", (n, m))
    assert 2 * m * (m * t - 1) + 2 * n * (n * t - 1) == pytest.approx(0, abs=1e-9)


@pytest.mark.parametrize("name,variance", [
    ("normal", lambda m, n: 1.0),
    ("uniform(std=0.5)", lambda m, n: 0.25),
    ("lecun_normal", lambda m, n: 1.0 / m),
    ("xavier_normal", lambda m, n: 2.0 / (m + n)),
    ("glorot_uniform", lambda m, n: 2.0 / (m + n)),
    ("xavier_normal(gain=3)", lambda m, n: 18.0 / (m + n)),
    ("xavier_geometric_normal", lambda m, n: 1.0 / math.sqrt(m * n)),
    ("xavier_contraharmonic_uniform", lambda m, n: (m + n) / (m * m + n * n)),
    ("he_normal", lambda m, n: 2.0 / m),
    ("kaiming_truncated_normal", lambda m, n: 2.0 / m),
    ("he_leaky", lambda m, n: 2.0 / (1.0001 * m)),
    ("he_leaky(alpha=0.2)", lambda m, n: 2.0 / (1.04 * m)),
    ("orthogonal", lambda m, n: 1.0 / max(m, n)),
    ("variance_scaling(scale=3, mode='fan_out')", lambda m, n: 3.0 / n),
    ("zeros", lambda m, n: 0.0),
])
def test_formulas_on_non_square_shapes(name, variance):
    initializer = tinynet.init.get(name)
    for n_out, n_in in [(3, 7), (7, 3)]:
        assert initializer.variance((n_out, n_in), LEAKY) == pytest.approx(
            variance(n_in, n_out), rel=1e-14)


def test_he_at_fan_in_two_is_exactly_standard_normal():
    for name in ["he_normal", "he_uniform", "normal"]:
        assert tinynet.init.get(name).std((2, 2), LEAKY) == 1.0
    assert tinynet.init.get("he_leaky").std((2, 2), LEAKY) == pytest.approx(0.99995, abs=1e-6)


def test_he_leaky_takes_alpha_from_the_layer():
    assert tinynet.init.get("he_leaky").variance((4, 10), get_activation("leaky_relu", 0.5)) \
        == pytest.approx(2 / (1.25 * 10))
    assert tinynet.init.get("he_leaky").variance((4, 10), get_activation("sigmoid")) \
        == pytest.approx(2 / (1.0001 * 10))


def test_auto_picks_by_activation():
    auto = tinynet.init.get("auto")
    picks = {name: auto.choice(get_activation(name)).name
             for name in ["sigmoid", "tanh", "identity", "relu", "leaky_relu"]}
    assert picks == {"sigmoid": "xavier_normal", "tanh": "xavier_normal",
                     "identity": "xavier_normal", "relu": "he_normal", "leaky_relu": "he_leaky"}
    assert auto.describe((1, 8), get_activation("sigmoid")).name == "auto:xavier_normal"


def test_descriptions_give_the_sampler_numbers():
    d = tinynet.init.get("he_truncated_normal").describe((10, 50), LEAKY)
    assert d.std == math.sqrt(2 / 50) and d.gain == math.sqrt(2) and d.fan == 50
    assert f"sigma = {d.std / math.sqrt(TRUNCATED_VARIANCE_FACTOR):.6g}" in d.sampler
    d = tinynet.init.get("xavier_uniform").describe((300, 500), LEAKY)
    assert "(fan_in + fan_out)/2" in d.formula and d.fan == 400
    assert f"[-{math.sqrt(6 / 800):.6g}, {math.sqrt(6 / 800):.6g}]" in d.sampler


def test_bias_starts_at_zero_unless_asked():
    assert np.all(Layer(3, 4).b == 0)
    net = tinynet.mlp([2, 3, 1], bias_init=0.1)
    assert all(np.all(layer.b == 0.1) for layer in net.layers)


# --- registry ---------------------------------------------------------------------------

def test_register_three_lines_and_use_by_name(restore_registry):
    @tinynet.init.register("tiny_normal")
    def tiny_normal(shape, rng, std=0.01):
        return rng.normal(0.0, std, size=shape)

    assert "tiny_normal" in tinynet.init.available()
    net = tinynet.mlp([2, 3, 1], init="tiny_normal(std=0.001)")
    assert net.layers[0].init.name == "tiny_normal(std=0.001)"
    assert np.abs(net.layers[0].W).max() < 0.01


def test_register_refuses_duplicates_unless_overridden(restore_registry):
    with pytest.raises(ValueError, match="'he_normal' is already registered; pass override=True"):
        tinynet.init.register("he_normal", lambda shape, rng: np.zeros(shape))
    tinynet.init.register("he_normal", lambda shape, rng: np.zeros(shape), override=True)
    assert np.all(Layer(2, 2, init="he_normal").W == 0)


def test_register_an_initializer_instance(restore_registry):
    tinynet.init.register("half", tinynet.init.FixedStd("half", 0.5, "uniform"))
    assert tinynet.init.get("half").std((3, 3), LEAKY) == 0.5


KEYWORD = r"name must be a Python identifier such as 'my_init' that is not a Python keyword " \
    r"\(a spec cannot name it\), got "


@pytest.mark.parametrize("name,exc,message", [
    (None, TypeError, r"name must be a string, a Python identifier such as 'my_init', got None "
                      r"of type NoneType"),
    (True, TypeError, r"name must be a string, .* got True of type bool"),
    (False, TypeError, r"name must be a string, .* got False of type bool"),
    (42, TypeError, r"name must be a string, .* got 42 of type int"),
    (b"my_init", TypeError, r"name must be a string, .* got b'my_init' of type bytes"),
    ("None", ValueError, KEYWORD + "'None'"),
    ("True", ValueError, KEYWORD + "'True'"),
    ("False", ValueError, KEYWORD + "'False'"),
    ("lambda", ValueError, KEYWORD + "'lambda'"),
    ("class", ValueError, KEYWORD + "'class'"),
    ("\ufb01_init", ValueError,
     r"name must be a Python identifier in NFKC normal form, as Python reads identifiers, got "
     r"'\ufb01_init' \(U\+FB01 LATIN SMALL LIGATURE FI\), which Python reads as 'fi_init'; "
     r"register 'fi_init' instead"),
    ("1abc", ValueError, r"name must be a Python identifier such as 'my_init', got '1abc'"),
    ("", ValueError, r"name must be a Python identifier such as 'my_init', got ''"),
    ("my init", ValueError, r"name must be a Python identifier such as 'my_init', got 'my init'"),
])
def test_register_refuses_bad_names(name, exc, message, restore_registry):
    before = tinynet.init.available()
    with pytest.raises(exc, match=f"^{message}$"):
        tinynet.init.register(name, lambda shape, rng: np.zeros(shape))
    with pytest.raises(exc, match=f"^{message}$"):  # as a decorator, refused at once
        tinynet.init.register(name)
    assert tinynet.init.available() == before


def test_the_ligature_name_is_one_get_could_not_find(restore_registry):
    # Why 'ﬁ_init' is refused: the parser reads it as 'fi_init', with or without parameters.
    assert tinynet.init.parse_spec("\ufb01_init") == ("fi_init", {})
    assert tinynet.init.parse_spec("\ufb01_init(std=1)") == ("fi_init", {"std": 1})
    with pytest.raises(UnknownNameError, match=r"unknown initializer 'fi_init'.*'\ufb01_init' reads "
                                                r"as 'fi_init': Python NFKC-normalises"):
        tinynet.init.get("\ufb01_init(std=1)")
    tinynet.init.register("fi_init", lambda shape, rng, std=1.0: np.full(shape, std))
    # Registered in normal form, it is found by either spelling, as Python finds a variable.
    for spec in ["fi_init(std=2)", "\ufb01_init(std=2)"]:
        assert np.all(tinynet.init.get(spec)((2, 3), np.random.default_rng(0), LEAKY) == 2)


@pytest.mark.parametrize("name", ["match", "case", "type", "_", "_private", "\u00e9t\u00e9",
                                  "Mixed_Case2"])
def test_soft_keywords_and_other_identifiers_can_be_registered(name, restore_registry):
    # Soft keywords parse as plain names, so get reads them back: allowed.
    tinynet.init.register(name, lambda shape, rng, std=1.0: np.full(shape, std))
    assert tinynet.init.parse_spec(f"{name}(std=0.5)") == (name, {"std": 0.5})
    assert np.all(tinynet.init.get(f"{name}(std=0.5)")((2, 2), np.random.default_rng(0),
                                                        LEAKY) == 0.5)


def test_every_registered_name_round_trips_through_get():
    for name in tinynet.init.available():
        assert tinynet.init.check_name(name) == name
        assert tinynet.init.parse_spec(name) == (name, {})
        assert tinynet.init.parse_spec(f" {name}( ) ") == (name, {})


def test_a_keyword_spec_says_why_it_is_not_a_name():
    for spec in ["None", "True(std=1)", "lambda", "class(std=1)"]:
        with pytest.raises(ValueError, match=r"is a Python keyword, which cannot name an "
                                             r"initializer$"):
            tinynet.init.get(spec)
    with pytest.raises(TypeError, match=r"initializer spec must be a string such as "
                                        r"'normal\(std=0.5\)', got 3 of type int"):
        tinynet.init.parse_spec(3)


@pytest.mark.parametrize("function", [lambda shape: np.zeros(shape),
                                      lambda shape, rng, std: np.zeros(shape),
                                      lambda shape, rng, **kw: np.zeros(shape)])
def test_register_refuses_a_function_it_could_not_call(function, restore_registry):
    with pytest.raises(TypeError, match=r"must be f\(shape, rng, key=default, ...\)"):
        tinynet.init.register("bad", function)


def test_unknown_name_lists_the_valid_ones_and_the_closest():
    with pytest.raises(UnknownNameError, match=r"unknown initializer 'xavier_norml'; expected one "
                                                r"of: auto, bert, constant, .*did you mean "
                                                r"'xavier_normal'"):
        tinynet.init.get("xavier_norml")


@pytest.mark.parametrize("spec,exc,message", [
    ("normal(0.5)", ValueError, "keyword parameters only"),
    ("normal(std=__import__('os'))", ValueError, "must be a literal"),
    ("normal(", ValueError, "not of the form name or name"),
    ("normal(sd=0.5)", TypeError, "'normal' got unknown parameter\\(s\\) sd; it accepts std"),
    ("he_normal(gain=2)", TypeError, "'he_normal' got unknown parameter\\(s\\) gain; it accepts "
                                     "a, mode, nonlinearity"),
    ("lecun_normal(gain=2)", TypeError, "it accepts no parameters"),
    ("kaiming_normal(mode='fan_avg')", UnknownNameError,
     r"unknown mode 'fan_avg'; expected one of: fan_in, fan_out .*variance_scaling\(mode=...\) "
     r"takes the other fan modes"),
    ("kaiming_uniform(mode=1)", UnknownNameError, r"unknown mode 1; expected one of: fan_in"),
    ("kaiming_normal(nonlinearity='softplus')", UnknownNameError,
     r"unknown nonlinearity 'softplus'; expected one of: conv1d, .*, tanh$"),
    ("he_normal(nonlinearity='Relu')", UnknownNameError, r"did you mean 'relu'"),
    ("kaiming_normal(a=-0.1)", ValueError, r"^a must be a finite number >= 0.0, got -0.1$"),
    ("kaiming_normal(a='0.1')", TypeError, r"^a must be a real number, got '0.1' of type str$"),
    ("kaiming_normal(a=1e101)", ValueError, r"^a must be at most 1e100, got 1e\+101$"),
    ("kaiming_truncated_normal(a=0.1, nonlinearity='relu')", ValueError,
     r"^a must be 0 unless nonlinearity='leaky_relu' \(a is its negative slope; PyTorch ignores "
     r"it\), got a=0.1 with nonlinearity='relu'$"),
    ("normal(std=-1)", ValueError, "std must be a finite number > 0.0, got -1.0"),
    ("normal(std=1, std=2)", ValueError, "must name each parameter once"),
    ("normal(**{'std': 0.5})", ValueError, "must name each parameter once"),
    ("normal(std={(1,): 2})", ValueError, "must be a literal number or string"),
    ("normal(std=[1])", ValueError, "must be a literal number or string"),
    ("xavier_normal(gain=1e200)", ValueError, "gain must be at most 1e100"),
    ("he_leaky(alpha=-0.1)", ValueError, "alpha must be a finite number >= 0.0"),
    ("variance_scaling(mode='fan_middle')", UnknownNameError, "unknown fan mode 'fan_middle'"),
    ("variance_scaling(distribution='cauchy')", UnknownNameError, "unknown distribution 'cauchy'"),
])
def test_bad_specs(spec, exc, message):
    with pytest.raises(exc, match=message):
        tinynet.init.get(spec)


def test_generic_variance_scaling_function():
    init = tinynet.init.variance_scaling(np.float64(2.0), "fan_out", "uniform")
    assert init.variance((4, 10), LEAKY) == 0.5
    assert init.distribution == "uniform"


# --- PyTorch's and Keras's names ------------------------------------------------------

def test_ones_is_every_weight_one():
    ones = tinynet.init.get("ones")
    for shape in [(1, 1), (3, 7), (7, 3)]:
        w = tinynet.init.draw(ones, shape, np.random.default_rng(0), LEAKY)
        assert w.shape == shape and np.all(w == 1.0)
    assert ones.variance((3, 7), LEAKY) == 0 and ones.mean((3, 7), LEAKY) == 1
    assert tinynet.init.get("ones").describe((3, 7), LEAKY).formula == "w = 1"


@pytest.mark.parametrize("shape", BIG_SHAPES, ids=["300x500", "500x300"])
def test_torch_linear_default_is_uniform_within_one_over_sqrt_fan_in(shape):
    n_out, n_in = shape
    init = tinynet.init.get("torch_linear_default")
    # What it claims, exactly: Var = 1/(3 fan_in), and PyTorch's arithmetic for
    # kaiming_uniform_(a=sqrt(5)): gain = calculate_gain('leaky_relu', sqrt(5)), std = gain /
    # sqrt(fan_in), bound = sqrt(3) std (= 1/sqrt(fan_in) up to rounding).
    assert init.variance(shape, LEAKY) == 1 / (3 * n_in)
    torch_bound = math.sqrt(3.0) * math.sqrt(2.0 / (1 + math.sqrt(5) ** 2)) / math.sqrt(n_in)
    assert init.bound(shape) == pytest.approx(torch_bound, rel=1e-15)
    assert init.variance(shape, LEAKY) == pytest.approx(
        tinynet.init.get(f"kaiming_uniform(a={math.sqrt(5)!r})").variance(shape, LEAKY),
        rel=1e-15)
    w = init(shape, np.random.default_rng(7), LEAKY)
    bound = 1 / math.sqrt(n_in)
    # Uniform on [-bound, bound): nothing beyond it, and N = 150,000 draws come within 0.1 % of
    # both ends (a sample missing the top 0.05 % of the range has probability 0.9995^150000).
    assert np.max(w) < bound and np.min(w) >= -bound
    assert np.max(w) > 0.999 * bound and np.min(w) < -0.999 * bound
    # The sample variance's relative standard error is sqrt((kurtosis - 1)/N) with kurtosis 1.8
    # for a uniform: sqrt(0.8/150000) = 0.0023; we allow 5 of them (0.012). A fan_out mix-up
    # (Var 1/(3 fan_out)) is 40 % off here, kaiming_uniform's default (2/fan_in) 500 % off.
    assert abs(np.var(w) * 3 * n_in - 1) < 5 * math.sqrt(0.8 / w.size)
    assert abs(np.mean(w)) < 5 * math.sqrt(1 / (3 * n_in) / w.size)


def torch_kaiming_std(shape, a=0.0, mode="fan_in", nonlinearity="leaky_relu"):
    """torch.nn.init.kaiming_normal_'s std, as its source computes it."""
    n_out, n_in = shape
    gain = math.sqrt(2.0 / (1 + a ** 2)) if nonlinearity == "leaky_relu" else \
        TORCH_GAINS[nonlinearity]
    return gain / math.sqrt(n_in if mode == "fan_in" else n_out)


@pytest.mark.parametrize("family", ["kaiming", "he"])
@pytest.mark.parametrize("distribution", sorted(DISTRIBUTIONS))
@pytest.mark.parametrize("params", [
    {}, {"a": 0.2}, {"a": 3.0}, {"mode": "fan_out"}, {"nonlinearity": "relu"},
    {"nonlinearity": "tanh", "mode": "fan_out"}, {"nonlinearity": "linear"},
    {"nonlinearity": "sigmoid"}, {"nonlinearity": "selu"}, {"nonlinearity": "conv2d"},
    {"a": 0.5, "mode": "fan_out", "nonlinearity": "leaky_relu"},
])
def test_kaiming_parameters_give_torchs_std(family, distribution, params):
    spec = f"{family}_{distribution}({', '.join(f'{k}={v!r}' for k, v in params.items())})"
    init = tinynet.init.get(spec)
    for shape in [(3, 7), (7, 3)]:  # non-square both ways, so fan_in and fan_out differ
        assert init.std(shape, LEAKY) == pytest.approx(torch_kaiming_std(shape, **params),
                                                       rel=1e-15)
        assert init.distribution == distribution
    if distribution == "uniform":  # torch's bound sqrt(3) std, on a big layer
        w = init((300, 500), np.random.default_rng(0), LEAKY)
        bound = math.sqrt(3.0) * torch_kaiming_std((300, 500), **params)
        assert bound * 0.999 < np.max(np.abs(w)) <= bound * (1 + 1e-15)


@pytest.mark.parametrize("distribution", sorted(DISTRIBUTIONS))
def test_kaiming_defaults_are_he_bit_for_bit(distribution):
    # PyTorch's defaults a=0, mode='fan_in', nonlinearity='leaky_relu' give gain sqrt(2): the
    # draws stay what he_* drew before the parameters existed (Var = 2.0 / fan_in exactly).
    shape = (30, 50)
    reference = get_distribution(distribution).sample(np.random.default_rng(3), shape,
                                                      math.sqrt(2.0 / 50))
    if distribution == "normal":
        np.testing.assert_array_equal(reference, np.random.default_rng(3).normal(
            0.0, math.sqrt(2.0 / 50), size=shape))
    for spec in [f"he_{distribution}", f"kaiming_{distribution}",
                 f"kaiming_{distribution}(a=0, mode='fan_in', nonlinearity='leaky_relu')",
                 f"he_{distribution}(a=0.0)", f"kaiming_{distribution}(nonlinearity='relu')"]:
        np.testing.assert_array_equal(draw(spec, shape, seed=3), reference)
        assert tinynet.init.get(spec).variance(shape, LEAKY) == 2.0 / 50


@pytest.mark.parametrize("keras,suggestion,note", [
    ("HeNormal", "he_normal", "Keras's HeNormal draws from a truncated normal (cut at ±2σ, σ "
                              "divided by 0.8796 so the variance is exactly 2/fan_in); tinynet's "
                              "he_normal is a plain normal of that variance: Keras's HeNormal is "
                              "tinynet's he_truncated_normal"),
    ("LecunNormal", "lecun_normal", "Keras's LecunNormal is tinynet's lecun_truncated_normal"),
    ("GlorotNormal", "glorot_normal", "Keras's GlorotNormal is tinynet's glorot_truncated_normal"),
    ("GlorotUniform", "glorot_uniform", None),
    ("HeUniform", "he_uniform", None),
    ("LecunUniform", "lecun_uniform", None),
    ("VarianceScaling", "variance_scaling", "pass distribution='truncated_normal' for Keras's"),
    ("Orthogonal", "orthogonal", None),
    ("Zeros", "zeros", None),
    ("Ones", "ones", None),
    ("Constant", "constant", None),
    ("RandomNormal", "normal", "Keras's RandomNormal defaults to stddev=0.05"),
    ("random_normal", "normal", "Keras's RandomNormal defaults to stddev=0.05"),
    ("RandomUniform", "uniform", "Keras's RandomUniform takes bounds"),
    ("TruncatedNormal", "truncated_normal", "its std is 0.8796·s"),
    ("HeNormal(seed=1)", "he_normal", "he_truncated_normal"),
])
def test_keras_names_suggest_their_snake_case_entry(keras, suggestion, note):
    with pytest.raises(UnknownNameError) as error:
        tinynet.init.get(keras)
    message = str(error.value)
    assert f"(did you mean {suggestion!r}?)" in message
    if note is None:
        assert "Keras's" not in message
    else:
        assert note in message
    assert message.endswith("register your own with tinynet.init.register(name, function)")
    shown = ", ".join(sorted(tinynet.init.registry._REGISTRY)[:12])  # long lists: a count
    assert f"expected one of: {shown}, ... ({len(tinynet.init.registry._REGISTRY)} in all)" \
        in message and "tinynet.init.available() lists them all" in message
    assert "\n" not in message


def test_the_keras_truncation_constant_is_tinynets():
    # Keras divides sqrt(scale / fan) by 0.87962566103423978, the std of N(0, 1) cut at ±2:
    # the same correction as tinynet's truncated normal, so the notes' equivalences hold.
    assert math.sqrt(TRUNCATED_VARIANCE_FACTOR) == pytest.approx(0.87962566103423978, rel=1e-15)


def test_a_camel_case_name_of_the_users_is_suggested_too(restore_registry):
    tinynet.init.register("my_init", lambda shape, rng: np.zeros(shape))
    with pytest.raises(UnknownNameError, match=r"did you mean 'my_init'\?"):
        tinynet.init.get("MyInit")
    with pytest.raises(UnknownNameError, match=r"did you mean 'he_leaky'\?"):
        tinynet.init.get("HeLeaky")


def test_distinct_folds_the_aliases():
    distinct = tinynet.init.distinct()
    assert list(distinct) == sorted(distinct)
    named = [name for key, aliases in distinct.items() for name in [key, *aliases]]
    assert sorted(named) == tinynet.init.available()  # every name once
    assert {key: aliases for key, aliases in distinct.items() if aliases} == {
        f"{canonical}_{d}": [f"{alias}_{d}"] for d in DISTRIBUTIONS
        for canonical, alias in [("he", "kaiming"), ("xavier", "glorot")]}
    assert "auto" in distinct and "kaiming_normal" not in distinct
    entries = {entry.name: entry for entry in tinynet.init.entries()}
    for key, aliases in distinct.items():
        assert entries[key].alias_of == ""
        for alias in aliases:  # an alias draws what its entry draws, parameters and all
            assert entries[alias].alias_of == key
            params = {"he": "(a=0.3, mode='fan_out')", "xavier": "(gain=1.5)"}[key.split("_")[0]]
            for suffix in ["", params]:
                np.testing.assert_array_equal(draw(key + suffix, (5, 9), seed=2),
                                              draw(alias + suffix, (5, 9), seed=2))


def test_replacing_an_entry_unfolds_its_aliases(restore_registry):
    tinynet.init.register("he_normal", lambda shape, rng: np.zeros(shape), override=True)
    distinct = tinynet.init.distinct()
    assert distinct["he_normal"] == [] and distinct["kaiming_normal"] == []
    assert distinct["he_uniform"] == ["kaiming_uniform"]


def test_the_docs_table_is_the_registry():
    from helpers import page
    from tinynet.init.__main__ import markdown_table
    assert markdown_table() in page("initializers.md"), \
        "docs/initializers.md's table is stale: regenerate it with python -m tinynet.init --markdown"


@pytest.mark.parametrize("a", [0.01, 0.1, 0.3, 0.7, 1.3])
def test_he_leaky_and_kaiming_with_the_same_slope_are_the_same_variance(a):
    """One formula, 2 / (1 + a²), for both: they agreed only to the last bit before."""
    shape = (3, 5)
    assert tinynet.init.get(f"he_leaky(alpha={a})").variance(shape, None) == \
        tinynet.init.get(f"kaiming_normal(a={a})").variance(shape, None)
