"""Files written whole: how tinynet writes every file (saved networks, the CLI's PNG, JSON and
CSV outputs, generated kernels, the documentation's generated sections).

:func:`write_whole` guarantees:

* **Whole or nothing.** The content goes to a temporary file in the destination's directory,
  is flushed to the disk (``fsync``), and is then renamed over the destination with
  ``os.replace``, which is atomic: a reader, a crash or a Ctrl-C finds the old file or the
  new one, never a part of one. The directory is then fsync'ed too (where the system allows
  it), so that the rename itself survives a power cut.
* **An exclusive, unguessable temporary.** The temporary is named
  ``.{name}.{pid}.{16 random hex digits}.partial{suffix}`` (it keeps the destination's
  suffix, from which a writer such as matplotlib picks the format; a long name is cut short
  in it, so that the temporary's name fits where the destination's does) and is created with
  ``O_CREAT | O_EXCL``, which fails if anything, a symlink included, already has that name
  (another name is then drawn). So a write never goes through a symlink planted beside the
  destination, at a predictable name or any other.
* **Concurrent writers.** Every write has its own temporary: processes writing one path at
  once never touch each other's temporaries, the last rename wins, and the path always
  holds one complete file.
* **Cleanup.** A writer that raises (KeyboardInterrupt included) leaves no temporary behind.
  A process killed outright (``kill -9``, a crash) can leave its temporary; the next write
  to the same path removes such stale temporaries: regular files (never symlinks) named
  exactly as above whose process no longer runs on this machine.
* **Permissions.** A new file gets the mode a plain ``open()`` gives it (``0o666`` less the
  umask); a file replaced keeps its permission bits. The new file belongs to the writer.
* **Regular files only.** A destination that exists as a directory raises
  IsADirectoryError, one that is a device (such as ``/dev/null``), a FIFO or a socket raises
  ValueError, rather than being replaced. A destination that is a symlink (to a regular
  file, or dangling) is itself replaced by the new file, as ``mv`` and most editors do: the
  link is gone, its target untouched (a link that points to itself, in a loop, too).
* **Errors name the file.** Every OSError of a write (a name too long, a symlink loop on the
  way, a full disk, no permission) is raised as one line naming the destination and the
  reason, as ``[Errno 28] No space left on device: 'out.json'``. For a program that checks
  its outputs before working for hours, :func:`check_destination` raises before anything is
  written what the write would for what stands at the path, :func:`check_reachable` the
  OSError of a path that cannot be looked up, and :func:`writable_folder` says whether a
  folder can take a new file.

**Batches.** Writing many files, as ``--save-failed`` does (three per failed seed), each
write would list its folder for stale temporaries and fsync the folder: quadratic in the
files of a folder. Within :func:`batch`, a folder is listed once (every stale temporary in it
removed, whatever its destination), files are renamed into place unsynced, and at the end of
the batch the data are synced once (``os.sync``) and each folder fsync'ed once. A crash or a
Ctrl-C still finds each file whole or absent; a power cut is covered once the batch has ended.

A process is judged gone by its pid on this machine: a temporary left in a directory shared
with another machine or container (another pid namespace) by a writer still running there
could be taken for stale, and that writer's save then fails (its rename finds no file); the
destination is never left partial.
"""

from __future__ import annotations

import contextlib
import contextvars
import errno
import os
import re
import secrets
import stat
from collections.abc import Callable, Iterator
from pathlib import Path

__all__ = ["write_whole", "put_between", "batch", "check_reachable", "check_destination",
           "writable_folder"]

_ATTEMPTS = 100
"""Names drawn for a temporary before giving up (a name is taken only if planted)."""

NAME_MAX = 255
"""The longest file name, in bytes, on the usual file systems (ext4, XFS, Btrfs, tmpfs)."""

_NOT_REGULAR = {stat.S_IFCHR: "a character device", stat.S_IFBLK: "a block device",
                stat.S_IFIFO: "a FIFO", stat.S_IFSOCK: "a socket"}


def write_whole(path: Path, write: Callable[[Path], object]) -> Path:
    """Call ``write(partial)`` to write the file named ``partial``, then move it to ``path``
    atomically (see the module's docstring for the guarantees). ``partial`` is a new empty
    file beside ``path``, with the same suffix, that only this call uses. Returns ``path``."""
    path = Path(path)
    with _naming(path):
        mode = _kept_mode(path)
        folders = _BATCH.get()
        if folders is None:
            _remove_stale_partials(path)
        elif path.parent not in folders:
            _remove_stale_partials(path, any_destination=True)
            folders.add(path.parent)
        partial, descriptor = _create_partial(path)
        try:
            with os.fdopen(descriptor, "wb", buffering=0) as file:
                write(partial)
                if mode is not None:  # after writing: a read-only mode would stop the writer
                    os.fchmod(file.fileno(), mode)
                if folders is None:
                    os.fsync(file.fileno())  # the writer's file is this one, opened again by name
            os.replace(partial, path)
        except BaseException:
            partial.unlink(missing_ok=True)
            raise
    if folders is None:
        _sync_directory(path.parent)
    return path


