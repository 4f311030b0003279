# ---
# jupyter:
#   jupytext:
#     formats: py:percent
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# # Lesson 5: distributions and fans
#
# Every initializer in tinynet is `Var(w) = gain² / fan`: a variance, then a distribution to
# draw it from, and a choice of fan. This lesson checks the distributions (why uniform
# weights go up to ±√3σ, why a truncated normal must be widened) and then settles the
# question the fan-averaging note left open: which average of fan_in and fan_out should a
# non-square layer use?

# %% tags=["parameters"]
SAMPLES = 1_000_000      # draws per distribution
M, N = 64, 256           # the narrow and the wide width of the m → n → m stacks
LAYERS = 20              # layers in each stack (even: whole round trips)
ACTIVATION = "identity"  # the stacks' activation
GAIN = 1.0               # the initializers' gain
CUT = 2.0                # where the truncated normal is cut, in standard deviations

# %%
import math
from pathlib import Path

import numpy as np

import tinynet
from tinynet import plots
from tinynet.diagnostics import propagate
from tinynet.init.distributions import get_distribution, truncated_variance_factor
from tinynet.init.fans import FAN_MODES

OUT = Path("lesson_figures")   # the figures this lesson writes (git ignores the folder)
OUT.mkdir(exist_ok=True)
rng = np.random.default_rng(0)

# %% [markdown]
# ## Three distributions, one variance
#
# A uniform distribution on [−L, L] has variance L²/3, so to realise a standard deviation
# s it must reach L = √3·s ≈ 1.732·s. tinynet's truncated normal is redrawn outside ±2σ;
# cutting off the tails removes variance, so it starts from a wider σ (below). All three
# realise the variance asked for:

# %%
draws = {}
for name in ("normal", "uniform", "truncated_normal"):
    distribution = get_distribution(name)
    draws[name] = distribution.sample(rng, (SAMPLES, 1), std=1.0).ravel()
    parameters = ", ".join(f"{key} {value:.4g}" for key, value in
                           distribution.parameters(1.0).items())
    print(f"{name:17} variance {draws[name].var():.4f}, largest |w| "
          f"{np.abs(draws[name]).max():.3f} ({parameters})")

fig = plots.figure(figsize=(8, 3.8))
ax = fig.subplots()
for name, values in draws.items():
    ax.hist(values, bins=200, range=(-4.5, 4.5), density=True, histtype="step", label=name)
ax.set_xlabel("w (std 1 for all three)")
ax.set_ylabel("density")
ax.legend()
fig.tight_layout()
fig.savefig(OUT / "05_distributions.png")
fig

# %% [markdown]
# ## The truncated normal's correction
#
# Draw N(0, 1) and keep only the values within ±c: the variance that is left is
# `γ(c) = 1 − 2c·φ(c) / (2Φ(c) − 1)`, with φ and Φ the normal density and distribution
# function. At c = 2 that is 0.7737: almost a quarter of the variance is gone. To get
# variance s² back, draw with σ = s / √γ, which is what tinynet's `truncated_normal` does.

# %%
normal = rng.normal(size=SAMPLES)
kept = normal[np.abs(normal) <= CUT]
gamma = truncated_variance_factor(CUT)
print(f"cut at ±{CUT:g}: variance left {kept.var():.4f} (theory γ = {gamma:.4f})")
sigma = 1 / math.sqrt(gamma)
widened = rng.normal(scale=sigma, size=SAMPLES)
widened = widened[np.abs(widened) <= CUT * sigma]
print(f"drawn with σ = 1/√γ = {sigma:.4f} and cut at ±{CUT:g}σ: variance {widened.var():.4f}")

# %% [markdown]
# ## Which average of the fans?
#
# A layer of shape m × n has two fans. Keeping the forward signal needs `Var(w) = 1/fan_in`,
# keeping the backward one `1/fan_out`; when the two differ no single variance does both, and
# a compromise averages them. The note's candidates, for a 64 × 256 layer:

# %%
AVERAGES = {"arithmetic (Xavier)": ("xavier_normal", "fan_avg"),
            "geometric": ("xavier_geometric_normal", "fan_geo_avg"),
            "contraharmonic": ("xavier_contraharmonic_normal", "fan_contraharmonic")}
for label, (_, mode) in AVERAGES.items():
    rule = FAN_MODES[mode]
    fan = rule.of(M, N)
    print(f"{label:20} {rule.formula:40} = {fan:6.1f}\n"
          f"  a round trip {M} → {N} → {M} multiplies E[a²] by m·n/fan² = {M * N / fan ** 2:.3f}")

# %% [markdown]
# A round trip m → n → m multiplies the forward second moment by `(m/fan)(n/fan)`, and the
# backward one by the same. Only the geometric mean makes that exactly 1. The contraharmonic
# mean `(m² + n²)/(m + n)` makes each single layer's factors m/fan and n/fan as close to 1
# as possible in least squares, which is why the note proposed it; it is larger than the
# other two, so over many layers it shrinks the signal most. Measure it on stacks of
# `LAYERS` layers, with `propagate` (solid: measured, dashed: the theory):

# %%
sizes = [M if i % 2 == 0 else N for i in range(LAYERS + 1)]
X = rng.normal(size=(256, M))
reports = {}
for label, (family, _) in AVERAGES.items():
    net = tinynet.mlp(sizes, activation=ACTIVATION, output=ACTIVATION,
                      init=f"{family}(gain={GAIN})", seed=0)
    reports[label] = propagate(net, X)
    end = reports[label].layers[-1].a
    print(f"{label:20} after {LAYERS} layers: E[a²] measured {end.measured:.3g}, "
          f"predicted {end.predicted:.3g} (input {reports[label].input_second_moment:.3g})")
fig = plots.signal(reports, path=OUT / "05_fans.png",
                   title=f"{LAYERS} {ACTIVATION} layers alternating {M} → {N} → {M}")
fig

# %% [markdown]
# The geometric mean keeps the stack's signal at order 1 in both directions; Xavier's
# arithmetic mean and the contraharmonic mean shrink it by their round-trip factor every two
# layers. docs/signal.md, "Which average of the fans?", trains such stacks too: there the average
# mostly sets the effective step size.
#
# ## Exercises
#
# 1. Set `N = 1024`: how much faster do the arithmetic and the contraharmonic stacks lose
#    their signal?
# 2. Set `CUT = 1.0`: how much variance does a cut at ±1σ keep, and how wide must σ be?
# 3. Set `ACTIVATION = "relu"`: every stack now loses half its signal per layer. Which
#    `GAIN` gives it back?
