"""The numbers the README and the documentation pages quote from committed results stay equal
to them, and the README stays a front door: short, with links that lead somewhere."""

import importlib
import json
import re
import unicodedata
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from tinynet.xor import Arm, Setup, decode_solved, run_study

from helpers import page, pages

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "examples" / "results"


@pytest.mark.parametrize("name,marker,committed,part", [
    # the whole run, not an empty block
    ("performance.md", "benchmark", "bench_jit_vs_numpy.md", "#### the generated kernels"),
    ("performance.md", "before-after", "before_after_issue17.md", "| cold start"),
    ("performance.md", "chunks", "bench_chunks.md", "| numba 2-2-1, 5000 seeds"),
    ("performance.md", "seeds", "bench_seeds.md", "| packed | 1,000,000 |"),
    ("performance.md", "depth-bench", "bench_depth.md", "| 2-16x32-1 |"),
    ("ensembles.md", "cluster", "bench_cluster.md", "| Dask, 2 workers x 1 thread | 16,384 |"),
    ("performance.md", "small", "bench_small.md", "| single fit 2-8-1 |"),
    ("performance.md", "startup", "bench_startup.md", "| 2-2-2-1 (README's first command) |"),
    ("performance.md", "optimizers", "bench_optimizers.md",
     "| 2-8-1 | tanh | NumPy Adam loop |"),
    ("performance.md", "wide", "bench_wide.md", "| 2-16x8-1 |"),
    ("performance.md", "digits", "bench_digits.md", "| 100 networks | JAX (vmap, jit, lax.scan) |"),
    ("performance.md", "evaluation", "bench_evaluation.md", "| 64-100-100-100-100-100-10, 64 "
                                                          "seeds, batches of 128 |"),
    ("performance.md", "residual", "bench_residual.md", "| 32 | 16 |"),
    ("performance.md", "notices", "bench_notices.md", "| 2-4-4-1 |"),
    ("playground.md", "playground", "bench_playground.md",
     "| default: 2 x 100 seeds | the server's answer |"),
])
def test_the_benchmark_tables_are_the_committed_runs(name, marker, committed, part):
    readme = page(name)
    start, end = f"<!-- {marker}: start -->\n", f"<!-- {marker}: end -->"
    shown = readme[readme.index(start) + len(start):readme.index(end)]
    assert shown == (ROOT / "benchmarks" / "results" / committed).read_text()
    assert part in shown


def xor_studies():
    """``examples/xor_studies.py``, the one command behind the README's XOR numbers (fresh, so
    that a test's changes to it stay in that test)."""
    import xor_studies  # examples/ is on the path (tests/conftest.py)
    return importlib.reload(xor_studies)


def test_the_xor_page_is_rendered_from_the_committed_results():
    studies = xor_studies()
    shown = studies.sections(page("xor.md"))
    rendered = studies.render(studies.load(studies.RESULTS))
    for name in studies.RENDERERS:
        assert shown[name] == rendered[name], f"docs/xor.md's section {name!r} is stale"


def test_headline_rates_come_from_at_least_10000_seeds_per_arm():
    data = xor_studies().load(RESULTS)
    for name in ("notes", "candidates", "widths", "seed_ranges", "long"):
        setups = [study["setup"] for study in data[name].get("studies", [data[name]])]
        assert all(setup["seeds"] >= 10_000 for setup in setups), name


@pytest.mark.unrolled  # the default path, against results the generic kernels computed
@pytest.mark.parametrize("study,index,arm,seeds", [
    ("notes", 0, 0, 256),        # N(0,1)
    ("notes", 0, 3, 128),        # He-leaky / Xavier, shuffled
    ("candidates", 0, 1, 128),   # updated during backward
    ("candidates", 0, 2, 128),   # biases N(0,1)
    ("widths", 4, 0, 64),        # 2-16-1, N(0,1)
    ("seed_ranges", 2, 0, 64),   # seeds from 10,000,000
])
def test_the_committed_results_are_what_this_code_computes(study, index, arm, seeds):
    """The first seeds of a committed arm, trained again now, solve exactly as recorded."""
    data = xor_studies().load(RESULTS)[study]
    recorded = data["studies"][index]
    setup = Setup.from_dict(recorded["setup"])
    result = recorded["results"][arm]
    fields = {key: result["arm"][key] for key in ("init", "output_init", "shuffle",
                                                  "bias_init", "update")}
    again = run_study([Arm(**fields)], replace(setup, seeds=seeds), progress=False)
    np.testing.assert_array_equal(again.results[0].solved,
                                  decode_solved(result["solved"], result["n"])[:seeds])


