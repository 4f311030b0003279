"""Every XOR study the docs quote, at 10,000 seeds per arm, from one command.

    python examples/xor_studies.py --readme docs/xor.md            # run them all (about 15
                                                                   # minutes on 2 cores),
                                                                   # rewrite the docs page
    python examples/xor_studies.py --render --readme docs/xor.md   # only re-render the page
                                                                   # from the committed results

It runs, with tinynet's own bench (:mod:`tinynet.xor`):

* ``example``: the README's first command, ``--init he_leaky --shuffle`` on 100 seeds;
* ``notes``: the notes' runs (``--preset notes``), with the n = 100 column taken from seeds 0-99;
* ``candidates``: what 99mlp might have done differently (``--preset candidates``);
* ``seed_ranges``: the default arm on three disjoint ranges of seeds (``--seed-ranges``);
* ``long``: N(0,1) trained five times longer (``--epochs 100000``);
* ``widths``: shapes x initializers (``--preset widths``);

and writes each result as JSON (with the machine, its load and the time taken) and the
figures: with ``--commit`` or ``--readme`` into the committed ``examples/results/`` and
``examples/figures/``, otherwise under ``--out`` (``./xor_studies``), so that a quick try never
replaces a committed result; then the docs' study sections, rendered from the JSON alone,
between ``<!-- xor:NAME start -->`` and ``<!-- xor:NAME end -->``.
``tests/test_readme.py`` renders the committed JSON again and fails if the page differs.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import textwrap
import time
from pathlib import Path

import numba
import numpy as np

from tinynet import stats
from tinynet.files import put_between, write_whole
from tinynet.xor import Arm, Setup, decode_solved, get_preset, run_seed_ranges, run_study
from tinynet.xor.cli import add_progress_flag, show_progress
from tinynet.xor.figures import rates

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "examples" / "results"
FIGURES = ROOT / "examples" / "figures"
STUDIES = ("example", "notes", "candidates", "seed_ranges", "long", "widths")
SEED_RANGES = (0, 777_000, 10_000_000)
LONG_EPOCHS = 100_000
EXAMPLE_ARGS = ["--init", "he_leaky", "--shuffle"]


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    summary, details = __doc__.split("\n\n", 1)
    parser = argparse.ArgumentParser(description=summary, epilog=details,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seeds", type=int, default=10_000,
                        help="seeds per arm (10,000; fewer for a quick try)")
    parser.add_argument("--out", type=Path, default=Path("xor_studies"),
                        help="where the JSON and PNGs go unless --commit (./xor_studies)")
    parser.add_argument("--commit", action="store_true",
                        help="write into the committed examples/results and examples/figures")
    parser.add_argument("--results", type=Path, default=None,
                        help="where the JSON goes (overrides --out and --commit)")
    parser.add_argument("--figures", type=Path, default=None,
                        help="where the PNGs go (overrides --out and --commit)")
    parser.add_argument("--only", default=",".join(STUDIES),
                        help=f"comma-separated studies to run ({','.join(STUDIES)})")
    parser.add_argument("--render", action="store_true",
                        help="run nothing: render the docs sections from the committed JSON "
                             "(or --results)")
    parser.add_argument("--readme", type=Path, default=None,
                        help="rewrite the study sections of this page (implies --commit)")
    add_progress_flag(parser)
    args = parser.parse_args(argv)
    unknown = sorted(set(args.only.split(",")) - set(STUDIES))
    if unknown:
        parser.error(f"--only: unknown studies {', '.join(unknown)}; expected some of "
                     f"{', '.join(STUDIES)}")
    committed = args.commit or args.readme is not None or args.render
    args.results = args.results or (RESULTS if committed else args.out / "results")
    args.figures = args.figures or (FIGURES if committed else args.out / "figures")
    for flag, folder in (("--results", args.results), ("--figures", args.figures)):
        if folder.exists() and not folder.is_dir():
            parser.error(f"{flag} {folder}: exists and is not a folder; give a folder")
    return args


# --- running --------------------------------------------------------------------------------

def machine() -> dict:
    """What the timings depend on: cores, load average, versions."""
    return {"cores": os.cpu_count(), "load_average_1min": round(os.getloadavg()[0], 2),
            "python": platform.python_version(), "numpy": np.__version__,
            "numba": numba.__version__, "numba_threads": numba.get_num_threads()}


def timed(function, *args, **kwargs) -> tuple[object, dict]:
    """Call ``function``; return its result and the run's record: machine, load, seconds."""
    before = machine()
    started = time.perf_counter()
    result = function(*args, **kwargs)
    seconds = time.perf_counter() - started
    return result, {**before, "load_average_1min_after": round(os.getloadavg()[0], 2),
                    "seconds": round(seconds, 3)}


