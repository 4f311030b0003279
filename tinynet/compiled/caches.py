"""Where Numba caches the compiled kernels, whether a cache can be trusted, and what happens
when it cannot be written or is damaged.

Numba's cache files are pickles, loaded as code, and the generated kernels' sources are
imported: a cache folder that someone else can write is a way to run code as whoever uses it.
So a folder is trusted (:func:`untrusted`) only if it, everything in it and every folder above
it belong to this user or root and can be written by no one else, through an access control
list neither (a folder above may be shared if it is sticky, as ``/tmp`` is). A trusted kernel
folder that cannot be written (one prepared ahead, in a read-only image) is used as it is
(:func:`use_read_only`). A damaged
cache entry is removed and compiled again, and a cache that cannot be written (a full disk, a
read-only folder) leaves the run uncached (:func:`guard`), each with one line on stderr.

Numba's imports are inside the functions: importing this module (and so ``tinynet``) imports
no Numba.
"""

from __future__ import annotations

import functools
import os
import pickle
import stat
import struct
import sys
import tempfile
from collections.abc import Callable, Iterable
from pathlib import Path

__all__ = ["CacheUnwritableError", "NO_LOCATOR", "CACHED_SOURCES", "numba_cache_problem",
           "cache_error", "untrusted", "say", "guard", "guard_loaded", "numba_user_cache",
           "trust_numba_cache", "private_dir", "unusable", "writable", "use_read_only",
           "read_only"]


class CacheUnwritableError(OSError):
    """No directory where Numba would cache the compiled kernels, or tinynet would write the
    generated ones, is writable. The message names the directories tried and the variables
    to set (``NUMBA_CACHE_DIR``, ``TINYNET_KERNEL_DIR``)."""


CACHED_SOURCES = ("shuffle.py", "compiled/lanes.py")
"""One source, under ``tinynet/``, from each folder whose modules the backend compiles with
``cache=True``: numba looks for a cache directory per source folder."""

NO_LOCATOR = "no locator available"
"""What numba's RuntimeError says when it finds no cache directory for a function."""


def numba_cache_problem(advice: Callable[[], str]) -> str | None:
    """What stops numba from caching the backend's kernels, as the message of a
    :class:`CacheUnwritableError`, or None if nothing does. Asks numba's own cache locators,
    in numba's order, as the import of the backend will (the first that can create its
    directory and a file in it wins); None too when numba's API has moved, or the user chose
    the locators (``NUMBA_CACHE_LOCATOR_CLASSES``): the import then says. ``advice()`` ends
    the message (what to set), asked for only when there is one."""
    from numba.core import caching, config

    classes = getattr(getattr(caching, "CacheImpl", None), "_locator_classes", None)
    if (not classes or getattr(config, "CACHE_LOCATOR_CLASSES", None)
            or getattr(config, "DISABLE_JIT", False)):  # nothing compiled, nothing cached
        return None
    package = Path(__file__).resolve().parent.parent
    for name in CACHED_SOURCES:
        source = package / name
        try:
            if any(cls.from_function(numba_cache_problem, str(source)) is not None
                   for cls in classes):
                continue
        except (AttributeError, TypeError, ValueError):  # the API moved: let the import say
            return None
        tried = [f"NUMBA_CACHE_DIR={config.CACHE_DIR}"] if config.CACHE_DIR else []
        tried += [str(source.parent / "__pycache__"), numba_user_cache()]
        listed = (f"neither {tried[0]} nor {tried[1]} is" if len(tried) == 2 else
                  f"none of {', '.join(tried)} is")
        return f"numba cannot cache the compiled kernels: {listed} writable; {advice()}"
    return None


def numba_user_cache() -> str:
    """Numba's user-wide cache directory (``$XDG_CACHE_HOME/numba``, default
    ``~/.cache/numba``), where it caches a module whose own ``__pycache__`` is read-only."""
    try:
        from numba.misc.appdirs import AppDirs
        return AppDirs(appname="numba", appauthor=False).user_cache_dir
    except (ImportError, AttributeError, TypeError):
        return "numba's user cache directory"


def cache_error(error: RuntimeError, what: str, advice: str) -> CacheUnwritableError | None:
    """Numba's RuntimeError that it found no cache directory for ``what`` (the backend's
    kernels, a generated kernel), as a :class:`CacheUnwritableError` ending in ``advice``;
    None for any other RuntimeError."""
    if NO_LOCATOR not in str(error):
        return None
    return CacheUnwritableError(f"numba cannot cache {what} ({error}); {advice}")


