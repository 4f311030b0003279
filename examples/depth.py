"""Where initialization decides: success rate against depth, per initializer.

    python examples/depth.py --readme docs/depth.md   # the full study (about an hour on 2
                                                      # cores), its JSON, figure and docs section
    python examples/depth.py --quick                  # depths 1 and 8, 64 seeds: about 15 s
    python examples/depth.py --activation tanh --readme docs/depth.md   # tanh hidden layers
                                                      # (longer still: no vector tanh)
    python examples/depth.py --render --readme docs/depth.md   # the section and figures from
                                                               # the JSON alone

MLPs of hidden layers of 16 units, 1 to 32 of them, learn two concentric circles by minibatch
SGD from 1,024 seeds per initializer and depth (:func:`tinynet.xor.depth.run_depth_study`);
beside the success rates stands the second moment of the last hidden layer at initialisation
that :mod:`tinynet.diagnostics` predicts. With ``--readme`` (or ``--commit``) the full study
writes the committed ``examples/results/depth_<act>.json`` and
``examples/figures/depth_<act>.png``, otherwise ``depth_<act>.json`` and ``.png`` in a folder
``depth`` under the working folder (or ``--json``, ``--figure``), so that a trial run never
replaces a committed result; ``--readme`` then rewrites the docs page's section between
``<!-- depth start -->`` and ``<!-- depth end -->`` from the committed JSON alone, and
``tests/test_readme.py`` fails if the two disagree.
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
from dataclasses import replace
from pathlib import Path

from tinynet import stats
from tinynet.files import put_between
from tinynet.activations import ACTIVATIONS
from tinynet.xor import figures
from tinynet.xor.cli import add_progress_flag, show_progress
from tinynet.xor.depth import (DEPTH_SETUP, DEPTHS, QUICK_DEPTHS, QUICK_SETUP, DepthStudy,
                               run_depth_study)
from xor_studies import timed, write_json  # examples/, beside this script

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "examples" / "results"
FIGURES = ROOT / "examples" / "figures"
OWN_FOLDER = Path("depth")
"""Where the full study writes unless committed or told (--json, --figure): a folder named
after the example, under the working folder."""
SHOWN_ACTIVATIONS = ("relu", "tanh")
"""The activations whose studies the docs show."""


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    summary, details = __doc__.split("\n\n", 1)
    parser = argparse.ArgumentParser(description=summary, epilog=details,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--activation", default="relu", choices=sorted(ACTIVATIONS),
                        help="hidden activation (relu)")
    parser.add_argument("--quick", action="store_true",
                        help=f"depths {', '.join(map(str, QUICK_DEPTHS))} at "
                             f"{QUICK_SETUP.seeds} seeds a cell, {QUICK_SETUP.epochs} epochs at "
                             f"lr {QUICK_SETUP.lr:g}; "
                             "writes nothing unless --json or --figure says where")
    parser.add_argument("--seeds", type=int, default=None,
                        help=f"seeds per cell ({DEPTH_SETUP.seeds}; quick {QUICK_SETUP.seeds})")
    parser.add_argument("--json", type=Path, default=None,
                        help="write the study here (default for the full study: "
                             "depth/depth_<activation>.json under the working folder)")
    parser.add_argument("--figure", type=Path, default=None,
                        help="draw the figure here (default for the full study: "
                             "depth/depth_<activation>.png under the working folder)")
    parser.add_argument("--commit", action="store_true",
                        help="write the full study into the committed "
                             "examples/results/depth_<activation>.json and its figure "
                             "(--readme does too)")
    parser.add_argument("--render", action="store_true",
                        help="train nothing: with --readme, draw the committed figures and "
                             "render the docs section from the committed JSON")
    parser.add_argument("--readme", type=Path, default=None,
                        help="rewrite the depth section of this page")
    add_progress_flag(parser)
    args = parser.parse_args(argv)
    if args.quick and args.render:
        parser.error("--render reads the committed full studies; it cannot be --quick")
    if args.render and args.readme is None:
        parser.error("--render rewrites a page and its figures: give the page, --readme "
                     "docs/depth.md")
    if args.seeds is not None and args.seeds < 1:
        parser.error(f"--seeds must be at least 1, got {args.seeds}")
    if args.commit and (args.quick or args.render):
        parser.error("--commit writes a full study; it cannot be --quick or --render")
    if args.readme is not None and args.quick:
        parser.error("--readme renders the committed full studies; it cannot be --quick")
    if not args.quick and not args.render:  # --readme quotes the committed results: commits
        committed = args.commit or args.readme is not None
        json_in, figure_in = (RESULTS, FIGURES) if committed else (OWN_FOLDER, OWN_FOLDER)
        args.json = args.json or json_in / f"depth_{args.activation}.json"
        args.figure = args.figure or figure_in / f"depth_{args.activation}.png"
    for flag, path in (("--json", args.json), ("--figure", args.figure)):
        if path is not None and path.exists() and not path.is_file():
            parser.error(f"{flag} {path}: exists and is not a regular file; give the path of "
                         "a file to write")
    if args.figure is not None and args.figure.suffix.lower() != ".png":
        parser.error(f"--figure {args.figure}: give a file name ending in .png")
    return args


def run(activation: str, quick: bool, seeds: int | None, progress: bool = False) -> dict:
    """The study, as JSON-ready data with the run's record (:func:`xor_studies.timed`: the
    machine, its load and the time it took); with ``progress``, progress on stderr."""
    setup = replace(QUICK_SETUP if quick else DEPTH_SETUP, activation=activation)
    study, record = timed(run_depth_study, setup, QUICK_DEPTHS if quick else DEPTHS,
                          seeds=seeds, progress=progress)
    return {"run": record, **study.to_dict()}


def study_of(data: dict) -> DepthStudy:
    """The study in a result file (which adds the run's record under ``"run"``)."""
    return DepthStudy.from_dict({key: value for key, value in data.items() if key != "run"})


# --- the docs section, from the JSON alone --------------------------------------------------

def cell(study: DepthStudy, arm: str, depth: int) -> str:
    """'12 % [8, 19]': a rate with its 95 % interval, in percent."""
    a, d = study.arms.index(arm), study.depths.index(depth)
    low, high = study.intervals[a][d]
    return f"{100 * study.successes[a][d] / study.n:.0f} % [{100 * low:.0f}, {100 * high:.0f}]"


def below_half(study: DepthStudy, arm: str, d: int) -> bool:
    """Whether ``arm``'s interval at the d-th depth lies wholly below 50 %."""
    return study.intervals[study.arms.index(arm)][d][1] < 0.5


def fails_from(study: DepthStudy, arm: str) -> int | None:
    """The smallest depth from which on ``arm``'s interval lies wholly below 50 % at every
    depth studied (None: not at the deepest)."""
    fails = None
    for d in reversed(range(len(study.depths))):
        if not below_half(study, arm, d):
            break
        fails = study.depths[d]
    return fails


def per_layer(study: DepthStudy, arm: str) -> float:
    """The factor by which each further hidden layer multiplies the predicted E[a²] between
    the two deepest depths."""
    a = study.arms.index(arm)
    (d1, d2), (m1, m2) = study.depths[-2:], study.moments[a][-2:]
    return (m2 / m1) ** (1 / (d2 - d1))


def deepest_best(study: DepthStudy) -> str:
    """Which initializer solves most seeds at the deepest depth, and more than which others:
    Fisher exact tests of every pair of initializers at that depth, Holm over all of them (the
    best is picked from the same counts, so every pair it could have been compared with is in
    the family). Where a test is not significant, the sentence says the two cannot be told
    apart."""
    d, deepest = len(study.depths) - 1, study.depths[-1]
    count = {arm: study.successes[study.arms.index(arm)][d] for arm in study.arms}
    best = max(study.arms, key=count.get)
    if count[best] == 0:
        return f"At depth {deepest} no initializer solves a seed."
    pairs = list(itertools.combinations(study.arms, 2))
    p_holm = dict(zip(pairs, stats.holm([stats.fisher_exact_p(count[a], study.n, count[b],
                                                              study.n) for a, b in pairs])))
    against = {(b if a == best else a): p for (a, b), p in p_holm.items() if best in (a, b)}
    ahead = [arm for arm, p in against.items() if p < 0.05]
    level = [arm for arm, p in against.items() if p >= 0.05]
    text = f"At depth {deepest}, {best} solves most seeds, {cell(study, best, deepest)}: "
    family = f"Fisher, Holm over all {len(pairs)} pairs at this depth"
    if not level:
        return text + f"more than every other initializer ({family})."
    return text + ((f"more than {', '.join(ahead)}, but " if ahead else "")
                   + f"it cannot be told apart from {', '.join(level)} at {study.n:,} seeds "
                     f"({family}; p " + ", ".join(f"{against[arm]:.2g}" for arm in level) + ").")


def render_study(data: dict) -> str:
    """One activation's table, figure and paragraphs."""
    study = study_of(data)
    setup, activation = study.setup, study.setup.activation
    lines = [f"| hidden layers | {' | '.join(study.arms)} |",
             "|" + " --- |" * (len(study.arms) + 1)]
    for depth in study.depths:
        lines.append(f"| {depth} | " + " | ".join(cell(study, arm, depth) for arm in study.arms)
                     + " |")
    deepest = study.depths[-1]
    failing = {arm: fails_from(study, arm) for arm in study.arms}
    shallow = [arm for arm in study.arms if below_half(study, arm, 0)]
    ratios = [m / p for m, p in zip((row[-1] for row in study.measured),
                                    (row[-1] for row in study.moments)) if 0 < p < math.inf]
    keeps = [arm for arm in study.arms if failing[arm] is None]
    held_out = [h for row in study.held_out for h in row if h is not None]
    lines += [
        "",
        f"![{activation}: success rate against depth per initializer, and the predicted second "
        f"moment at initialisation](../examples/figures/depth_{activation}.png)",
        "",
        f"{setup.task.describe()}; {activation} hidden layers of {study.width}, a sigmoid "
        f"output, MSE, minibatch SGD (batches of {setup.batch_size}, lr {setup.lr:g}, "
        f"{setup.epochs} epochs, shuffled), {study.n:,} seeds per cell; each cell: success rate "
        f"[95 % interval]. The successful seeds' median held-out accuracy (a second draw of "
        f"{setup.task.samples} samples) is " + (
            f"{100 * held_out[0]:.1f} % in every cell that has one." if len(set(held_out)) == 1
            else f"{100 * min(held_out):.1f} % to {100 * max(held_out):.1f} % across cells."),
        "",
        f"At initialisation, from depth {study.depths[-2]} to {deepest}, each further hidden "
        f"layer multiplies the predicted second moment E[a²] by "
        + ", ".join(f"{per_layer(study, arm):.3g} for {arm}" for arm in study.arms)
        + f" (`tinynet.diagnostics.propagate`). At depth {deepest} the last hidden layer's "
          f"E[a²] is predicted at "
          + ", ".join(f"{study.moments[study.arms.index(arm)][-1]:.2g} for {arm}"
                      for arm in study.arms)
        + f", against the input's {study.input_moment:.2f}. The prediction is an average over "
          f"initialisations; the network of seed {setup.first_seed} (the figure's dots) measures "
          f"{min(ratios):.2g} to {max(ratios):.2g} times it at depth {deepest}, across the "
          f"initializers.",
        "",
        "From which depth on each initializer's interval lies wholly below 50 %: "
        + "; ".join(f"{arm} from {failing[arm]}" for arm in study.arms
                    if failing[arm] is not None)
        + (f"; at no depth up to {deepest}: {', '.join(keeps)}" if keeps else "")
        + (f". Below 50 % with a single hidden layer, in {setup.epochs} epochs: "
           + ", ".join(shallow) if shallow else "")
        + f". {deepest_best(study)}",
    ]
    return "\n".join(lines) + "\n"


def render(results: Path) -> str:
    """The docs' depth section: each committed activation's study, then how to rerun."""
    parts, seconds = [], []
    for activation in SHOWN_ACTIVATIONS:
        data = json.loads((results / f"depth_{activation}.json").read_text())
        parts.append(f"#### {activation} hidden layers\n\n" + render_study(data))
        seconds.append(f"{activation} {data['run']['seconds'] / 60:.1f} min at a 1-minute load "
                       f"average of {data['run']['load_average_1min']:.1f} on "
                       f"{data['run']['cores']} cores")
    parts.append("```bash\npython examples/depth.py --readme docs/depth.md\n"
                 "python examples/depth.py --activation tanh --readme docs/depth.md\n```\n\nrun "
                 "each study (" + "; ".join(seconds) + "), write its JSON to `examples/results/` "
                 "and its figure, and rewrite this section from the JSON; `--quick` runs depths "
                 "1 and 8 from 64 seeds (for tests and a class).\n")
    return "\n".join(parts)


MARKERS = ("<!-- depth start -->\n", "<!-- depth end -->")


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    if not args.render:
        data = run(args.activation, args.quick, args.seeds, show_progress(args.progress))
        study = study_of(data)
        print(study.report())
        print(f"\n{data['run']['seconds']:.0f} s")
        if args.json:
            write_json(args.json, data)
        if args.figure:
            args.figure.parent.mkdir(parents=True, exist_ok=True)
            figures.depth(study, args.figure)
    if args.readme:
        if args.render:  # the committed figures, drawn again from the committed JSON alone
            for activation in SHOWN_ACTIVATIONS:
                data = json.loads((RESULTS / f"depth_{activation}.json").read_text())
                figures.depth(study_of(data), FIGURES / f"depth_{activation}.png")
        put_between(args.readme, *MARKERS, render(RESULTS))
        print(f"wrote the depth section into {args.readme}")


if __name__ == "__main__":
    main()