def write_json(path: Path, data: dict) -> None:
    """``data`` as indented JSON into ``path`` (its folder made), written whole: a reader never
    sees half a file (:func:`tinynet.files.write_whole`)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(data, indent=2) + "\n"
    write_whole(path, lambda partial: partial.write_text(text))


def run_example(progress: bool = False) -> dict:
    """The README's first command, as a user runs it (its default, 100 seeds), with
    ``--progress`` or ``--no-progress`` as ``progress`` says (not part of the command
    recorded)."""
    from contextlib import redirect_stdout
    from io import StringIO

    from tinynet.xor.cli import main
    out = StringIO()
    with redirect_stdout(out):
        main(EXAMPLE_ARGS + ["--progress" if progress else "--no-progress"],
             prog="examples/xor.py")
    return {"command": "python examples/xor.py " + " ".join(EXAMPLE_ARGS),
            "output": out.getvalue()}


def run(name: str, seeds: int, figures: Path, progress: bool = False) -> dict:
    """Run study ``name`` at ``seeds`` seeds per arm (with ``progress``, progress on
    stderr); return its JSON-ready result."""
    setup = Setup(seeds=seeds)
    if name == "example":
        result, record = timed(run_example, progress)
        return {"run": record, **result}
    if name in ("notes", "candidates", "widths"):
        sweep, record = timed(get_preset(name).run, setup, progress=progress)
        if name != "candidates":
            rates(sweep.studies, figures / f"xor_{name}.png")
        return {"run": record, **sweep.to_dict()}
    if name == "seed_ranges":
        check, record = timed(run_seed_ranges, [Arm("he_leaky")], setup, SEED_RANGES,
                              progress)
        return {"run": record, **check.to_dict()}
    if name == "long":
        study, record = timed(run_study, [Arm("normal", label="N(0,1)")],
                              Setup(seeds=seeds, epochs=LONG_EPOCHS), progress)
        return {"run": record, **study.to_dict()}
    raise ValueError(f"unknown study {name!r}; expected one of {', '.join(STUDIES)}")


def load(results: Path) -> dict[str, dict]:
    """Every study's committed JSON, by name."""
    return {name: json.loads((results / f"xor_{name}.json").read_text()) for name in STUDIES}


# --- rendering: the docs page's sections, from the JSON alone --------------------------------

def points(value: float, near_the_ends: bool) -> str:
    """A proportion in percentage points: one decimal, two near 0 % and 100 %."""
    return f"{100 * value:.2f}" if near_the_ends else f"{100 * value:.1f}"


def percent(value: float) -> str:
    """0.4061 -> '40.6 %'; 0.99965 -> '99.97 %'."""
    return f"{points(value, not 0.01 < value < 0.99)} %"


def interval(result: dict) -> str:
    """A result's 95 % interval in points: '[39.7, 41.6]'."""
    near = not 0.01 < result["rate"] < 0.99
    low, high = result["interval"]
    return f"[{points(low, near)}, {points(high, near)}]"


