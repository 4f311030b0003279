"""What makes depth 64 and 128 learn: plain, residual, pre-norm, post-norm, ReZero and Fixup
stacks against depth, with and without warmup.

    python examples/residual_depth.py --readme docs/residual.md   # the full study (hours on 2
                                                                  # cores), JSON, figure, docs
    python examples/residual_depth.py --quick                     # depths 4 and 16, 64 seeds
    python examples/residual_depth.py --workers 2 --readme docs/residual.md   # on Dask: the
                                                                  # same numbers, bit for bit
    python examples/residual_depth.py --render --readme docs/residual.md   # the section and
                                                                  # figure from the JSON alone

Every arm of :func:`tinynet.xor.residual_depth.residual_depth_arms` at 2 to 128 layers of 16
after the first, on two spirals (:data:`~tinynet.xor.residual_depth.RESIDUAL_DEPTH_SETUP`),
1,000 seeds a cell up to 16 layers and 200 at 32, 64 and 128
(:data:`~tinynet.xor.residual_depth.RESIDUAL_SEEDS`). With ``--readme`` (or ``--commit``) it
writes the committed ``examples/results/residual_depth.json`` and
``examples/figures/residual_depth.png``, otherwise ``residual_depth/`` under the working
folder; ``--readme`` rewrites the page's section between ``<!-- residual depth start -->``
and ``<!-- residual depth end -->`` (the page must have them: it is checked before anything
trains) from the committed JSON alone. Every comparative sentence of the section comes from a
Fisher test, Holm-adjusted over the sentence's family.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from tinynet import stats
from tinynet.files import put_between
from tinynet.xor import figures
from tinynet.xor.cli import add_progress_flag, show_progress
from tinynet.xor.cluster import cluster
from tinynet.xor.residual_depth import (RESIDUAL_DEPTH_SETUP, ResidualDepthStudy,
                                        run_residual_depth_study)
from xor_studies import timed, write_json  # examples/, beside this script

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "examples" / "results" / "residual_depth.json"
FIGURE = ROOT / "examples" / "figures" / "residual_depth.png"
OWN_FOLDER = Path("residual_depth")
QUICK = {"depths": (4, 16), "seeds": {4: 64, 16: 64}}
MARKERS = ("<!-- residual depth start -->\n", "<!-- residual depth end -->")
PLAIN = "plain, He"
"""The arm every block is compared with."""


def parse_args(argv: list[str] | None = None) -> tuple[argparse.ArgumentParser,
                                                      argparse.Namespace]:
    summary, details = __doc__.split("\n\n", 1)
    parser = argparse.ArgumentParser(description=summary, epilog=details,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true",
                        help="depths 4 and 16 at 64 seeds; writes nothing unless --json or "
                             "--figure says where")
    parser.add_argument("--json", type=Path, default=None, help="write the study here")
    parser.add_argument("--figure", type=Path, default=None, help="draw the figure here")
    parser.add_argument("--commit", action="store_true",
                        help="write the full study into the committed files (--readme does "
                             "too)")
    parser.add_argument("--render", action="store_true",
                        help="train nothing: with --readme, the figure and section from the "
                             "committed JSON")
    parser.add_argument("--readme", type=Path, default=None,
                        help="rewrite the residual depth section of this page")
    parser.add_argument("--workers", type=int, default=None, metavar="N",
                        help="train on a local Dask cluster of N single-threaded workers")
    parser.add_argument("--scheduler", default=None, metavar="ADDRESS",
                        help="train on the Dask cluster whose scheduler is at ADDRESS")
    add_progress_flag(parser)
    args = parser.parse_args(argv)
    args.modules = []                        # (tinynet.xor.cluster sends --import modules)
    if args.render and args.readme is None:
        parser.error("--render rewrites a page and its figure: give the page, --readme "
                     "docs/residual.md")
    if (args.commit or args.readme is not None) and args.quick:
        parser.error("--commit and --readme write the full study; they cannot be --quick")
    if args.readme is not None:
        if args.json is not None or args.figure is not None:
            parser.error("--readme renders the committed JSON and figure; --json and --figure "
                         "write elsewhere")
        text = args.readme.read_text() if args.readme.is_file() else ""
        if not all(marker in text for marker in MARKERS):
            parser.error(f"--readme {args.readme}: the page has no section between "
                         f"{MARKERS[0].strip()} and {MARKERS[1]} to rewrite")
    if not args.quick and not args.render:
        committed = args.commit or args.readme is not None
        args.json = args.json or (RESULTS if committed else OWN_FOLDER / RESULTS.name)
        args.figure = args.figure or (FIGURE if committed else OWN_FOLDER / FIGURE.name)
    return parser, args


# --- the docs section, from the JSON alone --------------------------------------------------

def cell(study: ResidualDepthStudy, arm: str, depth: int) -> str:
    """'12 % [8, 19]': a rate with its 95 % interval, in percent."""
    successes, n = study.cell(arm, depth)
    low, high = study.intervals[study.names.index(arm)][study.depths.index(depth)]
    return f"{100 * successes / n:.0f} % [{100 * low:.0f}, {100 * high:.0f}]"


def against_plain(study: ResidualDepthStudy, depth: int) -> str:
    """Which arms learn more often than the plain He stack at ``depth``, which less, which
    cannot be told apart from it: Fisher, Holm over the arms compared with it."""
    pairs = [(arm, PLAIN) for arm in study.names if arm != PLAIN]
    more, less, level = [], [], []
    for c in study.comparisons(depth, pairs):
        (level if c.p_holm >= 0.05 else more if c.rate_a > c.rate_b else less).append(c)
    text = f"At {depth} layers ({study.n[study.depths.index(depth)]:,} seeds an arm), "
    text += f"the plain He stack learns {cell(study, PLAIN, depth)}; "
    parts = []
    if more:
        parts.append("more often: " + ", ".join(f"{c.a} {cell(study, c.a, depth)}" for c in more))
    if less:
        parts.append("less often: " + ", ".join(f"{c.a} {cell(study, c.a, depth)}" for c in less))
    if level:
        parts.append("not told apart from it: " + ", ".join(
            f"{c.a} {cell(study, c.a, depth)} (Holm p {c.p_holm:.2g})" for c in level))
    return (text + "; ".join(parts) + f" (Fisher's exact test, Holm over the {len(pairs)} "
            "arms compared with the plain stack at this depth).")


def initializer_sentence(study: ResidualDepthStudy) -> str:
    """Whether He's or Xavier's initializer learns more often, for each kind of stack that
    has both, at the two deepest depths: Fisher, Holm over every (kind, depth) pair."""
    kinds = [name[:-len(", He")] for name in study.names
             if name.endswith(", He") and name[:-len(", He")] + ", Xavier" in study.names]
    tests = [(depth, c) for depth in study.depths[-2:]
             for c in study.comparisons(depth, [(f"{kind}, He", f"{kind}, Xavier")
                                                for kind in kinds])]
    adjusted = stats.holm([c.p for _, c in tests])
    family = f"Fisher, Holm over the {len(tests)} tests of every kind at both depths"
    differ = [f"{c.a.split(',')[0]} at {depth} layers, He {cell(study, c.a, depth)} against "
              f"Xavier {cell(study, c.b, depth)} (Holm p {p:.2g})"
              for (depth, c), p in zip(tests, adjusted) if p < 0.05]
    if not differ:
        return (f"He's and Xavier's initializers cannot be told apart in any kind of stack at "
                f"{study.depths[-2]} or {study.depths[-1]} layers ({family}; smallest adjusted "
                f"p {min(adjusted):.2g}).")
    return (f"The initializer still matters where: {'; '.join(differ)} ({family}); elsewhere "
            "He's and Xavier's cannot be told apart.")


def warmup_sentence(study: ResidualDepthStudy) -> str:
    """Whether warmup changes pre-norm's and post-norm's rates, at every depth: Fisher, Holm
    over every (norm, depth) pair."""
    pairs = [(f"{norm}-norm, He, warmup", f"{norm}-norm, He") for norm in ("pre", "post")]
    tests = [(depth, c) for depth in study.depths
             for c in study.comparisons(depth, pairs)]
    adjusted = stats.holm([c.p for _, c in tests])
    differ = [(depth, c, p) for (depth, c), p in zip(tests, adjusted) if p < 0.05]
    family = f"Fisher, Holm over the {len(tests)} tests of both norms at every depth"
    if not differ:
        return (f"Warmup ({study.arms[study.names.index(pairs[0][0])]['warmup']:,} steps) "
                f"changes neither norm's rate at any depth ({family}; smallest adjusted p "
                f"{min(adjusted):.2g}).")
    return ("Warmup changes the rate where: " + "; ".join(
        f"{c.b} at {depth} layers, {cell(study, c.b, depth)} without, "
        f"{cell(study, c.a, depth)} with (Holm p {p:.2g})" for depth, c, p in differ)
        + f" ({family}); elsewhere it cannot be told apart.")


def render(data: dict) -> str:
    """The section: the table, the figure, the sentences, the command and its seconds."""
    study = ResidualDepthStudy.from_dict({k: v for k, v in data.items() if k != "run"})
    setup = study.setup
    lines = ["| arm | " + " | ".join(f"{d} layers ({n:,} seeds)" for d, n in
                                     zip(study.depths, study.n)) + " |",
             "|" + " --- |" * (len(study.depths) + 1)]
    for arm in study.names:
        lines.append(f"| {arm} | " + " | ".join(cell(study, arm, d) for d in study.depths)
                     + " |")
    run = data["run"]
    lines += [
        "", "![success rate against depth per arm](../examples/figures/residual_depth.png)", "",
        f"{setup.task.describe()}; {setup.activation} layers of {setup.hidden[0]} (a first "
        f"layer, then the depth's layers, grouped into blocks of two for the residual arms), "
        f"a sigmoid output, MSE, minibatch SGD (batches of {setup.batch_size}, lr "
        f"{setup.lr:g}, {setup.epochs} epochs, shuffled); each cell: success rate [95 % "
        "interval].", "",
        *(against_plain(study, depth) + "\n" for depth in study.depths[-2:]),
        initializer_sentence(study) + "\n", warmup_sentence(study), "",
        "```bash\npython examples/residual_depth.py --readme docs/residual.md\n```", "",
        f"runs the study ({run['seconds'] / 3600:.1f} h at a 1-minute load average of "
        f"{run['load_average_1min']:.1f} on {run['cores']} cores; each cell's seconds are in "
        "`examples/results/residual_depth.json`), writes its JSON and figure and rewrites this "
        "section from the JSON; `--workers N` or `--scheduler ADDRESS` train it on Dask, bit "
        "for bit the same."]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> None:
    parser, args = parse_args(argv)
    if not args.render:
        options = QUICK if args.quick else {}
        with cluster(parser, args) as executor:
            study, record = timed(run_residual_depth_study, RESIDUAL_DEPTH_SETUP,
                                  progress=show_progress(args.progress), executor=executor,
                                  **options)
        data = {"run": record, **study.to_dict()}
        print(study.table())
        print(f"\n{record['seconds']:.0f} s")
        if args.json:
            write_json(args.json, data)
        if args.figure:
            args.figure.parent.mkdir(parents=True, exist_ok=True)
            figures.residual_depth(study, args.figure)
    if args.readme:
        data = json.loads(RESULTS.read_text())
        if args.render:
            figures.residual_depth(ResidualDepthStudy.from_dict(
                {k: v for k, v in data.items() if k != "run"}), FIGURE)
        put_between(args.readme, *MARKERS, render(data))
        print(f"wrote the residual depth section into {args.readme}")


if __name__ == "__main__":
    main()
