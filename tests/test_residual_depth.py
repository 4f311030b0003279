"""The residual depth study (tinynet.xor.residual_depth): arms of residual blocks in a study,
their names and JSON, the layers grouped into blocks, the Holm-adjusted comparisons its page's
sentences come from, and the study itself, in process and on a Dask cluster, bit for bit."""

import json
import os
from dataclasses import asdict, replace

import numpy as np
import pytest

from helpers import ROOT, assert_legible_in_a_notebook, drawn, legends, overlap, points_under

import tinynet
from tinynet import stats
from tinynet.xor import Arm, Setup, Task
from tinynet.xor.arms import arm_dict, build_network, network_sizes
from tinynet.xor.residual_depth import (RESIDUAL_DEPTH_SETUP, ResidualDepthStudy,
                                        residual_depth_arms, run_residual_depth_study)

SPIRALS = Setup(task=Task("spirals", n=40), hidden=(8,) * 5, activation="relu", lr=0.05,
                epochs=3, batch_size=8, seeds=16)


def test_an_arm_of_blocks_builds_the_setups_layers_grouped_into_blocks():
    arm = Arm("he_normal", residual="standard", norm="pre", branch=2)
    assert network_sizes(SPIRALS, arm) == [2, 8, 8, 8, 1]   # 4 layers after the first: 2 blocks
    net = build_network(SPIRALS, arm, seed=3)
    expected = tinynet.mlp([2, 8, 8, 8, 1], activation="relu", init="he_normal",
                           residual="standard", norm="pre", branch=2, seed=3)
    assert len(net.residuals) == 2 and repr(net) == repr(expected)
    assert tinynet.packing.pack(net).tobytes() == tinynet.packing.pack(expected).tobytes()
    plain = build_network(SPIRALS, Arm("he_normal"), seed=3)   # the same layers, ungrouped
    assert [layer.shape for layer in plain.layers] == [layer.shape for layer in net.layers]


@pytest.mark.parametrize("kwargs,message", [
    (dict(norm="pre"), r"norm='pre' and branch=1 are a residual block's: give residual="),
    (dict(branch=2), r"norm=None and branch=2 are a residual block's"),
    (dict(residual="highway"), r"unknown residual 'highway'; expected one of: deepnet, fixup, "
                               r"rezero, standard"),
    (dict(residual="standard", norm="middle"), r"unknown norm 'middle'; expected one of: post, "
                                               r"pre"),
    (dict(residual="standard", branch=0), r"branch must be an integer >= 1, got 0"),
    (dict(warmup=-1), r"warmup must be an integer >= 0, got -1"),
])
def test_bad_block_settings_of_an_arm_are_refused_by_name(kwargs, message):
    with pytest.raises((ValueError, TypeError), match=message):
        Arm("he_normal", **kwargs)


def test_layers_that_do_not_group_into_blocks_are_refused():
    arm = Arm("he_normal", residual="standard", branch=3)
    with pytest.raises(ValueError, match=r"groups the hidden layers after the first into "
                                         r"blocks of 3: .*got \(8, 8, 8, 8, 8\)"):
        network_sizes(SPIRALS, arm)


def test_an_arm_without_blocks_writes_the_json_it_always_wrote():
    """Every arm of the committed studies of fixes and textbooks, made again, writes the JSON
    that was committed for it (these studies' arms have every field written)."""
    from pathlib import Path

    results = Path(__file__).resolve().parents[1] / "examples" / "results"
    checked = 0
    for name in ("fixes.json", "textbooks.json"):
        text = (results / name).read_text()
        for written in (match for match in _arms_in(json.loads(text))):
            fields = {k: (tuple(v) if k == "hidden" and v is not None else v)
                      for k, v in written.items() if k != "name"}
            assert json.loads(json.dumps(arm_dict(Arm(**fields)))) == written
            checked += 1
    assert checked >= 10
    plain = Arm("he_normal", shuffle=True)
    assert set(arm_dict(plain)) == {*asdict(plain), "name"} - {"residual", "norm", "branch",
                                                               "warmup"}
    blocks = Arm("he_normal", residual="rezero", branch=2, warmup=100)
    assert arm_dict(blocks)["residual"] == "rezero" and arm_dict(blocks)["warmup"] == 100
    assert blocks.name == "he_normal, rezero blocks of 2, warmup 100"
    assert SPIRALS.for_arm(blocks).warmup == 100 and SPIRALS.for_arm(plain).warmup == 0


def _arms_in(data):
    """Every arm's dict in a result file (under "arm" keys, anywhere)."""
    if isinstance(data, dict):
        if isinstance(data.get("arm"), dict) and "init" in data["arm"]:
            yield data["arm"]
        for value in data.values():
            yield from _arms_in(value)
    elif isinstance(data, list):
        for value in data:
            yield from _arms_in(value)



