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
# # Lesson 1: a network by hand
#
# XOR has four points and two classes, and no straight line separates them: a network needs
# a hidden layer to learn it. The notes' network "99mlp" has two hidden layers of two
# LeakyReLU units and one sigmoid output, 2-2-2-1, trained on the squared error.
#
# In this lesson you compute one forward pass, one backward pass and one step of gradient
# descent with NumPy alone, check each against tinynet, and then check tinynet's backward
# pass against finite differences. Run it as a script (`python
# tutorial/01_a_network_by_hand.py`) or open it as a notebook (see `tutorial/README.md`).
# Its figures go into a folder `lesson_figures/` where you run it.

# %% tags=["parameters"]
SEED = 1        # the seed the network's weights are drawn from
LR = 0.1        # the learning rate
EPOCHS = 3000   # epochs of training at the end of the lesson

# %%
import copy
from pathlib import Path

import numpy as np

import tinynet
from tinynet import plots
from tinynet.text import fold   # long lines broken to fit a notebook

OUT = Path("lesson_figures")   # the figures this lesson writes (git ignores the folder)
OUT.mkdir(exist_ok=True)

X, y = tinynet.data.xor()
print("inputs X (4, 2):", X.tolist())
print("targets y (4, 1):", y.ravel().tolist())

net = tinynet.mlp([2, 2, 2, 1], activation="leaky_relu", output="sigmoid", init="normal",
                  seed=SEED)
print(net)

# %% [markdown]
# ## Forward
#
# Each layer computes `Z = X Wᵀ + b` and `A = φ(Z)`, with `W` of shape `(n_out, n_in)` and a
# batch `X` of shape `(B, n_in)`. LeakyReLU is `z` for `z > 0` and `αz` otherwise (α = 0.01);
# the sigmoid is `1 / (1 + e^(−z))`. Here are the same three layers written out.

# %%
ALPHA = 0.01


def leaky_relu(z):
    return np.where(z > 0, z, ALPHA * z)


def sigmoid(z):
    return 1 / (1 + np.exp(-z))


W = [layer.W.copy() for layer in net.layers]
b = [layer.b.copy() for layer in net.layers]

Z1 = X @ W[0].T + b[0]
A1 = leaky_relu(Z1)
Z2 = A1 @ W[1].T + b[1]
A2 = leaky_relu(Z2)
Z3 = A2 @ W[2].T + b[2]
y_hat = sigmoid(Z3)

print("by hand:", y_hat.ravel().round(6))
print("tinynet:", net.forward(X).ravel().round(6))
print("largest difference:", np.abs(y_hat - net.forward(X)).max())

# %% [markdown]
# ## Backward
#
# The loss is the mean squared error over the batch, `L = (1/B) Σ (ŷ − y)²`, so
# `dL/dŷ = 2(ŷ − y)/B`: the notes' `2(ŷ − y)` for a single sample. The chain rule then runs
# back through every layer: `dZ = dA · φ'(Z)`, `dW = dZᵀ A_prev`, `db = Σ dZ` over the batch,
# and `dA_prev = dZ W`, the gradient handed to the layer below.

# %%
loss = np.mean((y_hat - y) ** 2)
dY = 2 * (y_hat - y) / len(X)


def leaky_relu_slope(z):
    return np.where(z > 0, 1.0, ALPHA)  # at z = 0, the slope is α (tinynet's convention)


dZ3 = dY * y_hat * (1 - y_hat)         # sigmoid'(z) = σ(z)(1 − σ(z))
dW3, db3 = dZ3.T @ A2, dZ3.sum(axis=0)
dA2 = dZ3 @ W[2]
dZ2 = dA2 * leaky_relu_slope(Z2)
dW2, db2 = dZ2.T @ A1, dZ2.sum(axis=0)
dA1 = dZ2 @ W[1]
dZ1 = dA1 * leaky_relu_slope(Z1)
dW1, db1 = dZ1.T @ X, dZ1.sum(axis=0)

y_hat_net = net.forward(X)
net.backward(2 * (y_hat_net - y) / len(X))  # fills every layer's dW and db
print(f"loss {loss:.6f}")
for index, (dW, db) in enumerate([(dW1, db1), (dW2, db2), (dW3, db3)]):
    layer = net.layers[index]
    print(f"layer {index}: largest difference from tinynet's dW "
          f"{np.abs(dW - layer.dW).max():.2g}, db {np.abs(db - layer.db).max():.2g}")

