"""The XOR harness: statistics, the success criterion, studies, and the CLI end to end."""

import csv
import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import tinynet
from tinynet import stats
from tinynet.ensemble import EnsembleResult, solves
from tinynet.experiments import NOTES_ARMS, Arm, ArmResult, XorSetup, run_study

ROOT = Path(__file__).resolve().parents[1]
spec = importlib.util.spec_from_file_location("xor_cli", ROOT / "examples" / "xor.py")
xor_cli = importlib.util.module_from_spec(spec)
spec.loader.exec_module(xor_cli)


# --- statistics against known values -------------------------------------------------------

@pytest.mark.parametrize("k,n,low,high", [
    (45, 100, 0.35615, 0.54755),   # statsmodels proportion_confint(45, 100, method="wilson")
    (0, 10, 0.0, 0.27753),
    (10, 10, 0.72247, 1.0),
    (1, 2, 0.09453, 0.90547),
])
def test_wilson_interval(k, n, low, high):
    lo, hi = stats.wilson_interval(k, n)
    assert lo == pytest.approx(low, abs=5e-6) and hi == pytest.approx(high, abs=5e-6)


def test_wilson_ends_are_exact():
    assert stats.wilson_interval(10, 10)[1] == 1.0 and stats.wilson_interval(0, 10)[0] == 0.0


def test_wilson_half_width_at_n_100_is_about_ten_points():
    lo, hi = stats.wilson_interval(50, 100)
    assert 0.09 < (hi - lo) / 2 < 0.10


def test_fisher_exact_known_values():
    assert stats.fisher_exact_p(3, 4, 1, 4) == pytest.approx(0.48571, abs=1e-5)  # Fisher's tea
    assert stats.fisher_exact_p(46, 100, 55, 100) == pytest.approx(0.25783, abs=1e-5)
    assert stats.fisher_exact_p(10, 10, 0, 10) == pytest.approx(1.0825e-05, rel=1e-3)
    assert stats.fisher_exact_p(7, 20, 7, 20) == 1.0


def test_holm_and_seeds_needed():
    assert stats.holm([0.01, 0.04, 0.03]) == pytest.approx([0.03, 0.06, 0.06])
    assert stats.holm([0.5]) == [0.5]
    # (1.96 sqrt(2 .55 .45) + 0.8416 sqrt(.25 + .24))² / 0.1² = 387.3
    assert stats.seeds_needed(0.5, 0.6) == pytest.approx(387.3, abs=0.2)
    assert stats.seeds_needed(0.4, 0.4) == float("inf")


@pytest.mark.parametrize("call,message", [
    (lambda: stats.wilson_interval(5, 4), "successes must be at most n \\(4\\), got 5"),
    (lambda: stats.wilson_interval(-1, 4), "successes must be an integer >= 0"),
    (lambda: stats.fisher_exact_p(1, 0, 1, 2), "n_a must be an integer >= 1, got 0"),
    (lambda: stats.seeds_needed(1.2, 0.5), "rate_a must be a probability from 0 to 1"),
    (lambda: stats.seeds_needed(0.2, 0.5, power=1.0), "power must be a probability strictly"),
])
def test_statistics_refuse_impossible_counts(call, message):
    with pytest.raises(ValueError, match=message):
        call()


# --- success and failure --------------------------------------------------------------------

def test_success_criterion_on_hand_made_predictions():
    y = tinynet.data.xor()[1]
    predictions = np.array([
        [[0.1], [0.9], [0.9], [0.1]],     # solved
        [[0.49], [0.51], [0.6], [0.0]],   # solved, just
        [[0.5], [0.9], [0.9], [0.1]],     # 0.5 for target 0 counts as 0: solved
        [[0.1], [0.5], [0.9], [0.1]],     # 0.5 for target 1 is not above 0.5: wrong
        [[0.7], [0.7], [0.7], [0.01]],    # the 2/3 plateau: one wrong
        [[0.5], [0.5], [0.5], [0.5]],     # dead at 0.5: two wrong
    ])
    np.testing.assert_array_equal(solves(predictions, y), [True, True, True, False, False, False])
    result = EnsembleResult(final_loss=np.array([0.01, 0.1, 0.1, 0.2, 0.17, 0.25]),
                            diverged_epoch=np.array([-1, -1, -1, -1, -1, -1]),
                            solved_epoch=np.array([10, 20, 30, -1, -1, -1]),
                            predictions=predictions, epochs=50)
    summary = ArmResult.from_ensemble(Arm("normal"), result, y, [1.0], 0.0)
    assert summary.successes == 3 and summary.rate == 0.5
    assert summary.failures == {"one_wrong": 2, "two_wrong": 1, "three_or_four_wrong": 0,
                                "diverged": 0}
    assert summary.solved_epoch_quartiles == [15.0, 20.0, 25.0]
    assert list(summary.failures) == list(tinynet.experiments.FAILURES)


