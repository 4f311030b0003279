"""Which average of fan_in and fan_out should a non-square layer use? The fan-averaging note's
open question, settled by measurement.

    python examples/fan_average.py                  # table, figure, training comparison
    python examples/fan_average.py --commit         # the figure into examples/figures/
    python examples/fan_average.py --out /tmp/figures --no-training

Stacks alternate m → n → m → ... (m = 64; n = 256 and 1024; 10 to 40 layers). Every layer
draws Var(w) = gain² / fan with one of three averages of m and n:

    arithmetic      (m + n) / 2            Xavier/Glorot
    geometric       sqrt(m n)
    contraharmonic  (m² + n²) / (m + n)    the note's least-squares choice

A round trip m → n → m multiplies the forward second moment by (m/fan)(n/fan) = m n / fan²,
and the backward one by the same: exactly 1 for the geometric mean, less for the others.
"""

from __future__ import annotations

import os

# One BLAS thread unless told otherwise: OpenBLAS with two threads slows many times over when
# the machine's other core is busy.
for _variable in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_variable, "1")

import argparse
import math
from pathlib import Path

import numpy as np

import tinynet
from tinynet import plots
from tinynet.diagnostics import propagate
from tinynet.init.fans import FAN_MODES

from outputs import add_out, parse_with_out  # examples/, beside this script

AVERAGES = {"arithmetic": ("xavier", "fan_avg"), "geometric": ("xavier_geometric", "fan_geo_avg"),
            "contraharmonic": ("xavier_contraharmonic", "fan_contraharmonic")}
