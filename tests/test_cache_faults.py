"""Caches that cannot be written, and two cold compiles at once (tinynet.compiled.load,
sources.kernel_dir).

Numba caches the compiled backend in the package's ``__pycache__``, else in its user cache
(``$XDG_CACHE_HOME/numba``), or in ``$NUMBA_CACHE_DIR`` first; tinynet writes its generated
kernels to ``kernel_dir()``. Here, in fresh Pythons on a copy of the package made read-only:
with a writable home, everything goes to the user cache and the run succeeds; with nothing
writable, the CLI says so in one line naming NUMBA_CACHE_DIR (an OSError,
``CacheUnwritableError``) where numba used to print a 48-line traceback; a kernel folder
prepared ahead and then made read-only is loaded from, not refused. And two processes
compiling the same generated kernel into the same empty kernel directory at the same moment
both succeed, with the same result, leaving a cache a third process loads without compiling.

As root, a directory's mode stops no one: root holds CAP_DAC_OVERRIDE. So the Pythons started
here by root run without it (dropped from the capability bounding set before exec, which
leaves an exec'd root process no way to get it back): root is then held to the owner's bits
of a mode, like any user. :func:`unwritable` checks that this worked before a test relies on
it. Cold compiles cost: about 10 s of CPU for a 2-2-1 ensemble (the generated kernel and the
lanes functions it calls), of which the generated kernel alone is about 3 s; so the tests on
the copy share one numba user cache, and the modules are compiled once.
"""

import ast
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import numba.core.config
import numpy as np
import pytest

from helpers import ROOT, capabilities_dropped, is_compile_notice

import tinynet
from tinynet import compiled
from tinynet.compiled import CacheUnwritableError, sources

PACKAGE = Path(tinynet.__file__).resolve().parent

TINY_FIT = textwrap.dedent("""
    import sys
    import tinynet
    from tinynet import compiled
    compiled.load()
    if len(sys.argv) > 1:                           # wait for the word to start (a barrier)
        print("ready", flush=True)
        sys.stdin.readline()
    X, y = tinynet.data.xor()
    nets = [tinynet.mlp([2, 2, 1], seed=seed) for seed in range(2)]
    tinynet.fit_ensemble(nets, X, y, epochs=1, lr=0.1)
    print([float(p) for net in nets for array in net.parameters() for p in array.ravel()])
""")
"""A cold compile as small as they come: an ensemble of 2-2-1 networks for one epoch, on the
kernel generated for that layout. Prints the trained parameters."""


def run(arguments: list[str], env: dict, folder: Path, **options) -> subprocess.Popen:
    """Start ``python *arguments`` in ``folder``, held to file modes even as root."""
    return subprocess.Popen([sys.executable, *arguments], cwd=folder, env=env, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            preexec_fn=capabilities_dropped() if os.geteuid() == 0 else None,
                            **options)


def finish(process: subprocess.Popen) -> subprocess.CompletedProcess:
    """Wait for ``process`` and return what it did, as subprocess.run would."""
    out, err = process.communicate(timeout=600)
    return subprocess.CompletedProcess(process.args, process.returncode, out, err)


def copy_environment(site: Path, **variables: str) -> dict:
    """The environment of a Python importing tinynet from ``site`` (a copy of the package),
    with none of the cache variables of this one, then ``variables``."""
    inherited = {name: value for name, value in os.environ.items()
                 if name not in ("NUMBA_CACHE_DIR", "TINYNET_KERNEL_DIR", "XDG_CACHE_HOME",
                                 "PYTHONPATH")}
    return {**inherited, "MPLBACKEND": "Agg", "PYTHONPATH": str(site), **variables}


def read_only(*folders: Path) -> None:
    """Make ``folders`` and everything in them read-only (directories 0o555, files 0o444)."""
    for folder in folders:
        for path in [folder, *folder.rglob("*")]:
            path.chmod(0o555 if path.is_dir() else 0o444)


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    """A folder holding a read-only copy of the tinynet package (no ``__pycache__``) and a
    read-only home, ``site / "home"``; made writable again afterwards, to be removed."""
    site = tmp_path_factory.mktemp("site")
    shutil.copytree(PACKAGE, site / "tinynet", ignore=shutil.ignore_patterns("__pycache__"))
    (site / "home").mkdir()
    read_only(site / "tinynet", site / "home")
    yield site
    for path in [site, *site.rglob("*")]:
        path.chmod(0o755 if path.is_dir() else 0o644)


