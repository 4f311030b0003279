"""A catalogue of wrong values for every CLI flag that takes one (tinynet.xor.cli), and the
rule they are held to: every failure exits with status 2 and ONE line on stderr,
``xor.py: error: ...``, no traceback, nothing on stdout, and it comes before any long
training (each case runs with 2 seeds of 2 epochs, so a missed refusal is quick, and under a
per-case alarm). No case may start a Dask cluster: ``dask.distributed`` is replaced by one
that fails the test if asked for a cluster. (``--scheduler`` is covered in
tests/test_cluster.py.)

Then: huge but finite parameters are allowed (what they do to training is an outcome, not an
error); an ``--import`` module in the working folder works from ``examples/xor.py``; and a
Ctrl-C (SIGINT) stops a run of 10**12 epochs, from the CLI (status 130, one line) and from
``Network.fit`` (KeyboardInterrupt, the network as it was before the call).
"""

import os
import re
import signal
import subprocess
import sys
import textwrap
import time
import types
from contextlib import contextmanager

import pytest

from helpers import ROOT, checkout_environment, default_sigint, page
from tinynet.xor.cli import main, parse_args

PROG = "xor.py"
TINY = ["--seeds", "2", "--epochs", "2"]
NINES = "9" * 400
CASE_SECONDS = 20
"""A case still running after this long has missed its refusal and is training."""


class CaseTimedOut(BaseException):
    """A case ran past :data:`CASE_SECONDS` (a BaseException: the CLI must not catch it)."""


class ClusterStarted(BaseException):
    """The CLI asked for a Dask cluster (a BaseException: the CLI must not catch it)."""


@contextmanager
def alarm(seconds: float):
    """Raise :class:`CaseTimedOut` in this thread after ``seconds`` (training stops for it
    between two chunks of about a second)."""
    def expire(signum, frame):
        raise CaseTimedOut(f"still running after {seconds} s: not refused before training")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


MODULES = {
    "catalogue_raises": "raise RuntimeError('broken at import on purpose')\n",
    "catalogue_syntax": "def broken(:\n",
    "catalogue_draw_fails": textwrap.dedent("""\
        import tinynet


        @tinynet.init.register("catalogue_draw_fails")
        def catalogue_draw_fails(shape, rng):
            raise RuntimeError("cannot draw on purpose")
        """),
    "catalogue_nan_init": textwrap.dedent("""\
        import numpy as np
        import tinynet


        @tinynet.init.register("catalogue_nan")
        def catalogue_nan(shape, rng):
            return np.full(shape, np.nan)
        """),
}
"""Modules the --import cases name, written into the case's folder."""


@pytest.fixture
def workdir(tmp_path, monkeypatch):
    """The case's folder, the working directory, on sys.path, holding a regular file
    ``file.txt``, empty folders ``dir`` and ``c-2-2-1.png`` and :data:`MODULES`; the modules
    are forgotten after the case."""
    (tmp_path / "file.txt").write_text("a regular file\n")
    (tmp_path / "dir").mkdir()
    (tmp_path / "c-2-2-1.png").mkdir()  # where --curves c.png writes 2-2-1's, over shapes
    # --save-failed folders that would fail its writes after training
    (tmp_path / "to_file").symlink_to(tmp_path / "file.txt")
    (tmp_path / "dangling").symlink_to(tmp_path / "nothing here")
    (tmp_path / "loop").symlink_to(tmp_path / "loop")
    (tmp_path / "shape_file").mkdir()
    (tmp_path / "shape_file" / "2-2-2-1").write_text("where the shape's folder goes\n")
    (tmp_path / "shape_link").mkdir()
    (tmp_path / "shape_link" / "2-2-2-1").symlink_to(tmp_path / "nothing here")
    (tmp_path / "arm_file" / "2-2-2-1").mkdir(parents=True)
    (tmp_path / "arm_file" / "2-2-2-1" / "normal").write_text("where the arm's folder goes\n")
    (tmp_path / "seed_dir" / "2-2-2-1" / "normal" / "seed0.json").mkdir(parents=True)
    for name, text in MODULES.items():
        (tmp_path / f"{name}.py").write_text(text)
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))  # sys.path restored after the case
    yield tmp_path
    for name in [name for name in sys.modules if name.startswith("catalogue_")]:
        del sys.modules[name]


