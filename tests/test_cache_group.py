"""Group write in a kernel cache (tinynet.compiled.caches): a cache folder that its group can
write is trusted only if no other account is in that group, as a listed member or through
its primary group, which ``/etc/group`` never lists (a shared ``users`` group, gid 100, the
primary group of several accounts: under umask 002 any of them could rewrite the others'
numba index, a pickle loaded as code). The account database is faked (``pwd.getpwall``,
``pwd.getpwuid``, ``grp.getgrall``), so these run as any user, with no account made.

A POSIX access control list makes the group bits of the mode its *mask*: a folder shown as 775
in the user's own group may let another account write, so an entry with an ACL is refused
when its mode shows group write (and a folder whose default ACL would give the files made in
it such a mask)."""

import errno
import grp
import os
import pwd
import struct
from pathlib import Path

import pytest

from tinynet.compiled import caches, sources

pytestmark = pytest.mark.skipif(not hasattr(os, "geteuid"), reason="no user ids here")


@pytest.fixture(autouse=True)
def fresh_group_answers():
    """The answer about a group is kept per process (:func:`caches._sole_member`): each test
    asks its own faked database, and leaves no faked answer behind."""
    caches._sole_member.cache_clear()
    yield
    caches._sole_member.cache_clear()


def account(name: str, uid: int, gid: int) -> pwd.struct_passwd:
    return pwd.struct_passwd((name, "x", uid, gid, name, f"/home/{name}", "/bin/sh"))


def accounts(monkeypatch, others: list[pwd.struct_passwd], members: tuple[str, ...] = (),
             unreadable: bool = False, me_listed: bool = True) -> None:
    """Fake the account database: this user (named ``me``, primary group the process's),
    ``others``, and the process's group with ``members`` listed. ``unreadable``: reading the
    accounts fails; ``me_listed`` False: the list of accounts leaves this user out."""
    me = account("me", os.geteuid(), os.getegid())
    everyone = ([me] if me_listed else []) + others

    def getpwall():
        if unreadable:
            raise OSError("the account database cannot be read")
        return everyone

    monkeypatch.setattr(pwd, "getpwall", getpwall)
    monkeypatch.setattr(pwd, "getpwuid", lambda uid: {a.pw_uid: a for a in [me, *others]}[uid])
    monkeypatch.setattr(grp, "getgrall", lambda: [grp.struct_group(
        ("users", "x", os.getegid(), list(members)))])


def group_writable_cache(folder: Path) -> Path:
    """A kernel folder as umask 002 leaves it: folders 775, the numba index 664, all in the
    process's group. Returns the index."""
    index = folder / "__pycache__" / "k.nbi"
    index.parent.mkdir(parents=True)
    index.write_bytes(b"")
    for path, mode in ((folder, 0o775), (index.parent, 0o775), (index, 0o664)):
        os.chown(path, -1, os.getegid())
        path.chmod(mode)
    return index


def test_a_group_of_the_users_own_is_trusted(tmp_path, monkeypatch):
    """The control: a group no other account is in (a user private group)."""
    accounts(monkeypatch, [account("bob", os.geteuid() + 1, os.getegid() + 1)])
    group_writable_cache(tmp_path / "kernels")
    assert caches.untrusted(tmp_path / "kernels") is None


def test_a_group_that_is_another_accounts_primary_group_is_not_trusted(tmp_path, monkeypatch):
    """bob's primary group is the user's: /etc/group lists no member, yet bob can write."""
    accounts(monkeypatch, [account("bob", os.geteuid() + 1, os.getegid())])
    group_writable_cache(tmp_path / "kernels")
    assert caches.untrusted(tmp_path / "kernels") == (
        f"{tmp_path / 'kernels'} is writable by others (mode 775)")