def rate(result: dict) -> str:
    """'40.6 % [39.7, 41.6]'."""
    return f"{percent(result['rate'])} {interval(result)}"


def paragraph(text: str, indent: str = "") -> str:
    """``text`` wrapped at 100 columns, as the docs' prose is."""
    return textwrap.fill(text, width=100, subsequent_indent=indent, break_on_hyphens=False,
                         break_long_words=False)


def pretty(name: str) -> str:
    """A candidate arm's name as the docs say it: 'biases N(0,1), updated during backward'."""
    return name.removeprefix("normal, ").replace("biases normal", "biases N(0,1)")


def first_seeds(result: dict, seeds: int = 100) -> str:
    """The rate among the study's first ``seeds`` seeds, with its interval: the notes' n."""
    if result["n"] < seeds:
        raise ValueError(f"the study has {result['n']} seeds, fewer than {seeds}")
    successes = int(decode_solved(result["solved"], result["n"])[:seeds].sum())
    low, high = stats.wilson_interval(successes, seeds)
    return f"{100 * successes / seeds:.0f} % [{100 * low:.0f}, {100 * high:.0f}]"


def p_value(p: float) -> str:
    """A p-value as the docs print it, with its relation: '= 0.26' or '< 0.0001'."""
    return "< 0.0001" if p < 1e-4 else f"= {p:.2g}"


def comparison(study: dict, a: str, b: str) -> dict:
    """The comparison of arms named ``a`` and ``b`` in ``study``."""
    for c in study["comparisons"]:
        if {c["a"], c["b"]} == {a, b}:
            return c
    raise KeyError(f"no comparison of {a!r} and {b!r}")


def arm(study: dict, name: str) -> dict:
    """The result of the arm called ``name``."""
    return next(r for r in study["results"] if r["arm"]["name"] == name)


def minutes(record: dict) -> str:
    return f"{record['seconds'] / 60:.0f} min" if record["seconds"] >= 90 else \
        f"{record['seconds']:.0f} s"


def render_example(data: dict) -> str:
    return f"```\n$ {data['command']}\n{data['output'].rstrip()}\n```\n"


def render_shapes(data: dict) -> str:
    """Which shape's N(0,1) rate is nearest the notes' N(0,1) run, from the widths sweep."""
    notes_rate = data["notes"]["studies"][0]["results"][0]["arm"]["reported_rate"]
    rows = {s["setup"]["hidden"] and "-".join(map(str, [2, *s["setup"]["hidden"], 1])):
            arm(s, "normal") for s in data["widths"]["studies"]}
    nearest = sorted(rows, key=lambda shape: abs(rows[shape]["rate"] - notes_rate))
    n = rows[nearest[0]]["n"]
    others = ", ".join(f"{shape} {rate(rows[shape])}" for shape in nearest[1:3])
    return paragraph(f"The default shape is {Setup().shape}. The notes never published 99mlp's "
            f"shape; of the shapes simulated here with N(0,1) weights ({n:,} seeds each), "
            f"{nearest[0]} comes closest to the notes' {100 * notes_rate:.0f} % for N(0,1): "
            f"{rate(rows[nearest[0]])}; next are {others}.") + "\n"


def gap(a: dict, b: dict) -> str:
    """b's rate minus a's, in points: '+2.1 points'."""
    return f"{100 * (b['rate'] - a['rate']):+.1f} points"


def significance(c: dict) -> str:
    """'p = 0.21 (Holm 0.63): not significant' or '...: significant at the 5 % level'."""
    verdict = "significant at the 5 % level" if c["p_holm"] < 0.05 else "not significant"
    return f"p {p_value(c['p'])}, Holm-adjusted p {p_value(c['p_holm'])}: {verdict}"