# %% [markdown]
# ## One step of gradient descent
#
# A step moves every weight against its gradient: `W ← W − lr · dW`, `b ← b − lr · db`. One
# epoch of tinynet's `fit` on the whole batch at once (`batch_size=4`, no shuffling) is
# exactly one such step.

# %%
stepped_W = [W[0] - LR * dW1, W[1] - LR * dW2, W[2] - LR * dW3]
net.fit(X, y, epochs=1, lr=LR, batch_size=4, shuffle=False)
for index, (mine, layer) in enumerate(zip(stepped_W, net.layers)):
    print(f"layer {index} W after one step, largest difference: {np.abs(mine - layer.W).max():.2g}")

# %% [markdown]
# ## The code that runs
#
# `net.forward` and `net.backward` ran each layer's `forward` and `backward`, and those are
# written once, in `tinynet.step`: the same lines train with NumPy arrays here, and are the
# lines the compiled backend writes its kernels from. Here they are, side by side:

# %%
import inspect

from tinynet import step

print(inspect.getsource(step.Dense.forward))
print(inspect.getsource(step.Dense.backward))

# %% [markdown]
# `net.fit` runs on the compiled backend by default. For a small network it trains with a
# kernel written out from those lines for this very layout: every weight a variable of its
# own, each group of lines under a comment naming the layer and the line of `tinynet/step.py`
# it comes from. `tinynet.kernel_source` returns the kernel's text; here is where its step
# begins, the first layer's forward pass:

# %%
kernel = tinynet.kernel_source(net).splitlines()
first = next(i for i, line in enumerate(kernel) if "Dense.forward" in line)
print(fold("\n".join(line.strip() for line in kernel[first:first + 8])))

# %% [markdown]
# ## Checking a backward pass: gradcheck
#
# Writing the chain rule out by hand is how bugs get in, so check it numerically: nudge each
# parameter θ by ±ε and compare `(L(θ + ε) − L(θ − ε)) / 2ε` with the gradient from backward.
# `tinynet.gradcheck` does that for every weight and bias and says where they agree.

# %%
report = tinynet.gradcheck(net, X, y)
print(report)

# %% [markdown]
# ## Training
#
# Per-sample SGD (one step per sample, in a new order every epoch) from the same start: a
# copy of the network as seed `SEED` initialised it, before the step above. Then the decision
# boundary before and after: the network's output over the plane (its colour bar reads it),
# with its 0.5 contour.

# %%
start = tinynet.mlp([2, 2, 2, 1], activation="leaky_relu", output="sigmoid", init="normal",
                    seed=SEED)
trained = copy.deepcopy(start)   # start itself stays as initialised
history = trained.fit(X, y, epochs=EPOCHS, lr=LR)
print(history)
print("outputs:", trained.predict(X).ravel().round(3))

fig = plots.figure(figsize=(plots.COLUMN_INCHES, 4.4))   # a notebook's column
before, after = fig.subplots(1, 2)
plots.decision_boundary(start, ax=before, title=f"seed {SEED}, as initialised")
plots.decision_boundary(trained, ax=after, title=f"after {history.epochs:,} epochs")
fig.tight_layout()
fig.savefig(OUT / "01_boundaries.png")
fig

# %% [markdown]
# ## Exercises
#
# Each is a one-line change; run the lesson again after it.
#
# 1. Set `SEED = 0`. The same network, the same data and the same training: does it still
#    learn XOR? Look at the outputs and the loss (1/6 is three outputs stuck at 2/3). Lesson 2
#    asks how often this happens.
# 2. In the gradcheck cell, check a network that has not been trained:
#    `report = tinynet.gradcheck(tinynet.mlp([2, 2, 2, 1], seed=SEED), X, y)`. With zero
#    biases the sample (0, 0) puts every hidden unit exactly at LeakyReLU's kink, z = 0: read
#    what the report says about it.
# 3. LeakyReLU has no derivative at z = 0; tinynet takes the slope there to be α. In
#    `leaky_relu_slope`, change `z > 0` to `z >= 0` (slope 1 at the kink): which gradients stop
#    matching tinynet's, and why only those? (Which sample has z = 0, and what are its inputs?)
