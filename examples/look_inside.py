"""Look inside the seeds of the XOR bench: what solved and failed seeds learned, and how their
loss went. Draws the docs' figures of that section.

    python examples/look_inside.py                      # figures into ./look_inside/
    python examples/look_inside.py --commit             # into examples/figures/ (the docs')
    python examples/look_inside.py --seeds 40 --out /tmp/figures

One study of the notes' 99mlp (2-2-2-1, LeakyReLU hidden layers, sigmoid output, lr 0.01,
20,000 epochs) with N(0,1) weights, in data order and shuffled, keeping every seed's loss
every 100 epochs and its trained network.
"""

from __future__ import annotations

import argparse

import numpy as np
from matplotlib.figure import Figure

import tinynet
from tinynet import plots
from tinynet.xor import Arm, Setup, figures, run_study
from tinynet.xor.cli import add_progress_flag, show_progress

from outputs import add_out, parse_with_out  # examples/, beside this script

FIGURES = ("look_boundaries.png", "look_gallery.png", "look_failed.png", "look_curves.png")
"""The files written, in --out."""


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """The arguments ``argv`` (default: the command line), with ``out`` the folder to write
    into (:func:`outputs.parse_with_out`)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, default=100, help="seeds per arm (100)")
    parser.add_argument("--epochs", type=int, default=20_000, help="epochs (20,000)")
    add_out(parser, "look_inside")
    add_progress_flag(parser)
    return parse_with_out(parser, argv)


def main(argv: list[str] | None = None) -> None:
    """Train the study and draw its figures (arguments ``argv``, default: the command
    line)."""
    args = parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    setup = Setup(seeds=args.seeds, epochs=args.epochs)
    study = run_study([Arm("normal"), Arm("normal", shuffle=True)], setup,
                      progress=show_progress(args.progress),
                      record_every=max(1, args.epochs // 200))
    print(study.report())

    # one solved seed and one of each kind of failure, side by side
    result = study.result(0)
    shown = [(kind, np.flatnonzero(result.outcomes == kind)) for kind in
             ("solved", "one_wrong", "two_wrong")]
    shown = [(kind, int(seeds[0])) for kind, seeds in shown if len(seeds)]
    fig = Figure(figsize=(3.2 * len(shown) + 1.0, 3.4), layout="constrained")  # page width
    panels = fig.subplots(1, len(shown), squeeze=False)[0]
    for ax, (kind, index) in zip(panels, shown):
        seed = study.seeds[index]
        plots.decision_boundary(study.network(0, seed), *tinynet.data.xor(), ax=ax,
                                title=f"seed {seed}: {figures.OUTCOME_LABELS[kind]}",
                                colorbar=False, legend=False)
    plots.output_colorbar(fig, ax=list(panels))  # one bar for the three panels
    fig.suptitle(f"{study.setup.shape}, N(0,1) weights: output after training (crosses: "
                 "points on the wrong side)")
    plots.save(fig, args.out / FIGURES[0], dpi=110)

    # ten panels an arm, two rows of five (the default, about √10 columns, leaves gaps)
    figures.seed_gallery(study, seeds=10, columns=5, path=args.out / FIGURES[1])
    figures.seed_gallery(study, seeds=10, which="failed", columns=5, path=args.out / FIGURES[2])
    figures.study_curves(study, path=args.out / FIGURES[3])
    print("wrote " + ", ".join(str(args.out / name) for name in FIGURES))


if __name__ == "__main__":
    main()
