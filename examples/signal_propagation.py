"""Second moments through deep networks: what each initializer does to the signal, measured
beside the theory, with the notes' explosion table and the classic activation histograms.

    python examples/signal_propagation.py                 # figures into ./signal_propagation/
    python examples/signal_propagation.py --commit        # into examples/figures/ (the docs')
    python examples/signal_propagation.py --depth 50 --out /tmp/figures

Every figure is of untrained networks at initialization: that is where the theory applies.
"""

from __future__ import annotations

import os

# One BLAS thread unless told otherwise: OpenBLAS with two threads slows many times over when
# the machine's other core is busy.
for _variable in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_variable, "1")

import argparse

import numpy as np

import tinynet
from tinynet.diagnostics import propagate
from tinynet.init.distributions import TRUNCATION

from outputs import add_out, parse_with_out  # examples/, beside this script

ACTIVATIONS = ["identity", "relu", "leaky_relu", "sigmoid", "tanh"]
INITS = ["normal", "lecun_normal", "xavier_normal", "he_normal", "he_leaky", "orthogonal"]


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """The arguments ``argv`` (default: the command line), with ``out`` the folder to write
    into (:func:`outputs.parse_with_out`)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--depth", type=int, default=30,
                        help="layers (30; 20 to 50 is the idea)")
    parser.add_argument("--width", type=int, default=100, help="units per layer (100)")
    parser.add_argument("--batch", type=int, default=500, help="inputs per measurement (500)")
    parser.add_argument("--seed", type=int, default=0, help="seed of data and weights (0)")
    add_out(parser, "signal_propagation")
    args = parse_with_out(parser, argv)
    for name in ("depth", "width", "batch"):
        if getattr(args, name) < 1:
            parser.error(f"--{name} must be at least 1, got {getattr(args, name)}")
    return args


def explosion_table(rng: np.random.Generator) -> None:
    """The notes' table: N(0,1) weights, 100 inputs, no activation."""
    X = rng.normal(size=(2000, 100))
    net = tinynet.mlp([100, 100, 100, 100], activation="identity", output="identity",
                      init="normal", seed=1)
    report = propagate(net, X)
    print("The notes' explosion: N(0,1) weights, 100 inputs of second moment 1, no activation")
    print(f"{'layer':>6} {'E[z²] measured':>15} {'theory 100^k':>13} {'std measured':>13}")
    for layer in report.layers:
        print(f"{layer.index + 1:>6} {layer.z.measured:15,.0f} {layer.z.predicted:13,.0f} "
              f"{np.sqrt(layer.z.measured):13,.1f}")
    print()


def deep_networks(args: argparse.Namespace, rng: np.random.Generator) -> None:
    """One figure per activation, one line per initializer."""
    X = rng.normal(size=(args.batch, args.width))
    sizes = [args.width] * (args.depth + 1)
    forward, backward = [], []
    for activation in ACTIVATIONS:
        reports = {}
        for init in INITS:
            net = tinynet.mlp(sizes, activation=activation, output=activation, init=init,
                              seed=args.seed)
            reports[init] = propagate(net, X, seed=args.seed)
        forward.append([reports[i].layers[-1].a for i in INITS])
        backward.append([reports[i].layers[0].grad_a for i in INITS])
        tinynet.plots.signal(reports, args.out / f"signal_{activation}.png",
                             f"{activation}: {args.depth} layers of width {args.width}")
    for title, rows in [("E[a²] after the last layer", forward),
                        ("E[(dL/da)²] at the first layer's output, from N(0,1) at the top",
                         backward)]:
        print(f"{args.depth} layers of width {args.width}, input E[x²] = 1: {title}, "
              "measured (theory)")
        print(f"{'activation':<11}" + "".join(f"{init:>20}" for init in INITS))
        for activation, moments in zip(ACTIVATIONS, rows):
            print(f"{activation:<11}" + "".join(f"{m.measured:>10.1e} ({m.predicted:6.0e})"
                                                for m in moments))
        print()


def activation_histograms(args: argparse.Namespace, rng: np.random.Generator) -> None:
    """The textbook figure: sigmoid outputs of 5 layers under three initializers."""
    X = rng.normal(size=(1000, 100))
    layers_out = {}
    for init in ["normal", "normal(std=0.01)", "xavier_normal"]:
        net = tinynet.mlp([100] * 6, activation="sigmoid", output="sigmoid", init=init,
                          seed=args.seed)
        outputs, a = [], X
        for layer in net.layers:
            a = layer.forward(a)
            outputs.append(a)
        layers_out[init] = outputs
    tinynet.plots.histograms(layers_out, args.out / "activation_histograms.png",
                             "sigmoid outputs per layer (each panel spans its own range)")


def truncated_normal_demo(rng: np.random.Generator) -> None:
    """An uncorrected ±2σ truncated normal keeps 0.7737 σ²; tinynet's keeps σ²."""
    sigma, n = 1.0, 1_000_000
    naive = rng.normal(0.0, sigma, size=n)
    outside = np.abs(naive) > TRUNCATION * sigma
    while outside.any():
        naive[outside] = rng.normal(0.0, sigma, size=int(outside.sum()))
        outside = np.abs(naive) > TRUNCATION * sigma
    corrected = tinynet.init.get("truncated_normal(std=1.0)")(
        (1000, 1000), rng, tinynet.get_activation("identity"))
    print("Truncated normal, cut at ±2σ, one million draws")
    print(f"  drawn with σ = 1 and cut:                variance {np.var(naive):.4f}"
          "  (theory 0.7737)")
    print(f"  tinynet truncated_normal(std=1), σ = 1.1368: variance {np.var(corrected):.4f}"
          "  (theory 1)")
    print()


def main(argv: list[str] | None = None) -> None:
    """Print the tables and draw the figures (arguments ``argv``, default: the command
    line)."""
    args = parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng([args.seed, 1])  # data: a stream apart from the weights
    explosion_table(rng)
    truncated_normal_demo(rng)
    deep_networks(args, rng)
    activation_histograms(args, rng)
    print(f"figures in {args.out}: signal_<activation>.png, activation_histograms.png")


if __name__ == "__main__":
    main()
