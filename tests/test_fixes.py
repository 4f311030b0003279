"""What fixes 99mlp (tinynet.xor.fixes, --preset fixes, examples/fixes.py): arms with their
own learning rate and shape, comparisons against a baseline, the design's choices, and the
README section rendered from the committed run."""

import copy
import csv
import io
import json
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from tinynet import stats
from tinynet.xor import (Arm, Setup, compare, decode_solved, figures, get_preset,
                         run_depth_study, run_study, run_sweep)
from helpers import page
from tinynet.xor.fixes import (BASELINE, CHANGES, CHOSEN_LRS, CHOSEN_PAIR, LEARNING_RATES,
                               best_lr, best_pair, change, combine, fixes_arms, most_solved,
                               run_lr_sweep)

ROOT = Path(__file__).resolve().parents[1]
COMMITTED = ROOT / "examples" / "results" / "fixes.json"


@pytest.fixture(scope="module")
def committed() -> dict:
    return json.loads(COMMITTED.read_text())


def fixes_text():
    import fixes_text  # examples/, on the path (tests/conftest.py)
    return fixes_text


# --- arms with their own learning rate and hidden layers -------------------------------------

def test_an_arm_with_its_own_lr_trains_as_a_setup_with_that_lr():
    setup = Setup(seeds=16, epochs=300)
    own = run_study([Arm("normal", lr=0.3)], setup, progress=False).results[0]
    plain = run_study([Arm("normal")], replace(setup, lr=0.3), progress=False).results[0]
    np.testing.assert_array_equal(own.solved, plain.solved)
    np.testing.assert_array_equal(own.trained, plain.trained)


def test_an_arm_with_its_own_hidden_layers_builds_and_trains_that_shape():
    setup = Setup(seeds=8, epochs=50)
    study = run_study([Arm("normal"), Arm("normal", hidden=(3, 3))], setup, progress=False)
    assert study.network(0, 0).sizes == [2, 2, 2, 1]
    assert study.network(1, 0).sizes == [2, 3, 3, 1]
    alone = run_study([Arm("normal")], replace(setup, hidden=(3, 3)), progress=False)
    np.testing.assert_array_equal(study.results[1].trained, alone.results[0].trained)
    rows = list(csv.reader(io.StringIO(study.to_csv())))
    assert rows[0][8:10] == ["lr", "hidden"]
    assert rows[2][0] == "normal, hidden 3,3" and rows[2][8:10] == ["0.01", "3-3"]


def test_for_arm_replaces_only_what_the_arm_gives():
    setup = Setup(lr=0.05, hidden=(4,))
    assert setup.for_arm(Arm("normal")) is setup
    assert setup.for_arm(Arm("normal", lr=0.2)) == replace(setup, lr=0.2)
    assert setup.for_arm(Arm("normal", hidden=[3, 3])).hidden == (3, 3)
    assert Arm("normal", lr=0.2, hidden=(3, 3)).name == "normal, lr 0.2, hidden 3,3"
    assert Arm("normal", hidden=()).name == "normal, no hidden layer"


@pytest.mark.parametrize("fields,error,message", [
    ({"lr": 0.0}, ValueError, "lr must be .*> 0.*got 0.0"),
    ({"lr": -1}, ValueError, "lr must be .*got -1"),
    ({"lr": "0.1"}, TypeError, "lr must be"),
    ({"lr": float("nan")}, ValueError, "lr must be"),
    ({"hidden": "3,3"}, TypeError, "hidden must be a sequence of layer widths.*'3,3'"),
    ({"hidden": (3, 0)}, ValueError, r"hidden\[1\] must be an integer >= 1, got 0"),
])
def test_bad_arm_lr_and_hidden_are_refused_by_name(fields, error, message):
    with pytest.raises(error, match=message):
        Arm("normal", **fields)


# --- comparisons against a baseline ----------------------------------------------------------

def test_against_compares_each_arm_with_the_baseline_holm_over_those_alone():
    study = run_study([Arm("normal"), Arm("normal", lr=0.1, label="fast"),
                       Arm("normal", optimizer="adam", label="adam")],
                      Setup(seeds=64, epochs=2000), progress=False, against=0)
    results = study.results
    assert [(c.a, c.b) for c in study.comparisons] == [("normal", "fast"), ("normal", "adam")]
    p = [stats.fisher_exact_p(results[0].successes, 64, r.successes, 64) for r in results[1:]]
    assert [c.p for c in study.comparisons] == pytest.approx(p, rel=1e-12)
    assert [c.p_holm for c in study.comparisons] == pytest.approx(stats.holm(p), rel=1e-12)
    assert study.baseline == "normal" and study.to_dict()["baseline"] == "normal"
    assert "Against normal (Fisher exact, two-sided; Holm-adjusted over 2" in study.report()
    assert len(compare(results)) == 3  # every pair, as before


