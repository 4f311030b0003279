"""Caches as code (tinynet.compiled.caches): numba's cache files are pickles, loaded as code,
so a kernel folder that another user can write is never loaded, only named in one line; a
damaged cache entry is named, removed and compiled again; a cache that cannot be written
leaves the run uncached. Each case in fresh Pythons on throw-away folders (the user's own
caches are not touched): the tiny job of ``tests/test_cache_faults.py``.

These tests run as root here, as the suite does: "another user" is uid :data:`STRANGER`,
given the folder with ``chown``."""

import errno
import os
import pickle
import subprocess
import sys
from pathlib import Path

import pytest

from helpers import checkout_environment, is_compile_notice
from test_cache_faults import TINY_FIT

from tinynet.compiled import caches, sources

STRANGER = 54321
"""The user id that plays the other user."""

pytestmark = pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0,
                                reason="giving a folder to another user needs root")


class Planted:
    """A pickle that, when loaded, creates the file ``marker``: what an attacker would plant
    in numba's cache (there, ``os.system`` of anything)."""

    def __init__(self, marker: Path):
        self.marker = str(marker)

    def __reduce__(self):
        return (open, (self.marker, "w"))


def tiny_fit(tmp_path: Path, **variables: str) -> subprocess.CompletedProcess:
    """The tiny job in a fresh Python, with tinynet's kernels (and numba's cache of them) in
    ``tmp_path / "kernels"`` unless ``variables`` say otherwise; returns the finished
    process."""
    env = {**checkout_environment(), "TINYNET_KERNEL_DIR": str(tmp_path / "kernels"),
           **variables}
    return subprocess.run([sys.executable, "-c", TINY_FIT], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=600)


def tinynet_lines(stderr: str) -> list[str]:
    """The lines tinynet printed on stderr, the compile notices aside."""
    return [line for line in stderr.splitlines()
            if line.startswith("tinynet: ") and not is_compile_notice(line)]


@pytest.fixture(scope="module")
def compiled_once(tmp_path_factory) -> tuple[Path, subprocess.CompletedProcess]:
    """A folder whose ``kernels`` holds the tiny job's generated kernel and numba's cache of
    it, and that first run."""
    folder = tmp_path_factory.mktemp("trust")
    first = tiny_fit(folder)
    assert first.returncode == 0, first.stderr
    return folder, first


def plant(kernels: Path, marker: Path) -> None:
    """Replace every numba index in ``kernels/__pycache__`` with the planted pickle (after the
    version line numba reads first, so that numba unpickles it)."""
    import numba

    indexes = list((kernels / "__pycache__").glob("*.nbi"))
    assert indexes, "no numba index to plant in"
    for index in indexes:
        index.write_bytes(pickle.dumps(numba.__version__) + pickle.dumps(Planted(marker)))


def copy_tree(source: Path, target: Path) -> None:
    subprocess.run(["cp", "-a", str(source), str(target)], check=True)


@pytest.mark.slow
def test_a_planted_cache_runs_when_trusted_so_the_attack_is_real(compiled_once, tmp_path):
    """The control: the same planted folder, but this user's and private, is loaded, and the
    pickle runs. (The guard then takes the entry for damage and compiles it again.)"""
    folder, _ = compiled_once
    copy_tree(folder / "kernels", tmp_path / "kernels")
    plant(tmp_path / "kernels", tmp_path / "ran")
    done = tiny_fit(tmp_path)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "ran").exists()


@pytest.mark.slow
@pytest.mark.parametrize("owner,group,mode", [(STRANGER, -1, 0o755), (0, -1, 0o777),
                                              (0, STRANGER, 0o775)])  # group STRANGER's
def test_a_kernel_folder_others_can_write_is_never_loaded(compiled_once, tmp_path, owner,
                                                          group, mode):
    folder, first = compiled_once
    planted = tmp_path / "shared"
    copy_tree(folder / "kernels", planted)
    plant(planted, tmp_path / "ran")
    os.chown(planted, owner, group)
    planted.chmod(mode)
    private = tmp_path / "tmp"
    private.mkdir(mode=0o700)
    done = tiny_fit(tmp_path, TINYNET_KERNEL_DIR=str(planted), TMPDIR=str(private))
    assert done.returncode == 0, done.stderr
    assert not (tmp_path / "ran").exists()
    assert done.stdout == first.stdout
    why = (f"{planted} belongs to user {STRANGER}" if owner else
           f"{planted} is writable by others (mode {mode:o})")
    assert tinynet_lines(done.stderr) == [
        f"tinynet: not using TINYNET_KERNEL_DIR={planted}: {why}; compiling into "
        f"{private}/tinynet-kernels-0 instead"]


def test_group_write_is_trusted_only_for_the_users_own_group(tmp_path):
    """Under umask 002 every file tinynet and Numba make is group-writable (664, 775): with a
    group of the user's own (here root's, which lists no members) that is no one else, and
    the folder stays trusted, so its kernels are loaded, not compiled again every run. The
    same modes with another group's id are refused."""
    folder = tmp_path / "kernels"
    (folder / "__pycache__").mkdir(parents=True)
    (folder / "__pycache__" / "x.nbi").write_bytes(b"")
    for path, mode in ((folder, 0o775), (folder / "__pycache__", 0o775),
                       (folder / "__pycache__" / "x.nbi", 0o664)):
        os.chown(path, 0, os.getegid())
        path.chmod(mode)
    assert caches.untrusted(folder) is None
    os.chown(folder / "__pycache__" / "x.nbi", 0, STRANGER)
    assert caches.untrusted(folder) == (f"{folder / '__pycache__' / 'x.nbi'} is writable by "
                                        "others (mode 664)")


