"""What fixes 99mlp: the notes' network against one change at a time, from one command.

    python examples/fixes.py --readme docs/fixes.md            # run it all (about 30 minutes
                                                               # on 2 cores), rewrite the page
    python examples/fixes.py --render --readme docs/fixes.md   # only re-render the section
    python examples/fixes.py --seeds 1000 --sweep-seeds 200    # a quick try, under ./fixes

It runs, with tinynet's own bench (:mod:`tinynet.xor.fixes`):

1. every tuned change (a loss, an optimizer, the learning rate) at each learning rate of
   ``LEARNING_RATES``, on ``--sweep-seeds`` seeds (1,000) from seed 1,000,000 on, so that the
   seeds that choose a learning rate are not those that then measure it;
2. the baseline and every change, tuned ones at their best learning rate, on ``--seeds``
   seeds (10,000) from seed 0, each compared with the baseline (Fisher, Holm over the arms);
3. the best change together with the best change that can go with it, swept and measured
   the same way;

and writes the result as JSON (with the machine, its load and the time each part took) and the
figure: with ``--commit`` or ``--readme`` into the committed ``examples/results/fixes.json``
and ``examples/figures/fixes.png``, otherwise under ``--out`` (``./fixes``); then the docs page's
section between ``<!-- fixes start -->`` and ``<!-- fixes end -->``, rendered from the JSON
alone (:mod:`fixes_text`). ``tests/test_fixes.py`` renders the committed JSON again and fails if
the page differs, or if ``--preset fixes`` is not the design the JSON chose.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from tinynet.files import put_between
from tinynet.xor import Setup, Study, compare, figures, run_study
from tinynet.xor.cli import add_progress_flag, show_progress
from tinynet.xor.fixes import (BASELINE, CHANGES, Change, best_lr, best_pair, change, combine,
                               run_lr_sweep)
from xor_studies import timed, write_json  # examples/, beside this script

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "examples" / "results"
FIGURES = ROOT / "examples" / "figures"
SWEEP_FIRST_SEED = 1_000_000
"""The sweeps' first seed: far from the measured seeds 0 ... 9,999."""


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    summary, details = __doc__.split("\n\n", 1)
    parser = argparse.ArgumentParser(description=summary, epilog=details,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seeds", type=int, default=10_000,
                        help="seeds per arm (10,000)")
    parser.add_argument("--sweep-seeds", type=int, default=1_000,
                        help="seeds per learning rate in the sweeps (1,000)")
    parser.add_argument("--out", type=Path, default=Path("fixes"),
                        help="where the JSON and PNG go unless --commit (./fixes)")
    parser.add_argument("--commit", action="store_true",
                        help="write into the committed examples/results and examples/figures")
    parser.add_argument("--render", action="store_true",
                        help="run nothing: render the docs section from the committed JSON")
    parser.add_argument("--readme", type=Path, default=None,
                        help="rewrite the fixes section of this page (implies --commit)")
    add_progress_flag(parser)
    args = parser.parse_args(argv)
    for flag in ("seeds", "sweep_seeds"):
        if getattr(args, flag) < 1:
            parser.error(f"--{flag.replace('_', '-')} must be at least 1, got "
                         f"{getattr(args, flag)}")
    committed = args.commit or args.readme is not None or args.render
    args.json = RESULTS / "fixes.json" if committed else args.out / "fixes.json"
    args.figure = FIGURES / "fixes.png" if committed else args.out / "fixes.png"
    if args.out.exists() and not args.out.is_dir():
        parser.error(f"--out {args.out}: exists and is not a folder; give a folder")
    return args


def sweep(tuned: Change, seeds: int, progress: bool = False) -> tuple[float, dict]:
    """``tuned``'s learning-rate sweep: its best rate, and the sweep as JSON-ready data (with
    ``progress``, progress on stderr)."""
    study, record = timed(run_lr_sweep, tuned, Setup(seeds=seeds, first_seed=SWEEP_FIRST_SEED),
                          progress)
    best = best_lr(tuned, study)
    print(f"  sweep {tuned.name}: best lr {best:g} ({record['seconds']:.0f} s)", flush=True)
    return best, {"run": record, **study.to_dict()}


def run(seeds: int, sweep_seeds: int, progress: bool = False) -> tuple[dict, Study]:
    """The whole design: its JSON-ready result, and the study of every arm (with
    ``progress``, progress on stderr)."""
    lrs, sweeps = {}, {}
    for tuned in (c for c in CHANGES if c.tuned):
        lrs[tuned.name], sweeps[tuned.name] = sweep(tuned, sweep_seeds, progress)
    setup = Setup(seeds=seeds)
    singles = [BASELINE, *(c.arm(lrs.get(c.name)) for c in CHANGES)]
    first, first_record = timed(run_study, singles, setup, progress, against=0)
    print(f"  {len(singles)} arms: {first_record['seconds']:.0f} s", flush=True)
    rates = {c.name: r.rate for c, r in zip(CHANGES, first.results[1:])}
    pair = best_pair(rates)
    together = combine(*map(change, pair))
    if together.tuned:
        lrs[together.name], sweeps[together.name] = sweep(together, sweep_seeds, progress)
    second, second_record = timed(run_study, [together.arm(lrs.get(together.name))], setup,
                                  progress)
    print(f"  {together.label}: {second_record['seconds']:.0f} s", flush=True)
    results = first.results + second.results
    study = Study(setup, results, compare(results, against=0), baseline=BASELINE.name)
    return {"runs": {"changes": first_record, "together": second_record},
            "learning_rates": lrs, "pair": list(pair), "sweeps": sweeps,
            **study.to_dict()}, study


def main(argv: list[str] | None = None) -> None:
    from fixes_text import MARKERS, render  # examples/, beside this script
    args = parse_args(argv)
    if not args.render:
        data, study = run(args.seeds, args.sweep_seeds, show_progress(args.progress))
        write_json(args.json, data)
        args.figure.parent.mkdir(parents=True, exist_ok=True)
        figures.against_baseline(study, args.figure)
        print(study.report())
    if not args.json.exists():
        sys.exit(f"{args.json}: no result to render; run without --render first")
    data = json.loads(args.json.read_text())
    markdown = render(data)
    print(f"\n{markdown}")
    if args.readme:
        put_between(args.readme, *MARKERS, markdown)
        print(f"wrote the fixes section into {args.readme}")


if __name__ == "__main__":
    main()