def test_a_quick_try_writes_elsewhere_and_never_replaces_a_committed_result(tmp_path, capsys,
                                                                            monkeypatch):
    """--seeds 8 --only notes, as a learner would try it: the JSON and figure go under
    ./xor_studies, the committed ones stay as they were, and nothing is rendered (the
    sections need every study)."""
    studies = xor_studies()
    committed = {path: path.read_bytes() for path in RESULTS.glob("xor_*.json")}
    monkeypatch.chdir(tmp_path)
    studies.main(["--seeds", "8", "--only", "notes"])
    assert {path: path.read_bytes() for path in RESULTS.glob("xor_*.json")} == committed
    assert json.loads((tmp_path / "xor_studies" / "results" / "xor_notes.json").read_text())[
        "studies"][0]["setup"]["seeds"] == 8
    assert (tmp_path / "xor_studies" / "figures" / "xor_notes.png").exists()
    assert "not rendering the docs sections" in capsys.readouterr().out


@pytest.mark.parametrize("argv,message", [
    (["--only", "nots"], "--only: unknown studies nots"),
    (["--results", "{tmp}/file"], "--results .*file: exists and is not a folder"),
])
def test_bad_arguments_stop_before_any_study_runs(tmp_path, capsys, argv, message):
    (tmp_path / "file").write_text("")
    with pytest.raises(SystemExit) as exit:
        xor_studies().main([item.replace("{tmp}", str(tmp_path)) for item in argv])
    assert exit.value.code == 2
    err = capsys.readouterr().err
    last = err.strip().splitlines()[-1]  # argparse's usage, then the one error line
    assert "Traceback" not in err and re.search(message, last), err


@pytest.mark.slow
@pytest.mark.unrolled
def test_the_one_command_runs_every_study_and_rewrites_the_sections(tmp_path, capsys):
    """examples/xor_studies.py end to end, at 100 seeds per arm (about 15 s on 2 cores)."""
    studies = xor_studies()
    readme = tmp_path / "README.md"
    readme.write_text("intro\n" + "".join(f"{start}stale\n{end}\n" for start, end in
                                          map(studies.markers, studies.RENDERERS)) + "end\n")
    studies.main(["--seeds", "100", "--results", str(tmp_path), "--figures", str(tmp_path),
                  "--readme", str(readme)])
    data = studies.load(tmp_path)
    assert data["notes"]["studies"][0]["setup"]["seeds"] == 100
    assert data["long"]["setup"]["epochs"] == studies.LONG_EPOCHS
    assert [s["setup"]["first_seed"] for s in data["seed_ranges"]["studies"]] == \
        list(studies.SEED_RANGES)
    assert all(record["seconds"] > 0 and record["cores"] >= 1
               for record in (data[name]["run"] for name in studies.STUDIES))
    text = readme.read_text()
    assert "stale" not in text and text.startswith("intro\n") and text.endswith("end\n")
    assert studies.sections(text) == studies.render(data)
    assert (tmp_path / "xor_notes.png").exists() and (tmp_path / "xor_widths.png").exists()


def test_the_depth_page_is_rendered_from_the_committed_study():
    import depth  # examples/depth.py; examples/ is on the path (tests/conftest.py)
    readme = page("depth.md")
    start, end = depth.MARKERS
    shown = readme[readme.index(start) + len(start):readme.index(end)]
    assert shown == depth.render(RESULTS)
    assert "| 32 |" in shown and "![relu: success rate against depth" in shown


def test_the_residual_streams_table_is_rendered_from_the_committed_measurement():
    """docs/residual.md's stream section is examples/residual_stream.py's rendering of the
    committed JSON (regenerate both: python examples/residual_stream.py --readme
    docs/residual.md)."""
    import residual_stream  # examples/residual_stream.py; examples/ is on the path
    text = page("residual.md")
    start, end = residual_stream.MARKERS
    data = json.loads((RESULTS / "residual_stream.json").read_text())
    assert text[text.index(start) + len(start):text.index(end)] == \
        residual_stream.render(data)
    assert set(data["kinds"]) == set(residual_stream.KINDS) and data["seeds"] >= 200


def test_the_residual_depth_section_is_rendered_from_the_committed_study():
    """docs/residual.md's depth section is examples/residual_depth.py's rendering of the
    committed full study: every arm at every depth with the seeds the module states
    (regenerate: python examples/residual_depth.py --readme docs/residual.md)."""
    import residual_depth  # examples/residual_depth.py
    from tinynet.xor.residual_depth import (RESIDUAL_DEPTHS, RESIDUAL_SEEDS, ResidualDepthStudy,
                                            residual_depth_arms)
    text = page("residual.md")
    start, end = residual_depth.MARKERS
    data = json.loads((RESULTS / "residual_depth.json").read_text())
    assert text[text.index(start) + len(start):text.index(end)] == residual_depth.render(data)
    study = ResidualDepthStudy.from_dict({k: v for k, v in data.items() if k != "run"})
    assert study.depths == list(RESIDUAL_DEPTHS)
    assert study.n == [RESIDUAL_SEEDS[depth] for depth in RESIDUAL_DEPTHS]
    assert study.names == [arm.name for arm in residual_depth_arms()]
    assert residual_depth.FIGURE.stat().st_size > 10_000