@pytest.fixture
def no_cluster(monkeypatch):
    """``dask.distributed`` whose LocalCluster and Client fail the case: no case may start a
    cluster (nor reach one)."""
    def refuse(*args, **kwargs):
        raise ClusterStarted(f"the CLI started a Dask cluster ({args}, {kwargs}) instead of "
                             "refusing its arguments")

    fake = types.ModuleType("dask.distributed")
    fake.LocalCluster = fake.Client = refuse
    monkeypatch.setitem(sys.modules, "dask.distributed", fake)


def run_in_process(argv: list[str], capsys) -> tuple[object, str, str]:
    """``main(argv, prog="xor.py")`` under the alarm: (the exit code, or None if it returned;
    or the exception it raised instead), stdout, stderr."""
    try:
        with alarm(CASE_SECONDS):
            main(argv, prog=PROG)
        outcome = None
    except SystemExit as exited:
        outcome = exited.code
    except (Exception, CaseTimedOut, ClusterStarted) as error:  # noqa: BLE001
        outcome = error
    captured = capsys.readouterr()
    return outcome, captured.out, captured.err


def case(flag: str, value: str, expected: str, *extra: str, tiny: bool = True,
         name: str | None = None):
    """One catalogue entry: ``flag value`` (plus ``extra`` and, if ``tiny``, the tiny run's
    seeds and epochs where not given), refused with a line matching ``expected``."""
    argv = [flag, value, *extra]
    if tiny:
        argv += [item for pair in (TINY[:2], TINY[2:]) if pair[0] not in argv for item in pair]
    label = name or f"{flag.lstrip('-')} {value if len(value) < 30 else value[:12] + '...'}"
    return (label, argv, expected)


BIG = "99999999999999999999"           # 20 digits, past every 64-bit integer
TWO_64 = "18446744073709551616"        # 2**64
TWO_64_LESS = "18446744073709551615"   # 2**64 - 1
TWO_63 = "9223372036854775808"         # 2**63, one past int64
OUT_OF_MEMORY = r"memory|too large|more than"

