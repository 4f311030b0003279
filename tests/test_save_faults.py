"""Saving under faults (tinynet.files.write_whole): two processes saving one path at once,
symlinks planted beside it, a save killed with SIGKILL, destinations that are not regular
files, writers that fail."""

import multiprocessing
import os
import random
import re
import signal
import stat
import subprocess
import sys
import time

import numpy as np
import pytest

import tinynet
from tinynet import files
from tinynet.files import write_whole

from helpers import capabilities_dropped, checkout_environment

pytestmark = pytest.mark.skipif(os.name != "posix", reason="POSIX processes, signals, FIFOs")

SHAPE = [40, 200, 1]
"""8,401 parameters, a 70 KB file: a save takes long enough for two to overlap."""


def network(seed):
    return tinynet.mlp(SHAPE, seed=seed)


def same(a, b):
    return all(np.array_equal(p, q) for p, q in zip(a.parameters(), b.parameters()))


def partials(directory):
    return sorted(path.name for path in directory.iterdir() if ".partial" in path.name)


def _save_when_told(seed, path, start, answers, rounds):
    """A worker: save network ``seed`` to ``path`` each time ``start`` lets it go."""
    net = network(seed)
    for _ in range(rounds):
        start.wait(timeout=60)
        try:
            net.save(path)
            answers.send("saved")
        except Exception as error:
            answers.send(f"{type(error).__name__}: {error}")


def test_two_processes_saving_one_path_at_once_always_leave_one_whole_network(tmp_path):
    rounds = 50
    path = tmp_path / "net.npz"
    context = multiprocessing.get_context("spawn")
    start = context.Barrier(3)
    nets, workers, answers = [network(1), network(2)], [], []
    for seed in (1, 2):
        ours, theirs = context.Pipe()
        worker = context.Process(target=_save_when_told, args=(seed, path, start, theirs, rounds))
        worker.start()
        workers.append(worker)
        answers.append(ours)
    try:
        for round_ in range(rounds):
            start.wait(timeout=60)  # both workers save now
            for answer in answers:
                assert answer.poll(60), f"round {round_}: a worker did not answer"
                assert answer.recv() == "saved", round_
            loaded = tinynet.load(path)
            assert same(loaded, nets[0]) or same(loaded, nets[1]), round_
            assert partials(tmp_path) == [], round_
    finally:
        start.abort()  # a worker still waiting (after a failure) stops
        for worker in workers:
            worker.join(timeout=60)
    assert [worker.exitcode for worker in workers] == [0, 0]


def test_symlinks_at_the_old_predictable_names_are_never_written_through(tmp_path):
    victim = tmp_path / "victim"
    victim.write_bytes(b"precious")
    planted = [tmp_path / f".t.{os.getpid()}.partial.npz", tmp_path / "t.npz.partial"]
    for link in planted:
        link.symlink_to(victim)
    path = network(1).save(tmp_path / "t.npz")
    assert victim.read_bytes() == b"precious"
    assert same(tinynet.load(path), network(1))
    assert [os.readlink(link) for link in planted] == [str(victim)] * 2


def planted_name(token):
    return f".t.npz.{os.getpid()}.{token}.partial.npz"


def test_a_temporary_name_taken_by_a_symlink_is_passed_over(tmp_path, monkeypatch):
    """The random names made predictable: the first two are symlinks planted ahead (one to a
    file, one dangling), so the save takes the third."""
    victim = tmp_path / "victim"
    victim.write_bytes(b"precious")
    (tmp_path / planted_name("0" * 16)).symlink_to(victim)
    (tmp_path / planted_name("1" * 16)).symlink_to(tmp_path / "created_through_the_link")
    tokens = iter(["0" * 16, "1" * 16, "2" * 16])
    monkeypatch.setattr(files, "_random_token", lambda: next(tokens))
    path = network(1).save(tmp_path / "t.npz")
    assert next(tokens, "all three drawn") == "all three drawn"
    assert victim.read_bytes() == b"precious"
    assert not (tmp_path / "created_through_the_link").exists()
    assert same(tinynet.load(path), network(1))
    assert partials(tmp_path) == [planted_name("0" * 16), planted_name("1" * 16)]


