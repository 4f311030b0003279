"""The textbooks' initialization experiments over many seeds, from one command.

    python examples/textbooks.py --readme docs/textbooks.md   # run them all (about 40 minutes
                                                              # on 2 cores), rewrite the page
    python examples/textbooks.py --render --readme docs/textbooks.md   # the page and figures
                                                                       # from the JSON alone
    python examples/textbooks.py --quick            # 8 seeds, 2 epochs: a try, in ./textbooks

It runs :mod:`tinynet.xor.textbooks`' three experiments (Deep Learning from Scratch §6.2,
Nielsen ch. 3, MNIST-1D's MLP) as studies of ``tinynet.xor`` on the digits and MNIST-1D,
and the book's activation histograms at initialization; writes the results as JSON (with the
machine, its load and the seconds of each part) and the figures: with ``--commit`` or
``--readme`` into the committed ``examples/results/textbooks.json`` and
``examples/figures/textbooks_*.png``, otherwise under ``--out`` (``./textbooks``); then the
docs page's section between ``<!-- textbooks start -->`` and ``<!-- textbooks end -->``,
rendered from the JSON alone. ``tests/test_readme.py`` renders the committed JSON again and
fails if the page differs.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

from tinynet.files import put_between, write_whole
from tinynet.plots import TEXT_POINTS, color_cycle, figure, finish, legend_below
from tinynet.xor.bands import band
from tinynet.xor.cli import add_progress_flag, show_progress
from tinynet.xor.report import RankedComparison
from tinynet.xor.textbooks import (DLFS_LABELS, EXPERIMENTS, HISTOGRAM_ARMS,
                                   HISTOGRAM_BINS, NIELSEN, adjust, init_histograms,
                                   run_experiment, sooner)
from xor_studies import timed  # examples/, beside this script

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "examples" / "results"
FIGURES = ROOT / "examples" / "figures"
MARKERS = ("<!-- textbooks start -->\n", "<!-- textbooks end -->")
PAPER_MLP = 0.68
"""MNIST-1D's MLP in the paper's table: 68 % test accuracy."""


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    summary, details = __doc__.split("\n\n", 1)
    parser = argparse.ArgumentParser(description=summary, epilog=details,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true",
                        help="8 seeds, 2 epochs, the digits only: a try (not committed)")
    parser.add_argument("--out", type=Path, default=Path("textbooks"),
                        help="where the JSON and PNGs go unless --commit (./textbooks)")
    parser.add_argument("--commit", action="store_true",
                        help="write into the committed examples/results and examples/figures")
    parser.add_argument("--render", action="store_true",
                        help="run nothing: render the figures and the docs section from the "
                             "committed JSON")
    parser.add_argument("--readme", type=Path, default=None,
                        help="rewrite the textbooks section of this page (implies --commit)")
    add_progress_flag(parser)
    args = parser.parse_args(argv)
    if args.quick and (args.commit or args.readme):
        parser.error("--quick results are a try; they are not committed (drop --commit and "
                     "--readme)")
    committed = args.commit or args.readme is not None or args.render
    args.json = RESULTS / "textbooks.json" if committed else args.out / "textbooks.json"
    args.figures = FIGURES if committed else args.out
    return args


def run(quick: bool, progress: bool) -> dict:
    """Every experiment (``quick``: 8 seeds, 2 epochs, the digits' cells only), the
    histograms, Nielsen's sooner-by summaries with Holm over them; timed."""
    seeds, epochs = (8, 2) if quick else (None, None)

    def everything() -> dict:
        found = {}
        for name, experiment in EXPERIMENTS.items():
            cells = [c for c in experiment.setups if c.startswith("digits")] if quick else None
            if quick and not cells:
                cells = list(experiment.setups)
            studies, record = timed(run_experiment, experiment, seeds, epochs, progress, cells)
            found[name] = {"source": experiment.source, "differs": list(experiment.differs),
                           "studies": studies, "run": record}
        for cell in found["nielsen"]["studies"].values():
            a, b = (cell["epochs_to_target"][arm.name] for arm in NIELSEN.arms["all"])
            cell["sooner"] = sooner(a, b)
        adjust([cell["sooner"] for cell in found["nielsen"]["studies"].values()])
        hist_seeds = 8 if quick else 100
        found["histograms"] = {"seeds": hist_seeds, "bins": HISTOGRAM_BINS.tolist(),
                               "rows": [{"activation": act, "init": init,
                                         **init_histograms(act, init, hist_seeds)}
                                        for act, init in HISTOGRAM_ARMS]}
        return found

    found, record = timed(everything)
    found["run"] = record
    return found


# --- figures --------------------------------------------------------------------------------

def _bands(ax, entries: dict, measure: str, colors: list[str]) -> None:
    for index, (arm, entry) in enumerate(entries.items()):
        values = [[np.nan if v is None else v for v in row] for row in entry[measure]]
        band(ax, entry["epochs"], values, arm, colors[index % len(colors)])


def curves_figure(studies: dict, measures: list[tuple[str, str]], path: Path,
                  title: str, line: tuple[float, str] | dict | None = None) -> None:
    """A row of panels per study cell, a panel per measure: median and quartile bands of
    every arm; ``line``, a level to mark on the accuracy panels (per data set if a dict)."""
    colors = color_cycle()
    cells = list(studies)
    fig = figure(figsize=(4.4 * len(measures), 3.3 * len(cells) + 0.8))
    axes = np.atleast_2d(fig.subplots(len(cells), len(measures), squeeze=False))
    for row, cell in zip(axes, cells):
        for ax, (measure, label) in zip(row, measures):
            _bands(ax, studies[cell]["curves"], measure, colors)
            if measure == "test_accuracy" and line is not None:
                level, text = line[cell.split(", ")[0]] if isinstance(line, dict) else line
                ax.axhline(level, color="grey", linestyle=":", linewidth=1.2)
                ax.annotate(text, (0.02, level), xycoords=("axes fraction", "data"),
                            fontsize=TEXT_POINTS, color="dimgray", va="bottom")
            if measure.endswith("loss"):
                ax.set_yscale("log")
            else:  # accuracies on one scale, chance and a stall as visible as learning
                ax.set_ylim(0.0, 1.0)
            ax.set_title(f"{cell}: {label}", fontsize=11)
            ax.set_xlabel("epoch")
            ax.grid(alpha=0.3)
    fig.suptitle(title)
    handles = axes[0, 0].get_legend_handles_labels()[0]
    legend_below(fig, handles, len(handles))
    finish(fig, path, 100, own=False)


def histogram_figure(histograms: dict, path: Path) -> None:
    """The book's activation histograms at initialization: a row per (activation,
    initializer), a panel per layer, counts over all seeds as fractions of the values."""
    rows, edges = histograms["rows"], np.array(histograms["bins"])
    layers = len(rows[0]["counts"])
    fig = figure(figsize=(2.3 * layers + 1.2, 1.7 * len(rows) + 0.9))
    axes = fig.subplots(len(rows), layers, sharex=True, squeeze=False)
    for number, (ax_row, row) in enumerate(zip(axes, rows)):
        for layer, ax in enumerate(ax_row):
            fraction = np.array(row["counts"][layer]) / row["values"]
            ax.bar(edges[:-1], fraction, width=np.diff(edges), align="edge",
                   color="tab:blue" if row["activation"] == "sigmoid" else "tab:orange")
            ax.set_ylim(0, max(0.05, fraction.max() * 1.1))
            ax.tick_params(labelsize=TEXT_POINTS)
            if layer == 0:
                ax.set_ylabel(f"{row['activation']}\n{DLFS_LABELS[row['init']]}",
                              fontsize=TEXT_POINTS)
            if number == 0:
                ax.set_title(f"layer {layer + 1}", fontsize=10)
    fig.suptitle(f"Activations at initialization, 1,000 N(0, 1) inputs, pooled over "
                 f"{histograms['seeds']} seeds (fraction of values per bin of [0, 1])",
                 fontsize=11)
    finish(fig, path, 100)


def draw_figures(data: dict, folder: Path) -> list[Path]:
    """Every figure of the page, from the results ``data``; the paths written."""
    folder.mkdir(parents=True, exist_ok=True)
    paths = [folder / f"textbooks_{name}.png" for name in ("dlfs", "histograms", "nielsen",
                                                          "mnist1d_mlp")]
    curves_figure(data["dlfs"]["studies"], [("train_loss", "training loss"),
                                            ("test_accuracy", "test accuracy")],
                  paths[0], "Deep Learning from Scratch §6.2 over seeds: median and quartiles")
    histogram_figure(data["histograms"], paths[1])
    targets = {data_set: (level, f"target {level:.0%}")
               for data_set, level in NIELSEN.targets.items()}
    curves_figure(data["nielsen"]["studies"], [("test_accuracy", "test accuracy"),
                                               ("train_loss", "training loss")],
                  paths[2], "Nielsen ch. 3 over seeds: median and quartiles", targets)
    curves_figure(data["mnist1d_mlp"]["studies"], [("test_accuracy", "test accuracy"),
                                                   ("test_loss", "test loss")],
                  paths[3], "MNIST-1D's MLP over seeds: median and quartiles",
                  (PAPER_MLP, f"the paper: {PAPER_MLP:.0%}"))
    return paths


# --- the page -------------------------------------------------------------------------------

def _arm_rows(cell: dict) -> list[str]:
    """A table row per arm of a study cell: learned, test accuracy median and quartiles, mean
    with its interval, seconds."""
    rows = []
    for r in cell["study"]["results"]:
        scores = np.array(r["test_accuracy"])
        q1, median, q3 = np.quantile(scores, [0.25, 0.5, 0.75])
        low, high = r["interval"]
        rows.append(f"| {r['arm']['name']} | {r['successes']}/{r['n']} ({low:.0%}-{high:.0%}) "
                    f"| {median:.1%} [{q1:.1%}, {q3:.1%}] | {scores.mean():.1%} | "
                    f"{r['seconds']:.0f} |")
    return rows


def _verdicts(cell: dict) -> list[str]:
    n = cell["study"]["setup"]["seeds"]
    return [f"- {RankedComparison(**c).verdict(n)}." for c in cell["study"]["comparisons"]]


def _study_section(studies: dict, heading: str) -> list[str]:
    lines = []
    for name, cell in studies.items():
        setup = cell["study"]["setup"]
        lines += [f"{heading} {name}", "",
                  f"{setup['seeds']:,} seeds per arm, {setup['epochs']} epochs, minibatches of "
                  f"{setup['batch_size']} at lr {setup['lr']:g}; learned: test accuracy above "
                  "twice chance (20 %).", "",
                  "| arm | learned (95 % CI) | test accuracy, median [quartiles] | mean | "
                  "seconds |", "| --- | --- | --- | --- | --- |", *_arm_rows(cell), "",
                  *_verdicts(cell), ""]
    return lines


def _sooner_line(name: str, cell: dict) -> str:
    s, (a, b) = cell["sooner"], NIELSEN.arms["all"]
    target = cell["target"]
    reached = "; ".join(f"{arm.name} reached it in {k}/{n} seeds ({low:.0%}-{high:.0%})"
                        for arm, (k, n, low, high) in zip((a, b), s["reached"].values()))
    if "median" not in s:
        return f"- {name}: too few seeds reached {target:.0%} in both arms to compare ({reached})."
    low, high = s["interval"]
    verdict = "significant" if s["p_holm"] < 0.05 else "not significant"
    if s["median"] == 0:
        gap = f"in the same epoch as {a.name}, the median of the differences"
    else:  # a − b: positive when b got there first
        sooner, size = ("sooner", s["median"]) if s["median"] > 0 else ("later", -s["median"])
        gap = f"a median of {size:g} epoch{'s' * (size != 1)} {sooner} than {a.name}"
        if s["median"] < 0:
            low, high = -high, -low
    return (f"- {name}: {b.name} reached {target:.0%} test accuracy {gap} (95 % CI "
            f"{low:g} to {high:g}; {s['pairs']} seeds that reached it in both; Wilcoxon p = "
            f"{s['p']:.3g}, Holm over the {len(NIELSEN.setups)} cells {s['p_holm']:.3g}: "
            f"{verdict}). {reached}.")


def render(data: dict) -> str:
    """The docs page's section, from the results ``data`` alone."""
    hist = data["histograms"]
    lines = ["### Deep Learning from Scratch, §6.2: std 0.01, Xavier and He", "",
             f"Source: {data['dlfs']['source']}. Differences: "
             + "; ".join(data["dlfs"]["differs"]) + ".", "",
             "![Training loss and test accuracy over epochs, median and quartiles over seeds]"
             "(../examples/figures/textbooks_dlfs.png)", ""]
    lines += _study_section(data["dlfs"]["studies"], "####")
    lines += ["#### Activations at initialization (Figs. 6-10 to 6-14)", "",
              f"Each layer's standard deviation of activations at initialization, median over "
              f"{hist['seeds']} seeds [quartiles]:", "",
              "| activation | weights | " + " | ".join(
                  f"layer {k + 1}" for k in range(len(hist["rows"][0]["counts"]))) + " |",
              "| --- | --- |" + " --- |" * len(hist["rows"][0]["counts"])]
    for row in hist["rows"]:
        lines.append(f"| {row['activation']} | {DLFS_LABELS[row['init']]} | " + " | ".join(
            f"{med:.3g} [{q1:.3g}, {q3:.3g}]" for q1, med, q3 in row["std_quartiles"]) + " |")
    lines += ["", "![Activation histograms at initialization, pooled over seeds]"
                  "(../examples/figures/textbooks_histograms.png)", "",
              "### Nielsen, ch. 3: N(0, 1) against N(0, 1/n_in)", "",
              f"Source: {data['nielsen']['source']}. Differences: "
              + "; ".join(data["nielsen"]["differs"]) + ".", "",
              "![Test accuracy over epochs, median and quartiles over seeds]"
              "(../examples/figures/textbooks_nielsen.png)", "",
              "How much sooner, seed by seed (the same seed's shuffle order in both arms):", ""]
    lines += [_sooner_line(name, cell) for name, cell in data["nielsen"]["studies"].items()]
    lines += [""] + _study_section(data["nielsen"]["studies"], "####")
    (name, cell), = data["mnist1d_mlp"]["studies"].items()
    first = cell["study"]["results"][0]
    scores = np.array(first["test_accuracy"])
    low, high = np.quantile(scores, [0.025, 0.975])
    lines += ["### MNIST-1D's MLP beside the paper's 68 %", "",
              f"Source: {data['mnist1d_mlp']['source']}. Differences: "
              + "; ".join(data["mnist1d_mlp"]["differs"]) + ".", "",
              f"With PyTorch's default weights, the median test accuracy over "
              f"{len(scores)} seeds is {np.median(scores):.1%} (the middle 95 % of seeds "
              f"from {low:.1%} to {high:.1%}); the paper's table gives "
              f"{PAPER_MLP:.0%} for one run.", "",
              "![Test accuracy and loss over epochs](../examples/figures/"
              "textbooks_mnist1d_mlp.png)", ""]
    lines += _study_section(data["mnist1d_mlp"]["studies"], "####")
    parts = "; ".join(f"{name} {data[name]['run']['seconds'] / 60:.1f} min"
                      for name in EXPERIMENTS)
    run = data["run"]
    lines += ["```bash", "python examples/textbooks.py --readme docs/textbooks.md", "```", "",
              f"runs it all ({run['seconds'] / 60:.1f} min: {parts}; at a 1-minute load "
              f"average of {run['load_average_1min']:.1f} on {run['cores']} cores, "
              f"{run['numba_threads']} Numba threads), writes `examples/results/textbooks.json` "
              "and the figures, and rewrites this section from the JSON; `--quick` tries it "
              "with 8 seeds and 2 epochs.", ""]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    if args.render:
        data = json.loads(args.json.read_text())
    else:
        data = run(args.quick, show_progress(args.progress))
        args.json.parent.mkdir(parents=True, exist_ok=True)
        text = json.dumps(data, indent=1) + "\n"
        write_whole(args.json, lambda path: path.write_text(text))
        print(f"wrote {args.json} ({data['run']['seconds']:.0f} s)")
    for path in draw_figures(data, args.figures):
        print(f"wrote {path}")
    if args.readme:
        put_between(args.readme, *MARKERS, render(data))
        print(f"wrote the textbooks section into {args.readme}")


if __name__ == "__main__":
    main()