@pytest.fixture(scope="module")
def unwritable(site):
    """Check that a Python started by :func:`run` cannot write into the read-only copy (as
    root, that it really runs without CAP_DAC_OVERRIDE); skip, saying why, where it can."""
    probe = f"open({str(site / 'tinynet' / 'probe')!r}, 'w')"
    done = finish(run(["-c", probe], copy_environment(site), site))
    if done.returncode == 0:
        pytest.skip("cannot make a directory unwritable for this user here (root, without "
                    "CAP_SETPCAP to drop CAP_DAC_OVERRIDE?)")
    assert "PermissionError" in done.stderr, done.stderr


@pytest.fixture(scope="module")
def home(tmp_path_factory):
    """A writable home, its numba user cache shared by the tests that run the read-only copy:
    the copy's modules are compiled into it once (about 10 s of CPU), and the race of
    :func:`test_two_cold_compiles_at_once_agree` is then on the generated kernel alone."""
    return tmp_path_factory.mktemp("home")


def files_in(folder: Path) -> set[Path]:
    return {path.relative_to(folder) for path in folder.rglob("*")}


@pytest.mark.slow
def test_a_read_only_package_caches_in_the_user_cache(site, unwritable, home, tmp_path):
    before = files_in(site / "tinynet")
    done = finish(run(["-c", TINY_FIT], copy_environment(site, HOME=str(home)), tmp_path))
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    assert files_in(site / "tinynet") == before  # nothing written into the package
    numba_cache = home / ".cache" / "numba"  # numba's user cache, for the package's modules
    cached = {path.name.split("-")[0] for path in numba_cache.rglob("*.nbi")}
    assert {"lanes.lane_orders", "scalars.vector_exp", "shuffle.splitmix64"} <= cached, cached
    kernels = home / ".cache" / "tinynet" / "kernels"  # the generated kernel, compiled beside
    assert len(list(kernels.glob("tinynet_kernel_*.py"))) == 1
    assert list(kernels.glob("__pycache__/tinynet_kernel_*.nbi"))
    assert f"cached in {kernels / '__pycache__'}" in done.stderr


def test_nothing_writable_is_one_line_naming_numba_cache_dir(site, unwritable):
    home = site / "home"  # read-only, and so is everything under it that does not exist yet
    env = copy_environment(site, HOME=str(home), XDG_CACHE_HOME=str(home / ".cache"),
                           TINYNET_KERNEL_DIR=str(home / "kernels"))
    done = finish(run([str(ROOT / "examples" / "xor.py"), "--seeds", "2", "--epochs", "2"],
                      env, site))
    assert done.returncode == 2, done.stderr
    assert done.stdout == ""
    (line,) = done.stderr.splitlines()
    assert line.startswith("xor.py: error: CacheUnwritableError: numba cannot cache"), line
    assert f"{site / 'tinynet' / '__pycache__'} nor {home / '.cache' / 'numba'}" in line
    assert "set NUMBA_CACHE_DIR and TINYNET_KERNEL_DIR to writable directories" in line


def test_numba_refusing_at_import_is_the_same_error(site, unwritable, tmp_path):
    """When numba itself finds no cache directory at import (here: told to try only the
    package's __pycache__, a choice load() leaves numba to check), its RuntimeError becomes
    the same OSError."""
    env = copy_environment(site, HOME=str(site / "home"), TINYNET_KERNEL_DIR=str(tmp_path),
                           NUMBA_CACHE_LOCATOR_CLASSES="InTreeCacheLocator")
    program = ("from tinynet import compiled\n"
               "try:\n    compiled.load()\n"
               "except compiled.CacheUnwritableError as error:\n    print(error)")
    done = finish(run(["-c", program], env, site))
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    assert "numba cannot cache the compiled kernels" in done.stdout
    assert "set NUMBA_CACHE_DIR to a writable directory" in done.stdout  # kernels: fine
    if hasattr(numba.core.config, "CACHE_LOCATOR_CLASSES"):  # else load() found it first
        assert "cannot cache function 'splitmix64': no locator available" in done.stdout