def check_reachable(path: Path) -> None:
    """Raise, as :func:`write_whole` would, the OSError that stops any file being written at
    ``path`` whatever is there: a name too long, a symlink loop or a file on the way, a
    folder that cannot be searched. Nothing is written, and nothing raised for a ``path``
    that is missing, or is a dangling link. (What stands at ``path``, and whether its folder
    can be written, are for the caller.)"""
    _status(Path(path))  # os.stat's errors name the path already


def check_destination(path: Path) -> None:
    """Raise, before anything is written, what :func:`write_whole` would raise for what
    stands at ``path`` (links followed): the OSError of a path the system cannot look up (a
    name too long, a symlink loop or a file on the way), IsADirectoryError for a folder,
    ValueError for a device, a FIFO or a socket. Nothing for a missing path, a regular file,
    or a link to one or to nothing (replaced by the write)."""
    _kept_mode(Path(path))


def writable_folder(folder: Path) -> bool:
    """Whether ``folder`` (links followed) is a folder this process may create files in: one
    it can write and search, as a write's temporary beside the destination needs."""
    return os.path.isdir(folder) and os.access(folder, os.W_OK | os.X_OK)


@contextlib.contextmanager
def _naming(path: Path) -> Iterator[None]:
    """Within the block, an OSError about one of ``path``'s temporaries (a rename from it
    too, whatever its second file) or about no file (a full disk) is raised again as one
    naming ``path``, with the same errno (and so of the same class: PermissionError, ...).
    One that names ``path`` already, or another file (a writer reading a font, say), or has
    no errno (tinynet's own, which name ``path``) goes on as it is."""
    try:
        yield
    except OSError as error:
        about_no_file = error.filename is None and error.filename2 is None
        if error.errno is None or not (about_no_file or _is_partial(path, error.filename)):
            raise
        reason = error.strerror or os.strerror(error.errno)
        raise OSError(error.errno, reason, str(path)) from error


def _is_partial(path: Path, name: object) -> bool:
    """Whether the file ``name`` is one of ``path``'s temporaries."""
    if not isinstance(name, str | bytes | os.PathLike):
        return False
    name = Path(os.fsdecode(name))
    return name.parent == path.parent and _partial_pattern(path).fullmatch(name.name) is not None


_BATCH: contextvars.ContextVar[set[Path] | None] = contextvars.ContextVar("batch",
                                                                          default=None)
"""The folders written into by the :func:`batch` this context is in, or None outside one."""


@contextlib.contextmanager
def batch() -> Iterator[None]:
    """Within the block, :func:`write_whole` lists each folder for stale temporaries once and
    syncs nothing; at the end (normal or not) the data are synced once and each folder
    written into is fsync'ed once (see the module's docstring)."""
    folders: set[Path] = set()
    token = _BATCH.set(folders)
    try:
        yield
    finally:
        _BATCH.reset(token)
        if folders and hasattr(os, "sync"):
            os.sync()
        for folder in folders:
            _sync_directory(folder)


def _kept_mode(path: Path) -> int | None:
    """The permission bits of the regular file at ``path`` (followed if a symlink), or None
    if nothing is there; raise if something other than a regular file is."""
    status = _status(path)
    if status is None:
        return None
    if stat.S_ISDIR(status.st_mode):
        raise IsADirectoryError(f"{path} is a directory, not a regular file; tinynet writes "
                                "only regular files")
    if not stat.S_ISREG(status.st_mode):
        kind = _NOT_REGULAR.get(stat.S_IFMT(status.st_mode), "of an unknown kind")
        raise ValueError(f"{path} is not a regular file (it is {kind}); tinynet writes only "
                         "regular files and will not replace it")
    return stat.S_IMODE(status.st_mode)


def _status(path: Path) -> os.stat_result | None:
    """What is at ``path``, links followed; None if nothing is: a missing file, a dangling
    link, or a link in a loop (all three replaced by a write, not written through)."""
    try:
        return os.stat(path)
    except FileNotFoundError:
        return None
    except OSError as error:
        if error.errno == errno.ELOOP and os.path.islink(path):  # the loop is at path itself
            return None
        raise


def _random_token() -> str:
    """16 random hex digits, so that no one can plant a file at a temporary's name ahead."""
    return secrets.token_hex(8)