@pytest.mark.parametrize("case", ["member listed", "unreadable", "user not listed"])
def test_group_write_is_refused_when_the_group_is_shared_or_unknown(tmp_path, monkeypatch,
                                                                    case):
    accounts(monkeypatch, [], members=("me", "bob") if case == "member listed" else (),
             unreadable=case == "unreadable", me_listed=case != "user not listed")
    group_writable_cache(tmp_path / "kernels")
    assert caches.untrusted(tmp_path / "kernels") == (
        f"{tmp_path / 'kernels'} is writable by others (mode 775)")


def shared_kernel_dir(tmp_path, monkeypatch):
    """A group-writable kernel cache of a group bob has as his primary group, and the private
    temporary folder tinynet falls back to: (shared, private)."""
    accounts(monkeypatch, [account("bob", os.geteuid() + 1, os.getegid())])
    shared = tmp_path / "kernels"
    group_writable_cache(shared)
    private = tmp_path / "tmp"
    private.mkdir(mode=0o700)
    monkeypatch.setattr("tempfile.tempdir", str(private))
    return shared, private


def test_a_shared_primary_group_sends_tinynet_kernel_dir_to_the_private_folder(
        tmp_path, monkeypatch, capsys):
    """Through TINYNET_KERNEL_DIR: the folder is not used; one line says why, and the kernels
    go to the user's private folder."""
    shared, private = shared_kernel_dir(tmp_path, monkeypatch)
    monkeypatch.setenv("TINYNET_KERNEL_DIR", str(shared))
    chosen = sources.kernel_dir()
    assert chosen == private / f"tinynet-kernels-{os.getuid()}"
    assert capsys.readouterr().err == (
        f"tinynet: not using TINYNET_KERNEL_DIR={shared}: {shared} is writable by others "
        f"(mode 775); compiling into {chosen} instead\n")


def test_members_listed_in_a_second_entry_for_the_group_count(tmp_path, monkeypatch):
    """The group database may hold two entries for one gid (/etc/group and LDAP, say);
    ``grp.getgrgid`` returns only the first: bob, listed in the second, can write."""
    accounts(monkeypatch, [])
    monkeypatch.setattr(grp, "getgrall", lambda: [
        grp.struct_group(("me", "x", os.getegid(), [])),
        grp.struct_group(("me-ldap", "x", os.getegid(), ["bob"]))])
    group_writable_cache(tmp_path / "kernels")
    assert caches.untrusted(tmp_path / "kernels") == (
        f"{tmp_path / 'kernels'} is writable by others (mode 775)")


def test_the_account_database_is_read_once_for_a_whole_cache(tmp_path, monkeypatch):
    """A cache of many group-writable files (umask 002) reads the accounts once, not once per
    file."""
    accounts(monkeypatch, [])
    calls = []
    everyone = pwd.getpwall()
    monkeypatch.setattr(pwd, "getpwall", lambda: calls.append(1) or everyone)
    index = group_writable_cache(tmp_path / "kernels")
    for k in range(200):
        (index.parent / f"k{k}.nbc").write_bytes(b"")
        (index.parent / f"k{k}.nbc").chmod(0o664)
    assert caches.untrusted(tmp_path / "kernels") is None
    assert caches.untrusted(tmp_path / "kernels") is None
    assert len(calls) == 1


USER, GROUP_OBJ, MASK, OTHER, NAMED_USER = 0x01, 0x04, 0x10, 0x20, 0x02
"""The tags of a POSIX ACL's entries, as the kernel stores them."""


def posix_acl(entries: list[tuple[int, int, int]]) -> bytes:
    """A POSIX ACL in the binary form of ``system.posix_acl_*``: version 2, then each entry's
    tag, permission and id (0xFFFFFFFF for the entries of no id)."""
    return struct.pack("<I", 2) + b"".join(struct.pack("<HHI", *entry) for entry in entries)