def untrusted(folder: Path) -> str | None:
    """Why ``folder`` (which may not exist yet) cannot be trusted with code, in a few words,
    or None if it can: it (a link to it followed), everything in it (links in it refused, not
    followed) and the folders above it must belong to this user or root and be writable by no
    one else, a sticky folder above it excepted. Always None where there are no user ids
    (Windows)."""
    if not hasattr(os, "geteuid"):
        return None
    me = os.geteuid()
    folder = Path(os.path.realpath(folder))  # the folder itself may be reached by a link
    for above in folder.parents:
        reason = _untrusted_entry(above, me, above_ok=True)
        if reason:
            return reason
    if not folder.is_dir():  # none yet, or not a folder: whether it can be made is not asked
        return None
    reason = _untrusted_entry(folder, me)
    if reason:
        return reason
    for root, folders, files in os.walk(folder):  # does not follow symbolic links
        for name in folders + files:
            reason = _untrusted_entry(Path(root) / name, me)
            if reason:
                return reason
    return None


def _untrusted_entry(path: Path, me: int, above_ok: bool = False) -> str | None:
    """Why the one entry ``path`` is not trusted, or None. ``above_ok``: a folder above the
    cache, which others may write if it is sticky (they cannot rename what is not theirs)."""
    try:
        status = os.lstat(path)
    except OSError:  # not there (or under a file): nothing to trust yet
        return None
    if status.st_uid not in (me, 0):
        return f"{path} belongs to user {status.st_uid}"
    if stat.S_ISLNK(status.st_mode) and not above_ok:
        return f"{path} is a symbolic link"
    if above_ok and status.st_mode & stat.S_ISVTX:
        return None
    mode = stat.S_IMODE(status.st_mode)
    if mode & 0o002 or (mode & 0o020 and not _own_group(status.st_gid)):
        return f"{path} is writable by others (mode {mode:o})"
    return _acl_reason(path, mode, stat.S_ISDIR(status.st_mode))


ACCESS_ACLS = ("system.posix_acl_access", "system.nfs4_acl")
"""The extended attributes that hold an entry's own access control list (POSIX, NFSv4)."""

DEFAULT_ACL = "system.posix_acl_default"
"""The extended attribute that holds a folder's default ACL, which what is made in it
inherits."""


def _acl_reason(path: Path, mode: int, folder: bool) -> str | None:
    """Why the entry ``path`` (of permission bits ``mode``) is not trusted for its access
    control lists, or None. Under an ACL the group bits of the mode are its *mask*, the most
    any named user or group may do, not the owning group's rights: so an entry with an ACL
    whose mode shows group write may be writable by another account. A folder whose default
    ACL has a mask granting write makes every new file so. A file system without extended
    attributes (or a system without them: macOS, Windows) has no ACLs."""
    if not hasattr(os, "listxattr"):
        return None
    try:
        names = os.listxattr(path, follow_symlinks=False)
    except OSError:  # ENOTSUP and the like: no ACLs here
        return None
    if mode & 0o020 and any(name in names for name in ACCESS_ACLS):
        return f"{path} has an access control list granting write (mode {mode:o})"
    if folder and DEFAULT_ACL in names and _mask_grants_write(path):
        return (f"{path} has a default access control list granting write to what is made "
                "in it")
    return None


def _mask_grants_write(folder: Path) -> bool:
    """Whether the default POSIX ACL of ``folder`` has a mask (so named users or groups)
    granting write. Its binary form: a 4-byte version, then 8-byte entries of a tag, a
    permission and an id (little-endian); the mask's tag is 0x10, write is 2. A default
    ACL that cannot be read or parsed is taken to grant it."""
    try:
        data = os.getxattr(folder, DEFAULT_ACL, follow_symlinks=False)
        entries = struct.iter_unpack("<HHI", data[4:])
        return any(tag == 0x10 and permission & 2 for tag, permission, _ in entries)
    except (OSError, struct.error):
        return True


def _own_group(gid: int) -> bool:
    """Whether group ``gid`` is this user's own: their primary group, and no other account's
    (a user private group, as under ``umask 002``, where every file tinynet or Numba makes is
    group-writable). Asked once per group and user in a process (:func:`_sole_member`)."""
    return gid == os.getegid() and _sole_member(gid, os.geteuid())