def render_notes(data: dict) -> str:
    """The notes' table and what it says."""
    study = data["notes"]["studies"][0]
    n = study["setup"]["seeds"]
    lines = [f"| run | the notes, n = 100 | tinynet, seeds 0–99 | tinynet, n = {n:,} |",
             "| --- | --- | --- | --- |"]
    for r in study["results"]:
        reported = r["arm"]["reported_rate"]
        lines.append(f"| {r['arm']['name']} | "
                     f"{'' if reported is None else f'{100 * reported:.0f} %'} | "
                     f"{first_seeds(r)} | {rate(r)} |")
    normal, he, leaky, shuffled, normal_shuffled = study["results"]
    same = normal["solved"] == he["solved"]
    notes_rates = sorted(round(100 * r["arm"]["reported_rate"]) for r in study["results"]
                      if r["arm"]["reported_rate"] is not None)
    lowest, highest = notes_rates[0], notes_rates[-1]
    notes_gap = stats.fisher_exact_p(lowest, 100, highest, 100)
    shuffle_xavier = comparison(study, leaky["arm"]["name"], shuffled["arm"]["name"])
    shuffle_normal = comparison(study, normal["arm"]["name"], normal_shuffled["arm"]["name"])
    failures = normal["failures"]
    failed = normal["n"] - normal["successes"]
    q1, median, q3 = normal["solved_epoch_quartiles"]
    long = data["long"]["results"][0]
    from scipy.stats import binom
    lucky = [(r["arm"]["reported_rate"], float(binom.sf(round(100 * r["arm"]["reported_rate"]) - 1,
                                                        100, r["rate"])))
             for r in study["results"] if r["arm"]["reported_rate"] is not None]
    lucky_text = "; ".join(f"{100 * reported:.0f} %: p {p_value(p)}" for reported, p in lucky)
    holm = stats.holm([p for _, p in lucky])
    ordinary = [f"{100 * reported:.0f} %" for (reported, _), p in zip(lucky, holm) if p >= 0.05]
    unusual = [f"{100 * reported:.0f} %" for (reported, _), p in zip(lucky, holm) if p < 0.05]
    lucky_verdict = (
        (f"{', '.join(ordinary)} {'is' if len(ordinary) == 1 else 'are'} ordinary 100-seed "
         "draws at tinynet's rates" if ordinary else "")
        + ("; " if ordinary and unusual else "")
        + (f"{', '.join(unusual)} {'is' if len(unusual) == 1 else 'are'} not (Holm-adjusted "
           "over the four, p < 0.05)" if unusual else "") + ".")
    bullets = [
        "- **He is N(0,1) here.** Every fan_in of 2-2-2-1 is 2, so He's std sqrt(2/2) is "
        "exactly 1: from the same seed the two runs build the same network and "
        + ("solve or fail on exactly the same seeds" if same else "(unexpectedly) differ")
        + ". The notes' 46 % against 45 % was two draws of 100 seeds, nothing more.",
        f"- **At n = 100 nothing is significant.** Every interval is about ±10 points wide. "
        f"Even the notes' largest gap, {lowest} % against {highest} %, has a Fisher p "
        f"{p_value(notes_gap)}.",
        f"- **Shuffling, at n = {n:,}.** He-leaky/Xavier {rate(leaky)} against "
        f"{rate(shuffled)} shuffled ({gap(leaky, shuffled)}): "
        f"{significance(shuffle_xavier)}; N(0,1) {rate(normal)} against "
        f"{rate(normal_shuffled)} ({gap(normal, normal_shuffled)}): "
        f"{significance(shuffle_normal)}."
        + ("" if shuffle_normal["p_holm"] < 0.05 else
           f" A gap the size of the second needs about {shuffle_normal['seeds_needed']:,.0f} "
           "seeds per arm to be detected reliably (80 % power, at the level Holm holds the "
           f"preset's {len(study['comparisons'])} comparisons to)."),
        f"- **Most failures are slow, not stuck.** With N(0,1), {failures['one_wrong']:,} of the "
        f"{failed:,} failures have one sample wrong (the 2/3 plateau), {failures['two_wrong']:,} "
        f"two, {failures['three_or_more_wrong']:,} three or four, and {failures['diverged']:,} "
        f"diverged; the successful seeds solved XOR by epoch {median:,.0f} (median; quartiles "
        f"{q1:,.0f} and {q3:,.0f}). Train five times longer (`--epochs "
        f"{data['long']['setup']['epochs']}`) and the rate rises from {rate(normal)} "
        f"to {rate(long)}.",
        f"- **The notes against these rates.** The chance that 100 seeds at tinynet's rate for "
        f"the same run give at least the notes' count (one-sided binomial): {lucky_text}. "
        + lucky_verdict[0].upper() + lucky_verdict[1:],
    ]
    lines += ["", f"![XOR success rates of the notes' runs, {n:,} seeds each]"
                  "(../examples/figures/xor_notes.png)", "", "What the data say:", "",
              *(paragraph(bullet, indent="  ") for bullet in bullets)]
    return "\n".join(lines) + "\n"


