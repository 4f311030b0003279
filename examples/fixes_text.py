"""The docs' "What fixes 99mlp" section, rendered from ``examples/results/fixes.json`` alone.

Every sentence that says one arm does better or worse than another is made here from a Fisher
exact test that is significant after Holm's correction over its family; where a test is not,
the sentence says the two cannot be told apart at this number of seeds. Two families:

* every change against the notes' network (the study's own comparisons, Holm over the
  changes), and
* every pair of single changes, and the best two together against the single change that
  solved most seeds (:func:`best_comparisons`, Holm over those).

``examples/fixes.py`` writes the section; ``tests/test_fixes.py`` renders it again and fails
if the page differs.
"""

from __future__ import annotations

import itertools

from tinynet import stats
from xor_studies import gap, p_value, paragraph, percent, rate  # examples/, beside this one

MARKERS = ("<!-- fixes start -->\n", "<!-- fixes end -->")


def learning_rate(data: dict, result: dict) -> float:
    """The learning rate an arm trained at: its own, or the setup's."""
    return result["arm"]["lr"] if result["arm"]["lr"] is not None else data["setup"]["lr"]


def name(result: dict) -> str:
    """An arm as the prose names it: its label without the learning rate."""
    return result["arm"]["label"].rsplit(", lr ", 1)[0]


def against_baseline(data: dict, result: dict) -> dict:
    """The study's comparison of ``result``'s arm with the baseline."""
    return next(c for c in data["comparisons"] if c["b"] == result["arm"]["name"])


def best_comparisons(data: dict) -> list[dict]:
    """The second family: every pair of single changes, and the two together against the
    single change that solved most seeds; Fisher exact, Holm over the whole family (the best
    is picked from the same counts, so every pair it could have been compared with is in the
    family). Each: ``a``, ``b`` (results), ``p``, ``p_holm``; the best's pairs first, with
    ``a`` the best."""
    baseline, *singles, together = data["results"]
    best = max(singles, key=lambda r: r["successes"])
    others = [r for r in singles if r is not best]
    pairs = ([(best, r) for r in others] + [(best, together)]
             + list(itertools.combinations(others, 2)))
    p = [stats.fisher_exact_p(a["successes"], a["n"], b["successes"], b["n"]) for a, b in pairs]
    return [{"a": a, "b": b, "p": pv, "p_holm": ph}
            for (a, b), pv, ph in zip(pairs, p, stats.holm(p))]


def verdict(a: dict, b: dict, p_holm: float) -> str:
    """How b stands against a: 'higher by 51.2 points' (significant after Holm), or 'cannot
    be told apart' (not)."""
    if p_holm >= 0.05:
        return "cannot be told apart"
    difference = 100 * (b["rate"] - a["rate"])
    return f"{'higher' if difference > 0 else 'lower'} by {abs(difference):.1f} points"


def seeds_needed(comparison: dict, tests: int) -> str:
    """'; about 2.1 million seeds per arm would detect a gap this size (...)', or nothing where
    the rates are equal (JSON's null: no gap to detect)."""
    needed = comparison["seeds_needed"]
    if needed is None:
        return ""
    amount = f"{needed / 1e6:.1f} million" if needed >= 1e6 else f"{needed:,.0f}"
    return (f"; about {amount} seeds per arm would detect a gap this size with 80 % power at "
            f"the level Holm's first step holds, 0.05/{tests}")


def failures(result: dict) -> str:
    """'4,900 / 1,035 / 4, 0': one, two, three or more wrong; diverged."""
    f = result["failures"]
    return (f"{f['one_wrong']:,} / {f['two_wrong']:,} / {f['three_or_more_wrong']:,}, "
            f"{f['diverged']:,}")


def solved_by(result: dict) -> str:
    """The median epoch at which the solved seeds solved, with the quartiles."""
    q = result["solved_epoch_quartiles"]
    return "–" if q is None else f"{q[1]:,.0f} ({q[0]:,.0f}–{q[2]:,.0f})"


def render_table(data: dict) -> list[str]:
    """The table: a row per arm, the notes' network first, each with its test against it."""
    baseline = data["results"][0]
    n = baseline["n"]
    comparisons = len(data["comparisons"])
    lines = [f"| change | lr | rate, n = {n:,} [95 %] | against the notes' network (Fisher; "
             f"Holm over {comparisons}) | solved by epoch: median (quartiles) | failures: 1 / "
             "2 / 3+ wrong, diverged | seconds |",
             "| --- | --- | --- | --- | --- | --- | --- |"]
    for result in data["results"]:
        if result is baseline:
            against = "the baseline"
        else:
            c = against_baseline(data, result)
            against = f"{verdict(baseline, result, c['p_holm'])} (Holm p {p_value(c['p_holm'])})"
        change = "none: the notes' network" if result is baseline else name(result)
        seconds = f"{result['seconds']:.1f}" if result["seconds"] < 10 else \
            f"{result['seconds']:.0f}"
        lines.append(f"| {change} | {learning_rate(data, result):g} | {rate(result)} | {against} | "
                     f"{solved_by(result)} | {failures(result)} | {seconds} |")
    return lines