def test_a_save_whose_every_name_is_taken_fails_cleanly(tmp_path, monkeypatch):
    victim = tmp_path / "victim"
    victim.write_bytes(b"precious")
    path = network(1).save(tmp_path / "t.npz")
    before = path.read_bytes()
    (tmp_path / planted_name("0" * 16)).symlink_to(victim)
    monkeypatch.setattr(files, "_random_token", lambda: "0" * 16)
    with pytest.raises(FileExistsError, match=r"beside .*t.npz: 100 random names were all taken"):
        network(2).save(path)
    assert path.read_bytes() == before and victim.read_bytes() == b"precious"
    assert partials(tmp_path) == [planted_name("0" * 16)]


def test_only_stale_temporaries_of_the_path_are_removed(tmp_path):
    """Removed: a regular file named as a temporary of this path whose process is gone. Kept:
    a live process's, another path's or suffix's, other shapes of name, symlinks, folders."""
    dead = int(subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                              capture_output=True, text=True, check=True).stdout)
    victim = tmp_path / "victim"
    victim.write_bytes(b"precious")
    token = "0123456789abcdef"
    stale = tmp_path / f".t.npz.{dead}.{token}.partial.npz"
    kept_files = [f".t.npz.{os.getpid()}.{token}.partial.npz", f".t.npz.1.{token}.partial.npz",
                  f".u.npz.{dead}.{token}.partial.npz", f".t.npz.{dead}.{token}.partial.png",
                  f".t.npz.{dead}.{token[:8]}.partial.npz", f".t.{dead}.partial.npz",
                  f"t.npz.{dead}.{token}.partial.npz", f".t.npz.{dead}.{token}.partial.npz.x"]
    for name in [stale.name, *kept_files]:
        (tmp_path / name).write_bytes(b"half")
    link = tmp_path / f".t.npz.{dead}.{'a' * 16}.partial.npz"
    link.symlink_to(victim)
    folder = tmp_path / f".t.npz.{dead}.{'b' * 16}.partial.npz"
    folder.mkdir()
    network(1).save(tmp_path / "t.npz")
    assert not stale.exists()
    assert all((tmp_path / name).read_bytes() == b"half" for name in kept_files)
    assert link.is_symlink() and folder.is_dir() and victim.read_bytes() == b"precious"


def _save_forever(path, told):
    nets = [network(1), network(2)]
    told.send("saving")
    while True:
        for net in nets:
            net.save(path)


def test_saves_killed_at_random_moments_leave_a_whole_file_and_the_next_save_cleans_up(
        tmp_path):
    path = tmp_path / "net.npz"
    old = network(0)
    old.save(path)
    candidates = [old, network(1), network(2)]
    context = multiprocessing.get_context("fork")  # the child starts at once, tinynet loaded
    moments = random.Random(0)
    for round_ in range(12):
        ours, theirs = context.Pipe()
        child = context.Process(target=_save_forever, args=(path, theirs))
        child.start()
        assert ours.poll(30) and ours.recv() == "saving", round_
        time.sleep(moments.uniform(0, 0.03))
        os.kill(child.pid, signal.SIGKILL)
        child.join()  # reaped: its pid no longer runs
        assert child.exitcode == -signal.SIGKILL
        loaded = tinynet.load(path)
        assert any(same(loaded, net) for net in candidates), round_
        assert all(f".{child.pid}." in name for name in partials(tmp_path)), round_
        old.save(path)
        assert partials(tmp_path) == [], round_
        assert same(tinynet.load(path), old)


def _write_half_then_hang(path, told):
    def writer(partial):
        with open(partial, "wb") as file:
            file.write(b"half a file")
        told.send(partial.name)
        time.sleep(60)

    write_whole(path, writer)


def test_a_save_killed_mid_write_leaves_the_old_file_and_the_next_save_removes_its_temporary(
        tmp_path):
    path = network(0).save(tmp_path / "net.npz")
    before = path.read_bytes()
    ours, theirs = multiprocessing.get_context("fork").Pipe()
    child = multiprocessing.get_context("fork").Process(target=_write_half_then_hang,
                                                        args=(path, theirs))
    child.start()
    assert ours.poll(30)
    left = ours.recv()
    os.kill(child.pid, signal.SIGKILL)
    child.join()
    assert re.fullmatch(rf"\.net\.npz\.{child.pid}\.[0-9a-f]{{16}}\.partial\.npz", left)
    assert partials(tmp_path) == [left] and path.read_bytes() == before
    network(1).save(path)
    assert partials(tmp_path) == []
    assert same(tinynet.load(path), network(1))