def render_candidates(data: dict) -> str:
    """What 99mlp might have done differently, each against the notes' first run."""
    study = data["candidates"]["studies"][0]
    base, *others = study["results"]
    lines = [f"| N(0,1), data order, 2-2-2-1 | rate, n = {base['n']:,} | against zero biases, "
             "updated after backward (Fisher; Holm over "
             f"{len(study['comparisons'])}) |", "| --- | --- | --- |",
             f"| zero biases, updated after backward (the notes) | {rate(base)} | |"]
    for r in others:
        what = pretty(r["arm"]["name"])
        c = comparison(study, base["arm"]["name"], r["arm"]["name"])
        lines.append(f"| {what} | {rate(r)} | {significance(c)} |")
    notes_rate = data["notes"]["studies"][0]["results"][0]["arm"]["reported_rate"]
    effects = []
    for r in others:
        c = comparison(study, base["arm"]["name"], r["arm"]["name"])
        difference = 100 * (r["rate"] - base["rate"])
        change = ("no significant change" if c["p_holm"] >= 0.05 else
                  f"{'higher' if difference > 0 else 'lower'} by {abs(difference):.1f} points")
        effects.append(f"{pretty(r['arm']['name'])}: {change}")
    raised = [r for r in others
              if comparison(study, base["arm"]["name"], r["arm"]["name"])["p_holm"] < 0.05
              and r["rate"] > base["rate"]]
    verdict = ("None of them raises the rate, so none of them explains a higher rate in the "
               "notes." if not raised else
               f"{', '.join(pretty(r['arm']['name']) for r in raised)} raises the rate; the "
               f"notes had {100 * notes_rate:.0f} %.")
    lines += ["", paragraph("Against the notes' loop as tinynet reads it: "
                            + "; ".join(effects) + ". " + verdict)]
    return "\n".join(lines) + "\n"


def render_seed_ranges(data: dict) -> str:
    """The default arm on disjoint seed ranges, and the test that they agree."""
    check = data["seed_ranges"]
    lines = ["| seeds | solved | rate [95 % interval] |", "| --- | --- | --- |"]
    for study in check["studies"]:
        first, seeds = study["setup"]["first_seed"], study["setup"]["seeds"]
        r = study["results"][0]
        lines.append(f"| {first:,}–{first + seeds - 1:,} | {r['successes']:,} / {r['n']:,} | "
                     f"{rate(r)} |")
    p = check["equal_proportions"][0]["p"]
    verdict = "the ranges agree" if p >= 0.05 else "the ranges differ"
    normal = data["notes"]["studies"][0]["results"][0]
    first = check["studies"][0]
    if first["setup"]["first_seed"] == 0 and first["setup"]["seeds"] == normal["n"]:
        differ = int(np.sum(decode_solved(first["results"][0]["solved"], normal["n"])
                            != decode_solved(normal["solved"], normal["n"])))
        lines = [paragraph(f"Seeds 0–{normal['n'] - 1:,} are those of the N(0,1) run above; "
                           f"He-leaky and N(0,1) solve or fail alike on all but {differ:,} of "
                           "them."), "", *lines]
    lines += ["", paragraph(f"Test of equal proportions (Pearson chi-squared, "
                            f"{len(check['studies']) - 1} degrees of freedom): p {p_value(p)}, "
                            f"{verdict} at the 5 % level.")]
    return "\n".join(lines) + "\n"