def test_an_unwritable_kernel_dir_names_tinynet_kernel_dir(site, unwritable, tmp_path):
    """A TINYNET_KERNEL_DIR that is not there and cannot be made (in a read-only folder)."""
    kernels = site / "home" / "kernels"
    env = copy_environment(site, HOME=str(tmp_path), TINYNET_KERNEL_DIR=str(kernels))
    done = finish(run(["-c", TINY_FIT], env, tmp_path))
    assert done.returncode == 1
    last = done.stderr.splitlines()[-1]
    assert last == (f"tinynet.compiled.caches.CacheUnwritableError: cannot write generated kernels: "
                    f"TINYNET_KERNEL_DIR={kernels} is not a writable directory; set "
                    "TINYNET_KERNEL_DIR to one"), last
    assert "compiling" not in done.stderr  # found out before compiling anything


def test_a_trusted_kernel_folder_that_cannot_be_written_is_read_from(tmp_path, monkeypatch):
    """In this process, root or not: a folder that cannot be written is simulated by
    ``caches.writable`` answering False (as root, a mode stops no one; the runs below drop
    root's override instead). TINYNET_KERNEL_DIR is then used as it is, not refused, and
    numba is pointed at its ``__pycache__`` for its modules, and for no other module; a
    folder others can write is not read from."""
    from numba.core import caching

    from tinynet.compiled import caches

    monkeypatch.setattr(caches, "_READ_ONLY", set())
    kernels = tmp_path / "kernels"
    (kernels / "__pycache__").mkdir(parents=True, mode=0o700)
    kernels.chmod(0o700)
    module = kernels / "tinynet_kernel_x.py"
    module.write_text("def f():\n    return 1\n")
    monkeypatch.setattr(caches, "writable", lambda directory: False)
    monkeypatch.setenv("TINYNET_KERNEL_DIR", str(kernels))
    assert sources.kernel_dir() == kernels and caches.read_only(kernels)
    space: dict = {}
    exec(compile(module.read_text(), str(module), "exec"), space)
    locator = next(found for cls in caching.CacheImpl._locator_classes
                   if (found := cls.from_function(space["f"], str(module))) is not None)
    assert locator.get_cache_path() == str(kernels / "__pycache__")
    assert caches._read_only_locator().from_function(space["f"], __file__) is None
    kernels.chmod(0o777)
    assert not caches.use_read_only(kernels)


@pytest.fixture(scope="module")
def warmed(site, unwritable, home, tmp_path_factory):
    """A kernel folder holding the tiny job's generated kernel and numba's cache of it (run
    on the read-only copy), and what that run printed."""
    folder = tmp_path_factory.mktemp("warmed")
    env = copy_environment(site, HOME=str(home), TINYNET_KERNEL_DIR=str(folder / "kernels"))
    done = finish(run(["-c", TINY_FIT], env, folder))
    assert done.returncode == 0, done.stderr
    return folder / "kernels", done.stdout


def contents(folder: Path) -> dict[Path, bytes | None]:
    return {path.relative_to(folder): None if path.is_dir() else path.read_bytes()
            for path in folder.rglob("*")}


@pytest.mark.slow
@pytest.mark.parametrize("prepared", ["whole", "no numba index", "empty"])
def test_a_read_only_kernel_folder_prepared_ahead_is_used(site, warmed, home, tmp_path,
                                                          prepared):
    """A kernel folder made ahead (by a teacher, in an image) and then read-only: 0555 folders,
    0444 files, this user's (root's, run without its override). Whole, its kernel is loaded,
    not compiled, and nothing is said; without numba's index, the kernel is compiled and run
    uncached, with one line; without the kernel, it is compiled into the private folder,
    with one line. Never refused, never written into, the same result."""
    kernels, first = warmed
    prepared_dir = tmp_path / "kernels"
    if prepared == "empty":
        prepared_dir.mkdir()
    else:
        subprocess.run(["cp", "-a", str(kernels), str(prepared_dir)], check=True)
    if prepared == "no numba index":
        for cached in [*prepared_dir.glob("__pycache__/*.nbi"),
                       *prepared_dir.glob("__pycache__/*.nbc")]:
            cached.unlink()
    read_only(prepared_dir)
    before = contents(prepared_dir)
    private = tmp_path / "tmp"
    private.mkdir(mode=0o700)
    env = copy_environment(site, HOME=str(home), TINYNET_KERNEL_DIR=str(prepared_dir),
                           TMPDIR=str(private))
    done = finish(run(["-c", TINY_FIT], env, tmp_path))
    assert done.returncode == 0, done.stderr
    assert done.stdout == first
    assert contents(prepared_dir) == before
    lines = [line for line in done.stderr.splitlines() if not is_compile_notice(line)]
    (source,) = kernels.glob("tinynet_kernel_*.py")
    expected = {"whole": [], "no numba index": [
        f"tinynet: cannot write the kernel cache in {prepared_dir / '__pycache__'} (Permission "
        "denied); running uncached"], "empty": [
        f"tinynet: {prepared_dir} is read-only and has no kernel {source.name}; compiling it "
        f"into {private / f'tinynet-kernels-{os.getuid()}'}"]}[prepared]
    assert lines == expected, done.stderr
    assert ("tinynet: compiling the " in done.stderr) == (prepared != "whole")


