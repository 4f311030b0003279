"""The XOR bench: statistics, the success criterion, studies, sweeps and presets, and the CLI
end to end (in process, as ``python -m tinynet.xor`` and as ``examples/xor.py``)."""

import csv
import io
import json
import os
import re
import subprocess
import sys
from dataclasses import asdict, replace
from pathlib import Path

import numpy as np
import pytest

import tinynet
from tinynet import stats
from tinynet.results import EnsembleResult
from tinynet.xor import (FAILURES, NOTES_ARMS, PRESETS, WIDTH_INITS, WIDTHS, Arm, ArmResult,
                         Study, Sweep, Setup, compare, get_preset, run_study, run_sweep,
                         figures, solved_epochs, solves)
from tinynet.xor.cli import main, split_specs

ROOT = Path(__file__).resolve().parents[1]


def run_module(*argv: str, env: dict | None = None) -> subprocess.CompletedProcess:
    """``python -m tinynet.xor argv`` in a new process, with this environment's PYTHONPATH."""
    return subprocess.run([sys.executable, "-m", "tinynet.xor", *argv], capture_output=True,
                          text=True, timeout=300, env=env)


def ensemble(predictions, last_wrong_epoch, diverged_epoch=None, threshold=0.5):
    """An EnsembleResult as training would report it, made by hand."""
    members = len(predictions)
    diverged = np.full(members, -1) if diverged_epoch is None else np.array(diverged_epoch)
    return EnsembleResult(loss=np.empty((members, 0)), final_loss=np.linspace(0.01, 0.25, members),
                          diverged_epoch=diverged, last_wrong_epoch=np.array(last_wrong_epoch),
                          predictions=np.array(predictions, dtype=float), epochs=50,
                          record_every=0, threshold=threshold)


# --- success and failure --------------------------------------------------------------------

HAND_MADE = [
    [[0.1], [0.9], [0.9], [0.1]],     # solved
    [[0.49], [0.51], [0.6], [0.0]],   # solved, just
    [[0.5], [0.9], [0.9], [0.1]],     # 0.5 for target 0 counts as 0: solved
    [[0.1], [0.5], [0.9], [0.1]],     # 0.5 for target 1 is not above 0.5: wrong
    [[0.7], [0.7], [0.7], [0.01]],    # the 2/3 plateau: one wrong
    [[0.5], [0.5], [0.5], [0.5]],     # dead at 0.5: two wrong
]


def test_success_criterion_on_hand_made_predictions():
    y = tinynet.data.xor()[1]
    np.testing.assert_array_equal(solves(np.array(HAND_MADE), y),
                                  [True, True, True, False, False, False])
    result = ensemble(HAND_MADE, last_wrong_epoch=[9, 19, 29, 49, 49, 49])
    np.testing.assert_array_equal(solved_epochs(result, y), [10, 20, 30, -1, -1, -1])
    summary = ArmResult.from_ensemble(Arm("normal"), result, y, [1.0], 0.0)
    assert summary.successes == 3 and summary.rate == 0.5
    assert summary.failures == {"one_wrong": 2, "two_wrong": 1, "three_or_more_wrong": 0,
                                "diverged": 0}
    assert summary.solved_epoch_quartiles == [15.0, 20.0, 25.0]
    assert list(summary.failures) == list(FAILURES)


def test_a_diverged_seed_is_a_failure_even_with_outputs_on_the_right_side():
    y = tinynet.data.xor()[1]
    result = ensemble(HAND_MADE[:2], last_wrong_epoch=[9, 19], diverged_epoch=[-1, 30])
    np.testing.assert_array_equal(solved_epochs(result, y), [10, -1])
    summary = ArmResult.from_ensemble(Arm("normal"), result, y, [1.0], 0.0)
    assert summary.successes == 1 and summary.diverged == 1
    assert summary.failures == {"one_wrong": 0, "two_wrong": 0, "three_or_more_wrong": 0,
                                "diverged": 1}