# --- studies --------------------------------------------------------------------------------

def test_he_and_normal_are_the_same_networks_at_width_two():
    # Every fan_in of 2-2-2-1 is 2, so He's std sqrt(2/2) is N(0,1)'s: same seeds, same runs.
    study = run_study([Arm("normal"), Arm("he_normal")], XorSetup(seeds=30, epochs=2000),
                      progress=False)
    a, b = study.results
    assert a.successes == b.successes and a.solved_epoch_quartiles == b.solved_epoch_quartiles
    assert a.init_stds == b.init_stds == [1.0, 1.0, 1.0]
    assert "no difference at all" in study.comparisons[0].verdict(30)


def test_seeds_needed_is_held_to_the_same_correction_as_the_verdict():
    results = [ArmResult(Arm(f"arm{i}"), 1000, k, stats.wilson_interval(k, 1000), None, None, 0,
                         {}, [], 0.0) for i, k in enumerate([400, 470, 430, 410])]
    comparisons = tinynet.experiments.compare(results)
    assert len(comparisons) == 6
    first = comparisons[0]
    assert first.seeds_needed == pytest.approx(stats.seeds_needed(0.4, 0.47, alpha=0.05 / 6))
    for c in comparisons:  # not significant after Holm: then the advice asks for more than n
        if c.p_holm >= 0.05:
            assert c.seeds_needed > 1000 or c.p >= 0.05 / 6


def test_study_backends_agree():
    arms = [Arm("he_leaky", "xavier_normal", shuffle=True)]
    setup = XorSetup(hidden=(3,), seeds=20, epochs=1500, lr=0.05)
    numba = run_study(arms, setup, progress=False).results[0]
    numpy = run_study(arms, XorSetup(**{**vars(setup), "backend": "numpy"}),
                      progress=False).results[0]
    assert numba.successes == numpy.successes
    assert numba.solved_epoch_quartiles == numpy.solved_epoch_quartiles


@pytest.mark.parametrize("kwargs,message", [
    (dict(seeds=0), "seeds must be an integer >= 1, got 0"),
    (dict(lr=-0.1), "lr must be a finite number > 0.0"),
    (dict(hidden=(2, 0)), r"hidden\[1\] must be an integer >= 1, got 0"),
    (dict(backend="gpu"), "unknown backend 'gpu'"),
    (dict(first_seed=2**63 - 5, seeds=10), "last seed"),
])
def test_bad_setups(kwargs, message):
    with pytest.raises(ValueError, match=message):
        XorSetup(**kwargs)


def test_bad_arms():
    with pytest.raises(ValueError, match="at least one Arm"):
        run_study([], XorSetup(seeds=2, epochs=2))
    with pytest.raises(TypeError, match=r"arms\[0\] must be an Arm"):
        run_study(["normal"], XorSetup(seeds=2, epochs=2))
    with pytest.raises(tinynet.UnknownNameError, match="'he_leak'"):
        run_study([Arm("he_leak")], XorSetup(seeds=2, epochs=2))


# --- the CLI --------------------------------------------------------------------------------