def test_kernel_dir_refuses_what_it_cannot_write(tmp_path, monkeypatch, capsys):
    """In this process, root or not: a kernel dir that is a file is refused with the error; a
    last-resort one in the temporary directory that others can write (whoever made it could
    plant the pickles numba loads) is passed over for a new private folder, with one line."""
    (tmp_path / "file").write_text("")
    monkeypatch.setenv("TINYNET_KERNEL_DIR", str(tmp_path / "file"))
    with pytest.raises(CacheUnwritableError, match="TINYNET_KERNEL_DIR=.*file"):
        sources.kernel_dir()
    monkeypatch.delenv("TINYNET_KERNEL_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "file"))  # no cache under a file
    monkeypatch.setattr("tempfile.tempdir", str(tmp_path))
    shared = tmp_path / f"tinynet-kernels-{os.getuid()}"
    shared.mkdir(mode=0o777)
    shared.chmod(0o777)
    fresh = sources.kernel_dir()
    assert fresh != shared and fresh.parent == tmp_path and fresh.name.startswith("tinynet-")
    assert fresh.stat().st_mode & 0o077 == 0
    line = capsys.readouterr().err
    assert line == (f"tinynet: {shared} cannot be used ({shared} is writable by others "
                    f"(mode 777)); using {fresh}, which lasts this run only\n")
    shared.chmod(0o700)
    assert sources._kernel_dir(None, str(tmp_path / "file"), "again") == shared
    assert isinstance(CacheUnwritableError("x"), OSError)
    assert "CacheUnwritableError" in compiled.__all__


@pytest.mark.slow
def test_two_cold_compiles_at_once_agree(site, home, tmp_path):
    """Two Pythons, given the same empty TINYNET_KERNEL_DIR, start training at the same moment
    (each waits for the word after importing numba): both write the kernel's source, compile
    it and save it to the same cache files. Both succeed with the same parameters, one source
    is left and nothing half-written, and a third Python loads the kernel from that cache
    without compiling. On the read-only copy, with the numba user cache of :func:`home`: the
    modules the kernel calls are compiled there once, by the first test to need them (a race
    on them too when this test runs first), and numba caches the kernel beside its source."""
    env = copy_environment(site, HOME=str(home), TINYNET_KERNEL_DIR=str(tmp_path / "kernels"))
    racers = [run(["-c", TINY_FIT, "wait"], env, tmp_path, stdin=subprocess.PIPE)
              for _ in range(2)]
    for racer in racers:
        assert racer.stdout.readline() == "ready\n", finish(racer).stderr
    for racer in racers:
        racer.stdin.write("go\n")
        racer.stdin.flush()
    first, second = map(finish, racers)
    assert first.returncode == 0, first.stderr
    assert second.returncode == 0, second.stderr
    assert first.stdout == second.stdout
    assert "tinynet: compiling the " in first.stderr and "tinynet: compiling the " in second.stderr
    assert [path.name for path in (tmp_path / "kernels").iterdir()
            if path.name.startswith(".") or "partial" in path.name] == []
    (source,) = (tmp_path / "kernels").glob("tinynet_kernel_*.py")
    compile(source.read_text(), str(source), "exec")  # whole
    third = finish(run(["-c", TINY_FIT], env, tmp_path))
    assert third.returncode == 0 and "compiling" not in third.stderr, third.stderr
    assert third.stdout == first.stdout
    X, y = tinynet.data.xor()  # and they trained as the NumPy backend does, to rounding
    nets = [tinynet.mlp([2, 2, 1], seed=seed) for seed in range(2)]
    tinynet.fit_ensemble(nets, X, y, epochs=1, lr=0.1, backend="numpy")
    expected = [p for net in nets for array in net.parameters() for p in array.ravel()]
    np.testing.assert_allclose(ast.literal_eval(first.stdout), expected, rtol=0, atol=1e-12)
