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
# # Lesson 4: depth, where initialization decides
#
# Lesson 3 found initialization starting to matter once a layer has 8 or more inputs. The
# textbook case is depth: stack many layers, and whatever each layer does to the signal's
# size, it does again and again. This lesson follows the signal through a deep network at
# initialization, then trains networks of growing depth under six initializers.
#
# The task: two concentric circles, 128 points (`tinynet.data.circles`); a seed succeeds
# when it classifies at least 95 % of them right.

# %% tags=["parameters"]
ACTIVATION = "relu"     # the hidden layers' activation: relu, leaky_relu or tanh
DEPTHS = (1, 2, 4, 8)   # numbers of hidden layers of 16 to train
SEEDS = 64              # seeds per initializer and depth
EPOCHS = 150            # epochs of minibatch SGD (batches of 32)
LR = 0.2                # the learning rate
SIGNAL_DEPTH = 16       # hidden layers in the network whose signal we follow
SPREAD_SEEDS = 500      # seeds whose signal we measure, to see one network's spread

# %%
from dataclasses import replace
from pathlib import Path

import numpy as np

import tinynet
from tinynet import plots
from tinynet.diagnostics import propagate
from tinynet.text import fold   # long lines broken to fit a notebook
from tinynet.xor import depth_arms, figures, run_depth_study
from tinynet.xor.depth import DEPTH_SETUP, WIDTH

OUT = Path("lesson_figures")   # the figures this lesson writes (git ignores the folder)
OUT.mkdir(exist_ok=True)

X, y = tinynet.data.circles(n=128, seed=0)
print(f"{len(X)} points, E[x²] = {(X ** 2).mean():.3f}, classes {y.mean():.0%} / "
      f"{1 - y.mean():.0%}")

# %% [markdown]
# ## The signal at initialization
#
# A layer maps inputs of second moment `E[a²]` to pre-activations of second moment
# `E[z²] = fan_in · Var(w) · E[a²]`, and ReLU keeps half of it. So each ReLU layer multiplies
# the signal by `fan_in · Var(w) / 2`. Behind the first layer (fan_in 2) every layer has
# fan_in 16: the factor is 16/2 = 8 for N(0,1), 1 for He (`Var(w) = 2/fan_in`) and 1/2 for
# LeCun (`1/fan_in`), and fifteen such layers make 8¹⁵ ≈ 3.5·10¹³, 1 and 2⁻¹⁵ ≈ 3·10⁻⁵.
# `tinynet.diagnostics.propagate` measures the second moments layer by layer, forward and
# backward, beside what that theory predicts:

# %%
reports = {}
for arm in depth_arms(ACTIVATION):
    net = tinynet.mlp([2] + [WIDTH] * SIGNAL_DEPTH + [1], activation=ACTIVATION,
                      init=arm.init, seed=0)
    reports[arm.name] = propagate(net, X)
    last_hidden = reports[arm.name].layers[-2]
    print(f"{arm.name:11} E[a²] after {SIGNAL_DEPTH} hidden layers: predicted "
          f"{last_hidden.a.predicted:9.3g}, measured {last_hidden.a.measured:9.3g}")
fig = plots.signal(reports, path=OUT / "04_signal.png",
                   title=f"{SIGNAL_DEPTH} {ACTIVATION} layers of {WIDTH}, at initialization")
fig

# %% [markdown]
# The measured values of this one network (seed 0) lie far below the predictions. The theory
# predicts an average over initializations; how far does a single network stray from it?
# Measure the last hidden layer's E[a²] for many seeds of the He network (He-leaky for
# LeakyReLU) with a plain forward pass:

# %%
he = depth_arms(ACTIVATION)[4]
moments = []
for seed in range(SPREAD_SEEDS):
    net = tinynet.mlp([2] + [WIDTH] * SIGNAL_DEPTH + [1], activation=ACTIVATION,
                      init=he.init, seed=seed)
    a = X
    for layer in net.layers[:-1]:   # every hidden layer
        a = layer.forward(a)
    moments.append((a ** 2).mean())
moments = np.array(moments)
print(f"{he.name}, {SPREAD_SEEDS} seeds: E[a²] after {SIGNAL_DEPTH} hidden layers has mean "
      f"{moments.mean():.3g} (predicted {reports[he.name].layers[-2].a.predicted:.3g}),\n"
      f"  median {np.median(moments):.3g}, 10th to 90th percentile "
      f"{np.percentile(moments, 10):.2g} to {np.percentile(moments, 90):.2g}")

# %% [markdown]
# Over many seeds the mean is of the prediction's order, carried by a few networks with
# large values, while the typical network (the median) sits an order of magnitude below:
# at width 16 each layer's factor varies from network to network, and sixteen such factors
# multiplied together spread over orders of magnitude. Seed 0, whose signal the figure
# follows, is one of the low ones: below the 10th percentile.

# %% [markdown]
# ## Training at depth
#
# Now train 2-16-...-16-1 networks of each depth from `SEEDS` seeds per initializer
# (minibatches of 32, shuffled every epoch), on the compiled ensemble path.

# %%
setup = replace(DEPTH_SETUP, activation=ACTIVATION, seeds=SEEDS, epochs=EPOCHS, lr=LR)
study = run_depth_study(setup, DEPTHS, progress=False)
print(fold(study.report()))
fig = figures.depth(study, path=OUT / "04_depth.png")
fig

# %% [markdown]
# N(0, 0.01²) starts so small that its signal, and so its gradients, barely reach the
# output: it trains at no depth in this budget. N(0,1), whose signal grows eightfold per
# layer, trains with one or two hidden layers, from 59 % of the seeds with four, and not at
# all with eight, as the predicted E[a²] of its last hidden layer grows from 2.5 at depth 2 to
# 162 at depth 4 and 6.6·10⁵ at depth 8. The other four keep their signal within a few orders
# of magnitude up to depth 8 and train. The full study
# (`python examples/depth.py`: 1,024 seeds a cell, 300 epochs at lr 0.1 where this lesson
# runs 150 at lr 0.2, depths 1 to 32) is in docs/depth.md, "Where initialization decides", where
# every statement that one initializer trains more seeds than another is a Fisher test,
# significant after Holm's correction.
#
# ## Exercises
#
# 1. Set `ACTIVATION = "tanh"`: which initializer suffers now, and which one holds best?
# 2. Set `DEPTHS = (1, 2, 4, 8, 16)` (it takes a little longer): what happens to LeCun,
#    Xavier and orthogonal at 16, and to He?
# 3. Set `SIGNAL_DEPTH = 32`: how far do the median and the percentiles of the He networks
#    now stray from the prediction?