def render_widths(data: dict) -> str:
    """The shape x initializer table and the numbers its paragraph quotes."""
    studies = data["widths"]["studies"]
    names = [r["arm"]["name"] for r in studies[0]["results"]]
    n = studies[0]["setup"]["seeds"]
    lines = [f"| shape | {' | '.join(names)} |", "|" + " --- |" * (len(names) + 1)]
    by_shape = {}
    for study in studies:
        shape = "-".join(map(str, [2, *study["setup"]["hidden"], 1]))
        by_shape[shape] = {r["arm"]["name"]: r for r in study["results"]}
        lines.append(f"| {shape} | " + " | ".join(rate(r) for r in study["results"]) + " |")

    def failing(shape: str, name: str) -> str:
        """The share of seeds that fail, with its 95 % interval."""
        result = by_shape[shape][name]
        low, high = result["interval"]
        return rate({"rate": 1 - result["rate"], "interval": [1 - high, 1 - low]})

    narrow = max(100 * (max(r["rate"] for r in rates) - min(r["rate"] for r in rates))
                 for shape, rates in ((shape, list(by_shape[shape].values()))
                                      for shape in ("2-2-1", "2-3-1", "2-4-1")))
    scaled = [name for name in names if name != "normal"]
    pairs = len(studies[0]["comparisons"])
    wide = [(shape, failing(shape, "normal"),
             ", ".join(failing(shape, name) for name in scaled)) for shape in ("2-8-1", "2-16-1")]
    lines += [
        "",
        f"![XOR success rate against width and initializer, {n:,} seeds per bar]"
        "(../examples/figures/xor_widths.png)",
        "",
        paragraph(
        "Up to width 4 the four schemes draw weights of about the same size (the hidden layer's "
        f"fan_in is 2 and the output's at most 4), and their rates differ by {narrow:.1f} "
        "points at most. From a fan_in of 8 on (the output layer of 2-8-1), N(0,1) "
        + "; ".join(f"at {shape} {normal_standing(studies, shape)}"
                    for shape in ("2-8-1", "2-16-1"))
        + f" (Fisher, Holm over each shape's {pairs} pairs), where its output pre-activation "
          "starts with a second moment of 8·E[a²] "
        f"against about 2·E[a²] or less for the others. At {wide[0][0]}, {wide[0][1]} of "
        f"N(0,1) seeds fail against {wide[0][2]} for {', '.join(scaled)}; at {wide[1][0]}, "
        f"{wide[1][1]} against {wide[1][2]}."),
    ]
    return "\n".join(lines) + "\n"


def normal_standing(studies: list[dict], shape: str) -> str:
    """How N(0,1) stands against each other initializer at ``shape`` of the widths sweep, from
    the study's Holm-adjusted Fisher tests: 'falls behind each of the others', or which it
    falls behind, is ahead of, and cannot be told apart from."""
    study = next((s for s in studies if "-".join(map(str, [2, *s["setup"]["hidden"], 1]))
                  == shape), None)
    if study is None:
        raise ValueError(f"the widths sweep has no study of {shape}")
    standing: dict[str, list[str]] = {"behind": [], "ahead": [], "level": []}
    for c in study["comparisons"]:
        if "normal" not in (c["a"], c["b"]):
            continue
        other, normal_rate, other_rate = ((c["b"], c["rate_a"], c["rate_b"]) if c["a"] == "normal"
                                          else (c["a"], c["rate_b"], c["rate_a"]))
        kind = "level" if c["p_holm"] >= 0.05 else \
            ("behind" if normal_rate < other_rate else "ahead")
        standing[kind].append(other)
    if not standing["ahead"] and not standing["level"]:
        return "falls behind each of the others"
    parts = [f"falls behind {', '.join(standing['behind'])}" if standing["behind"] else "",
             f"is ahead of {', '.join(standing['ahead'])}" if standing["ahead"] else "",
             f"cannot be told apart from {', '.join(standing['level'])}"
             if standing["level"] else ""]
    return ", ".join(part for part in parts if part)


