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
# # Lesson 7: Beyond XOR, the digits
#
# The textbooks' chapter on initialization trains on handwritten digits: *Deep Learning from
# Scratch* §6.2 compares weights of std 0.01, Xavier and He on five hidden layers of 100, and
# draws each layer's activations at initialization. Each book shows one run. Here the same
# questions are asked over many seeds, on scikit-learn's 8×8 digits (1,442 training and 355
# test images, ten classes), with a softmax output and cross-entropy.
#
# On ten classes a seed's outcome is no longer "solved or not": it is a test accuracy. A seed
# *learns* when that accuracy is above twice chance (20 %); an initializer's outcome is the
# distribution of test accuracies over seeds.

# %% tags=["parameters"]
SEEDS = 50             # seeds per initializer
EPOCHS = 20            # epochs of minibatch SGD
DEPTH = 5              # hidden layers of 100, as in the book
ACTIVATION = "relu"    # relu or sigmoid

# %%
from dataclasses import replace
from pathlib import Path

import tinynet
from tinynet.text import fold   # long lines broken to fit a notebook
from tinynet.xor import Arm, classification_setup, run_study
from tinynet.xor.bands import evaluation_curves
from tinynet.xor.textbooks import init_histograms

OUT = Path("lesson_figures")   # the figures this lesson writes (git ignores the folder)
OUT.mkdir(exist_ok=True)

digits = tinynet.data.digits()
print(digits)

# %% [markdown]
# ## One network, evaluated as it trains
#
# `fit(..., test=(X_test, y_test), evaluate_every=k)` scores the network on the training and
# test sets every k epochs, without changing a bit of its training.

# %%
net = tinynet.mlp([64, *[100] * DEPTH, 10], activation=ACTIVATION, output="softmax",
                  init="he_normal", seed=0)
history = net.fit(digits.X, digits.y, epochs=EPOCHS, lr=0.01, batch_size=128,
                  loss="cross_entropy", test=(digits.X_test, digits.y_test),
                  evaluate_every=max(1, EPOCHS // 5))
for epoch, accuracy in zip(history.evaluation.epochs, history.evaluation.test_accuracy[0]):
    print(f"after epoch {epoch:3d}: test accuracy {accuracy:.1%}")

# %% [markdown]
# ## The book's experiment over many seeds
#
# Every initializer trains from the same seeds; the report counts the seeds that learned
# (with a Wilson interval), gives the median test accuracy with its quartiles and the mean
# with a t-interval, and compares the arms twice: Fisher's exact test on the fractions that
# learn and the Mann-Whitney test on the accuracies, Holm over both.

# %%
setup = replace(classification_setup("digits"), hidden=(100,) * DEPTH, activation=ACTIVATION,
                lr=0.01, batch_size=128, epochs=EPOCHS, seeds=SEEDS)
arms = [Arm("normal(std=0.01)", loss="cross_entropy", shuffle=True, label="std 0.01"),
        Arm("he_normal", loss="cross_entropy", shuffle=True, label="He")]
study = run_study(arms, setup, evaluate_every=max(1, EPOCHS // 10))
print(fold(study.report()))
evaluation_curves(study, OUT / "07_digits_curves.png")

# %% [markdown]
# With ReLU layers, std 0.01 barely moves in these epochs: no seed learns, while He's median
# seed is far above chance. The curves show why: the bands of std 0.01 stay flat at the loss of
# a uniform guess, log 10 ≈ 2.3.
#
# ## Why: the activations at initialization
#
# The book sends 1,000 inputs drawn from N(0, 1) through five layers of 100 and draws each
# layer's activations. Here the same, pooled over seeds: each layer's standard deviation of
# activations, median over seeds.

# %%
for init in ("normal(std=0.01)", "he_normal"):
    found = init_histograms(ACTIVATION, init, seeds=20)
    stds = "  ".join(f"{q[1]:.2g}" for q in found["std_quartiles"])
    print(f"{ACTIVATION:8s} {init:18s} std of activations by layer: {stds}")

# %% [markdown]
# With std 0.01 each ReLU layer shrinks its input's scale by about 0.01 · √(100/2) ≈ 0.07,
# so after five layers the activations, and the gradients that flow back through the same
# weights, are some 10^-5 of the input's: SGD at lr 0.01 cannot move them in 20 epochs. He's
# std √(2/n_in) keeps the scale layer after layer.
#
# ## Exercises
#
# 1. Set `ACTIVATION = "sigmoid"`. Which initializer learns now, and what do the activations'
#    standard deviations say about the sigmoid's layers?
# 2. Set `SEEDS = 200`. How much narrower are the intervals of the fractions that learn?
# 3. Add the book's Xavier (std 1/√n_in) as a third arm:
#    `arms.append(Arm("lecun_normal", loss="cross_entropy", shuffle=True, label="Xavier"))`.