def test_a_studys_csv_row_names_an_arms_blocks_and_warmup():
    import csv
    import io

    from tinynet.xor import run_study

    arms = [Arm("he_normal", label="plain"),
            Arm("he_normal", residual="rezero", norm="pre", branch=2, warmup=3, label="rz")]
    setup = Setup(task=Task("spirals", n=20), hidden=(4, 4, 4), seeds=2, epochs=2,
                  batch_size=10, backend="numpy")
    rows = list(csv.DictReader(io.StringIO(run_study(arms, setup, progress=False).to_csv())))
    assert [(row["residual"], row["norm"], row["branch"], row["warmup"]) for row in rows] == \
        [("", "", "", "0"), ("rezero", "pre", "2", "3")]
    assert rows[1]["hidden"] == "4-4-4"  # the dense layers: a layer, then one block of two

@pytest.mark.parametrize("kwargs,message", [
    (dict(residual="fixup", norm="pre"), r"residual='fixup' is for networks without "
                                         r"normalization, got norm='pre'"),
    (dict(residual="fixup", branch=1), r"residual='fixup' needs branch >= 2"),
    (dict(residual="deepnet"), r"residual='deepnet' scales a post-norm block's skip: pass "
                               r"norm='post', got norm=None"),
])
def test_the_papers_rules_are_checked_when_the_arm_is_made(kwargs, message):
    with pytest.raises(ValueError, match=message):
        Arm("he_normal", **kwargs)
    assert Arm("he_normal", residual=True).residual == "standard"


def test_a_sweep_refuses_before_training_what_a_later_setup_cannot_run():
    """Blocks of two do not group 3 layers after the first, nor can a warmup outlast a run:
    refused before the first setup trains."""
    arm = Arm("he_normal", residual="standard", branch=2)
    setups = [replace(SPIRALS, backend="numpy", hidden=(8,) * 3),
              replace(SPIRALS, backend="numpy", hidden=(8,) * 4)]
    with pytest.raises(ValueError, match=r"groups the hidden layers after the first into "
                                         r"blocks of 2: .*got \(8, 8, 8, 8\)"):
        tinynet.xor.run_sweep([arm], setups)
    long_warmup = Arm("he_normal", warmup=1000)        # 3 epochs of 5 batches: 15 steps
    with pytest.raises(ValueError, match=r"arm 'he_normal, warmup 1,000': warmup must be at "
                                         r"most the run's 15 steps"):
        tinynet.xor.run_sweep([long_warmup], setups[:1])
    with pytest.raises(ValueError, match=r"has residual blocks, whose second moments .*"
                                         r"run_residual_depth_study"):
        tinynet.xor.run_depth_study(replace(SPIRALS, backend="numpy"), depths=[2], arms=[arm])


def test_the_studys_arms_cover_every_kind_and_the_warmup_questions():
    names = [arm.name for arm in residual_depth_arms()]
    for name in ("plain, He", "x + F(x), He", "pre-norm, Xavier", "post-norm, He", "ReZero, He",
                 "Fixup", "pre-norm, He, warmup", "post-norm, He, warmup"):
        assert name in names
    assert len(set(names)) == len(names)


def made_study(successes, n=(100, 100)):
    arms = [arm_dict(Arm("he_normal", label=name)) for name in ("a", "b", "c")]
    return ResidualDepthStudy(
        setup=SPIRALS, depths=[4, 64], arms=arms, n=list(n), successes=successes,
        intervals=[[stats.wilson_interval(k, m) for k, m in zip(row, n)] for row in successes],
        seconds=[[1.0, 2.0]] * 3)


def test_comparisons_are_fisher_tests_holm_adjusted_over_the_pairs_given():
    study = made_study([[90, 10], [50, 12], [89, 60]])
    pairs = [("b", "a"), ("c", "a")]
    found = study.comparisons(64, pairs)
    p = [stats.fisher_exact_p(12, 100, 10, 100), stats.fisher_exact_p(60, 100, 10, 100)]
    assert [c.p for c in found] == p
    assert [c.p_holm for c in found] == stats.holm(p)
    assert found[1].p_holm < 0.05 < found[0].p_holm
    assert len(study.all_pairs(4)) == 3
    with pytest.raises(ValueError, match=r"depth must be one of this study's, \[4, 64\]; got 8"):
        study.cell("a", 8)


def test_a_study_reads_back_from_its_json():
    study = made_study([[90, 10], [50, 12], [89, 60]])
    again = ResidualDepthStudy.from_dict(json.loads(study.to_json()))
    assert again == study
    assert "64 (100)" in study.table()