@pytest.mark.parametrize("kind", ["folder", "link to a folder", "FIFO", "link to /dev/null"])
def test_write_whole_refuses_a_destination_that_is_not_a_regular_file(tmp_path, kind):
    path = tmp_path / "out.json"
    if kind == "folder":
        path.mkdir()
    elif kind == "link to a folder":
        (tmp_path / "folder").mkdir()
        path.symlink_to(tmp_path / "folder")
    elif kind == "FIFO":
        os.mkfifo(path)
    else:  # through a link in tmp_path: were it replaced by mistake, /dev/null would not be
        path.symlink_to(os.devnull)
    error, message = {"folder": (IsADirectoryError, "is a directory, not a regular file"),
                      "link to a folder": (IsADirectoryError, "is a directory, not a regular file"),
                      "FIFO": (ValueError, r"is not a regular file \(it is a FIFO\)"),
                      "link to /dev/null": (ValueError, r"is not a regular file \(it is a "
                                                        r"character device\)")}[kind]
    before = os.lstat(path)
    calls = []
    with pytest.raises(error, match=re.escape(str(path)) + " " + message):
        write_whole(path, calls.append)
    assert calls == [] and partials(tmp_path) == []
    assert os.lstat(path).st_ino == before.st_ino


def test_saving_a_network_onto_a_folder_is_refused(tmp_path):
    (tmp_path / "net.npz").mkdir()
    with pytest.raises(IsADirectoryError, match="net.npz is a directory, not a regular file"):
        network(1).save(tmp_path / "net.npz")


@pytest.mark.parametrize("error", [OSError("disk full"), KeyboardInterrupt()])
def test_a_writer_that_raises_leaves_the_old_file_and_no_temporary(tmp_path, error):
    path = tmp_path / "out.csv"
    path.write_text("old\n")

    def failing(partial):
        partial.write_text("new, half")
        raise error

    with pytest.raises(type(error)):
        write_whole(path, failing)
    assert path.read_text() == "old\n" and partials(tmp_path) == []


def test_the_temporary_is_new_hidden_beside_the_destination_and_keeps_its_suffix(tmp_path):
    seen = []

    def writer(partial):
        seen.append((partial, partial.exists(), partial.stat().st_size))
        partial.write_bytes(b"png")

    path = write_whole(tmp_path / "plot.png", writer)
    [(partial, existed, size)] = seen
    assert partial.parent == tmp_path and partial.suffix == ".png" and existed and size == 0
    assert re.fullmatch(rf"\.plot\.png\.{os.getpid()}\.[0-9a-f]{{16}}\.partial\.png",
                        partial.name)
    assert path.read_bytes() == b"png" and partials(tmp_path) == []


def test_the_content_then_the_directory_are_fsynced_around_the_rename(tmp_path, monkeypatch):
    path = tmp_path / "out.txt"
    path.write_text("old")
    synced, fsync = [], os.fsync

    def recording(descriptor):
        status = os.fstat(descriptor)
        synced.append((stat.S_ISDIR(status.st_mode), status.st_ino, path.read_text()))
        fsync(descriptor)

    monkeypatch.setattr(os, "fsync", recording)
    write_whole(path, lambda partial: partial.write_text("new"))
    assert synced == [(False, path.stat().st_ino, "old"), (True, tmp_path.stat().st_ino, "new")]


def test_a_new_file_gets_the_mode_open_gives_and_a_replaced_file_keeps_its_own(tmp_path):
    umask = os.umask(0o027)
    try:
        new = write_whole(tmp_path / "new.json", lambda partial: partial.write_text("{}"))
        (tmp_path / "by_open.json").write_text("{}")
    finally:
        os.umask(umask)
    assert stat.S_IMODE(new.stat().st_mode) == 0o640
    assert stat.S_IMODE((tmp_path / "by_open.json").stat().st_mode) == 0o640
    kept = tmp_path / "kept.json"
    kept.write_text("{}")
    kept.chmod(0o600)
    write_whole(kept, lambda partial: partial.write_text("[]"))
    assert stat.S_IMODE(kept.stat().st_mode) == 0o600 and kept.read_text() == "[]"