def test_a_file_of_another_user_inside_the_folder_is_enough_to_refuse_it(tmp_path):
    folder = tmp_path / "kernels"
    (folder / "__pycache__").mkdir(parents=True, mode=0o700)
    folder.chmod(0o700)
    assert caches.untrusted(folder) is None
    planted = folder / "__pycache__" / "x.nbi"
    planted.write_bytes(b"")
    os.chown(planted, STRANGER, -1)
    assert caches.untrusted(folder) == f"{planted} belongs to user {STRANGER}"
    planted.unlink()
    (folder / "link").symlink_to(tmp_path)
    assert caches.untrusted(folder) == f"{folder / 'link'} is a symbolic link"


def test_an_untrusted_numba_cache_dir_is_replaced_by_a_private_one(tmp_path):
    shared = tmp_path / "numba"
    shared.mkdir()
    shared.chmod(0o777)
    private = tmp_path / "tmp"
    private.mkdir(mode=0o700)
    code = ("import tinynet.compiled as c; c.load(); from numba.core import config; "
            "print(config.CACHE_DIR)")
    env = {**checkout_environment(), "NUMBA_CACHE_DIR": str(shared), "TMPDIR": str(private)}
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                          text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == f"{private}/tinynet-numba-0"
    assert tinynet_lines(done.stderr) == [
        f"tinynet: not using NUMBA_CACHE_DIR={shared}: {shared} is writable by others (mode "
        f"777); compiling into {private}/tinynet-numba-0 instead"]


def test_environment_values_are_expanded_and_must_be_absolute(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("SOMEWHERE", "cache")
    monkeypatch.setenv("TINYNET_KERNEL_DIR", "~/$SOMEWHERE/kernels")
    assert sources.kernel_dir() == tmp_path / "cache" / "kernels"
    monkeypatch.setenv("TINYNET_KERNEL_DIR", "relative/kernels")
    with pytest.raises(OSError, match=r"^TINYNET_KERNEL_DIR must be an absolute path, got "
                                      r"'relative/kernels'$"):
        sources.kernel_dir()


def damage_and_run_twice(tmp_path: Path, caches_in: Path, damage: bytes, first: str,
                         **variables: str) -> None:
    """Write ``damage`` over every numba index under ``caches_in``; then the run names each,
    removes it and compiles it again, with the same result ``first``; and the next run
    loads the new entries, saying nothing."""
    indexes = sorted(caches_in.rglob("*.nbi"))
    assert indexes
    for index in indexes:
        index.write_bytes(damage)
    done = tiny_fit(tmp_path, **variables)
    assert done.returncode == 0, done.stderr
    assert done.stdout == first
    lines = tinynet_lines(done.stderr)
    assert all(line.startswith("tinynet: removed the damaged kernel cache entry ")
               and line.endswith("; compiling it again") for line in lines), lines
    assert {line.split()[7] for line in lines} <= {str(index) for index in indexes}
    assert len(lines) >= 1
    again = tiny_fit(tmp_path, **variables)
    assert again.returncode == 0 and tinynet_lines(again.stderr) == [], again.stderr
    assert "compiling" not in again.stderr and again.stdout == first


@pytest.mark.slow
@pytest.mark.parametrize("damage", [b"", b"garbage", b"\x80\x04\x95"])
def test_a_damaged_kernel_cache_entry_is_named_removed_and_compiled_again(compiled_once,
                                                                           tmp_path, damage):
    """The generated kernel's index damaged: empty, not a pickle, a truncated one."""
    folder, first = compiled_once
    copy_tree(folder / "kernels", tmp_path / "kernels")
    damage_and_run_twice(tmp_path, tmp_path / "kernels", damage, first.stdout)


@pytest.mark.slow
def test_damaged_entries_of_the_packages_own_kernels_too(compiled_once, tmp_path):
    """With NUMBA_CACHE_DIR, where numba caches the package's own kernels as well as the
    generated one: every index there damaged (the package's own ``__pycache__``, the
    default place, is the checkout's, which the other tests use)."""
    _, first = compiled_once
    variables = {"NUMBA_CACHE_DIR": str(tmp_path / "numba")}
    populate = tiny_fit(tmp_path, **variables)
    assert populate.returncode == 0 and populate.stdout == first.stdout, populate.stderr
    damage_and_run_twice(tmp_path, tmp_path / "numba", b"garbage", first.stdout, **variables)


def test_a_full_disk_runs_uncached_with_one_line(tmp_path, capsys):
    """A dispatcher's cache whose save fails with ENOSPC: the call that saves returns, and one
    line names the folder."""

    class Files:
        _cache_path = str(tmp_path)
        _index_path = str(tmp_path / "k.nbi")
        _index_name = "k.nbi"

    class Cache:
        _cache_file = Files()

        def load_overload(self, sig, target_context):
            return None

        def save_overload(self, sig, data):
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    class Dispatcher:
        _cache = Cache()

    dispatcher = Dispatcher()
    caches.guard([dispatcher])
    dispatcher._cache.save_overload("sig", "data")
    dispatcher._cache.save_overload("sig", "data")
    assert capsys.readouterr().err == (f"tinynet: cannot write the kernel cache in {tmp_path} "
                                       f"({os.strerror(errno.ENOSPC)}); running uncached\n")