def test_success_is_judged_at_the_threshold_training_used():
    y = tinynet.data.xor()[1]
    predictions = np.array([[[0.2], [0.7], [0.7], [0.2]]])
    assert solves(predictions, y)[0] and not solves(predictions, y, threshold=0.75)[0]
    result = ensemble(predictions, last_wrong_epoch=[3], threshold=0.75)
    assert ArmResult.from_ensemble(Arm("normal"), result, y, [1.0], 0.0).successes == 0


def test_solves_refuses_predictions_that_do_not_fit_the_targets():
    y = tinynet.data.xor()[1]
    with pytest.raises(tinynet.ShapeError, match=r"predictions must have shape \(members, 4, 1\)"):
        solves(np.zeros((4, 1)), y)


# --- arms and setups ------------------------------------------------------------------------

@pytest.mark.parametrize("kwargs,message", [
    (dict(seeds=0), "seeds must be an integer >= 1, got 0"),
    (dict(lr=-0.1), "lr must be a finite number > 0.0"),
    (dict(hidden=(2, 0)), r"hidden\[1\] must be an integer >= 1, got 0"),
    (dict(backend="gpu"), "unknown backend 'gpu'"),
    (dict(first_seed=2**63 - 5, seeds=10), "last seed"),
    (dict(activation="leaky"), "unknown activation 'leaky'"),
    (dict(output="softsign"), "unknown output activation 'softsign'"),
])
def test_bad_setups(kwargs, message):
    with pytest.raises(ValueError, match=message):
        Setup(**kwargs)


def test_setup_hidden_must_be_a_sequence():
    with pytest.raises(TypeError, match="hidden must be a sequence of layer widths"):
        Setup(hidden=3)


@pytest.mark.parametrize("kwargs,error,message", [
    (dict(init="he_leak"), tinynet.UnknownNameError, "'he_leak'.*did you mean 'he_leaky'"),
    (dict(init="he_leaky", output_init="xavier"), tinynet.UnknownNameError, "'xavier'"),
    (dict(init="normal(spread=2)"), TypeError, "unknown parameter\\(s\\) spread"),
    (dict(init=0.5), TypeError, "init must be a registered initializer name"),
    (dict(init="normal", shuffle="yes"), TypeError, "shuffle must be True or False"),
    (dict(init="normal", reported_rate=46), ValueError, "reported_rate must be a probability"),
])
def test_arms_are_checked_when_made(kwargs, error, message):
    with pytest.raises(error, match=message):
        Arm(**kwargs)


def test_arm_names():
    assert Arm("normal").name == "normal"
    assert Arm("he_leaky", "xavier_normal", shuffle=True).name == \
        "he_leaky / out xavier_normal, shuffled"
    assert Arm("normal", label="N(0,1)").name == "N(0,1)"


# --- studies --------------------------------------------------------------------------------

def test_he_and_normal_are_the_same_networks_at_width_two():
    # Every fan_in of 2-2-2-1 is 2, so He's std sqrt(2/2) is N(0,1)'s: same seeds, same runs.
    study = run_study([Arm("normal"), Arm("he_normal")], Setup(seeds=30, epochs=2000),
                      progress=False)
    a, b = study.results
    assert a.successes == b.successes and a.solved_epoch_quartiles == b.solved_epoch_quartiles
    assert a.init_stds == b.init_stds == [1.0, 1.0, 1.0]
    assert "no difference at all" in study.comparisons[0].verdict(30)


def test_seeds_needed_is_held_to_the_same_correction_as_the_verdict():
    results = [ArmResult(Arm("normal", label=f"arm{i}"), 1000, k,
                         stats.wilson_interval(k, 1000), None, None, 0, {}, [], 0.0)
               for i, k in enumerate([400, 470, 430, 410])]
    comparisons = compare(results)
    assert len(comparisons) == 6
    first = comparisons[0]
    assert first.seeds_needed == pytest.approx(stats.seeds_needed(0.4, 0.47, alpha=0.05 / 6))
    for c in comparisons:  # not significant after Holm: then the advice asks for more than n
        if c.p_holm >= 0.05:
            assert c.seeds_needed > 1000 or c.p >= 0.05 / 6