def test_the_textbooks_page_is_rendered_from_the_committed_experiments():
    """docs/textbooks.md's section is examples/textbooks.py's rendering of the committed
    JSON, whose studies have the seeds the experiments state and whose every comparison is
    Holm-adjusted (a sentence is a test's)."""
    import textbooks  # examples/textbooks.py; examples/ is on the path (tests/conftest.py)
    from tinynet.xor.textbooks import EXPERIMENTS
    readme = page("textbooks.md")
    start, end = textbooks.MARKERS
    data = json.loads((RESULTS / "textbooks.json").read_text())
    assert readme[readme.index(start) + len(start):readme.index(end)] == textbooks.render(data)
    for name, experiment in EXPERIMENTS.items():
        assert list(data[name]["studies"]) == list(experiment.setups)
        for cell, setup in experiment.setups.items():
            study = data[name]["studies"][cell]["study"]
            assert study["setup"]["seeds"] == setup.seeds >= 100
            assert all(r["n"] == setup.seeds == len(r["test_accuracy"])
                       for r in study["results"])
            assert all(c["p_holm"] >= c["p"] and c["rank_p_holm"] >= c["rank_p"]
                       for c in study["comparisons"])
    assert data["histograms"]["seeds"] >= 100


def test_the_numpy_paths_cost_is_quoted_from_the_committed_before_after():
    """The performance page's sentence on what the NumPy path's bit-identity costs: the NumPy ensemble rows'
    slowdown (1 − before/after, in %) and the NumPy fit's ratio, from
    benchmarks/results/before_after_issue25b.json (python benchmarks/bench_before_after.py
    --rev 96d2479 --out ...)."""
    rows = {row["case"]: row["before_over_after"] for row in json.loads(
        (ROOT / "benchmarks" / "results" / "before_after_issue25b.json").read_text())["rows"]}
    costs = [100 * (1 - ratio) for case, ratio in rows.items()
             if case.startswith("NumPy ensemble")]
    readme = " ".join(page("performance.md").split())
    assert f"that costs it {min(costs):.0f}-{max(costs):.0f} % against the" in readme
    assert f"at {rows['NumPy fit 2-2-2-1, 300 epochs']:.2f} times the speed of the loop" in readme


def test_the_api_reference_documents_every_module_the_package_exports():
    import types

    import tinynet
    modules = {name for name in tinynet.__all__
               if isinstance(getattr(tinynet, name), types.ModuleType)}
    documented = set(re.findall(r"^- tinynet\.(\w+)$", page("api.md"), re.MULTILINE))
    assert modules and modules <= documented, sorted(modules - documented)


def test_the_readmes_prose_follows_the_committed_studies():
    """The numbers and claims of "What it shows": the notes' four rates, the seeds per arm,
    the interval's half width at n = 100, and the widths where He and Xavier solve nearly every
    seed (at least 98 %) and N(0,1) fewer (its interval wholly below theirs)."""
    from tinynet import stats
    from tinynet.xor import get_preset
    readme = " ".join(page("README.md").split())
    reported = [arm.reported_rate for arm in get_preset("notes").arms if arm.reported_rate]
    assert ", ".join(f"{100 * rate:.0f} %" for rate in reported[:3]) + \
        f" and {100 * reported[3]:.0f} %" in readme
    notes = json.loads((RESULTS / "xor_notes.json").read_text())
    seeds = {study["setup"]["seeds"] for study in notes["studies"]}
    assert seeds == {10_000} and "on 10,000 seeds per arm" in readme
    low, high = stats.wilson_interval(50, 100)
    assert f"about ±{100 * (high - low) / 2:.0f} points" in readme
    widths = json.loads((RESULTS / "xor_widths.json").read_text())["studies"]
    for study in widths:
        if study["setup"]["hidden"] not in ([8], [16]):
            continue
        rates = {r["arm"]["init"]: (r["successes"], r["n"]) for r in study["results"]}
        for init in ("he_leaky", "xavier_normal"):
            assert rates[init][0] / rates[init][1] >= 0.98
            assert stats.wilson_interval(*rates["normal"])[1] < \
                stats.wilson_interval(*rates[init])[0]
    assert "With a hidden layer of 8 or 16, He and Xavier solve nearly every seed" in readme


