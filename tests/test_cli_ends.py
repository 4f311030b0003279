"""How the XOR command ends when stopped (tinynet.xor.interrupts): the one line after a Ctrl-C
stays short however many files were written, and a signal the run was started to ignore
(``nohup``: SIGHUP) stays ignored. The signals themselves, sent to a running study, are
tests/test_progress.py's."""

import contextlib
import os
import signal
import time
from pathlib import Path

import pytest

from tinynet.xor import cli
from tinynet.xor.interrupts import (Terminated, exit_status, stop_signals_as_interrupt,
                                     stopped_message)


def interrupt_after_writing(paths: list[Path], stop: KeyboardInterrupt):
    """A stand-in for the CLI's writing (:func:`tinynet.xor.writing.write_results`):
    ``paths`` written, then ``stop``."""
    def run(args, results, written) -> None:
        written.extend(paths)
        raise stop
    return run


def test_ctrl_c_after_thousands_of_files_names_three_and_counts_the_rest(tmp_path, capsys,
                                                                        monkeypatch):
    """--save-failed writes three files per failed seed: a Ctrl-C after 1,354 of them had
    written one line naming all 4,062 paths (251,390 characters)."""
    failed = tmp_path / "failed" / "2-2-2-1" / "normal"
    paths = [tmp_path / "r.json"] + [failed / f"seed{seed}{end}" for seed in range(1354)
                                     for end in ("_initial.npz", "_trained.npz", ".json")][:-1]
    assert len(paths) == 4062
    monkeypatch.setattr(cli, "run_study", lambda *args, **kwargs: None)  # nothing trained
    monkeypatch.setattr(cli, "write_results", interrupt_after_writing(paths, KeyboardInterrupt()))
    with pytest.raises(SystemExit) as exit:
        cli.main(["--init", "normal", "--seeds", "2", "--epochs", "2"])
    assert exit.value.code == 130
    err = capsys.readouterr().err
    assert err == (f"interrupted: wrote only {paths[0]}, {paths[1]}, {paths[2]} ... and 4,059 "
                   f"more in {failed}\n")


@pytest.mark.parametrize("count", [1, 4])
def test_a_few_files_are_all_named(count, tmp_path):
    paths = [tmp_path / f"f{k}.json" for k in range(count)]
    assert stopped_message(Terminated(signal.SIGTERM), paths) == \
        "terminated: wrote only " + ", ".join(map(str, paths))


def test_the_rest_are_counted_in_the_folder_that_holds_them_all(tmp_path):
    paths = [Path("r.json"), *(tmp_path / name / "seed1.json" for name in ("a", "b", "c", "d"))]
    assert stopped_message(KeyboardInterrupt(), paths).endswith(
        f"{paths[2]} ... and 2 more in {tmp_path}")


@contextlib.contextmanager
def recording(signum: int, received: list[int]):
    """Within the block, ``signum`` is recorded in ``received`` rather than acted on: a
    signal the code under test failed to handle fails the test, not the whole session (the
    default action of SIGTERM and SIGHUP ends the process). The handler before is put back
    after."""
    before = signal.signal(signum, lambda number, frame: received.append(number))
    try:
        yield
    finally:
        signal.signal(signum, before)


@pytest.mark.skipif(not hasattr(signal, "SIGHUP"), reason="POSIX signals")
def test_a_hang_up_ignored_at_the_start_stays_ignored_and_sigterm_still_stops():
    """``nohup python -m tinynet.xor ...`` must outlive its terminal."""
    received: list[int] = []
    before = signal.signal(signal.SIGHUP, signal.SIG_IGN)
    try:
        with recording(signal.SIGTERM, received):
            with stop_signals_as_interrupt():
                assert signal.getsignal(signal.SIGHUP) is signal.SIG_IGN
                with pytest.raises(Terminated) as stop:
                    os.kill(os.getpid(), signal.SIGTERM)
                    time.sleep(5)  # the handler raises at once: the sleep ends there
                assert stop.value.signum == signal.SIGTERM
            assert signal.getsignal(signal.SIGHUP) is signal.SIG_IGN
        assert received == []  # the block's handler took it, not the recording one
    finally:
        signal.signal(signal.SIGHUP, before)