@pytest.mark.slow
def test_the_study_trains_every_kind_and_is_the_same_on_a_dask_cluster():
    """A small study: every kind of block at two depths on 128 seeds; on a local Dask cluster
    of two workers, in blocks of 64 seeds, every count the same (tinynet.xor.blocks)."""
    from dask.distributed import Client, LocalCluster

    arms = [arm if arm.warmup is None else replace(arm, warmup=5)   # of the run's 15 steps
            for arm in residual_depth_arms() if "Xavier" not in arm.name]
    kwargs = dict(setup=replace(SPIRALS, hidden=(8,)), depths=[2, 4], arms=arms,
                  seeds={2: 128, 4: 128})
    here = run_residual_depth_study(**kwargs)
    assert here.n == [128, 128] and len(here.successes) == len(arms)
    assert all(s >= 0 for row in here.seconds for s in row)
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                      dashboard_address=":0") as cluster, Client(cluster) as client:
        there = run_residual_depth_study(**kwargs, executor=client, block_seeds=64)
    assert there.successes == here.successes and there.intervals == here.intervals
    for a, b in zip(here.sweep.studies, there.sweep.studies):
        for x, y in zip(a.results, b.results):
            np.testing.assert_array_equal(x.trained, y.trained)


def made_full_study(rates):
    """Every arm of the study at 64 and 128 layers, 200 seeds, successes ``rates[name]`` (a
    pair) or 0, with a run record as the example writes."""
    arms = residual_depth_arms()
    successes = [list(rates.get(arm.name, (0, 0))) for arm in arms]
    study = ResidualDepthStudy(
        setup=replace(RESIDUAL_DEPTH_SETUP, hidden=(16,)), depths=[64, 128],
        arms=[arm_dict(arm) for arm in arms], n=[200, 200], successes=successes,
        intervals=[[stats.wilson_interval(k, 200) for k in row] for row in successes],
        seconds=[[10.0, 20.0]] * len(arms))
    return {"run": {"seconds": 7200.0, "load_average_1min": 2.1, "cores": 2},
            **json.loads(study.to_json())}


def test_the_pages_sentences_come_from_the_holm_adjusted_tests():
    import residual_depth  # examples/residual_depth.py (tests/conftest.py: examples/ on the path)

    data = made_full_study({"plain, He": (20, 0), "pre-norm, He": (180, 170),
                            "ReZero, He": (25, 4), "post-norm, He": (60, 30),
                            "post-norm, He, warmup": (120, 100),
                            "pre-norm, He, warmup": (181, 171)})
    text = residual_depth.render(data)
    at_128 = text[text.index("At 128 layers"):]
    assert "the plain He stack learns 0 % [0, 2]" in at_128
    assert "more often: " in at_128 and "pre-norm, He 85 % [" in at_128
    assert "ReZero, He 2 % [1, 5] (Holm p" in at_128   # 4 of 200 against 0: not told apart
    at_64 = text[text.index("At 64 layers"):text.index("At 128 layers")]
    assert "less often: plain, Xavier 0 % [0, 2], x + F(x), He 0 % [0, 2]" in at_64
    assert "(Fisher's exact test, Holm over the 11 arms compared with the plain stack" in text
    assert "post-norm, He at 64 layers, 30 % [24, 37] without, 60 % [53, 67] with" in text
    assert "pre-norm, He at" not in text.split("Warmup changes the rate where:")[1]
    assert "| pre-norm, He | 90 % [85, 93] | 85 % [79, 89] |" in text
    assert ("The initializer still matters where: plain at 64 layers, He 10 % [7, 15] against "
            "Xavier 0 % [0, 2] (Holm p 4.6e-06); pre-norm at 64 layers, He 90 % [85, 93]") in text
    assert "(Fisher, Holm over the 8 tests of every kind at both depths)" in text
    assert "x + F(x) at" not in text and "plain at 128" not in text  # 0 against 0
    assert "2.0 h at a 1-minute load average of 2.1 on 2 cores" in text


def test_the_example_writes_nothing_tracked_unless_told(tmp_path, capsys):
    """--quick writes only where it is told, a full run under the working folder unless
    committed; --readme needs the page's section before anything trains."""
    import residual_depth

    _, args = residual_depth.parse_args(["--quick"])
    assert args.json is None and args.figure is None
    _, args = residual_depth.parse_args([])
    assert args.json == residual_depth.OWN_FOLDER / "residual_depth.json"
    page = tmp_path / "page.md"
    page.write_text("no section here\n")
    for argv, message in [(["--quick", "--readme", str(page)], "cannot be --quick"),
                          (["--readme", str(page)], "the page has no section between "
                                                    "<!-- residual depth start -->"),
                          (["--readme", str(page), "--json", "x.json"], "--json and --figure "
                                                                        "write elsewhere")]:
        with pytest.raises(SystemExit):
            residual_depth.parse_args(argv)
        assert message in capsys.readouterr().err
    page.write_text("".join(residual_depth.MARKERS) + "\n")
    _, args = residual_depth.parse_args(["--readme", str(page)])
    assert args.json == residual_depth.RESULTS