def test_study_backends_agree():
    arms = [Arm("he_leaky", "xavier_normal", shuffle=True)]
    setup = Setup(hidden=(3,), seeds=20, epochs=1500, lr=0.05)
    numba = run_study(arms, setup, progress=False).results[0]
    numpy = run_study(arms, replace(setup, backend="numpy"), progress=False).results[0]
    assert numba.successes == numpy.successes
    assert numba.solved_epoch_quartiles == numpy.solved_epoch_quartiles


def test_study_files_agree_with_the_study():
    study = run_study([Arm("normal"), Arm("he_leaky", shuffle=True)],
                      Setup(hidden=(3,), seeds=4, epochs=20), progress=False)
    rows = list(csv.DictReader(io.StringIO(study.to_csv())))
    assert [row["arm"] for row in rows] == ["normal", "he_leaky, shuffled"]
    assert [row["successes"] for row in rows] == [str(r.successes) for r in study.results]
    report = json.loads(study.to_json())
    assert report["setup"]["hidden"] == [3] and report["results"][1]["arm"]["shuffle"] is True
    lines = study.table().splitlines()
    assert lines[0].startswith("arm ") and "notes" not in lines[0]  # no arm has a reported rate
    column = lines[0].index("solved")
    for line, r in zip(lines[1:], study.results):
        assert line[column:].startswith(f"{r.successes}/4  ")
    assert "2-3-1" in repr(study)


# --- sweeps and presets ---------------------------------------------------------------------

def test_presets_give_their_arms_and_setups():
    setup = Setup(seeds=7, epochs=11, lr=0.1)
    assert sorted(PRESETS) == ["candidates", "depth", "fixes", "notes", "widths"]
    arms, setups = get_preset("notes").design(setup)
    assert arms == NOTES_ARMS and setups == [setup]
    arms, setups = get_preset("widths").design(setup, shuffle=True)
    assert [arm.init for arm in arms] == WIDTH_INITS and all(arm.shuffle for arm in arms)
    assert [s.hidden for s in setups] == WIDTHS
    assert all(replace(s, hidden=setup.hidden) == setup for s in setups)
    assert not any(arm.shuffle for arm in get_preset("widths").design(setup)[0])
    assert set(get_preset("notes").sets) == {"init", "output_init", "shuffle", "bias_init",
                                             "update"}
    assert set(get_preset("widths").sets) == {"init", "output_init", "hidden"}


def test_presets_refuse_what_they_set_and_unknown_names():
    with pytest.raises(ValueError, match="shuffle cannot be chosen for preset 'notes'"):
        get_preset("notes").design(shuffle=False)
    with pytest.raises(TypeError, match="shuffle must be True or False"):
        get_preset("widths").design(shuffle="no")
    with pytest.raises(tinynet.UnknownNameError, match="unknown preset 'width'.*'widths'"):
        get_preset("width")
    with pytest.raises(ValueError, match=r"hidden cannot be chosen for preset 'widths', which "
                                         r"sets it itself; expected the preset's \(2, 2\), "
                                         r"got \(3,\)"):
        get_preset("widths").design(Setup(hidden=(3,)))


def test_sweep_csv_has_one_header_and_a_row_per_shape_and_arm():
    arms = [Arm("normal"), Arm("he_leaky")]
    setups = [Setup(hidden=hidden, seeds=3, epochs=5) for hidden in [(2,), (4,), (2, 2)]]
    sweep = run_sweep(arms, setups, progress=False)
    text = sweep.to_csv()
    rows = list(csv.reader(io.StringIO(text)))
    assert rows[0][:2] == ["arm", "init"] and sum(row == rows[0] for row in rows) == 1
    column = rows[0].index("hidden")
    assert [(row[column], row[0]) for row in rows[1:]] == [
        (hidden, arm) for hidden in ["2", "4", "2-2"] for arm in ["normal", "he_leaky"]]
    assert text.startswith(sweep.studies[0].to_csv())
    assert json.loads(sweep.to_json()) == {"studies": [s.to_dict() for s in sweep.studies]}
    table = sweep.table().splitlines()
    assert table[0].split() == ["shape", "normal", "he_leaky"]
    assert [line.split()[0] for line in table[1:]] == ["2-2-1", "2-4-1", "2-2-2-1"]
    assert "2-4-1" in repr(sweep)