def render_regenerate(data: dict) -> str:
    """The one command, and what the last run of it took on which machine."""
    records = {name: data[name]["run"] for name in STUDIES}
    total = sum(record["seconds"] for record in records.values())
    first = records[STUDIES[0]]
    loads = [record["load_average_1min"] for record in records.values()]
    parts = ", ".join(f"{name} {minutes(record)}" for name, record in records.items())
    return ("```bash\npython examples/xor_studies.py --readme docs/xor.md\n```\n\n" + paragraph(
            f"runs every study in this section at the seed counts shown, writes its JSON to "
            f"`examples/results/` and the figures, and rewrites this section from the JSON; "
            f"`tests/test_readme.py` fails if this page and the JSON disagree. The committed run "
            f"took {total / 60:.0f} min ({parts}) on {first['cores']} cores with "
            f"{first['numba_threads']} numba threads, Python {first['python']}, NumPy "
            f"{first['numpy']}, numba {first['numba']}, at a 1-minute load average of "
            f"{min(loads):.1f} to {max(loads):.1f} when its studies started (2 would be both "
            "cores busy): the ensembles use every core, so the time grows with other work on "
            "the machine.") + "\n")


RENDERERS = {"example": render_example, "shapes": render_shapes, "notes": render_notes,
             "candidates": render_candidates, "seed_ranges": render_seed_ranges,
             "widths": render_widths, "regenerate": render_regenerate}
"""The docs' study sections, by marker name: each a function of every study's JSON."""


def render(data: dict[str, dict]) -> dict[str, str]:
    """Every docs section, rendered from the studies' JSON."""
    return {name: (renderer(data["example"]) if name == "example" else renderer(data))
            for name, renderer in RENDERERS.items()}


def markers(name: str) -> tuple[str, str]:
    return f"<!-- xor:{name} start -->\n", f"<!-- xor:{name} end -->"


def sections(text: str) -> dict[str, str]:
    """The docs' study sections as they stand, by marker name."""
    found = {}
    for name in RENDERERS:
        start, end = markers(name)
        found[name] = text[text.index(start) + len(start):text.index(end)]
    return found


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    if not args.render:
        args.results.mkdir(parents=True, exist_ok=True)
        args.figures.mkdir(parents=True, exist_ok=True)
        for name in args.only.split(","):
            print(f"running {name} ...", flush=True)
            result = run(name, args.seeds, args.figures, show_progress(args.progress))
            text = json.dumps(result, indent=2) + "\n"
            write_whole(args.results / f"xor_{name}.json", lambda path: path.write_text(text))
            print(f"  {name}: {result['run']['seconds']:.0f} s", flush=True)
    missing = [name for name in STUDIES if not (args.results / f"xor_{name}.json").exists()]
    if missing:
        print(f"\nnot rendering the docs sections: they need every study's JSON, and "
              f"{args.results} has none for {', '.join(missing)}")
        if args.readme:
            sys.exit(f"{args.readme} left as it was")
        return
    rendered = render(load(args.results))
    for name, markdown in rendered.items():
        print(f"\n<!-- {name} -->\n{markdown}")
    if args.readme:
        for name, markdown in rendered.items():
            put_between(args.readme, *markers(name), markdown)
        print(f"wrote the study sections into {args.readme}")


if __name__ == "__main__":
    main()
