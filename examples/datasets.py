"""The generated data sets of tinynet.data, each learned by a small MLP and drawn with its
decision boundary: datasets.png.

    python examples/datasets.py                         # into ./datasets/
    python examples/datasets.py --commit                # into examples/figures/ (the docs')
    python examples/datasets.py --epochs 200 --out /tmp/figures
"""

from __future__ import annotations

import argparse

import numpy as np
from matplotlib.figure import Figure

import tinynet
from tinynet import data, plots

from outputs import add_out, parse_with_out  # examples/, beside this script

FIGURE = "datasets.png"
"""The file written, in --out."""


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """The arguments ``argv`` (default: the command line), with ``out`` the folder to write
    into (:func:`outputs.parse_with_out`)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--epochs", type=int, default=2000,
                        help="epochs of per-sample SGD (2,000)")
    add_out(parser, "datasets")
    return parse_with_out(parser, argv)


def main(argv: list[str] | None = None) -> None:
    """Learn and draw every data set (arguments ``argv``, default: the command line)."""
    args = parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    # Two rows of three: the page shows it at full size (945 px at 90 dpi), labels legible.
    fig = Figure(figsize=(10.5, 7.4), layout="constrained")
    panels = fig.subplots(2, 3).ravel()
    spare = panels[-1]  # five data sets: the sixth panel holds the colour bar and the legend
    spare.set_axis_off()
    panels = panels[:len(data.DATASETS)]
    for ax, (name, generate) in zip(panels, data.DATASETS.items()):
        X, y = generate(n=200, noise=0.1, seed=0)
        held_out, y_held_out = generate(n=200, noise=0.1, seed=1)
        net = tinynet.mlp([2, 16, 16, 1], activation="tanh", init="xavier_normal", seed=0)
        net.fit(X, y, epochs=args.epochs, lr=0.05, record_every=None)
        train = np.mean((net.predict(X) > 0.5) == (y > 0.5))
        test = np.mean((net.predict(held_out) > 0.5) == (y_held_out > 0.5))
        plots.decision_boundary(net, X, y, ax=ax, colorbar=False, legend=False,
                                title=f"{name}: train {train:.0%}, held out {test:.0%}")
        print(f"{name}: training accuracy {train:.1%}, held-out {test:.1%}")
    plots.output_colorbar(fig, cax=spare.inset_axes([0.0, 0.05, 0.07, 0.9]))  # one for all
    handles, _ = panels[0].get_legend_handles_labels()
    spare.legend(handles, ["target 0", "target 1", "on the wrong side of 0.5"],
                 loc="center right", frameon=False)
    fig.suptitle("tinynet.data, n = 200, noise 0.1: a 2-16-16-1 tanh MLP after "
                 f"{args.epochs:,} epochs (held out: a second draw, seed 1)")
    plots.save(fig, args.out / FIGURE, dpi=90)
    print(f"wrote {args.out / FIGURE}")


if __name__ == "__main__":
    main()