def test_sweep_studies_must_share_their_arms():
    a = run_study([Arm("normal")], Setup(seeds=2, epochs=2), progress=False)
    b = run_study([Arm("he_leaky")], Setup(seeds=2, epochs=2), progress=False)
    with pytest.raises(ValueError, match=r"studies\[1\] has the arms \['he_leaky'\]"):
        Sweep([a, b])
    with pytest.raises(ValueError, match="setups must hold at least one Setup"):
        run_sweep([Arm("normal")], [])
    with pytest.raises(TypeError, match=r"studies\[0\] must be a tinynet.xor Study"):
        Sweep([a.to_dict()])


def test_experiments_is_an_alias_of_the_xor_bench():
    for name in ["Arm", "Setup", "ArmResult", "Comparison", "Study", "run_study",
                 "NOTES_ARMS", "FAILURES"]:
        assert name in tinynet.experiments.__all__
        assert getattr(tinynet.experiments, name) is getattr(tinynet.xor, name)
    assert tinynet.experiments.run_study is tinynet.xor.run_study
    assert tinynet.experiments.Study is Study


def test_import_tinynet_is_enough_for_both_names():
    done = subprocess.run([sys.executable, "-c", "import tinynet; print(tinynet.experiments."
                           "run_study is tinynet.xor.run_study)"], capture_output=True, text=True)
    assert done.stdout.strip() == "True", done.stderr


# --- the CLI --------------------------------------------------------------------------------

def test_split_specs_keeps_parameters_together():
    assert split_specs("normal(std=0.5),he_leaky") == ["normal(std=0.5)", "he_leaky"]
    assert split_specs(" a , b(x=1, y=2),, c ") == ["a", "b(x=1, y=2)", "c"]