CASES = [
    # --init
    case("--init", "abc", r"unknown initializer 'abc'"),
    case("--init", "nan", r"unknown initializer 'nan'"),
    case("--init", "", r"expected at least one initializer name"),
    case("--init", "normal(std=nan)", r"std.*nan"),
    case("--init", "normal(std=-1)", r"std.*-1"),
    case("--init", "normal(std=inf)", r"std.*inf"),
    case("--init", "normal(std=1e999)", r"std.*(inf|1e999)"),
    case("--init", f"normal(std={NINES})", r"std.*999"),
    case("--init", "normal(std=abc)", r"std|abc"),
    case("--init", "normal(std=0.5", r"normal\(std=0\.5"),
    case("--init", "normal(spread=2)", r"unknown parameter\(s\) spread"),
    case("--init", "he_leaky(alpha=-1)", r"alpha.*-1"),
    case("--init", "he_leaky(alpha=nan)", r"alpha.*nan"),
    case("--init", "he_leaky(alpha=1e999)", r"alpha.*(inf|1e999)"),
    case("--init", "orthogonal(gain=nan)", r"gain.*nan"),
    case("--init", "orthogonal(gain=1e999)", r"gain.*(inf|1e999)"),
    # --output-init
    case("--output-init", "abc", r"unknown initializer 'abc'"),
    case("--output-init", "", r"initializer"),
    case("--output-init", "normal(std=nan)", r"std.*nan"),
    case("--output-init", "normal(std=-1)", r"std.*-1"),
    case("--output-init", "normal(std=1e999)", r"std.*(inf|1e999)"),
    case("--output-init", f"normal(std={NINES})", r"std.*999"),
    # --bias-init
    case("--bias-init", "abc", r"unknown initializer 'abc'"),
    case("--bias-init", "", r"initializer"),
    case("--bias-init", "normal(std=nan)", r"std.*nan"),
    case("--bias-init", "normal(std=-1)", r"std.*-1"),
    case("--bias-init", "normal(std=1e999)", r"std.*(inf|1e999)"),
    case("--bias-init", f"normal(std={NINES})", r"std.*999"),
    # --seeds
    case("--seeds", "abc", r"--seeds.*'abc'"),
    case("--seeds", "nan", r"--seeds.*'nan'"),
    case("--seeds", "1e999", r"--seeds.*'1e999'"),
    case("--seeds", "2.5", r"--seeds.*'2.5'"),
    case("--seeds", "-1", r"seeds.*-1"),
    case("--seeds", "0", r"seeds.*0"),
    case("--seeds", "1000000000000000", OUT_OF_MEMORY, name="seeds 10**15 (more memory than "
                                                     "the machine has)"),
    case("--seeds", TWO_63, r"seed"),
    case("--seeds", TWO_64, r"seed"),
    case("--seeds", BIG, r"seed"),
    case("--seeds", NINES, r"seed"),
    # --first-seed
    case("--first-seed", "abc", r"--first-seed.*'abc'"),
    case("--first-seed", "nan", r"--first-seed.*'nan'"),
    case("--first-seed", "-1", r"first_seed.*-1|--first-seed.*-1"),
    case("--first-seed", TWO_63, r"first.seed.*9223372036854775808"),
    case("--first-seed", TWO_64, r"first.seed.*18446744073709551616"),
    case("--first-seed", BIG, r"first.seed.*99999999999999999999"),
    case("--first-seed", NINES, r"first.seed"),
    case("--first-seed", "9223372036854775807", r"last seed",
         name="first-seed 2**63-1 (the last seed past 2**63-1)"),
    # --seed-ranges
    case("--seed-ranges", "abc", r"--seed-ranges.*'abc'"),
    case("--seed-ranges", "", r"--seed-ranges"),
    case("--seed-ranges", "0,nan", r"--seed-ranges.*'0,nan'"),
    case("--seed-ranges", "0,-100", r"first_seeds|seed"),
    case("--seed-ranges", "0,0", r"overlapping"),
    case("--seed-ranges", "0,1", r"overlapping"),
    case("--seed-ranges", "7", r"at least 2"),
    case("--seed-ranges", f"0,{TWO_63}", r"seed"),
    case("--seed-ranges", f"0,{TWO_64}", r"seed"),
    case("--seed-ranges", f"0,{BIG}", r"seed"),
    case("--seed-ranges", f"0,{NINES}", r"seed"),
    # --epochs
    case("--epochs", "abc", r"--epochs.*'abc'"),
    case("--epochs", "nan", r"--epochs.*'nan'"),
    case("--epochs", "inf", r"--epochs.*'inf'"),
    case("--epochs", "1e999", r"--epochs.*'1e999'"),
    case("--epochs", "2.5", r"--epochs.*'2.5'"),
    case("--epochs", "-1", r"epochs.*-1"),
    case("--epochs", "0", r"epochs.*0"),
    case("--epochs", "9007199254740993", r"epochs.*9007199254740993",
         name="epochs 2**53+1"),
    case("--epochs", TWO_63, r"epochs.*9223372036854775808"),
    case("--epochs", TWO_64_LESS, r"epochs.*18446744073709551615"),
    case("--epochs", TWO_64, r"epochs.*18446744073709551616"),
    case("--epochs", BIG, r"epochs.*99999999999999999999"),
    case("--epochs", NINES, r"epochs"),
    # --lr
    case("--lr", "abc", r"--lr.*'abc'"),
    case("--lr", "nan", r"lr.*nan"),
    case("--lr", "inf", r"lr.*inf"),
    ("lr=-inf", ["--lr=-inf", *TINY], r"lr.*inf"),  # "--lr -inf": -inf taken for an option
    case("--lr", "1e999", r"lr.*inf"),
    case("--lr", "-1", r"lr.*-1"),
    case("--lr", "0", r"lr.*0"),
    # --loss
    case("--loss", "abc", r"--loss.*'abc'"),
    case("--loss", "", r"--loss"),
    case("--loss", "nan", r"--loss.*'nan'"),
    # --optimizer and its hyperparameters
    case("--optimizer", "rmsprop", r"--optimizer.*'rmsprop'"),
    case("--optimizer", "", r"--optimizer"),
    case("--momentum", "0.5", r"--momentum-momentum \(--momentum\) is momentum's momentum "
                             r"\(an optimizer\); give --optimizer momentum, not sgd"),
    case("--beta1", "0.5", r"--adam-beta1 \(--beta1\) is adam's beta1.*not momentum",
         "--optimizer", "momentum"),
    case("--momentum", "-1", r"momentum must be in \[0, inf\), got -1", "--optimizer",
         "momentum"),
    case("--momentum", "nan", r"momentum must be a finite number, got nan", "--optimizer",
         "momentum"),
    case("--momentum", "abc", r"--momentum.*'abc'", "--optimizer", "momentum"),
    case("--beta1", "1", r"beta1 must be in \[0, 1\), got 1.0", "--optimizer", "adam"),
    case("--beta2", "inf", r"beta2 must be a finite number, got inf", "--optimizer", "adam"),
    ("eps=-1e-8", ["--eps=-1e-8", "--optimizer", "adam", *TINY],  # "--eps -1e-8": an option?
     r"eps must be in \[0, inf\), got -1e-08"),
    # --update
    case("--update", "abc", r"--update.*'abc'"),
    case("--update", "", r"--update"),
    case("--update", "nan", r"--update.*'nan'"),
    # --hidden
    case("--hidden", "a,b", r"--hidden.*'a,b'"),
    case("--hidden", "2,,2", r"--hidden.*'2,,2'"),
    case("--hidden", "", r"--hidden"),
    case("--hidden", "2,nan", r"--hidden.*'2,nan'"),
    case("--hidden", "1e999", r"--hidden.*'1e999'"),
    case("--hidden", "-1", r"hidden\[0\].*-1"),
    case("--hidden", "0", r"hidden\[0\].*0"),
    case("--hidden", "2,-3", r"hidden\[1\].*-3"),
    case("--hidden", BIG, r"hidden|" + OUT_OF_MEMORY),
    case("--hidden", TWO_64, r"hidden|" + OUT_OF_MEMORY),
    case("--hidden", TWO_63, r"hidden|" + OUT_OF_MEMORY),
    case("--hidden", NINES, r"hidden|" + OUT_OF_MEMORY),
    case("--hidden", "100000000,100000000", OUT_OF_MEMORY,
         name="hidden 10**8,10**8 (10**16 weights)"),
    # --activation
    case("--activation", "abc", r"unknown activation 'abc'"),
    case("--activation", "nan", r"unknown activation 'nan'"),
    case("--activation", "", r"unknown activation ''"),
    # --alpha
    case("--alpha", "abc", r"--alpha.*'abc'"),
    case("--alpha", "nan", r"alpha.*nan"),
    case("--alpha", "inf", r"alpha.*inf"),
    case("--alpha", "1e999", r"alpha.*inf"),
    case("--alpha", "-1", r"alpha.*-1"),
    # --backend
    case("--backend", "abc", r"unknown backend 'abc'"),
    case("--backend", "gpu", r"unknown backend 'gpu'"),
    case("--backend", "", r"unknown backend ''"),
    case("--backend", "numpy", r"numba|numpy", "--workers", "1",
         name="backend numpy with --workers 1 (refused before a cluster starts)"),
    # --batch-size
    case("--batch-size", "abc", r"--batch-size.*'abc'"),
    case("--batch-size", "nan", r"--batch-size.*'nan'"),
    case("--batch-size", "0", r"batch_size.*0|--batch-size.*0"),
    case("--batch-size", "-1", r"batch_size.*-1|--batch-size.*-1"),
    case("--batch-size", "5", r"batch.size.*5", name="batch-size 5 (XOR has 4 samples)"),
    case("--batch-size", TWO_64, r"batch.size"),
    case("--batch-size", BIG, r"batch.size"),
    # --data
    case("--data", "abc", r"unknown data set 'abc'"),
    case("--data", "nan", r"unknown data set 'nan'"),
    case("--data", "", r"unknown data set ''"),
    # --samples
    case("--samples", "abc", r"--samples.*'abc'"),
    case("--samples", "nan", r"--samples.*'nan'"),
    case("--samples", "1e999", r"--samples.*'1e999'"),
    case("--samples", "-1", r"\bn\b.*-1|samples.*-1"),
    case("--samples", "0", r"\bn\b.*0|samples.*0"),
    case("--samples", "1", r"\bn\b.*1|samples.*1"),
    case("--samples", "1000000000000", r"samples.*(" + OUT_OF_MEMORY + ")|(" + OUT_OF_MEMORY
         + r").*samples", name="samples 10**12 (too much memory)"),
    case("--samples", BIG, r"samples|" + OUT_OF_MEMORY),
    case("--samples", NINES, r"samples|" + OUT_OF_MEMORY),
    # --noise
    case("--noise", "abc", r"--noise.*'abc'"),
    case("--noise", "nan", r"noise.*nan", "--data", "moons"),
    case("--noise", "inf", r"noise.*inf", "--data", "moons"),
    case("--noise", "1e999", r"noise.*inf", "--data", "moons"),
    case("--noise", "-1", r"noise.*-1", "--data", "moons"),
    case("--noise", "0.1", r"noise needs n", name="noise 0.1 on XOR's four points"),
    # --accuracy
    case("--accuracy", "abc", r"--accuracy.*'abc'"),
    case("--accuracy", "nan", r"accuracy.*nan"),
    case("--accuracy", "inf", r"accuracy.*inf"),
    case("--accuracy", "1e999", r"accuracy.*inf"),
    case("--accuracy", "-1", r"accuracy.*-1"),
    case("--accuracy", "0", r"accuracy.*0"),
    case("--accuracy", "2", r"accuracy.*2"),
    # --preset
    case("--preset", "abc", r"unknown preset 'abc'"),
    case("--preset", "nan", r"unknown preset 'nan'"),
    case("--preset", "", r"unknown preset ''"),
    # output files: --json, --csv, --plot, --gallery, --curves
    *[entry for flag, suffix in (("--json", "json"), ("--csv", "csv"), ("--plot", "png"),
                                 ("--gallery", "png"), ("--curves", "png"))
      for entry in (
          case(flag, "{tmp}/dir", rf"{flag} .*/dir: .*/dir is a directory, not a regular file",
               name=f"{flag.lstrip('-')} a directory"),
          case(flag, "/dev/full", rf"{flag} /dev/full: /dev/full is not a regular file \(it is "
                                  r"a character device\)"),
          case(flag, "/dev/null", rf"{flag} /dev/null: /dev/null is not a regular file \(it is "
                                  r"a character device\)"),
          case(flag, f"/no/such/folder/r.{suffix}", rf"{flag} /no/such/folder/r\.{suffix}",
               name=f"{flag.lstrip('-')} in a missing folder"),
          case(flag, f"{{tmp}}/file.txt/r.{suffix}", rf"{flag} .*file\.txt/r\.{suffix}",
               name=f"{flag.lstrip('-')} in a regular file"),
      )],
    case("--json", "{tmp}/same.out", r"--csv .*same\.out.*--json", "--csv", "{tmp}/same.out",
         name="json and csv the same path"),
    case("--json", "{tmp}/same.json", r"same\.json", "--csv", "{tmp}/./dir/../same.json",
         name="json and csv the same file by two spellings"),
    case("--plot", "{tmp}/same.png", r"--gallery .*same\.png.*--plot", "--gallery",
         "{tmp}/same.png", name="plot and gallery the same path"),
    case("--plot", "-", r"--plot writes a PNG file"),
    case("--plot", "{tmp}/g-2-2-1.png", r"--gallery .*g\.png \(for 2-2-1\) writes .*g-2-2-1\.png,"
         r" as --plot .*g-2-2-1\.png does", "--gallery", "{tmp}/g.png", "--preset", "widths",
         name="a gallery's per-shape name is the plot's"),
    case("--curves", "{tmp}/c.png", r"--curves .*c\.png \(for 2-2-1\): .*c-2-2-1\.png is a "
         r"directory, not a regular file", "--preset", "widths",
         name="a per-shape name is a directory"),
    case("--json", "{tmp}/catalogue_nan_init.py", r"--json .*catalogue_nan_init\.py would "
         r"overwrite .*catalogue_nan_init\.py, the --import module catalogue_nan_init",
         "--import", "catalogue_nan_init", name="an output over an --import module's file"),
    *[case(flag, "{tmp}/" + name, rf"{flag} .*{name}: give a file name ending in a format "
                                  r"matplotlib writes", name=f"{flag.lstrip('-')} as {name}")
      for flag, name in (("--plot", "rates"), ("--gallery", "seeds.txt"), ("--curves", "c.np"))],
    case("--json", "-", r"cannot both write to stdout", "--csv", "-"),
    # --gallery-seeds (with --gallery; the tiny run has 2 seeds)
    *[case("--gallery-seeds", value, expected, "--gallery", "{tmp}/g.png") for value, expected in (
        ("abc", r"argument --gallery-seeds: expected a whole number of seeds, at least 1, "
                r"got 'abc'"),
        ("2.5", r"argument --gallery-seeds: expected a whole number of seeds, at least 1, "
                r"got '2.5'"),
        ("", r"argument --gallery-seeds: expected a whole number of seeds, at least 1, got ''"),
        ("0", r"argument --gallery-seeds: expected a whole number of seeds, at least 1, got '0'"),
        ("-3", r"argument --gallery-seeds: expected a whole number of seeds, at least 1, "
               r"got '-3'"),
        ("3", r"--gallery-seeds 3: more than the study's 2 seeds; expected a number from 1 to 2"),
        (BIG, r"--gallery-seeds 9{20}: more than the study's 2 seeds"),
    )],
    case("--gallery-seeds", "2", r"--gallery-seeds 2 says how many seeds --gallery draws; "
                                 r"give --gallery PNG too", name="gallery-seeds without --gallery"),
    # --save-failed
    case("--save-failed", "{tmp}/file.txt", r"--save-failed .*file\.txt",
         name="save-failed an existing regular file"),
    case("--save-failed", "/dev/null", r"--save-failed /dev/null"),
    case("--save-failed", "/dev/full", r"--save-failed /dev/full"),
    case("--save-failed", "/no/such/folder/f", r"--save-failed /no/such/folder/f"),
    case("--save-failed", "{tmp}/file.txt/sub", r"--save-failed .*file\.txt/sub",
         name="save-failed in a regular file"),
    case("--save-failed", "{tmp}/out", r"--save-failed .*out|--json .*out", "--json",
         "{tmp}/out", name="save-failed the folder --json writes as a file"),
    case("--save-failed", "{tmp}/to_file", r"--save-failed .*to_file: .*to_file is a regular "
         r"file", name="save-failed a symlink to a regular file"),
    case("--save-failed", "{tmp}/dangling", r"--save-failed .*dangling: .*dangling is a "
         r"symlink to nothing", name="save-failed a dangling symlink"),
    case("--save-failed", "{tmp}/loop", r"--save-failed .*loop: .*loop is a symlink in a loop",
         name="save-failed a symlink to itself"),
    case("--save-failed", "{tmp}/" + "f" * 300, r"--save-failed .*f{300}: .*File name too long",
         name="save-failed a name too long"),
    case("--save-failed", "{tmp}/shape_file", r"--save-failed .*shape_file: .*2-2-2-1 is a "
         r"regular file", name="save-failed with a file where the shape's folder goes"),
    case("--save-failed", "{tmp}/shape_link", r"--save-failed .*shape_link: .*2-2-2-1 is a "
         r"symlink to nothing", name="save-failed with a dangling symlink where the shape's "
                                     "folder goes"),
    case("--save-failed", "{tmp}/arm_file", r"--save-failed .*arm_file: .*normal is a "
         r"regular file", "--init", "normal",
         name="save-failed with a file where the arm's folder goes"),
    case("--save-failed", "{tmp}/seed_dir", r"--save-failed .*seed_dir: .*seed0\.json is a "
         r"directory, not a regular file", "--init", "normal",
         name="save-failed with a folder where a failed seed's file goes"),
    # --workers
    case("--workers", "abc", r"--workers.*'abc'"),
    case("--workers", "nan", r"--workers.*'nan'"),
    case("--workers", "1e999", r"--workers.*'1e999'"),
    case("--workers", "0", r"--workers must be .*got 0"),
    case("--workers", "-1", r"--workers must be .*got -1"),
    case("--workers", "1000000", r"--workers", name="workers 1000000 (more workers than "
                                                     "cores)"),
    case("--workers", TWO_64, r"--workers"),
    case("--workers", BIG, r"--workers"),
    # --block-seeds (with --workers 1: refused by the argument checks, no cluster started)
    case("--block-seeds", "abc", r"--block-seeds.*'abc'", "--workers", "1"),
    case("--block-seeds", "nan", r"--block-seeds.*'nan'", "--workers", "1"),
    case("--block-seeds", "63", r"--block-seeds must be an integer >= 64, got 63",
         "--workers", "1"),
    case("--block-seeds", "0", r"--block-seeds.*0", "--workers", "1"),
    case("--block-seeds", "-1", r"--block-seeds.*-1", "--workers", "1"),
    case("--block-seeds", "100", r"--block-seeds must be a multiple of 64", "--workers", "1"),
    case("--block-seeds", BIG, r"--block-seeds", "--workers", "1"),
    case("--block-seeds", "64", r"give --workers or --scheduler",
         name="block-seeds without a cluster"),
    # --import
    case("--import", "no_such_module_xyz", r"--import no_such_module_xyz: "
                                           r"ModuleNotFoundError"),
    case("--import", "catalogue_raises", r"--import catalogue_raises: RuntimeError: broken "
                                         r"at import on purpose"),
    case("--import", "catalogue_syntax", r"--import catalogue_syntax: SyntaxError"),
    case("--import", "", r"--import"),
    case("--import", ".relative", r"--import \.relative"),
    case("--import", "catalogue_draw_fails", r"catalogue_draw_fails.*cannot draw on purpose",
         "--init", "catalogue_draw_fails",
         name="import an initializer that raises RuntimeError when drawing"),
    case("--import", "catalogue_draw_fails", r"catalogue_draw_fails.*cannot draw on purpose",
         "--output-init", "catalogue_draw_fails",
         name="import an output initializer that raises RuntimeError when drawing"),
    case("--import", "catalogue_nan_init", r"catalogue_nan.*finite", "--init", "catalogue_nan",
         name="import an initializer that returns nan"),
    # --data: your own data from a file
    case("--data", "{tmp}/nothere.csv", r"argument --data: no such file '.*nothere\.csv'",
         name="own data file that is not there"),
    case("--data", "{tmp}/nothere.txt", r"unknown data set '.*nothere\.txt'",
         name="own data file of another suffix"),
    case("--init", "He_Normal", r"unknown initializer 'He_Normal'.*did you mean 'he_normal'",
         name="initializer in the wrong case"),
]
assert len({label for label, _, _ in CASES}) == len(CASES), "case names must be unique"


