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
# # Lesson 2: XOR over many seeds
#
# The learner behind the notes trained 99mlp (2-2-2-1, LeakyReLU(0.01), sigmoid output, MSE,
# per-sample SGD at lr 0.01 for 20,000 epochs) and saw it fail about half the time. Then they
# tried other initializers and shuffling, ran each 100 times and reported 46 %, 45 %, 44 % and
# 55 %. Which of these differences are real? This lesson answers with intervals and tests,
# and works out how many seeds a comparison needs.

# %% tags=["parameters"]
SEEDS = 2000      # seeds in the study
GROUP = 100       # seeds per small study, as in the notes
EPOCHS = 20_000   # epochs per seed, as in the notes

# %%
from dataclasses import replace
from pathlib import Path

import numpy as np
from scipy.stats import binom

import tinynet
from tinynet import plots, stats
from tinynet.text import fold   # long lines broken to fit a notebook
from tinynet.xor import Arm, Setup, figures, run_study

OUT = Path("lesson_figures")   # the figures this lesson writes (git ignores the folder)
OUT.mkdir(exist_ok=True)

setup = replace(Setup(), epochs=EPOCHS)   # Setup() is 99mlp, as in the notes
print(setup.describe(seeds=False))

# %% [markdown]
# ## One run says nothing
#
# Five seeds of the same network, trained the same way on the same four points. The seed
# only decides the initial weights.

# %%
X, y = tinynet.data.xor()
for seed in range(5):
    net = tinynet.mlp([2, 2, 2, 1], init="normal", seed=seed)
    history = net.fit(X, y, epochs=EPOCHS, lr=setup.lr, shuffle=False)
    outputs = net.predict(X).ravel()
    verdict = "learned XOR" if np.all((outputs > 0.5) == (y.ravel() > 0.5)) else "failed"
    print(f"seed {seed}: outputs {outputs.round(2)}, final loss {history.final_loss:.4f}: "
          f"{verdict}")

# %% [markdown]
# ## Many seeds at once
#
# `run_study` trains every seed of every arm side by side on the compiled path and reports
# the success rate with its 95 % Wilson interval, when the successful seeds solved XOR, and
# how the others failed. `record_every` keeps every seed's loss 200 times along the way.