# --- the README as a front door ---------------------------------------------------------------

README_LINES = 200
LINK = re.compile(r"\]\(([^)#\s]*)(?:#([^)\s]*))?\)")
FENCE = re.compile(r"^```.*?^```", re.MULTILINE | re.DOTALL)


def test_the_readme_is_short_and_opens_with_the_two_commands():
    text = page("README.md")
    assert len(text.splitlines()) <= README_LINES
    first = text[text.index("```bash\n") + 8:]
    assert first[:first.index("```")].splitlines() == [
        "pip install . && python examples/xor.py --init he_leaky --shuffle",
        'pip install ".[dev,torch]" && python -m pytest']


def slug(heading: str) -> str:
    """A heading's anchor, as Python-Markdown's toc extension (MkDocs) and forges make it."""
    text = unicodedata.normalize("NFKD", heading).encode("ascii", "ignore").decode()
    return re.sub(r"[-\s]+", "-", re.sub(r"[^\w\s-]", "", text).strip().lower())


def anchors(text: str) -> set[str]:
    """The anchors of a Markdown page: its headings' slugs (code blocks left out)."""
    return {slug(line.lstrip("#")) for line in FENCE.sub("", text).splitlines()
            if re.match(r"#{1,6} ", line)}


def broken_links(text: str, folder: Path) -> list[str]:
    """The relative links of ``text`` (a page in ``folder``) that name no file, or name a
    Markdown page without the anchor they point at."""
    broken = []
    for target, anchor in LINK.findall(text):
        if "://" in target or target.startswith("mailto:"):
            continue
        path = folder / target if target else None
        if path is not None and not path.exists():
            broken.append(target)
        elif anchor and (path is None or path.suffix == ".md") and \
                anchor not in anchors(path.read_text() if path else text):
            broken.append(f"{target}#{anchor}")
    return broken


@pytest.mark.parametrize("name", sorted(pages()))
def test_every_relative_link_leads_somewhere(name):
    """The links of the README and of every docs page, anchors included, as a reader on a
    forge follows them (the site's build checks the pages' links again: mkdocs build
    --strict)."""
    folder = ROOT if name == "README.md" else ROOT / "docs"
    assert not broken_links(pages()[name], folder), f"{name}: broken links"


def test_a_broken_link_or_anchor_is_caught():
    folder = ROOT / "docs"
    assert broken_links("[it](../examples/nowhere.png)", folder) == ["../examples/nowhere.png"]
    assert broken_links("[it](xor.md#no-such-section)", folder) == ["xor.md#no-such-section"]
    assert broken_links("# A title\n[it](#a-title) [x](#gone)", folder) == ["#gone"]
    assert broken_links("[it](xor.md#where-initialization-starts-to-matter)", folder) == []


def test_the_readme_says_how_long_the_test_command_takes():
    """The README's minutes are the committed timing's (benchmarks/time_suite.py), rounded."""
    timing = json.loads((ROOT / "benchmarks" / "results" / "suite_time.json").read_text())
    warm, cold = (round(timing[run]["seconds"] / 60) for run in ("warm", "cold"))
    readme = " ".join(page("README.md").split())
    assert f"about {warm} minutes on {timing['cores']} cores with the kernels cached, {cold} " \
           "minutes on a machine's first run" in readme
    assert timing["warm"]["load_before"] <= 1.5  # a quiet machine's time, as the README says


def test_the_readme_says_how_long_its_first_command_takes():
    """The README's (and the performance page's) seconds for its first command in a fresh
    virtualenv are the committed timing's (benchmarks/time_first_command.py), of the command
    the README shows first, timed on a machine at a load below 1 as the README says."""
    timing = json.loads((ROOT / "benchmarks" / "results" / "first_command.json").read_text())
    readme = " ".join(page("README.md").split())
    first, later = timing["first_run"], timing["later_run"]
    assert re.search(r"```bash\n(.*)\n", page("README.md"))[1] == timing["command"]
    assert f"In a fresh virtualenv on {timing['cores']} cores at a load below 1, pip's install " \
           f"took {timing['install']['seconds']:.0f} s, the first run {first['seconds']:.1f} s " \
           f"({first['compile_seconds']:.1f} s of it compiling) and later runs " \
           f"{later['seconds']:.1f} s" in readme
    performance = " ".join(page("performance.md").split())
    assert f"the README's first command's later runs took {later['seconds']:.1f} s, and its " \
           f"first run, which compiles the kernel, {first['seconds']:.1f} s" in performance
    loads = [load for part in ("install", "first_run", "later_run")
             for pair in timing[part]["loads"] for load in pair]
    assert max(loads) < 1