@pytest.mark.parametrize("against,error", [(3, ValueError), (-1, ValueError),
                                           (True, TypeError), (0.0, TypeError)])
def test_a_bad_baseline_index_is_refused_before_training(against, error, monkeypatch):
    def no_training(*args, **kwargs):
        raise AssertionError("trained before refusing against")
    monkeypatch.setattr("tinynet.xor.bench.train", no_training)
    with pytest.raises(error, match=rf"against \(the index of the baseline arm\) must be an "
                                    rf"integer from 0 to 1, got {against!r}"):
        run_study([Arm("normal"), Arm("he_normal")], Setup(seeds=1, epochs=1), progress=False,
                  against=against)


def test_a_numpy_integer_is_a_baseline_index():
    study = run_study([Arm("normal"), Arm("he_normal")], Setup(seeds=2, epochs=2),
                      progress=False, against=np.int64(1))
    assert study.baseline == "he_normal" and study.comparisons[0].b == "normal"


def test_the_cli_compares_the_fixes_preset_with_its_baseline(tmp_path):
    result = subprocess.run([sys.executable, "-m", "tinynet.xor", "--preset", "fixes",
                             "--seeds", "4", "--epochs", "20", "--backend", "numpy"],
                            capture_output=True, text=True, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "Against the notes' network (Fisher exact, two-sided; Holm-adjusted over " \
           f"{len(CHANGES) + 1} comparisons)" in result.stdout


# --- the design ------------------------------------------------------------------------------

def test_changes_combine_only_when_they_decide_different_things():
    assert combine(change("adam"), change("wider")).settings == {"optimizer": "adam",
                                                                "hidden": (3, 3)}
    assert combine(change("adam"), change("wider")).tuned
    assert combine(change("bce"), change("adam")).tuned
    assert not combine(change("shuffle"), change("wider")).tuned
    for a, b in [("adam", "momentum"), ("lr", "bce"), ("adam", "lr")]:
        with pytest.raises(ValueError, match="cannot be combined"):
            combine(change(a), change(b))


def test_a_tuned_change_needs_a_learning_rate_and_an_untuned_one_refuses_it():
    with pytest.raises(ValueError, match="give lr"):
        change("adam").arm()
    with pytest.raises(ValueError, match="keeps the baseline's learning rate"):
        change("wider").arm(0.1)
    with pytest.raises(ValueError, match="only a tuned change is swept"):
        run_lr_sweep(change("shuffle"), Setup(seeds=1, epochs=1))
    with pytest.raises(ValueError, match="unknown change .dropout.; expected one of: adam, bce"):
        change("dropout")


def test_the_larger_learning_rate_is_tried_only_above_the_notes_and_stays_larger_combined():
    assert LEARNING_RATES == (0.001, 0.003, 0.01, 0.03, 0.1, 0.3)
    assert change("lr").rates == (0.03, 0.1, 0.3)
    assert combine(change("lr"), change("wider")).rates == (0.03, 0.1, 0.3)
    assert combine(change("adam"), change("wider")).rates == LEARNING_RATES


def test_most_solved_breaks_a_tie_towards_the_smaller_rate():
    assert most_solved([0.001, 0.01, 0.1], [5, 9, 9]) == 0.01
    assert most_solved([0.001, 0.01, 0.1], [5, 9, 10]) == 0.1


def test_best_lr_reads_a_sweep_and_refuses_another_changes():
    sweep = run_lr_sweep(change("lr"), Setup(seeds=8, epochs=200, backend="numpy"), False)
    assert [r.arm.lr for r in sweep.results] == list(change("lr").rates)
    assert best_lr(change("lr"), sweep) == most_solved(list(change("lr").rates),
                                                       [r.successes for r in sweep.results])
    with pytest.raises(ValueError, match="not those of change 'adam'"):
        best_lr(change("adam"), sweep)


def test_best_pair_skips_a_change_that_cannot_go_with_the_best():
    rates = {"adam": 0.9, "momentum": 0.8, "lr": 0.7, "bce": 0.6, "wider": 0.5}
    assert best_pair(rates) == ("adam", "bce")  # momentum and lr decide what adam decides


def test_the_preset_is_the_design_and_refuses_what_it_sets(tmp_path):
    preset = get_preset("fixes")
    assert list(preset.arms) == fixes_arms() and preset.against == 0
    assert preset.arms[0] == BASELINE
    with pytest.raises(ValueError, match="lr cannot be chosen for preset 'fixes'"):
        preset.design(Setup(lr=0.1))
    with pytest.raises(ValueError, match="optimizer cannot be chosen"):
        preset.design(optimizer="adam")
    result = subprocess.run([sys.executable, "-m", "tinynet.xor", "--preset", "fixes", "--lr",
                             "0.1"], capture_output=True, text=True, cwd=tmp_path)
    assert result.returncode == 2
    assert "--lr cannot be combined with --preset fixes, which sets it" in result.stderr


def test_the_preset_runs_every_arm_against_the_baseline():
    sweep = get_preset("fixes").run(Setup(seeds=4, epochs=20, backend="numpy"), progress=False)
    study = sweep.studies[0]
    assert [r.arm.name for r in study.results] == [arm.name for arm in fixes_arms()]
    assert all(c.a == BASELINE.name for c in study.comparisons)
    assert len(study.comparisons) == len(CHANGES) + 1
    assert study.network(len(CHANGES) + 1, 0).sizes == Setup().for_arm(fixes_arms()[-1]).sizes


# --- the committed run -----------------------------------------------------------------------

def test_the_committed_run_has_its_seeds_and_times(committed):
    assert all(r["n"] >= 10_000 for r in committed["results"])
    assert all(r["n"] >= 1_000 for s in committed["sweeps"].values() for r in s["results"])
    assert all(r["seconds"] > 0 for r in committed["results"])
    measured = set(range(committed["setup"]["first_seed"],
                         committed["setup"]["first_seed"] + committed["setup"]["seeds"]))
    for sweep in committed["sweeps"].values():
        first = sweep["setup"]["first_seed"]
        assert measured.isdisjoint(range(first, first + sweep["setup"]["seeds"]))


def test_the_preset_is_what_the_committed_run_chose(committed):
    """The learning rates are the committed sweeps' best, the pair the committed rates' best
    two, and the preset's arms the committed arms."""
    for name, sweep in committed["sweeps"].items():
        chosen = most_solved([r["arm"]["lr"] for r in sweep["results"]],
                             [r["successes"] for r in sweep["results"]])
        assert committed["learning_rates"][name] == chosen == CHOSEN_LRS[name], name
    assert set(CHOSEN_LRS) == set(committed["learning_rates"])
    singles = {c.name: r["rate"] for c, r in zip(CHANGES, committed["results"][1:])}
    assert tuple(committed["pair"]) == best_pair(singles) == CHOSEN_PAIR
    assert [r["arm"]["name"] for r in committed["results"]] == \
        [arm.name for arm in fixes_arms()]


@pytest.mark.slow
@pytest.mark.parametrize("arm", [1, len(CHANGES) + 1])  # binary cross-entropy; the pair
def test_the_committed_results_are_what_this_code_computes(committed, arm):
    """The first 64 seeds of a committed arm, trained again now, solve exactly as recorded."""
    recorded = committed["results"][arm]
    setup = replace(Setup.from_dict(committed["setup"]), seeds=64)
    again = run_study([fixes_arms()[arm]], setup, progress=False)
    np.testing.assert_array_equal(again.results[0].solved,
                                  decode_solved(recorded["solved"], recorded["n"])[:64])


def test_the_docs_section_is_rendered_from_the_committed_run(committed):
    text = fixes_text()
    readme = page("fixes.md")
    start, end = text.MARKERS
    assert readme[readme.index(start) + len(start):readme.index(end)] == text.render(committed)


# --- sentences follow the tests --------------------------------------------------------------

def test_a_difference_that_is_not_significant_after_holm_is_never_called_a_gain(committed):
    """Move one arm's count above the baseline's by a gap whose raw Fisher p is below 0.05 but
    whose Holm-adjusted p is not: its sentence must say it cannot be told apart; then far
    above: it must say by how much it is higher."""
    text = fixes_text()
    data = copy.deepcopy(committed)
    baseline, target = data["results"][0], data["results"][-2]  # shuffled epochs
    raw = stats.fisher_exact_p(baseline["successes"], baseline["n"],
                               baseline["successes"] + 150, target["n"])
    assert raw < 0.05  # so that the test tells Holm's p from the raw one
    for successes, expected in [(baseline["successes"] + 150, "cannot be told apart"),
                                (baseline["successes"] + 2_000, "higher by")]:
        target["successes"] = successes
        target["rate"] = successes / target["n"]
        target["interval"] = list(stats.wilson_interval(successes, target["n"]))
        names = [r["arm"]["name"] for r in data["results"][1:]]
        p = [stats.fisher_exact_p(baseline["successes"], baseline["n"], r["successes"], r["n"])
             for r in data["results"][1:]]
        for c, name, pv, ph in zip(data["comparisons"], names, p, stats.holm(p)):
            c.update(b=name, p=pv, p_holm=ph)
        row = next(line for line in text.render_table(data) if line.startswith("| shuffled"))
        assert expected in row, row
        findings = " ".join(" ".join(text.render_findings(data)).split())
        if expected == "higher by":
            assert "shuffled epochs +" in findings
        else:
            assert "shuffled epochs (" in findings.split("Cannot be told apart")[1]


def test_the_best_change_is_called_ahead_only_of_changes_a_holm_test_separates(committed):
    text = fixes_text()
    data = copy.deepcopy(committed)
    family = text.best_comparisons(data)
    best = family[0]["a"]
    runner_up = data["results"][1] if data["results"][1] is not best else data["results"][2]
    runner_up["successes"] = best["successes"] - 1
    runner_up["rate"] = runner_up["successes"] / runner_up["n"]
    findings = " ".join(" ".join(text.render_findings(data)).split())
    sentence = findings.split(f"{text.name(best)} solves most seeds**")[1].split(" (Fisher")[0]
    ahead, level = sentence.split("it cannot be told apart from ")
    assert text.name(runner_up) in level and text.name(runner_up) not in ahead
    assert "more than" in ahead  # the others are still far behind


def test_the_second_family_is_every_pair_of_single_changes_and_the_pair(committed):
    text = fixes_text()
    family = text.best_comparisons(committed)
    singles = len(committed["results"]) - 2
    assert len(family) == singles * (singles - 1) // 2 + 1 == 22
    best = max(committed["results"][1:-1], key=lambda r: r["successes"])
    assert all(f["a"] is best for f in family[:singles])
    assert family[singles - 1]["b"] is committed["results"][-1]
    p = [stats.fisher_exact_p(f["a"]["successes"], f["a"]["n"], f["b"]["successes"],
                              f["b"]["n"]) for f in family]
    assert [f["p_holm"] for f in family] == pytest.approx(stats.holm(p), rel=1e-12)


def test_an_arm_level_with_the_baseline_has_no_seeds_needed_and_still_renders(committed):
    """Equal rates: seeds_needed is infinite, written to JSON as null."""
    text = fixes_text()
    data = copy.deepcopy(committed)
    target = data["results"][-3]  # He-leaky hidden, Xavier output
    target.update(successes=data["results"][0]["successes"], rate=data["results"][0]["rate"])
    next(c for c in data["comparisons"] if c["b"] == target["arm"]["name"])["seeds_needed"] = None
    findings = " ".join(" ".join(text.render_findings(data)).split())
    assert f"{text.name(target)} ({text.rate(target)})" in findings


# --- where an arm's own shape or learning rate would be lost ---------------------------------

def test_a_sweep_over_shapes_refuses_an_arm_with_its_own_hidden_layers():
    setups = [Setup(hidden=(2,), seeds=1, epochs=1), Setup(hidden=(4,), seeds=1, epochs=1)]
    with pytest.raises(ValueError, match="arm 'normal, hidden 3' gives its own hidden layers"):
        run_sweep([Arm("normal", hidden=(3,))], setups)


@pytest.mark.parametrize("name", ["hidden", "lr"])
def test_the_depth_study_refuses_an_arm_with_its_own_shape_or_lr(name):
    arm = Arm("normal", **{name: (3,) if name == "hidden" else 0.5})
    with pytest.raises(ValueError, match=f"gives its own {name}; the depth study sets it"):
        run_depth_study(depths=(1,), arms=[arm], seeds=1)


def test_the_against_baseline_figure_has_a_row_per_arm_and_needs_a_baseline(tmp_path):
    arms = [Arm("normal"), Arm("normal", lr=0.3), Arm("normal", hidden=(3, 3))]
    study = run_study(arms, Setup(seeds=16, epochs=200), progress=False, against=0)
    figure = figures.against_baseline(study, tmp_path / "fixes.png")
    labels = [tick.get_text() for tick in figure.axes[0].get_yticklabels()]
    assert labels == ["normal, hidden 3,3", "normal, lr 0.3", "normal (baseline)"]
    assert (tmp_path / "fixes.png").stat().st_size > 5_000
    pairwise = run_study(arms[:2], Setup(seeds=2, epochs=2), progress=False)
    with pytest.raises(ValueError, match="study must compare its arms with a baseline"):
        figures.against_baseline(pairwise)


def test_loss_curves_name_the_arms_loss_and_mark_mses_plateaus_only():
    study = run_study([Arm("normal"), Arm("normal", loss="bce", lr=0.03)],
                      Setup(seeds=4, epochs=200), progress=False, record_every=20)
    mse, bce = figures.study_curves(study).axes
    assert mse.get_ylabel() == "MSE over the epoch" and bce.get_ylabel() == "BCE over the epoch"
    dashed = [[line for line in ax.get_lines() if line.get_linestyle() == "--"]
              for ax in (mse, bce)]
    assert len(dashed[0]) == len(figures.PLATEAUS) and dashed[1] == []
