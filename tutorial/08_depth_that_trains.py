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
# # Lesson 8: Depth that trains — residual blocks, LayerNorm and warmup
#
# In lesson 4 plain stacks of ReLU layers learned less often as they grew deeper, and how deep
# they could go depended on the initializer. On the two spirals of this lesson even He's plain
# stack gives out before 32 layers (below). The notes' next chapter, and the
# Transformer they lead to, stack dozens of layers anyway: each layer's output is *added* to
# its input (a residual block, x + F(x)), and a LayerNorm rescales each sample's units,
# before the branch (pre-norm, x + F(LN(x))) or after the sum (post-norm, LN(x + F(x))).
# Here they are side by side with the plain stack, on two spirals, over many seeds.

# %% tags=["parameters"]
DEPTH = 32           # layers of 16 after the first (even: the blocks have two layers)
SEEDS = 64           # seeds per arm and depth
EPOCHS = 200         # epochs of minibatch SGD (10 batches of 20 an epoch)
NORM = "pre"         # the blocks' LayerNorm: "pre", "post" or None
WARMUP = 0           # steps of linear learning-rate warmup for the normalized arm (0: none)

# %%
from dataclasses import replace
from pathlib import Path

import tinynet
from tinynet.diagnostics import stream
from tinynet.text import fold   # long lines broken to fit a notebook
from tinynet.xor import Arm, figures, run_residual_depth_study
from tinynet.xor.residual_depth import RESIDUAL_DEPTH_SETUP

OUT = Path("lesson_figures")   # the figures this lesson writes (git ignores the folder)
OUT.mkdir(exist_ok=True)

# %% [markdown]
# ## One block, and the network
#
# A block holds its branch's layers, its LayerNorm and how it adds them up; printed, it says
# its formula.

# %%
block = tinynet.Residual([tinynet.Layer(16, 16, "relu"), tinynet.Layer(16, 16, "relu")],
                         norm=NORM)
print(fold(str(block)))
net = tinynet.mlp([2, 16, *[16] * (DEPTH // 2), 1], activation="relu", residual=True,
                  norm=NORM, branch=2, seed=0)
print("\n".join(str(net).splitlines()[:9]), "\n...")

# %% [markdown]
# ## The code that runs
#
# `net.fit` runs compiled code written from the same description of a block that the NumPy
# backend runs (`tinynet.step.Residual`): the blocks are one loop, and each group of lines
# names the line of `tinynet/step.py` it comes from.

# %%
text = tinynet.kernel_source(net)
start = text.rindex("\n", 0, text.index("for block in range(blocks):")) + 1
print(text[start:text.index("\n", text.index("single.skip_sum", start))])

# %% [markdown]
# ## The stream at initialization
#
# What each block adds to the stream decides whether a deep stack starts in a usable state.
# `tinynet.diagnostics.stream` measures, over seeds and beside a prediction, the stream's
# second moment entering each block, and the gradient's flowing back to it from a gradient of
# second moment 1 given to the stream after the last block.

# %%
X, y = RESIDUAL_DEPTH_SETUP.task.training_data()
for norm in (None, NORM):
    nets = [tinynet.mlp([2, 16, *[16] * (DEPTH // 2), 1], activation="relu", residual=True,
                        norm=norm, branch=2, seed=seed) for seed in range(20)]
    report = stream(nets, X)
    last, second = report.positions[-1], report.positions[1]
    print(f"{report.formula}\n  E[x²] after {DEPTH // 2} blocks: measured "
          f"{last.x.measured:.3g}, predicted {last.x.predicted:.3g}\n  E[(dL/dx)²] back at "
          f"the second block: measured {second.grad.measured:.3g}, predicted "
          f"{second.grad.predicted:.3g}")

# %% [markdown]
# Without a norm the stream's second moment multiplies at every block: after 16 blocks it is
# in the millions. With pre-norm each block adds a branch of about the same size to the
# stream, which grows only to about a hundred. Going back, the gradient grows too, faster than
# the prediction, and again far less with the norm. (`docs/residual.md` has the table for
# every kind of block, with its derivation.)
#
# ## Many seeds
#
# Every arm trains from the same seeds at two depths; each cell is a success rate with its
# 95 % interval, and each block is compared with the plain stack by Fisher's exact test, Holm
# over the comparisons.

# %%
arms = [Arm("he_normal", shuffle=True, label="plain, He"),
        Arm("he_normal", shuffle=True, residual="standard", norm=NORM, branch=2,
            warmup=WARMUP, label=f"{NORM}-norm, He" if NORM else "x + F(x), He"),
        Arm("he_normal", shuffle=True, residual="rezero", branch=2, label="ReZero, He")]
study = run_residual_depth_study(replace(RESIDUAL_DEPTH_SETUP, epochs=EPOCHS),
                                 depths=(4, DEPTH), arms=arms, seeds={4: SEEDS, DEPTH: SEEDS})
print(fold(study.table()))
for comparison in study.comparisons(DEPTH, [(arm.name, "plain, He") for arm in arms[1:]]):
    print(fold(comparison.verdict(SEEDS)))
figures.residual_depth(study, OUT / "08_residual_depth.png")

# %% [markdown]
# At four layers the plain stack learns from most seeds. At 32 it learns from 3 % of them;
# the pre-norm blocks from 28 % and ReZero's from 80 %, both more by Fisher's test. Which
# kind of block learns most, and by how much, the full study in `docs/residual.md` measures
# at every depth from 2 to 128 layers, over 1,000 seeds a cell (200 from 32 layers on).
#
# ReZero starts every block as the identity (α = 0): whatever its depth, it starts as a
# network of one hidden layer, and each block's α must grow before its branch
# counts. In these epochs it learns from few seeds at four layers and from most at 32.

# %% [markdown]
# ## Exercises
#
# 1. Set `NORM = "post"`. Does the post-norm block learn as often as the pre-norm one at this
#    depth, and how do its stream's two numbers differ from pre-norm's?
# 2. Set `DEPTH = 64`. Which arms still learn?
# 3. Set `WARMUP = 400`: the normalized arm's learning rate now climbs from 0 over the first
#    400 of its 2,000 steps. Compare its rate with the one you had: do the intervals overlap?
