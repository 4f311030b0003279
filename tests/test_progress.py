"""Long runs in chunks: the same run bit for bit, progress after each chunk, Ctrl-C between
chunks (networks untouched; the CLI exits 130 with one line and no partial files), and the
notice before a kernel is compiled. Who reports progress: the library only when asked, the
command line on a terminal unless told."""

import os
import re
import signal
import subprocess
import sys
import types
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

import tinynet
from tinynet import reference
from tinynet.compiled import backend, sources, unrolled
from tinynet.compiled.simd import LANES
from tinynet.packing import layout
from tinynet.xor import Arm, Setup, get_preset, run_seed_ranges, run_study, run_sweep
from tinynet.xor import bench, cli
from tinynet.xor.depth import QUICK_SETUP, run_depth_study
from tinynet.xor.fixes import change, run_lr_sweep

from helpers import checkout_environment, default_stop_signals
from test_backends import same_parameters


@pytest.mark.parametrize("backend_name,module", [
    ("numba", backend),                                                 # the generic kernels
    pytest.param("numba", backend, marks=pytest.mark.unrolled),         # the generated ones
    ("numpy", reference)])
@pytest.mark.parametrize("output,lr,diverged", [("sigmoid", 0.5, 0), ("identity", 0.3, 8),
                                                ("identity", 1.0, 10)])  # none, some, all
def test_a_run_in_chunks_is_the_same_run(backend_name, module, output, lr, diverged,
                                         monkeypatch):
    X, y = tinynet.data.xor()
    runs = []
    for chunked in (False, True):
        if chunked:  # 7 epochs a chunk: 10 members (numba: the SIMD lanes they fill) x 4
            # samples x 13 parameters of 2-3-1
            width = 10 if backend_name == "numpy" else backend.lane_width(
                10, layout(tinynet.mlp([2, 3, 1])), 1)
            monkeypatch.setattr(module, "CHUNK_WORK", width * 4 * 13 * 7)
        nets = [tinynet.mlp([2, 3, 1], activation=output, output=output, seed=s)
                for s in range(10)]
        done = []
        result = tinynet.fit_ensemble(nets, X, y, epochs=40, lr=lr, record_every=3,
                                      backend=backend_name, progress=done.append)
        runs.append((nets, result, done))
    (nets_a, a, done_a), (nets_b, b, done_b) = runs
    for field in ("loss", "final_loss", "diverged_epoch", "last_wrong_epoch", "predictions"):
        np.testing.assert_array_equal(getattr(a, field), getattr(b, field))
    for net_a, net_b in zip(nets_a, nets_b):
        same_parameters(net_a, net_b)
    assert a.diverged.sum() == diverged and done_a == [40]
    if diverged < 10:
        assert done_b == [7, 14, 21, 28, 35, 40]
    else:  # all diverged in the first chunk: the run stops there
        assert done_b == [7] and a.diverged_epoch.max() < 7


def test_ctrl_c_between_chunks_leaves_the_networks_as_they_were(monkeypatch):
    X, y = tinynet.data.xor()
    monkeypatch.setattr(backend, "CHUNK_WORK", LANES * 4 * 9 * 3)  # 3 epochs of 64 lanes of 2-2-1
    nets = [tinynet.mlp([2, 2, 1], seed=s) for s in range(5)]
    before = [[p.copy() for p in net.parameters()] for net in nets]

    def interrupt(done):
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        tinynet.fit_ensemble(nets, X, y, epochs=30, lr=0.5, progress=interrupt)
    for net, params in zip(nets, before):
        for p, q in zip(net.parameters(), params):
            np.testing.assert_array_equal(p, q)