# %%
study = run_study([Arm("normal")], replace(setup, seeds=SEEDS),
                  record_every=max(1, EPOCHS // 200))
print(fold(study.report()))
solved = study.results[0].solved   # one True/False per seed

# %% [markdown]
# ## What the seeds did
#
# The first 100 seeds, each as a panel: the trained network's output over the plane, its 0.5
# contour (where it changes class) and the four points, framed in the colour of how the seed
# ended. A solved seed puts the two red points and the two blue ones on different sides; a
# failed one leaves one or more of them on the wrong side.

# %%
gallery = figures.seed_gallery(study, seeds=100, path=OUT / "02_gallery.png")
gallery

# %% [markdown]
# The loss of the first 100 seeds that failed, against the epoch, coloured as the frames
# above. Most fall within a few thousand epochs onto a plateau (dashed) and sit there, and
# the plateau says where the outputs are stuck: 1/6 when three outputs sit at 2/3 and the
# fourth is exact, 1/8 when two sit at 0.5 and two are exact, 1/4 when all four sit at 0.5.
# A few leave a plateau for a lower one, late in the run.

# %%
failed = figures.loss_curves(study.results[0], which="failed", seeds=100,
                             path=OUT / "02_failed_losses.png")
failed

# %% [markdown]
# ## A study of 100 is a noisy measurement
#
# Cut the seeds into studies of `GROUP` seeds each, as the notes ran them. Every small study
# measures the same network; their rates still scatter, and each one's 95 % interval is about
# ±10 points wide. A 95 % interval misses the true rate one time in twenty on average. We do
# not know the true rate, so count how many miss the rate of all the seeds together, its best
# estimate (which each small study is part of, so this is only close to the real test), and
# ask how often chance alone gives that many misses.

# %%
groups = solved[: len(solved) // GROUP * GROUP].reshape(-1, GROUP)
successes = groups.sum(axis=1)
rates = successes / GROUP
intervals = np.array([stats.wilson_interval(int(k), GROUP) for k in successes])
overall = solved.mean()
missed = np.sum((intervals[:, 0] > overall) | (intervals[:, 1] < overall))
print(f"all {len(solved)} seeds: {overall:.1%}; {len(groups)} studies of {GROUP}: rates from "
      f"{rates.min():.0%} to {rates.max():.0%}; {missed} of {len(groups)} intervals miss "
      f"{overall:.1%}")
chance = binom.sf(missed - 1, len(groups), 0.05)
print(f"{missed} or more misses out of {len(groups)}, if each misses one time in twenty: "
      f"probability {chance:.3f}")

fig = plots.figure(figsize=(9, 4))
ax = fig.subplots()
index = np.arange(len(groups))
ax.errorbar(index, 100 * rates, yerr=100 * np.abs(intervals.T - rates), fmt="o", capsize=3,
            label=f"a study of {GROUP} seeds, 95 % interval")
ax.axhline(100 * overall, color="black", linestyle="--",
           label=f"all {len(solved)} seeds: {overall:.1%}")
ax.set_xticks(index)
ax.set_xlabel(f"study k (seeds {GROUP}·k to {GROUP}·k + {GROUP - 1})")
ax.set_ylabel("seeds that learn XOR (%)")
ax.set_ylim(0, 100)
ax.set_title("99mlp with N(0,1) weights: the same experiment, repeated")
ax.legend(loc="lower right")
fig.tight_layout()
fig.savefig(OUT / "02_studies_of_100.png")
fig

# %% [markdown]
# With the default 2,000 seeds, 4 of the 20 intervals miss: more than one in twenty, and the
# last line says how rarely chance alone gives that many. Rare is not never: this is one draw
# of 20 studies. Exercise 1 repeats the count on 100 studies.
#
# ## The notes' four numbers
#
# Each of the notes' rates came from 100 runs. With their intervals side by side, and
# Fisher's exact test between the lowest and the highest:

# %%
reported = {"N(0,1)": 46, "He": 45, "He-leaky + Xavier output": 44,
            "He-leaky + Xavier output, shuffled": 55}
for name, k in reported.items():
    low, high = stats.wilson_interval(k, 100)
    print(f"{name:36} {k} %   95 % interval [{low:.0%}, {high:.0%}]")
p = stats.fisher_exact_p(44, 100, 55, 100)
print(f"\n44/100 against 55/100: p = {p:.2f}")

# %% [markdown]
# A p-value of 0.16 means that two studies of 100 seeds of one and the same network differ by
# 11 points or more about one time in six: at n = 100, no evidence that shuffling helped.
#
# ## How many seeds does a comparison need?
#
# `stats.seeds_needed(a, b)` gives the seeds per arm for a two-sided test at the 5 % level to
# detect rates `a` and `b` as different 80 % of the time.

# %%
for a, b in [(0.45, 0.55), (0.40, 0.45), (0.40, 0.41), (0.91, 0.98)]:
    print(f"{a:.0%} against {b:.0%}: {stats.seeds_needed(a, b):,.0f} seeds per arm")

# %% [markdown]
# Ten points need about 400 seeds per arm, five about 1,500, one point about 38,000; lesson
# 3's gap at width 8, from 91 % to 98 %, only about 160.
#
# ## Exercises
#
# 1. Set `SEEDS = 10_000` (100 studies of 100; it takes about five times as long): how many
#    intervals miss now, and how likely is that count by chance?
# 2. In the study cell, use `Arm("normal", shuffle=True)`: the samples now come in a new
#    order every epoch. Is the rate's interval clear of the one without shuffling?
# 3. The XOR bench's study (docs/xor.md) of 10,000 seeds per arm finds shuffling worth about
#    2 points (40.6 % against 42.5 %). Change the last loop's pairs to `[(0.406, 0.425)]`:
#    how many seeds does a gap that small need, and could exercise 2 have seen it?