STRANGER_WRITES = posix_acl([(USER, 7, 0xFFFFFFFF), (NAMED_USER, 7, 54321),
                             (GROUP_OBJ, 5, 0xFFFFFFFF), (MASK, 7, 0xFFFFFFFF),
                             (OTHER, 5, 0xFFFFFFFF)])
"""user::rwx, user:54321:rwx, group::r-x, mask::rwx, other::r-x: mode 775, and user 54321
may write."""


def set_acl(path: Path, name: str, acl: bytes) -> None:
    """Give ``path`` the ACL ``acl`` (``name``: access or default), or skip the test, saying
    why, where the file system here refuses ACLs."""
    try:
        os.setxattr(path, name, acl)
    except (OSError, AttributeError) as error:
        pytest.skip(f"this file system refuses POSIX ACLs ({error})")


def test_a_folder_whose_acl_lets_another_user_write_is_not_trusted(tmp_path, monkeypatch):
    """A real ACL: mode 775, the group the user's own, and yet user 54321 may write."""
    accounts(monkeypatch, [])
    group_writable_cache(tmp_path / "kernels")
    set_acl(tmp_path / "kernels", "system.posix_acl_access", STRANGER_WRITES)
    assert caches.untrusted(tmp_path / "kernels") == (
        f"{tmp_path / 'kernels'} has an access control list granting write (mode 775)")


def test_a_folder_whose_default_acl_would_let_another_user_write_is_not_trusted(tmp_path,
                                                                                monkeypatch):
    """The folder itself is 755, but a file made in it would inherit user 54321's write."""
    accounts(monkeypatch, [])
    folder = tmp_path / "kernels"
    folder.mkdir(mode=0o755)
    set_acl(folder, "system.posix_acl_default", STRANGER_WRITES)
    assert caches.untrusted(folder) == (
        f"{folder} has a default access control list granting write to what is made in it")


@pytest.mark.parametrize("acl", ["system.posix_acl_access", "system.nfs4_acl"])
def test_an_acl_with_group_write_is_not_trusted_on_any_file_system(tmp_path, monkeypatch, acl):
    """The same, the ACL faked (``os.listxattr``), so it runs where ACLs cannot be set: an
    index file with an ACL and mode 664."""
    accounts(monkeypatch, [])
    index = group_writable_cache(tmp_path / "kernels")
    listed = os.listxattr
    monkeypatch.setattr(os, "listxattr", lambda path, follow_symlinks=True: (
        [acl] if Path(path) == index else listed(path, follow_symlinks=follow_symlinks)))
    assert caches.untrusted(tmp_path / "kernels") == (
        f"{index} has an access control list granting write (mode 664)")


def test_no_extended_attributes_means_no_acl(tmp_path, monkeypatch):
    """A file system without extended attributes (ENOTSUP): the mode says it all."""
    accounts(monkeypatch, [])
    group_writable_cache(tmp_path / "kernels")

    def unsupported(path, follow_symlinks=True):
        raise OSError(errno.ENOTSUP, os.strerror(errno.ENOTSUP), str(path))

    monkeypatch.setattr(os, "listxattr", unsupported)
    assert caches.untrusted(tmp_path / "kernels") is None


def test_a_refused_kernel_folder_is_walked_twice_not_three_times(tmp_path, monkeypatch):
    """TINYNET_KERNEL_DIR refused for its group: the folder (every file of a cache) is walked
    once to refuse it and once to tell a folder not to be trusted from one not writable, not
    again by each check after."""
    shared, private = shared_kernel_dir(tmp_path, monkeypatch)
    walked = []
    untrusted = caches.untrusted

    def counted(folder):
        walked.append(Path(folder))
        return untrusted(folder)

    monkeypatch.setattr(caches, "untrusted", counted)
    monkeypatch.setattr(sources, "untrusted", counted)
    monkeypatch.setenv("TINYNET_KERNEL_DIR", str(shared))
    assert sources.kernel_dir() == private / f"tinynet-kernels-{os.getuid()}"
    assert walked.count(shared) == 2