def render_findings(data: dict) -> list[str]:
    """The bullets: which changes raise or lower the rate, which cannot be told apart from the
    notes' network, which single change solves most seeds, and the two together."""
    baseline, *singles, together = data["results"]
    n = baseline["n"]
    up, down, same = [], [], []
    for result in (*singles, together):
        c = against_baseline(data, result)
        if c["p_holm"] >= 0.05:
            needed = seeds_needed(c, len(data["comparisons"]))
            same.append(f"{name(result)} ({rate(result)}{needed})")
        elif result["rate"] > baseline["rate"]:
            up.append(f"{name(result)} {gap(baseline, result)}")
        else:
            down.append(f"{name(result)} {gap(baseline, result)}")
    family = best_comparisons(data)
    best = family[0]["a"]
    against_best = family[:len(singles) - 1]
    ahead = [f["b"] for f in against_best if f["p_holm"] < 0.05]
    level = [f["b"] for f in against_best if f["p_holm"] >= 0.05]
    pair = family[len(singles) - 1]
    f = baseline["failures"]
    failed = baseline["n"] - baseline["successes"]
    bullets = [
        f"- **The notes' network** solves {rate(baseline)} of {n:,} seeds; {f['one_wrong']:,} "
        f"of its {failed:,} failures have one output on the wrong side (the plateau at loss "
        f"1/6), {f['two_wrong']:,} two.",
        "- **Raise the rate** (against the notes' network, significant after Holm over the "
        f"{len(data['comparisons'])} changes): " + ("; ".join(up) if up else "none") + ".",
        "- **Lower it**: " + ("; ".join(down) if down else "none") + ".",
        f"- **Cannot be told apart from it at n = {n:,}**: "
        + ("; ".join(same) if same else "none") + ".",
        f"- **Of the single changes, {name(best)} solves most seeds**, {rate(best)}: "
        + ("more than every other single change" if not level else
           (f"more than {', '.join(name(r) for r in ahead)}; " if ahead else "")
           + f"it cannot be told apart from {', '.join(name(r) for r in level)}")
        + f" (Fisher, Holm over {len(family)} comparisons: every pair of single changes, and "
          f"{name(together)} against {name(best)}).",
        f"- **{name(together)}**, the best change with the best one that goes with it: "
        f"{rate(together)}, " + (
            f"{verdict(best, together, pair['p_holm'])} than {name(best)} alone"
            if pair["p_holm"] < 0.05 else f"which cannot be told apart from {name(best)} alone")
        + f" (Holm p {p_value(pair['p_holm'])}).",
    ]
    return [paragraph(bullet, indent="  ") for bullet in bullets]


def render_sweeps(data: dict) -> list[str]:
    """The learning-rate sweeps: a row per tuned change, the rate it ran at in bold."""
    if not data["sweeps"]:
        return ["No change was tuned: every arm ran at the notes' learning rate."]
    rates = sorted({r["arm"]["lr"] for s in data["sweeps"].values() for r in s["results"]})
    first = next(iter(data["sweeps"].values()))["setup"]
    lines = [f"| tuned change | {' | '.join(f'lr {lr:g}' for lr in rates)} |",
             "| --- |" + " --- |" * len(rates)]
    for key, sweep in data["sweeps"].items():
        by_lr = {r["arm"]["lr"]: r for r in sweep["results"]}
        chosen = data["learning_rates"][key]
        label = name(sweep["results"][0])
        cells = [("" if lr not in by_lr else
                  (f"**{percent(by_lr[lr]['rate'])}**" if lr == chosen
                   else percent(by_lr[lr]["rate"]))) for lr in rates]
        lines.append(f"| {label} | {' | '.join(cells)} |")
    return lines + ["", paragraph(
        f"Each tuned change at every learning rate, {first['seeds']:,} seeds a rate (seeds "
        f"{first['first_seed']:,}–{first['first_seed'] + first['seeds'] - 1:,}, apart from the "
        "measured ones, so that the seeds that choose a rate do not also measure it); in bold, "
        "the learning rate that solved most seeds, at which the change ran above. An empty "
        "cell: not "
        f"tried (a larger learning rate means larger than the notes' {data['setup']['lr']:g}).")]


def render_regenerate(data: dict) -> str:
    """The one command, and what the committed run of it took on which machine."""
    runs = [s["run"] for s in data["sweeps"].values()] + list(data["runs"].values())
    total = sum(r["seconds"] for r in runs)
    loads = [r["load_average_1min"] for r in runs]
    record = runs[0]
    return paragraph(
        f"`python examples/fixes.py --readme docs/fixes.md` runs the sweeps and the arms, writes "
        f"`examples/results/fixes.json` and the figure, and rewrites this section from the "
        f"JSON; `python examples/xor.py --preset fixes --seeds 10000` trains the same arms "
        f"(the learning rates and pair the committed run chose). The committed run took "
        f"{total / 60:.0f} min on {record['cores']} cores with {record['numba_threads']} numba "
        f"threads at a 1-minute load average of {min(loads):.1f} to {max(loads):.1f}"
        "; the seconds in the table are each arm's training alone.")


def render(data: dict) -> str:
    """The whole section."""
    baseline = data["results"][0]
    lines = [*render_table(data), "",
             f"![Success rate of each change against the notes' network, {baseline['n']:,} "
             "seeds each](../examples/figures/fixes.png)", "", "What the data say:", "",
             *render_findings(data), "", "Learning rates:", "", *render_sweeps(data), "",
             render_regenerate(data)]
    return "\n".join(lines) + "\n"