def _partial_name(path: Path, pid: int, token: str) -> str:
    """The name of a temporary of ``path``: hidden, with the writing process's id, a random
    token and ``path``'s suffix."""
    return f".{_partial_stem(path)}.{pid}.{token}.partial{path.suffix}"


def _partial_stem(path: Path) -> str:
    """``path``'s name as its temporaries carry it: cut short, if need be, so that their
    names, with a pid of up to 10 digits, fit in :data:`NAME_MAX` bytes. The same for every
    temporary of ``path``, which is how stale ones are found."""
    room = NAME_MAX - len(os.fsencode(f"..{0:010}.{0:016}.partial{path.suffix}"))
    stem = path.name
    while len(os.fsencode(stem)) > room and stem:
        stem = stem[:-1]
    return stem


def _partial_pattern(path: Path) -> re.Pattern[str]:
    """Every name :func:`_partial_name` gives a temporary of ``path``, and no other."""
    return re.compile(re.escape(f".{_partial_stem(path)}.") + r"(?P<pid>[0-9]+)\.[0-9a-f]{16}" +
                      re.escape(f".partial{path.suffix}"))


_ANY_PARTIAL = re.compile(r"\..+\.(?P<pid>[0-9]+)\.[0-9a-f]{16}\.partial(\.[^.]*)?")
"""Every name :func:`_partial_name` gives a temporary of any file (names of other files that
happen to match are still only removed if regular, and their pid's process is gone)."""


def _create_partial(path: Path) -> tuple[Path, int]:
    """A new empty temporary beside ``path``, created exclusively, and its open descriptor.
    As ``tempfile.mkstemp`` does, but with mode 0o666, which the umask then trims as for any
    ``open()``: mkstemp's 0o600 could only be widened by reading the umask, which can only be
    done by setting it, for every thread of the process."""
    for _ in range(_ATTEMPTS):
        partial = path.with_name(_partial_name(path, os.getpid(), _random_token()))
        try:  # O_EXCL: fail if anything, even a dangling symlink, has the name
            return partial, os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
        except FileExistsError:
            continue
    raise FileExistsError(f"could not create a temporary file beside {path}: {_ATTEMPTS} "
                          "random names were all taken")


def _remove_stale_partials(path: Path, any_destination: bool = False) -> None:
    """Remove the temporaries of ``path`` (with ``any_destination``, of any file in its
    folder) left by processes that no longer run (killed while writing), as far as the folder
    lets us: cleaning never stops a write."""
    try:
        stale = _stale_partials(path, any_destination)
    except OSError:  # a folder that cannot be listed; the write says if it cannot write there
        return
    for name in stale:
        with contextlib.suppress(OSError):  # gone already, or not ours to remove
            os.unlink(name)


def _stale_partials(path: Path, any_destination: bool = False) -> list[str]:
    """The regular files (never symlinks) beside ``path`` named exactly as
    :func:`_partial_name` names its temporaries (of ``path``, or with ``any_destination`` of
    any file), by a process that no longer runs."""
    pattern = _ANY_PARTIAL if any_destination else _partial_pattern(path)
    with os.scandir(path.parent) as entries:  # is_file(follow_symlinks=False): as lstat
        return [entry.path for entry in entries
                if (match := pattern.fullmatch(entry.name)) and
                entry.is_file(follow_symlinks=False) and not _running(int(match["pid"]))]


def _running(pid: int) -> bool:
    """Whether process ``pid`` may be running on this machine (True when unsure)."""
    if os.name != "posix":
        return True  # no safe check: os.kill would end the process on Windows
    try:
        os.kill(pid, 0)  # signal 0: only asks whether the process exists
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError):  # someone else's process; no such pid possible
        pass
    return True


def _sync_directory(directory: Path) -> None:
    """fsync ``directory`` so that a rename in it survives a crash, where the system can."""
    with contextlib.suppress(OSError):  # not on Windows, nor on every file system
        descriptor = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(descriptor)
        finally:
            os.close(descriptor)


def put_between(path: Path, start: str, end: str, text: str) -> None:
    """Replace what stands between the first ``start`` in the file ``path`` and the ``end``
    after it with ``text`` (the markers stay), writing the file whole. How the documentation's
    generated sections are kept."""
    path = Path(path)
    content = path.read_text()
    if start not in content or end not in content[content.index(start):]:
        raise ValueError(f"{path} has no section between {start.strip()!r} and "
                         f"{end.strip()!r}")
    head = content.index(start) + len(start)
    tail = content.index(end, head)
    write_whole(path, lambda partial: partial.write_text(content[:head] + text + content[tail:]))
