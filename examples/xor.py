"""Train one 99mlp-style network on XOR and show what it learned.

    python examples/xor.py --init he_leaky --shuffle

The defaults are the notes' setting: two hidden LeakyReLU(0.01) layers of width 2, a sigmoid
output, MSE, per-sample SGD at lr 0.01 for 20,000 epochs, zero biases. Success means all four
XOR outputs fall on the right side of 0.5.
"""

from __future__ import annotations

import argparse
import importlib
import time

import numpy as np

import tinynet


def initializer(spec: str) -> str:
    """argparse type: a registered initializer name, optionally with parameters."""
    try:
        tinynet.init.get(spec)
    except (ValueError, TypeError) as error:
        raise argparse.ArgumentTypeError(str(error)) from None
    return spec


def parse_args() -> argparse.Namespace:
    # --import runs first, so that initializers a module registers can be named by --init.
    pre = argparse.ArgumentParser(add_help=False)
    pre.add_argument("--import", dest="modules", action="append", default=[])
    for module in pre.parse_known_args()[0].modules:
        importlib.import_module(module)

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    parser.add_argument("--init", default="he_leaky", type=initializer,
                        help="weight initializer of every layer, a registered name optionally "
                             "with parameters, e.g. normal(std=0.5); one of: "
                             + ", ".join(tinynet.init.available()))
    parser.add_argument("--import", dest="modules", action="append", default=[],
                        metavar="MODULE", help="import MODULE first (for example one that "
                                               "registers your own initializer); repeatable")
    parser.add_argument("--shuffle", action=argparse.BooleanOptionalAction, default=False,
                        help="visit the four samples in a fresh random order every epoch")
    parser.add_argument("--hidden", default="2,2", help="hidden layer widths, comma-separated")
    parser.add_argument("--epochs", type=int, default=20_000, help="training epochs")
    parser.add_argument("--lr", type=float, default=0.01, help="SGD learning rate")
    parser.add_argument("--seed", type=int, default=0, help="seed of weights and shuffling")
    args = parser.parse_args()
    try:
        args.hidden = [int(width) for width in args.hidden.split(",")]
    except ValueError:
        parser.error(f"--hidden must be comma-separated integers such as 2,2, got {args.hidden!r}")
    return args


def main() -> None:
    args = parse_args()

    # Data and network
    X, y = tinynet.data.xor()
    net = tinynet.mlp([2, *args.hidden, 1], activation="leaky_relu", output="sigmoid",
                      init=args.init, seed=args.seed)
    print(net, end="\n\n")

    # Training
    start = time.perf_counter()
    history = net.fit(X, y, epochs=args.epochs, lr=args.lr, shuffle=args.shuffle)
    seconds = time.perf_counter() - start

    # Result
    predictions = net.predict(X).ravel()
    for inputs, target, prediction in zip(X, y.ravel(), predictions):
        mark = "ok" if (prediction > 0.5) == (target > 0.5) else "WRONG"
        print(f"  {inputs.astype(int)} -> {prediction:.4f}  (target {target:.0f})  {mark}")
    solved = bool(np.all((predictions > 0.5) == (y.ravel() > 0.5)))
    print(f"\n{history}; {'solved' if solved else 'not solved'} in {seconds:.1f} s")


if __name__ == "__main__":
    main()