@pytest.mark.skipif(not hasattr(signal, "SIGHUP"), reason="POSIX signals")
def test_a_hang_up_stops_the_run_as_sigterm_does_and_the_handlers_are_put_back():
    received: list[int] = []
    with recording(signal.SIGHUP, received):
        recorder = signal.getsignal(signal.SIGHUP)
        term = signal.getsignal(signal.SIGTERM)
        with pytest.raises(Terminated) as stop, stop_signals_as_interrupt():
            os.kill(os.getpid(), signal.SIGHUP)
            time.sleep(5)
        assert stop.value.signum == signal.SIGHUP and exit_status(stop.value) == 129
        assert (signal.getsignal(signal.SIGHUP), signal.getsignal(signal.SIGTERM)) == \
            (recorder, term)
    assert received == []


class Reached(BaseException):
    """Raised by the stand-in bench: nothing on the way catches it."""


def calls_from_the_command_line(monkeypatch, argv: list[str], *names: str) -> list[str]:
    """The functions called between ``python -m tinynet.xor argv`` (its module's frame, run as
    ``python -m`` runs it) and the first of the bench functions ``names`` of
    :mod:`tinynet.xor.cli` (replaced by a stand-in that records the stack and stops the run),
    that one last."""
    import runpy
    import traceback

    stacks = []

    def reached(*args, **kwargs):
        stacks.append(traceback.extract_stack()[:-1])
        raise Reached

    for name in names:
        monkeypatch.setattr(cli, name, reached)
    monkeypatch.setattr("sys.argv", ["python -m tinynet.xor", *argv])
    with pytest.raises(Reached):
        runpy.run_module("tinynet.xor", run_name="__main__")
    frames = stacks[0]
    start = max(index for index, frame in enumerate(frames)
                if frame.filename.replace("\\", "/").endswith("tinynet/xor/__main__.py"))
    return [frame.name for frame in frames[start + 1:]]


def test_the_command_line_calls_run_study_from_main(monkeypatch):
    """``python -m tinynet.xor`` -> main -> run_study: one function between the command line
    and the bench (it was command -> main -> _run -> run_sweep -> a list comprehension ->
    run_study)."""
    calls = calls_from_the_command_line(monkeypatch, ["--seeds", "2", "--epochs", "2"],
                                        "run_study", "run_sweep")
    assert calls == ["main"]  # the stand-in's own frame, run_study's, left out


def test_a_preset_of_several_shapes_runs_a_sweep_and_one_shape_a_study(monkeypatch):
    assert calls_from_the_command_line(monkeypatch, ["--preset", "widths", "--seeds", "2"],
                                       "run_study", "run_sweep") == ["main"]
    stacks = []
    monkeypatch.setattr(cli, "run_study", lambda *a, **k: stacks.append("run_study"))
    monkeypatch.setattr(cli, "run_sweep", lambda *a, **k: stacks.append("run_sweep"))
    monkeypatch.setattr(cli, "write_results", lambda *a: None)
    for argv, bench in ((["--preset", "widths"], "run_sweep"), (["--preset", "notes"],
                                                                 "run_study")):
        stacks.clear()
        cli.main([*argv, "--seeds", "2", "--epochs", "2"])
        assert stacks == [bench]


def test_the_command_runs_main_as_the_whole_of_a_process(monkeypatch):
    """``python -m tinynet.xor``: main runs with the collector's youngest generation
    collected every GC_THRESHOLD new objects, and what is left is frozen after it (the exit's
    passes skip it); this test process's collector is put back after."""
    import gc
    import runpy

    seen = []
    monkeypatch.setattr(cli, "main", lambda prog=None: seen.append((prog, gc.get_threshold()[0])))
    monkeypatch.setattr("sys.argv", ["python -m tinynet.xor"])
    threshold, frozen = gc.get_threshold(), gc.get_freeze_count()
    try:
        runpy.run_module("tinynet.xor", run_name="__main__")
        assert gc.get_freeze_count() > frozen
    finally:
        gc.unfreeze()
        gc.set_threshold(*threshold)
    assert seen == [("python -m tinynet.xor", cli.GC_THRESHOLD)]