@pytest.mark.parametrize("argv,expected", [pytest.param(argv, expected, id=label)
                                           for label, argv, expected in CASES])
def test_a_bad_value_exits_2_with_one_line_before_training(argv, expected, workdir, capsys,
                                                           no_cluster, restore_registry):
    argv = [item.replace("{tmp}", str(workdir)) for item in argv]
    outcome, out, err = run_in_process(argv, capsys)
    assert not isinstance(outcome, BaseException), \
        f"raised {type(outcome).__name__}: {outcome} (stderr {err!r})"
    assert outcome == 2, f"exit {outcome!r}, stderr {err!r}"
    assert "Traceback" not in err
    lines = err.splitlines()
    assert len(lines) == 1, f"{len(lines)} lines on stderr: {err!r}"
    assert lines[0].startswith(f"{PROG}: error: "), lines[0]
    assert re.search(expected, lines[0]), f"{expected!r} not in {lines[0]!r}"
    assert out == "", f"stdout not empty (trained before refusing?): {out[:200]!r}"


def test_block_seeds_63_is_refused_by_the_argument_checks(capsys, no_cluster):
    """parse_args itself refuses it: no design is made, no cluster started."""
    with pytest.raises(SystemExit) as exited:
        parse_args(["--workers", "1", "--block-seeds", "63", *TINY], prog=PROG)
    assert exited.value.code == 2
    assert capsys.readouterr().err.count("\n") == 1