@pytest.mark.unrolled
@pytest.mark.slow  # compiles a generated kernel of its own, in a folder of its own
def test_a_cold_kernel_is_announced_once_before_it_compiles(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("TINYNET_KERNEL_DIR", str(tmp_path))
    X, y = tinynet.data.xor()
    for _ in range(2):
        tinynet.fit_ensemble([tinynet.mlp([2, 3, 2, 1], seed=s) for s in range(3)], X, y,
                             epochs=2, lr=0.1)
    err = capsys.readouterr().err
    notices = [line for line in err.splitlines() if "tinynet: compiling the " in line]
    assert len(notices) == 1 and "2-3-2-1 networks" in notices[0], err
    assert "once on this machine" in notices[0] and err.count("tinynet: compiled in ") == 1
    sources._LOADED.clear()  # as in a new process: the kernel is in numba's cache now
    unrolled._kernel.cache_clear()
    tinynet.fit_ensemble([tinynet.mlp([2, 3, 2, 1], seed=s) for s in range(3)], X, y,
                         epochs=2, lr=0.1)
    assert "compiling" not in capsys.readouterr().err


@pytest.mark.skipif(not hasattr(signal, "SIGHUP") or os.name != "posix", reason="POSIX signals")
@pytest.mark.parametrize("epochs,stop,status,word", [
    # Two Pythons a case, about 2 s: Ctrl-C on 10**12 epochs in the fast suite, the rest slow.
    pytest.param(5_000_000, signal.SIGINT, 130, "interrupted", marks=pytest.mark.slow),
    (10**12, signal.SIGINT, 130, "interrupted"),   # 10**12: any length stops at Ctrl-C
    pytest.param(10**12, signal.SIGTERM, 143, "terminated",  # kill, a batch system's time limit
                 marks=pytest.mark.slow),
    pytest.param(10**12, getattr(signal, "SIGHUP", None), 129, "terminated",  # the terminal closed
                 marks=pytest.mark.slow),
])
def test_ctrl_c_stops_the_cli_with_one_line_and_no_partial_files(tmp_path, epochs, stop, status,
                                                                 word):
    command = [sys.executable, "-m", "tinynet.xor", "--hidden", "3"]
    # compiled now, not when timed: the same seeds, so the same lanes and the same kernel (a
    # Ctrl-C that lands in numba's compiler is not what this test is about)
    subprocess.run(command + ["--seeds", "2000", "--epochs", "1"], check=True,
                   capture_output=True, timeout=300)
    out = tmp_path / "out"
    out.mkdir()
    process = subprocess.Popen(
        command + ["--seeds", "2000", "--epochs", str(epochs), "--progress", "--json",
                   str(out / "r.json"), "--gallery", str(out / "g.png"), "--save-failed",
                   str(out / "failed")],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        preexec_fn=default_stop_signals)
    line = process.stderr.readline()
    while line and f"of {epochs:,} epochs" not in line:  # the arm's first progress line
        line = process.stderr.readline()
    assert line, "the run ended before it reported progress"
    process.send_signal(stop)
    stdout, stderr = process.communicate(timeout=60)
    assert process.returncode == status
    assert stderr.strip().splitlines() == [f"{word}: nothing was written"], stderr
    assert stdout == ""
    assert list(out.iterdir()) == []


# --- who reports progress ----------------------------------------------------------------

TINY = Setup(seeds=2, epochs=2)


def slow_clock(monkeypatch, step: float) -> None:
    """Make the bench's clock (:mod:`tinynet.xor.bench` only) advance ``step`` seconds at each
    reading: a study that takes as long as any, without waiting for it."""
    now = iter(step * k for k in range(10**9))
    monkeypatch.setattr(bench, "time", types.SimpleNamespace(perf_counter=lambda: next(now)))


LIBRARY_CALLS = {
    "run_study": lambda: run_study([Arm("normal")], TINY),
    "run_sweep": lambda: run_sweep([Arm("normal")], [TINY, replace(TINY, hidden=(3,))]),
    "run_seed_ranges": lambda: run_seed_ranges([Arm("normal")], TINY, (0, 10)),
    "Preset.run": lambda: get_preset("notes").run(TINY),
    "run_depth_study": lambda: run_depth_study(replace(QUICK_SETUP, epochs=1), depths=(1,),
                                               seeds=2),
    "run_lr_sweep": lambda: run_lr_sweep(change("lr"), TINY),
}
"""Every library entry that takes ``progress``, called with its defaults on a tiny setup."""


@pytest.mark.parametrize("terminal", [False, True], ids=["not a terminal", "a terminal"])
@pytest.mark.parametrize("name", LIBRARY_CALLS)
def test_a_library_call_prints_nothing_by_default_however_long_it_takes(name, terminal,
                                                                      monkeypatch, capsys):
    """As in a notebook: no progress and no result lines on stderr unless progress=True, even
    when the study takes a minute an arm and stderr is a terminal."""
    call = LIBRARY_CALLS[name]
    call()  # any kernel compiled now, and its notice read and dropped
    capsys.readouterr()
    monkeypatch.setattr(sys.stderr, "isatty", lambda: terminal)
    slow_clock(monkeypatch, 60.0)
    call()
    assert capsys.readouterr().err == ""


def test_a_library_call_reports_progress_when_asked(monkeypatch, capsys):
    run_study([Arm("normal")], TINY, progress=False)
    capsys.readouterr()
    slow_clock(monkeypatch, 60.0)
    run_study([Arm("normal")], TINY, progress=True)
    err = capsys.readouterr().err
    assert "[1/1] normal: 0 of 2 epochs" in err                     # how far training has got
    assert re.search(r"\[1/1\] normal: \d/2 solved \(\d+\.\d s\)\n$", err)  # the arm's result


@pytest.mark.parametrize("terminal,flag,shown", [
    (True, [], True),                     # the command line on a terminal: progress
    (False, [], False),                   # piped or logged: none, however long the run
    (True, ["--no-progress"], False),
    (False, ["--progress"], True),
])
def test_the_command_line_reports_progress_on_a_terminal_unless_told(terminal, flag, shown,
                                                                     monkeypatch, capsys):
    argv = ["--init", "normal", "--seeds", "2", "--epochs", "2", *flag]
    cli.main(argv + ["--no-progress"])  # any kernel compiled now, and its notice dropped
    capsys.readouterr()
    monkeypatch.setattr(sys.stderr, "isatty", lambda: terminal)
    slow_clock(monkeypatch, 60.0 if not shown else 0.0)  # frozen: no line for its time
    cli.main(argv)
    err = capsys.readouterr().err
    if shown:
        assert "[1/1] normal: 0 of 2 epochs" in err                 # how far training has got
        assert re.search(r"\[1/1\] normal: \d/2 solved \(", err)     # the arm's result line
    else:
        assert err == ""


def test_a_long_test_is_said_to_be_still_running(tmp_path):
    (tmp_path / "test_long.py").write_text(
        "import time\n\ndef test_long():\n    print('the test prints')\n    time.sleep(1.5)\n")
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "still_running", "-p", "no:cacheprovider",
         "--still-running-every", "0.2", str(tmp_path / "test_long.py")],
        capture_output=True, text=True, cwd=tmp_path, timeout=300,
        env=checkout_environment(Path(__file__).parent))  # tests/, where the plugin is
    assert run.returncode == 0, run.stdout + run.stderr
    lines = [line for line in run.stdout.splitlines() if "still running" in line]
    # 1.5 s at one line every 0.2 s: several lines, even if a busy machine delays a few
    assert len(lines) >= 2, run.stdout
    assert lines[0].startswith("    ... test_long.py::test_long still running, ")