@functools.lru_cache(maxsize=16)
def _sole_member(gid: int, me: int) -> bool:
    """Whether user ``me`` is the only account in group ``gid``. Another account shares the
    group if it is listed as a member (in any entry for ``gid``: the group database may hold
    several), or if the group is its primary group: such users are never listed in
    ``/etc/group`` (a shared ``users`` group), so every account is looked at. An account
    database that cannot be read, or that does not list this user (so may list only some
    accounts), is not trusted."""
    try:
        import grp
        import pwd

        name = pwd.getpwuid(me).pw_name
        members = {member for group in grp.getgrall() if group.gr_gid == gid
                   for member in group.gr_mem}
        accounts = pwd.getpwall()
    except (ImportError, KeyError, OSError):
        return False
    listed = any(account.pw_uid == me for account in accounts)  # else the list is partial
    sharing = any(account.pw_gid == gid and account.pw_uid != me for account in accounts)
    return listed and not sharing and members <= {name}


_SAID: set[str] = set()


def say(line: str) -> None:
    """Print ``line`` on stderr, once per process."""
    if line not in _SAID:
        _SAID.add(line)
        print(f"tinynet: {line}", file=sys.stderr, flush=True)


DAMAGE = (pickle.UnpicklingError, EOFError, ValueError, TypeError, AttributeError, ImportError,
          IndexError, KeyError)
"""What unpickling a damaged cache file raises."""


def guard(dispatchers: Iterable[object]) -> None:
    """Make each numba dispatcher's cache survive its files: a damaged entry is named, removed
    and compiled again; a cache that cannot be written (a full disk, a folder gone read-only)
    is skipped, the kernel compiled and run uncached. Each with one line on stderr. Does
    nothing for a dispatcher without numba's cache (or if numba's private API moved)."""
    for dispatcher in dispatchers:
        cache = getattr(dispatcher, "_cache", None)
        files = getattr(cache, "_cache_file", None)
        if files is None or getattr(cache, "_tinynet_guarded", False) or not all(
                hasattr(files, name) for name in ("_index_path", "_cache_path", "_index_name")):
            continue
        load, save = cache.load_overload, cache.save_overload

        def load_overload(sig, target_context, load=load, files=files):
            try:
                return load(sig, target_context)
            except DAMAGE as error:
                _remove_entry(files, error)
                return None

        def save_overload(sig, data, save=save, files=files):
            try:
                save(sig, data)
            except DAMAGE as error:
                _remove_entry(files, error)
            except OSError as error:
                why = error.strerror or str(error)
                say(f"cannot write the kernel cache in {files._cache_path} ({why}); running "
                    "uncached")

        cache.load_overload, cache.save_overload = load_overload, save_overload
        cache._tinynet_guarded = True


def _remove_entry(files: object, error: BaseException) -> None:
    """Remove a damaged cache entry: its index and its data files."""
    stem = files._index_name[:-len(".nbi")]
    folder = Path(files._cache_path)
    for path in [Path(files._index_path), *folder.glob(f"{stem}.*.nbc")]:
        try:
            path.unlink()
        except OSError:  # gone already, or a read-only folder: compiled anew all the same
            pass
    say(f"removed the damaged kernel cache entry {files._index_path} "
        f"({type(error).__name__}: {str(error) or 'no message'}); compiling it again")


def guard_loaded() -> None:
    """:func:`guard` every numba dispatcher of the tinynet modules imported so far, the
    generated kernels' included (each dispatcher once)."""
    for name, module in list(sys.modules.items()):
        if module is not None and (name.startswith(("tinynet.", "tinynet_kernel_"))):
            guard(vars(module).values())


def trust_numba_cache() -> None:
    """If a folder numba would cache the package's kernels in (``$NUMBA_CACHE_DIR``, else the
    package's ``__pycache__`` folders and numba's user cache) cannot be trusted with code
    (:func:`~tinynet.compiled.caches.untrusted`), say why in one line and point numba at a
    private folder instead, before the kernels are defined (numba reads its cache folder
    then)."""
    from numba.core import config

    if config.CACHE_DIR:
        folders = {f"NUMBA_CACHE_DIR={config.CACHE_DIR}": Path(config.CACHE_DIR)}
    else:  # the package's __pycache__, or numba's user cache where that is read-only
        package = Path(__file__).resolve().parent.parent
        folders = {str(folder): folder for folder in
                   sorted({(package / name).parent / "__pycache__" for name in CACHED_SOURCES})}
        user = Path(numba_user_cache())
        folders[str(user)] = user
    for what, folder in folders.items():
        reason = untrusted(folder)
        if reason is not None:
            config.CACHE_DIR = str(private_dir("numba", what, reason))
            return