GAINS = {"identity": 1.0, "relu": math.sqrt(2.0)}
FIGURE = "fan_average.png"
"""The file written, in --out."""


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """The arguments ``argv`` (default: the command line), with ``out`` the folder to write
    into (:func:`outputs.parse_with_out`)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--m", type=int, default=64, help="the narrow width (64)")
    parser.add_argument("--n", type=int, nargs="+", default=[256, 1024],
                        help="wide widths (256 1024)")
    parser.add_argument("--depths", type=int, nargs="+", default=[10, 20, 40],
                        help="numbers of layers (even: whole round trips; 10 20 40)")
    parser.add_argument("--batch", type=int, default=256, help="inputs per measurement (256)")
    parser.add_argument("--seed", type=int, default=0, help="seed of data and weights (0)")
    add_out(parser, "fan_average")
    parser.add_argument("--no-training", action="store_true",
                        help="skip the training comparison")
    args = parse_with_out(parser, argv)
    if any(d < 2 or d % 2 for d in args.depths):
        parser.error(f"--depths must be even numbers >= 2, got {args.depths}")
    if args.m < 1 or any(n < 1 for n in args.n):
        parser.error("widths must be at least 1")
    return args


def stack(m: int, n: int, depth: int, activation: str, average: str, seed: int):
    """A depth-layer stack m → n → m → ... → m whose every layer uses ``average``."""
    family, _ = AVERAGES[average]
    spec = f"{family}_normal(gain={GAINS[activation]!r})"
    sizes = [m if i % 2 == 0 else n for i in range(depth + 1)]
    return tinynet.mlp(sizes, activation=activation, output=activation, init=spec, seed=seed)


def round_trip(m: int, n: int, average: str) -> float:
    """Theory: the factor one m → n → m round trip applies to the second moment."""
    fan = FAN_MODES[AVERAGES[average][1]].of(m, n)
    return m * n / fan ** 2


def measure(args: argparse.Namespace) -> list[dict]:
    rng = np.random.default_rng([args.seed, 1])  # data: a stream apart from the weights
    X = rng.normal(size=(args.batch, args.m))
    rows = []
    for activation in GAINS:
        for n in args.n:
            for depth in args.depths:
                for average in AVERAGES:
                    net = stack(args.m, n, depth, activation, average, args.seed)
                    report = propagate(net, X, seed=args.seed)
                    output_gradient = report.layers[-1].grad_a.measured
                    rows.append({
                        "activation": activation, "n": n, "depth": depth, "average": average,
                        "theory": round_trip(args.m, n, average) ** (depth // 2),
                        "forward": report.layers[-1].a.measured / report.input_second_moment,
                        "backward": report.input_gradient.measured / output_gradient})
    return rows


def print_table(rows: list[dict], m: int) -> None:
    print(f"End-to-end second-moment ratios of m → n → ... → m stacks, m = {m}: "
          "measured forward E[a_out²]/E[x²] and backward E[(dL/dx)²]/E[(dL/dy)²], and the "
          "theory (m n / fan²)^(layers/2) for both")
    print(f"{'activation':<10} {'n':>5} {'layers':>6}  " +
          "  ".join(f"{a + ' (fwd / bwd / theory)':>38}" for a in AVERAGES))
    groups = {}
    for row in rows:
        groups.setdefault((row["activation"], row["n"], row["depth"]), {})[row["average"]] = row
    for (activation, n, depth), by_average in groups.items():
        cells = [f"{r['forward']:10.3g} / {r['backward']:9.3g} / {r['theory']:9.3g}"
                 for r in by_average.values()]
        print(f"{activation:<10} {n:>5} {depth:>6}  " + "  ".join(f"{c:>38}" for c in cells))
    print()


def plot(rows: list[dict], path: Path) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    activations = list(GAINS)
    fig, axes = plt.subplots(1, len(activations), figsize=(11, 4.5), sharey=True)
    for ax, activation in zip(axes, activations):
        for average, color in zip(AVERAGES, ["C0", "C1", "C2"]):
            for n, marker in zip(sorted({r["n"] for r in rows}), ["o", "s", "^"]):
                mine = [r for r in rows if r["activation"] == activation and r["n"] == n
                        and r["average"] == average]
                depth = [r["depth"] for r in mine]
                ax.plot(depth, [r["theory"] for r in mine], "--", color=color, linewidth=1)
                ax.plot(depth, [r["forward"] for r in mine], marker, color=color,
                        label=f"{average}, n = {n}")
                ax.plot(depth, [r["backward"] for r in mine], marker, color=color,
                        fillstyle="none")
        ax.set_yscale("log")
        ax.set_xlabel("layers")
        ax.set_title(f"{activation} (gain {GAINS[activation]:.3g})")
        ax.grid(True, alpha=0.3)
    axes[0].set_ylabel("end-to-end second-moment ratio")
    axes[0].legend(fontsize=plots.TEXT_POINTS, title_fontsize=plots.TEXT_POINTS,
                   title="filled: forward, open: backward, dashed: theory")
    fig.suptitle("m → n → m stacks, m = 64: only the geometric mean keeps the signal")
    fig.tight_layout()
    plots.save(fig, path, dpi=110)
    plt.close(fig)


def training_comparison(seed: int) -> None:
    """Fit a random linear map through a 10-layer identity stack 32 → 128 → ... → 32."""
    m, n, depth, samples = 32, 128, 10, 512
    rng = np.random.default_rng([seed, 1])  # data: a stream apart from the weights
    X = rng.normal(size=(samples, m))
    y = X @ rng.normal(0.0, 1.0 / math.sqrt(m), size=(m, m))
    print(f"Training: a random linear map through a {depth}-layer identity stack {m} → {n} → "
          f"... → {m}, {samples} samples (loss at start about {np.mean(np.sum(y * y, 1)):.0f}), "
          "minibatch 32, 50 epochs; final loss, mean of 3 seeds")
    for lr in (0.01, 0.003, 0.001):
        cells = []
        for average in AVERAGES:
            histories = [stack(m, n, depth, "identity", average, seed + s).fit(
                X, y, epochs=50, lr=lr, batch_size=32) for s in range(3)]
            diverged = sum(h.diverged for h in histories)
            cells.append(f"{average} " + (f"diverged ({diverged}/3)" if diverged else
                                          f"{np.mean([h.loss[-1] for h in histories]):.3g}"))
        print(f"  lr {lr:<6}: " + ", ".join(cells))
    print()


def main(argv: list[str] | None = None) -> None:
    """Measure, print and draw, then compare training (arguments ``argv``, default: the
    command line)."""
    args = parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    rows = measure(args)
    print_table(rows, args.m)
    plot(rows, args.out / FIGURE)
    print(f"figure: {args.out / FIGURE}\n")
    if not args.no_training:
        training_comparison(args.seed)


if __name__ == "__main__":
    main()