def test_cli_writes_table_json_csv_and_png(tmp_path, capsys):
    out = tmp_path / "r"
    xor_cli.main(["--init", "normal,he_leaky(alpha=0.1)", "--seeds", "12", "--epochs", "300",
                  "--lr", "0.1", "--hidden", "3", "--shuffle", "--json", f"{out}.json",
                  "--csv", f"{out}.csv", "--plot", f"{out}.png"])
    text = capsys.readouterr().out
    assert "XOR, 2-3-1" in text and "normal, shuffled" in text and "Pairwise" in text
    report = json.loads(Path(f"{out}.json").read_text())
    assert [r["arm"]["init"] for r in report["results"]] == ["normal", "he_leaky(alpha=0.1)"]
    assert report["setup"]["seeds"] == 12 and len(report["comparisons"]) == 1
    for r in report["results"]:
        assert 0 <= r["successes"] <= 12 and r["interval"][0] <= r["rate"] <= r["interval"][1]
    rows = list(csv.DictReader(Path(f"{out}.csv").open()))
    assert [row["init"] for row in rows] == ["normal", "he_leaky(alpha=0.1)"]
    assert all(row["shuffle"] == "True" and row["seeds"] == "12" for row in rows)
    assert Path(f"{out}.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_cli_init_all_covers_every_registered_initializer(tmp_path, capsys):
    xor_cli.main(["--init", "all", "--seeds", "2", "--epochs", "3", "--json",
                  str(tmp_path / "all.json")])
    report = json.loads((tmp_path / "all.json").read_text())
    assert [r["arm"]["init"] for r in report["results"]] == tinynet.init.available()


def test_cli_presets(tmp_path, capsys):
    xor_cli.main(["--preset", "notes", "--seeds", "3", "--epochs", "5"])
    text = capsys.readouterr().out
    for arm in NOTES_ARMS:
        assert arm.name in text
    assert "46%" in text and "55%" in text
    xor_cli.main(["--preset", "widths", "--seeds", "2", "--epochs", "3", "--csv",
                  str(tmp_path / "w.csv"), "--plot", str(tmp_path / "w.png")])
    text = capsys.readouterr().out
    for shape in ["2-2-1", "2-3-1", "2-4-1", "2-8-1", "2-16-1", "2-2-2-1"]:
        assert f"\n{shape} " in text
    assert len(list(csv.DictReader((tmp_path / "w.csv").open()))) == 6 * 4


@pytest.mark.parametrize("argv,message", [
    (["--preset", "notes", "--shuffle"], "--shuffle cannot be combined with --preset notes"),
    (["--preset", "widths", "--hidden", "3"], "--hidden cannot be combined with --preset widths"),
    (["--json", "/no/such/folder/r.json"], "--json /no/such/folder/r.json: cannot write"),
    (["--seeds", "0"], "seeds must be an integer >= 1, got 0"),
    (["--init", "he_leakyy"], "did you mean 'he_leaky'"),
    (["--hidden", "2,x"], "expected widths such as 2,2"),
    (["--lr", "-1"], "lr must be a finite number > 0.0"),
    (["--backend", "gpu"], "invalid choice: 'gpu'"),
    (["--import", "no_such_module_here"], "--import no_such_module_here"),
])
def test_cli_bad_arguments_exit_2_with_one_line(argv, message):
    done = subprocess.run([sys.executable, str(ROOT / "examples" / "xor.py"), *argv],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 2
    assert "Traceback" not in done.stderr
    assert len(done.stderr.splitlines()) == 1 and message in done.stderr


def test_cli_module_and_initializer_failures_are_one_line(tmp_path):
    (tmp_path / "broken_module.py").write_text("raise ValueError('broken on purpose')\n")
    (tmp_path / "bad_shape.py").write_text(
        "import numpy as np, tinynet\n"
        "tinynet.init.register('wrong_shape', lambda shape, rng: np.zeros((1, 1)))\n")
    env = {**__import__("os").environ, "PYTHONPATH": str(tmp_path)}
    for argv, message in [(["--import", "broken_module"], "ValueError: broken on purpose"),
                          (["--import", "bad_shape", "--init", "wrong_shape", "--seeds", "2",
                            "--epochs", "2"], "returned shape (1, 1), expected (2, 2)")]:
        done = subprocess.run([sys.executable, str(ROOT / "examples" / "xor.py"), *argv],
                              capture_output=True, text=True, timeout=120, env=env)
        assert done.returncode == 2 and "Traceback" not in done.stderr
        assert len(done.stderr.splitlines()) == 1 and message in done.stderr