def test_a_symlink_destination_is_replaced_by_the_file_and_its_target_untouched(tmp_path):
    target = tmp_path / "target.txt"
    target.write_text("target")
    link = tmp_path / "link.txt"
    link.symlink_to(target)
    write_whole(link, lambda partial: partial.write_text("new"))
    assert not link.is_symlink() and link.read_text() == "new"
    assert target.read_text() == "target"


def test_a_folder_that_cannot_be_listed_still_takes_a_write(tmp_path, monkeypatch):
    """Cleaning stale temporaries is as far as the folder allows (a write-only drop folder
    cannot be listed): it never stops the write."""
    def unlistable(path):
        raise PermissionError(13, "Permission denied", str(path))

    monkeypatch.setattr(os, "scandir", unlistable)
    path = write_whole(tmp_path / "out.txt", lambda partial: partial.write_text("new"))
    monkeypatch.undo()
    assert path.read_text() == "new" and partials(tmp_path) == []


def test_saving_over_a_read_only_file_as_its_owner_works_and_keeps_its_mode(tmp_path):
    """The writer reopens the temporary by name, so its mode is set only after writing. As
    root a file's mode stops no one: the save runs with root's override capabilities dropped
    (tests/helpers.py), as an ordinary owner would."""
    target = tmp_path / "frozen.txt"
    target.write_text("old")
    target.chmod(0o444)
    script = ("import sys; from pathlib import Path; from tinynet.files import write_whole; "
              "write_whole(Path(sys.argv[1]), lambda p: p.write_text('new'))")
    done = subprocess.run([sys.executable, "-c", script, str(target)], capture_output=True,
                          text=True, env=checkout_environment(),
                          preexec_fn=capabilities_dropped() if os.geteuid() == 0 else None)
    assert done.returncode == 0, done.stderr
    assert target.read_text() == "new" and stat.S_IMODE(target.stat().st_mode) == 0o444
    assert [p.name for p in tmp_path.iterdir()] == ["frozen.txt"]


def test_a_batch_lists_each_folder_once_and_syncs_once_at_the_end(tmp_path, monkeypatch):
    """Many files into one folder (--save-failed writes three per failed seed): one listing
    of the folder for stale temporaries, however many files; no fsync per file; one sync and
    one fsync of the folder at the end. Outside a batch, a listing per file."""
    dead = int(subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                              capture_output=True, text=True, check=True).stdout)
    stale = tmp_path / f".other.json.{dead}.0123456789abcdef.partial.json"
    stale.write_text("half")
    listings, fsyncs, syncs = [], [], []
    scandir, fsync = os.scandir, os.fsync
    monkeypatch.setattr(os, "scandir", lambda path: listings.append(path) or scandir(path))
    monkeypatch.setattr(os, "fsync", lambda fd: fsyncs.append(fd) or fsync(fd))
    monkeypatch.setattr(os, "sync", lambda: syncs.append(1))
    with files.batch():
        for index in range(200):
            write_whole(tmp_path / f"f{index}.txt", lambda p, i=index: p.write_text(str(i)))
        assert fsyncs == [] and syncs == []
    assert len(listings) == 1 and not stale.exists()  # any destination's stale temporary
    assert len(syncs) == 1 and len(fsyncs) == 1  # the folder's
    assert sorted(path.name for path in tmp_path.iterdir()) == sorted(
        f"f{index}.txt" for index in range(200))
    assert all((tmp_path / f"f{index}.txt").read_text() == str(index) for index in range(200))
    listings.clear()
    for index in range(3):
        write_whole(tmp_path / f"g{index}.txt", lambda p: p.write_text("g"))
    assert len(listings) == 3


def test_a_batch_interrupted_leaves_whole_files_and_no_temporary(tmp_path):
    def fails(partial):
        partial.write_text("half")
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt), files.batch():
        write_whole(tmp_path / "a.txt", lambda p: p.write_text("a"))
        write_whole(tmp_path / "b.txt", fails)
    assert [path.name for path in tmp_path.iterdir()] == ["a.txt"]
    assert (tmp_path / "a.txt").read_text() == "a"