SUCCEED = [
    pytest.param(["--alpha", "1e308"], id="alpha 1e308"),
    pytest.param(["--init", "normal(std=1e155)"], id="normal(std=1e155)"),
    pytest.param(["--init", "orthogonal(gain=1e308)"], id="orthogonal(gain=1e308)"),
    pytest.param(["--init", "he_leaky(alpha=1e200)"], id="he_leaky(alpha=1e200)"),
]


@pytest.mark.parametrize("argv", SUCCEED)
def test_huge_finite_parameters_are_allowed(argv, capsys, no_cluster):
    outcome, out, err = run_in_process([*argv, *TINY], capsys)
    assert outcome is None, f"ended with {outcome!r}; stderr {err!r}"
    assert out.startswith("XOR, 2-2-2-1") and "Traceback" not in err


def test_an_import_module_in_the_working_folder_works_from_the_example_script(tmp_path,
                                                                             monkeypatch):
    """sys.path[0] is examples/ there, not the working folder: --import still finds it."""
    (tmp_path / "mymod.py").write_text(textwrap.dedent("""\
        import tinynet


        @tinynet.init.register("mymod_init")
        def mymod_init(shape, rng):
            return rng.normal(0.0, 0.7, size=shape)
        """))
    monkeypatch.chdir(tmp_path)
    done = subprocess.run([sys.executable, str(ROOT / "examples" / "xor.py"), "--import",
                           "mymod", "--init", "mymod_init", *TINY], cwd=tmp_path,
                          env=checkout_environment(), capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    assert "mymod_init" in done.stdout


FIT_INTERRUPTED = textwrap.dedent("""\
    import numpy as np
    import tinynet
    from tinynet.packing import pack

    X, y = tinynet.data.xor()
    tinynet.mlp([2, 2, 1]).fit(X, y, epochs=2, lr=0.1)  # the kernel loaded
    net = tinynet.mlp([2, 2, 1])
    before = pack(net).copy()
    print("before", before.tolist(), flush=True)
    print("training", flush=True)
    try:
        net.fit(X, y, epochs=10**12, lr=0.1, record_every=None)
    except KeyboardInterrupt:
        print("after", pack(net).tolist(), flush=True)
        print("KeyboardInterrupt, unchanged:", bool(np.array_equal(pack(net), before)),
              flush=True)
    else:
        print("finished", flush=True)
    """)


@pytest.mark.slow  # a Python of its own, interrupted after 1.5 s of fitting
def test_ctrl_c_stops_fit_and_leaves_the_network_as_it_was(tmp_path):
    run = subprocess.Popen([sys.executable, "-c", FIT_INTERRUPTED], cwd=tmp_path,
                           env=checkout_environment(), stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True, preexec_fn=default_sigint)
    try:
        deadline = time.monotonic() + 120
        while (line := run.stdout.readline()) != "training\n":
            assert line and time.monotonic() < deadline, run.communicate()
        time.sleep(1.5)  # in the long fit
        os.kill(run.pid, signal.SIGINT)
        # 10^12 epochs never end by themselves: the run ending at all is the Ctrl-C taking
        # effect between two chunks (their size is counted in work, not time: see
        # test_training's chunk tests). The timeout only keeps a broken fit from hanging
        # the suite; it is no measure of speed.
        out, err = run.communicate(timeout=300)
    finally:
        if run.poll() is None:
            run.kill()
            run.communicate()
    assert "KeyboardInterrupt, unchanged: True" in out, (out, err)
    assert run.returncode == 0 and "Traceback" not in err, err


def test_the_docs_count_the_catalogue():
    readme = " ".join(page("library.md").split())
    assert f"garbage, huge, NaN and negative values ({len(CASES)} cases)" in readme


@pytest.mark.parametrize("command", [["-m", "tinynet.init"],
                                     ["-m", "tinynet.xor", "--epochs", "10", "--seeds", "4"]])
def test_a_reader_that_goes_away_ends_the_command_quietly(command):
    # The read end is closed before the command writes (it is still importing), so its first
    # write fails with EPIPE: what `| head` does to a longer output, without the race.
    run = subprocess.Popen([sys.executable, *command], stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, env=checkout_environment())
    run.stdout.close()
    err = run.stderr.read().decode()
    run.wait(timeout=300)
    assert (run.returncode, err) == (1, "")