def test_the_figure_draws_a_panel_per_kind_of_block(tmp_path):
    from tinynet.xor import figures

    data = made_full_study({"plain, He": (20, 0), "pre-norm, He": (180, 170)})
    study = ResidualDepthStudy.from_dict({k: v for k, v in data.items() if k != "run"})
    fig = figures.residual_depth(study, tmp_path / "depth.png")
    assert [ax.get_title() for ax in fig.axes] == ["plain", "x + F(x)", "pre-norm", "post-norm",
                                                  "ReZero and Fixup"]
    labels = fig.axes[2].get_legend_handles_labels()[1]
    assert labels == ["plain, He (reference)", "pre-norm, He", "pre-norm, Xavier",
                      "pre-norm, He, warmup"]
    assert (tmp_path / "depth.png").stat().st_size > 10_000


def test_the_committed_studys_figure_hides_no_point_under_a_legend():
    """Catches legends placed "where they hide the fewest points" that still hid pre-norm's
    32-layer rates, and depths' labels run together ("(200)(200)(200)") in a narrower
    figure: drawn from the committed study, no legend covers a data point, a panel, a label or
    another legend, the depths' labels stay 3 pixels apart, and the figure fits a notebook's
    column with every text 9 points or more."""
    from tinynet.xor import figures

    data = json.loads((ROOT / "examples" / "results" / "residual_depth.json").read_text())
    study = ResidualDepthStudy.from_dict({k: v for k, v in data.items() if k != "run"})
    fig = figures.residual_depth(study)
    renderer = drawn(fig)
    assert len(legends(fig)) == 5
    boxes = [legend.get_window_extent(renderer) for legend in legends(fig)]
    for k, box in enumerate(boxes):
        assert points_under(box, fig) == []
        assert not any(overlap(box, other) for other in boxes[k + 1:])
        for ax in fig.axes:
            texts = [ax.title, ax.xaxis.label, ax.yaxis.label, *ax.get_xticklabels(),
                     *ax.get_yticklabels()]
            assert not overlap(box, ax.get_window_extent(renderer)), ax.get_title()
            assert not any(overlap(box, text.get_window_extent(renderer)) for text in texts
                           if text.get_visible() and text.get_text())
    for ax in fig.axes:
        ticks = sorted((label.get_window_extent(renderer) for label in ax.get_xticklabels()),
                       key=lambda tick: tick.x0)
        assert all(right.x0 - left.x1 >= 3 for left, right in zip(ticks, ticks[1:]))
    assert_legible_in_a_notebook(fig)


def test_the_figure_leaves_out_families_the_study_does_not_have(tmp_path):
    """A lesson's three arms draw three panels; an arm of no known family gets its own."""
    from tinynet.xor import figures

    study = made_study([[90, 10], [95, 30], [20, 80]])
    study = replace(study, arms=[arm_dict(Arm("he_normal", label=name)) for name in
                                 ("plain, He", "pre-norm, He", "gated, He")])
    fig = figures.residual_depth(study)
    assert [ax.get_title() for ax in fig.axes] == ["plain", "pre-norm", "gated"]
    assert fig.axes[2].get_legend_handles_labels()[1] == ["plain, He (reference)", "gated, He"]


def test_a_residual_arms_memory_counts_its_norms_and_its_stream():
    """Its parameters are the same dense layers' and each block's LayerNorm (2 blocks of
    width 8: 32 more); it trains its members as single fits, whose scratch holds the stream."""
    from tinynet.xor.arms import arm_parameters
    from tinynet.xor.bench import fixed_bytes, kept_per_seed, members_alone

    arm = Arm("he_normal", residual="standard", norm="pre", branch=2)
    assert arm_parameters(SPIRALS, arm) == SPIRALS.parameters + 32
    assert arm_parameters(SPIRALS, arm) == tinynet.packing.size(build_network(SPIRALS, arm, 0))
    assert kept_per_seed(SPIRALS, arm=arm) - kept_per_seed(SPIRALS) == 8 * 32
    assert members_alone(SPIRALS, arm) and not members_alone(replace(SPIRALS, backend="numpy"),
                                                             arm)
    threads = min(os.cpu_count() or 1, SPIRALS.seeds)      # each thread's scratch: one network
    without_norms = Arm("he_normal", residual="standard", branch=2)
    assert fixed_bytes(SPIRALS, arm=arm) - fixed_bytes(SPIRALS, arm=without_norms) == \
        8 * 32 * threads