def test_cli_writes_table_json_csv_and_png(tmp_path, capsys):
    out = tmp_path / "r"
    main(["--init", "normal,he_leaky(alpha=0.1)", "--seeds", "12", "--epochs", "300",
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


def test_cli_init_all_runs_each_distinct_initializer_once(tmp_path, capsys):
    main(["--init", "all", "--seeds", "2", "--epochs", "3", "--json", str(tmp_path / "all.json")])
    report = json.loads((tmp_path / "all.json").read_text())
    ran = [r["arm"]["init"] for r in report["results"]]
    assert ran == list(tinynet.init.distinct())
    aliases = [alias for others in tinynet.init.distinct().values() for alias in others]
    assert "kaiming_normal" in aliases and not set(aliases) & set(ran)
    assert sorted(ran + aliases) == tinynet.init.available()  # every name, run or named
    note = capsys.readouterr().err
    assert "kaiming_normal = he_normal" in note and f"{len(ran)} initializers, each once" in note


def test_cli_presets(tmp_path, capsys):
    main(["--preset", "notes", "--seeds", "3", "--epochs", "5"])
    text = capsys.readouterr().out
    for arm in NOTES_ARMS:
        assert arm.name in text
    assert "46%" in text and "55%" in text
    main(["--preset", "widths", "--seeds", "2", "--epochs", "3", "--csv",
          str(tmp_path / "w.csv"), "--json", str(tmp_path / "w.json"), "--plot",
          str(tmp_path / "w.png")])
    text = capsys.readouterr().out
    for shape in ["2-2-1", "2-3-1", "2-4-1", "2-8-1", "2-16-1", "2-2-2-1"]:
        assert f"\n{shape} " in text
    assert len(list(csv.DictReader((tmp_path / "w.csv").open()))) == 6 * 4
    studies = json.loads((tmp_path / "w.json").read_text())["studies"]
    assert [s["setup"]["hidden"] for s in studies] == [list(hidden) for hidden in WIDTHS]


@pytest.mark.parametrize("argv,message", [
    (["--preset", "notes", "--shuffle"], "--shuffle cannot be combined with --preset notes"),
    (["--preset", "notes", "--no-shuffle"], "--shuffle cannot be combined with --preset notes"),
    (["--preset", "widths", "--hidden", "3"], "--hidden cannot be combined with --preset widths"),
    (["--preset", "widths", "--init", "normal"], "--init cannot be combined with --preset"),
    (["--preset", "note"], "unknown preset 'note'"),
    (["--json", "/no/such/folder/r.json"], "--json /no/such/folder/r.json: cannot write"),
    (["--seeds", "0"], "seeds must be an integer >= 1, got 0"),
    (["--init", "he_leakyy"], "did you mean 'he_leaky'"),
    (["--init", ","], "expected at least one initializer name"),
    (["--init", "normal(spread=2)"], "unknown parameter(s) spread"),
    (["--output-init", "xavier"], "unknown initializer 'xavier'"),
    (["--hidden", "2,x"], "expected integers such as 2,2"),
    (["--seed-ranges", "0,x"], "expected integers such as 0,777000,10000000"),
    (["--seed-ranges", "0,50", "--seeds", "100"], "first_seeds 0 and 50 give overlapping ranges"),
    (["--seed-ranges", "0"], "first_seeds must hold at least 2 seeds"),
    (["--seed-ranges", "0,100", "--first-seed", "5"], "--first-seed cannot be combined with"),
    (["--seed-ranges", "0,100", "--plot", "r.png"], "--plot cannot be combined with --seed-ra"),
    (["--seed-ranges", "0,100", "--gallery", "g.png"], "--gallery cannot be combined with"),
    (["--seed-ranges", "0,100", "--save-failed", "f"], "--save-failed cannot be combined"),
    (["--gallery", "-"], "--gallery writes a PNG file; '-' (stdout) is for --json and --csv"),
    (["--gallery-seeds", "4"], "--gallery-seeds 4 says how many seeds --gallery draws; give "
                               "--gallery PNG too"),
    (["--json", "-", "--csv", "-"], "--json - and --csv - cannot both write to stdout"),
    (["--curves", "/no/such/folder/c.png"], "--curves /no/such/folder/c.png: cannot write"),
    (["--save-failed", "/no/such/folder/f"], "--save-failed /no/such/folder/f: not a directory"),
    (["--seed-ranges", "0,100", "--preset", "widths"], "--seed-ranges needs one shape"),
    (["--update", "before"], "argument --update: invalid choice: 'before'"),
    (["--bias-init", "randn"], "unknown initializer 'randn'"),
    (["--preset", "notes", "--update", "during_backward"], "--update cannot be combined"),
    (["--preset", "candidates", "--bias-init", "normal"], "--bias-init cannot be combined"),
    (["--hidden", "2,0"], "hidden[1] must be an integer >= 1, got 0"),
    (["--lr", "-1"], "lr must be a finite number > 0.0"),
    (["--backend", "gpu"], "unknown backend 'gpu'"),
    (["--activation", "leaky"], "unknown activation 'leaky'"),
    (["--import", "no_such_module_here"], "--import no_such_module_here"),
])
def test_cli_bad_arguments_exit_2_with_one_line(argv, message, capsys):
    with pytest.raises(SystemExit) as exited:
        main(argv)
    assert exited.value.code == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert len(captured.err.splitlines()) == 1 and message in captured.err


def test_cli_draws_the_seeds_and_saves_the_failed_ones(tmp_path, capsys):
    gallery, curves, failed = tmp_path / "g.png", tmp_path / "c.png", tmp_path / "failed"
    main(["--init", "normal,he_leaky", "--hidden", "2", "--seeds", "12", "--epochs", "2000",
          "--lr", "0.05", "--gallery", str(gallery), "--curves", str(curves), "--save-failed",
          str(failed), "--json", str(tmp_path / "r.json")])
    for png in (gallery, curves):
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    results = json.loads((tmp_path / "r.json").read_text())["results"]
    X, y = tinynet.data.xor()
    for result, folder in zip(results, ("normal", "he_leaky")):
        solved = tinynet.xor.decode_solved(result["solved"], 12)
        saved = sorted(int(p.stem[4:]) for p in (failed / "2-2-1" / folder).glob("seed*.json"))
        assert saved == [seed for seed in range(12) if not solved[seed]]
        seed = saved[0]
        trained = tinynet.load(failed / "2-2-1" / folder / f"seed{seed}_trained.npz")
        initial = tinynet.load(failed / "2-2-1" / folder / f"seed{seed}_initial.npz")
        assert tinynet.xor.wrong_outputs(tinynet.predict(trained, X)[None], y)[0] > 0
        np.testing.assert_array_equal(initial.layers[0].W,
                                      tinynet.mlp([2, 2, 1], init=folder, seed=seed).layers[0].W)
        record = json.loads((failed / "2-2-1" / folder / f"seed{seed}.json").read_text())
        assert record["outcome"] != "solved" and len(record["loss"]) == 200  # 2000 / 10


@pytest.mark.parametrize("argv,panels", [([], 10), (["--gallery-seeds", "4"], 4),
                                          (["--gallery-seeds", "12"], 12)])
def test_cli_gallery_draws_the_number_of_seeds_asked_for(argv, panels, tmp_path, monkeypatch,
                                                         capsys):
    """--gallery-seeds N: the first N seeds of each arm, about sqrt(N) panels a row
    (figures.seed_gallery's default); 10 without it."""
    drawn = []

    def gallery(study, **options):
        figure = seed_gallery(study, **options)
        drawn.append([ax.get_title() for ax in figure.axes if ax.get_title()])
        return figure

    seed_gallery = figures.seed_gallery
    monkeypatch.setattr(figures, "seed_gallery", gallery)
    main(["--init", "normal,he_leaky", "--seeds", "12", "--epochs", "2", "--gallery",
          str(tmp_path / "g.png"), *argv])
    assert drawn == [[f"seed {seed}" for seed in range(panels)] * 2]
    assert (tmp_path / "g.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_cli_help_shows_its_commands_whole(monkeypatch, capsys):
    """The module docstring is the help's epilog: its shell continuation is shown as one (a
    backslash that Python took for its own joined two lines into one of 181 characters), and
    no line is wider than the terminal."""
    monkeypatch.setenv("COLUMNS", "100")
    with pytest.raises(SystemExit) as exited:
        main(["--help"])
    assert exited.value.code == 0
    text = capsys.readouterr().out
    assert ("python -m tinynet.xor --data moons --samples 200 --accuracy 0.95 --hidden 16,16 \\\n"
            "        --activation relu --batch-size 32") in text
    assert max(map(len, text.splitlines())) <= 100
    epilog = text[text.index("\n\n    python -m tinynet.xor"):]
    assert not re.search(r"\S {2,}--\w", epilog)  # no command run into the next line's flags


def test_cli_saves_the_failed_seeds_with_their_history_on_its_own(tmp_path, capsys):
    main(["--init", "normal", "--seeds", "6", "--epochs", "400", "--save-failed",
          str(tmp_path)])
    records = sorted((tmp_path / "2-2-2-1" / "normal").glob("seed*.json"))
    assert records
    for path in records:
        record = json.loads(path.read_text())
        assert record["record_every"] == 2 and len(record["loss"]) == 200


def test_cli_json_to_stdout_sends_the_report_to_stderr(capsys):
    main(["--init", "normal", "--seeds", "3", "--epochs", "5", "--json", "-"])
    captured = capsys.readouterr()
    assert json.loads(captured.out)["results"][0]["n"] == 3
    assert "95% CI" in captured.err


def test_cli_module_and_initializer_failures_are_one_line(tmp_path):
    (tmp_path / "broken_module.py").write_text("raise ValueError('broken on purpose')\n")
    (tmp_path / "bad_shape.py").write_text(
        "import numpy as np, tinynet\n"
        "tinynet.init.register('wrong_shape', lambda shape, rng: np.zeros((1, 1)))\n")
    path = os.pathsep.join(p for p in [str(tmp_path), os.environ.get("PYTHONPATH")] if p)
    env = {**os.environ, "PYTHONPATH": path}
    for argv, message in [(["--import", "broken_module"], "ValueError: broken on purpose"),
                          (["--import", "bad_shape", "--init", "wrong_shape", "--seeds", "2",
                            "--epochs", "2"], "returned shape (1, 1), expected (2, 2)")]:
        done = run_module(*argv, env=env)
        assert done.returncode == 2 and "Traceback" not in done.stderr
        assert len(done.stderr.splitlines()) == 1 and message in done.stderr
        assert done.stderr.startswith("python -m tinynet.xor: error: ")


def test_example_script_prints_what_the_module_prints(capsys):
    argv = ["--init", "normal,he_leaky", "--shuffle", "--seeds", "6", "--epochs", "200"]
    # the tinynet this test imports, not another copy (an installed one would compile its own
    # kernels: half a minute)
    package_root = str(Path(tinynet.__file__).resolve().parents[1])
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        p for p in [package_root, os.environ.get("PYTHONPATH")] if p)}
    done = subprocess.run([sys.executable, str(ROOT / "examples" / "xor.py"), *argv],
                          capture_output=True, text=True, timeout=300, env=env)
    assert done.returncode == 0, done.stderr
    main(argv)
    assert done.stdout == capsys.readouterr().out
    assert done.stdout.startswith("XOR, 2-2-2-1 (leaky_relu alpha=0.01 hidden, sigmoid output)")


# --- candidates for the notes' rates: bias initializers and the update order ----------------

def test_arm_bias_init_and_update_reach_the_networks_and_the_training():
    setup = Setup(seeds=6, epochs=400, lr=0.1)
    arm = Arm("normal", bias_init="normal(std=0.5)", update="during_backward")
    assert arm.name == "normal, biases normal(std=0.5), updated during backward"
    study = run_study([arm], setup, progress=False)
    X, y = tinynet.data.xor()
    nets = [tinynet.mlp(setup.sizes, init="normal", bias_init="normal(std=0.5)", seed=s)
            for s in range(6)]
    assert all(np.all(net.layers[0].b != 0) for net in nets)
    expected = tinynet.fit_ensemble(nets, X, y, epochs=400, lr=0.1, shuffle=False,
                                    update="during_backward")
    np.testing.assert_array_equal(study.results[0].solved,
                                  solved_epochs(expected, y) >= 0)
    row = next(csv.DictReader(io.StringIO(study.to_csv())))
    assert row["bias_init"] == "normal(std=0.5)" and row["update"] == "during_backward"


def test_arm_refuses_unknown_update_orders_and_bias_initializers():
    with pytest.raises(tinynet.UnknownNameError, match="unknown update 'before'"):
        Arm("normal", update="before")
    with pytest.raises(tinynet.UnknownNameError, match="unknown initializer 'randn'"):
        Arm("normal", bias_init="randn")
    with pytest.raises(TypeError, match="bias_init must be a registered initializer name"):
        Arm("normal", bias_init=0.5)


def test_candidates_preset_varies_biases_and_update_order_only():
    arms, setups = get_preset("candidates").design(Setup(seeds=5), shuffle=True)
    assert arms == [replace(arm, shuffle=True) for arm in tinynet.xor.CANDIDATE_ARMS]
    assert {arm.init for arm in arms} == {"normal"} and setups == [Setup(seeds=5)]
    assert {(arm.bias_init, arm.update) for arm in arms} == {
        (bias, update) for bias in (None, "normal")
        for update in ("after_backward", "during_backward")}
    with pytest.raises(ValueError, match="update cannot be chosen for preset 'candidates'"):
        get_preset("candidates").design(update="during_backward")
    widths, _ = get_preset("widths").design(update="during_backward", bias_init="normal")
    assert all(arm.update == "during_backward" and arm.bias_init == "normal" for arm in widths)


# --- per-seed outcomes and seed ranges ------------------------------------------------------

def test_per_seed_outcomes_survive_json_and_give_the_first_seeds():
    study = run_study([Arm("normal")], Setup(seeds=37, epochs=300, lr=0.1), progress=False)
    result = study.results[0]
    assert result.solved.shape == (37,) and result.solved.sum() == result.successes
    text = study.to_dict()["results"][0]["solved"]
    np.testing.assert_array_equal(tinynet.xor.decode_solved(text, 37), result.solved)
    assert result.successes_in_first(10) == result.solved[:10].sum()
    with pytest.raises(ValueError, match="seeds must be between 1 and n = 37, got 38"):
        result.successes_in_first(38)
    for solved in ([], [True], [False] * 8, [True, False] * 9):
        encoded = tinynet.xor.encode_solved(np.array(solved, dtype=bool))
        np.testing.assert_array_equal(tinynet.xor.decode_solved(encoded, len(solved)), solved)


def test_seed_ranges_run_each_range_and_test_equal_proportions():
    setup = Setup(seeds=20, epochs=300, lr=0.1)
    check = tinynet.xor.run_seed_ranges([Arm("normal"), Arm("xavier_normal")], setup,
                                        [100, 0, 5000], progress=False)
    assert [s.setup.first_seed for s in check.studies] == [100, 0, 5000]
    alone = run_study([Arm("normal")], replace(setup, first_seed=5000), progress=False)
    assert check.studies[2].results[0].successes == alone.results[0].successes
    p = check.p_values()
    assert p[0] == stats.equal_proportions_p([s.results[0].successes for s in check.studies],
                                             [20, 20, 20])
    report = check.report()
    assert "3 seed ranges of 20 seeds" in report and "5,000-5,019" in report
    assert f"normal: p = {p[0]:.3g}" in report and "Pearson chi-squared, 2 df" in report
    data = json.loads(check.to_json())
    assert [entry["arm"] for entry in data["equal_proportions"]] == ["normal", "xavier_normal"]
    assert len(list(csv.DictReader(io.StringIO(check.to_csv())))) == 6


@pytest.mark.parametrize("firsts,error,message", [
    ([0], ValueError, "first_seeds must hold at least 2 seeds"),
    ([0, 19], ValueError, "first_seeds 0 and 19 give overlapping ranges of 20 seeds"),
    ([0, -40], ValueError, "first_seeds\\[1\\]"),
    (5, TypeError, "first_seeds must be a sequence of seeds"),
])
def test_seed_ranges_refuse_bad_ranges(firsts, error, message):
    with pytest.raises(error, match=message):
        tinynet.xor.run_seed_ranges([Arm("normal")], Setup(seeds=20), firsts)


def test_cli_seed_ranges(tmp_path, capsys):
    main(["--seeds", "16", "--epochs", "200", "--lr", "0.1", "--seed-ranges", "0,16,1000",
          "--json", str(tmp_path / "r.json"), "--bias-init", "normal"])
    text = capsys.readouterr().out
    assert "he_leaky, biases normal" in text and "Test of equal proportions" in text
    data = json.loads((tmp_path / "r.json").read_text())
    assert [s["setup"]["first_seed"] for s in data["studies"]] == [0, 16, 1000]


def test_a_setup_of_numpy_numbers_holds_python_numbers():
    setup = Setup(hidden=np.array([2, 2]), epochs=np.int64(10), seeds=np.int32(3),
                  lr=np.float32(0.5), alpha=np.float64(0.1), first_seed=np.uint8(4))
    for name in ("epochs", "seeds", "first_seed"):
        assert type(getattr(setup, name)) is int, name
    assert type(setup.lr) is float and type(setup.alpha) is float
    assert all(type(width) is int for width in setup.hidden)
    assert json.loads(json.dumps(asdict(setup)))["epochs"] == 10  # what a study writes
