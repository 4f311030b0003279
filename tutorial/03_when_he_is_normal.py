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
# # Lesson 3: why He is N(0,1) here, and where initialization starts to matter
#
# The notes tried He initialization on 99mlp and it did not help. He draws weights with
# `Var(w) = 2 / fan_in` (for LeakyReLU, `2 / ((1 + α²) fan_in)`), where fan_in is the
# number of inputs of the layer. In 99mlp every layer has two inputs, so He's standard
# deviation is `sqrt(2/2) = 1`: exactly the learner's `np.random.randn`. This lesson shows
# it, then widens the hidden layer until the initializers disagree.

# %% tags=["parameters"]
SEEDS = 500                     # seeds per initializer and shape
WIDTHS = (2, 4, 8, 16)          # hidden layer widths: 2-w-1 networks
INITS = ("normal", "he_leaky")  # the initializers compared

# %%
from pathlib import Path

import numpy as np

import tinynet
from tinynet.diagnostics import propagate
from tinynet.text import fold   # long lines broken to fit a notebook
from tinynet.xor import Arm, Setup, figures, run_study, run_sweep

OUT = Path("lesson_figures")   # the figures this lesson writes (git ignores the folder)
OUT.mkdir(exist_ok=True)

net = tinynet.mlp([2, 2, 2, 1], init="he_leaky", seed=0)
print(net)
print()
print(net.layers[0].describe_init())

# %% [markdown]
# `he_leaky`'s std is 0.99995 (the 1 + α² with α = 0.01 takes off a hair). Drawn from the
# same seed, its weights are N(0,1)'s times that factor:

# %%
he = tinynet.mlp([2, 2, 2, 1], init="he_leaky", seed=7)
normal = tinynet.mlp([2, 2, 2, 1], init="normal", seed=7)
for index, (a, b) in enumerate(zip(he.layers, normal.layers)):
    print(f"layer {index}: W_he / W_normal = {np.unique((a.W / b.W).round(12))}")

# %% [markdown]
# The networks of the two initializers start all but equal, so they should succeed and fail
# on nearly the same seeds. Train both from the same seeds and compare seed by seed:

# %%
study = run_study([Arm(name) for name in INITS], Setup(seeds=SEEDS))
print(fold(study.report()))
first, second = (study.result(name).solved for name in INITS[:2])
print(f"\n{INITS[0]} and {INITS[1]} end differently on {np.sum(first != second)} of the "
      f"{SEEDS} seeds")

# %% [markdown]
# ## Widen the hidden layer
#
# In a 2-w-1 network the first layer still has fan_in 2, but the output layer has fan_in w.
# N(0,1) weights give the output's pre-activation `z` a second moment of `w · E[a²]`, the
# sum of w terms, and push the sigmoid out towards its flat tails, where its slope, and so
# every gradient through it, is small. He scales the output layer's weights by `sqrt(2/w)`
# and keeps `z` of order 1. `propagate` predicts E[z²] from the weights' variances (an
# average over initializations) and measures it on one network, with the share of outputs
# that start saturated (below 0.01 or above 0.99):

# %%
X = np.random.default_rng(0).uniform(0, 1, size=(256, 2))   # inputs spread over the square
for init in INITS:
    output = propagate(tinynet.mlp([2, 16, 1], init=init, seed=0), X).layers[-1]
    print(f"2-16-1, {init:9}: the output's E[z²] predicted {output.z.predicted:5.2f}, "
          f"measured on seed 0 {output.z.measured:5.2f}; saturated {output.saturated:.1%}")

# %% [markdown]
# And the success rates, per width:

# %%
sweep = run_sweep([Arm(name) for name in INITS],
                  [Setup(hidden=(width,), seeds=SEEDS) for width in WIDTHS], progress=False)
print(sweep.table())
fig = figures.rates(sweep.studies, path=OUT / "03_widths.png")
fig

# %% [markdown]
# At width 2 the initializers agree, as they must. From width 8 on, He's rate is higher,
# by more than the intervals: initialization starts to decide once a fan_in is 8 or more.
# A 2-2-1 network learns XOR only about a quarter of the time, whichever initializer: with
# two hidden units, most starts lead away from the solution.
#
# ## Exercises
#
# 1. Add a third initializer: `INITS = ("normal", "he_leaky", "xavier_normal")`. Xavier
#    averages the fans, `Var(w) = 2/(fan_in + fan_out)`: where does it sit at 2-8-1 and
#    2-16-1, next to N(0,1) and He?
# 2. Set `WIDTHS = (16, 32, 64)`: does N(0,1) keep getting worse as the output layer's
#    fan_in grows, and does He keep up?
# 3. In the sweep cell, give every shape two hidden layers: `Setup(hidden=(width, width),
#    seeds=SEEDS)`. Which layer's fan_in grows now?