def private_dir(kind: str, refused: str | None = None, reason: str | None = None) -> Path:
    """A folder of this user's own for ``kind`` (``"kernels"``, ``"numba"``) in the temporary
    folder: ``tinynet-<kind>-<uid>``, made private if new and used if it can be trusted, else
    a new one with a random name (not cached beyond this process: every run compiles). With
    ``refused``, first one line on stderr saying which folder was not used and ``reason``."""
    user = os.getuid() if hasattr(os, "getuid") else os.environ.get("USERNAME", "user")
    shared = Path(tempfile.gettempdir()) / f"tinynet-{kind}-{user}"
    why_not = unusable(shared)
    usable = why_not is None
    if refused is not None:
        say(f"not using {refused}: {reason}; compiling into "
            f"{shared if usable else 'a new private folder'} instead")
    if usable:
        return shared
    try:
        fresh = Path(tempfile.mkdtemp(prefix=f"tinynet-{kind}-"))
    except OSError:
        what, variable = (("generated kernels", "TINYNET_KERNEL_DIR") if kind == "kernels"
                          else ("numba's cache", "NUMBA_CACHE_DIR"))
        raise CacheUnwritableError(f"cannot write {what}: no folder for them is writable "
                                   f"(tried {shared}); set {variable} to a writable "
                                   "directory") from None
    say(f"{shared} cannot be used ({why_not}); using {fresh}, which lasts this run only")
    return fresh


def unusable(folder: Path) -> str | None:
    """Why ``folder`` cannot hold kernels, or None if it can: it must be trusted
    (:func:`untrusted`) and :func:`writable`, and trusted still once made (a folder planted
    between the check and the making is not used)."""
    existed = folder.is_dir()  # before the check: a folder planted after it is checked again
    reason = untrusted(folder)
    if reason is not None:
        return reason
    if not writable(folder):
        return f"{folder} is not a writable folder"
    # Again, for what writable() made or found made meanwhile. A folder that was there is
    # not walked twice: trusted, it and the folders above it can be written by this user
    # alone (or are sticky), so no one else can have put anything in it since.
    return None if existed else untrusted(folder)


def writable(directory: Path) -> bool:
    """Whether ``directory`` exists or can be made (private: mode 700, and so is each folder
    made above it), and a file can be created in it (tried, as numba tries its cache
    directories)."""
    try:
        for folder in [*reversed(directory.parents), directory]:
            if not folder.exists():
                folder.mkdir(mode=0o700, exist_ok=True)
        tempfile.TemporaryFile(dir=directory).close()
    except OSError:
        return False
    return True


_READ_ONLY: set[str] = set()
"""The kernel folders used read-only (:func:`use_read_only`), as real paths."""


def use_read_only(folder: Path, trusted: bool = False) -> bool:
    """Whether ``folder`` is a kernel folder to use read-only, as one prepared ahead for a
    class or baked into a read-only image is: an existing folder that can be trusted
    (:func:`untrusted`; not asked again if ``trusted``, the caller having just asked) and
    read but not written. If so, numba is told to load the kernels cached in its
    ``__pycache__`` though it cannot write there (numba itself only uses a cache folder it
    can write); a kernel not cached there is compiled and run uncached, with one line
    (:func:`guard`)."""
    if (not folder.is_dir() or not (trusted or untrusted(folder) is None)
            or writable(folder) or not os.access(folder, os.R_OK | os.X_OK)):
        return False
    if _read_only_locator() is None:  # numba's API moved: numba will not read it
        return False
    _READ_ONLY.add(os.path.realpath(folder))
    return True


def read_only(folder: Path) -> bool:
    """Whether ``folder`` is used read-only (:func:`use_read_only` said so)."""
    return os.path.realpath(folder) in _READ_ONLY


@functools.cache
def _read_only_locator() -> type | None:
    """A numba cache locator for the modules of the folders used read-only: numba's own for a
    module's ``__pycache__``, which does not require that folder to be writable. Put in
    numba's list before that one (after ``$NUMBA_CACHE_DIR``'s, which comes first when
    writable), once; it finds nothing for any other module. None if numba's API moved."""
    from numba.core import caching

    base = getattr(caching, "InTreeCacheLocator", getattr(caching, "_InTreeCacheLocator", None))
    classes = getattr(getattr(caching, "CacheImpl", None), "_locator_classes", None)
    if base is None or not isinstance(classes, list) or base not in classes:
        return None

    class ReadOnlyCacheLocator(base):
        """A read-only kernel folder's ``__pycache__``, used though it cannot be written."""

        def ensure_cache_path(self) -> None:
            if not os.path.isdir(self.get_cache_path()):
                raise FileNotFoundError(f"no folder {self.get_cache_path()}")

        @classmethod
        def from_function(cls, py_func, py_file):
            if os.path.realpath(os.path.dirname(py_file)) not in _READ_ONLY:
                return None
            return super().from_function(py_func, py_file)

    classes.insert(classes.index(base), ReadOnlyCacheLocator)
    return ReadOnlyCacheLocator
