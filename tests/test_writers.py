"""No public writer follows a symlink (tinynet.files.write_whole under every one of them): a
link at the destination, to a file of someone's or to nowhere, relative or absolute, is
replaced by the new file, and what it pointed to is never written. A property over every
writer a user can reach: saving a network, every figure's ``path=``, the CLI's outputs, the
README sections' writer."""

import errno
import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tinynet
from tinynet import files, plots
from tinynet.xor.cli import main

NET = tinynet.mlp([2, 2, 1], seed=0)


def save_network(path: Path) -> None:
    NET.save(path)


def draw_boundary(path: Path) -> None:
    plots.decision_boundary(NET, path=path, resolution=5)


def cli_json(path: Path) -> None:
    main(["--seeds", "2", "--epochs", "1", "--backend", "numpy", "--json", str(path)])


def cli_csv(path: Path) -> None:
    main(["--seeds", "2", "--epochs", "1", "--backend", "numpy", "--csv", str(path)])


def readme_section(path: Path) -> None:
    files.put_between(path, "<!-- a -->", "<!-- b -->", "new")


WRITERS = {"Network.save": (save_network, ".npz"), "plots path=": (draw_boundary, ".png"),
           "CLI --json": (cli_json, ".json"), "CLI --csv": (cli_csv, ".csv"),
           "put_between": (readme_section, ".md")}

VICTIM = "<!-- a -->precious<!-- b -->"
"""What the link points to: text put_between could work on, which no writer may change."""


@settings(max_examples=40, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(writer=st.sampled_from(sorted(WRITERS)), dangling=st.booleans(),
       relative=st.booleans(), elsewhere=st.booleans())
def test_no_public_writer_follows_a_symlink(tmp_path_factory, capsys, writer, dangling,
                                            relative, elsewhere):
    folder = tmp_path_factory.mktemp("w")
    other = folder / "other" if elsewhere else folder
    other.mkdir(exist_ok=True)
    victim = other / "victim.txt"
    write, suffix = WRITERS[writer]
    if not dangling or writer == "put_between":  # it reads the file first: give it one
        victim.write_text(VICTIM)
    link = folder / f"out{suffix}"
    link.symlink_to(os.path.relpath(victim, folder) if relative else victim)
    write(link)
    capsys.readouterr()
    assert not link.is_symlink() and link.is_file()
    if victim.exists():
        assert victim.read_text() == VICTIM
    else:
        assert not os.path.lexists(victim)
    assert sorted(path.name for path in other.iterdir()) == sorted(
        (["victim.txt"] if victim.exists() else []) + ([link.name] if other == folder else []))


FAULTS = {"name too long": errno.ENAMETOOLONG, "temporary's name too long": None,
          "symlink loop": errno.ELOOP, "disk full": errno.ENOSPC}
"""How a write can fail before or while writing, and the errno each ends with (None: not at
all; a name that fits leaves room for its temporary's)."""


def destination(folder: Path, fault: str, suffix: str, monkeypatch) -> Path:
    """Where a writer is sent to meet ``fault``. A full disk is the kernel's own ENOSPC: the
    writer's temporary is made a link to ``/dev/full``, which it opens by name and writes."""
    if fault == "name too long":
        return folder / ("n" * 300 + suffix)
    if fault == "temporary's name too long":  # the name fits in 255 bytes, .{name}.{pid}... not
        return folder / ("n" * (250 - len(suffix)) + suffix)
    if fault == "symlink loop":
        (folder / "a").symlink_to("b")
        (folder / "b").symlink_to("a")
        return folder / "a" / f"out{suffix}"
    create = files._create_partial

    def onto_dev_full(path: Path) -> tuple[Path, int]:
        partial, descriptor = create(path)
        partial.unlink()
        partial.symlink_to("/dev/full")
        return partial, descriptor

    monkeypatch.setattr(files, "_create_partial", onto_dev_full)
    return folder / f"out{suffix}"


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="a full disk is /dev/full here")
@pytest.mark.parametrize("fault", sorted(FAULTS))
@pytest.mark.parametrize("writer", sorted(WRITERS))
def test_every_writer_ends_a_failed_write_in_one_line_naming_the_path(tmp_path, capsys,
                                                                      monkeypatch, writer,
                                                                      fault):
    """A name too long, a symlink loop on the way, a full disk: the writer raises an OSError
    (the CLI: exits with status 2) whose one line names the destination and the reason; no
    temporary is left. A name that fits is written, though its temporary's would not fit."""
    write, suffix = WRITERS[writer]
    path = destination(tmp_path, fault, suffix, monkeypatch)
    if writer == "put_between" and fault in ("disk full", "temporary's name too long"):
        path.write_text(VICTIM)  # it reads the file first
    code = FAULTS[fault]
    try:
        write(path)
    except SystemExit as exit:
        message = capsys.readouterr().err
        assert exit.code == 2 and code is not None, message
    except OSError as error:  # the CLI's own end is one line on stderr, not a traceback
        assert not writer.startswith("CLI") and error.errno == code, error
        message = str(error) + "\n"
    else:
        assert code is None and path.is_file(), f"{writer} wrote {path}"
        message = None
    if code is not None:
        assert message.count("\n") == 1 and message.endswith("\n"), message
        assert str(path) in message and os.strerror(code) in message, message
    assert [name for name in os.listdir(tmp_path) if "partial" in name] == []


def test_a_temporary_that_cannot_be_made_is_reported_as_the_destination(tmp_path, monkeypatch):
    """A folder that refuses the new file (read-only; simulated, as root writes anywhere): the
    error names the destination asked for, not the hidden temporary beside it."""
    create = os.open

    def refuse(name, flags, *rest, **options):
        if ".partial" in os.fsdecode(name):
            raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), name)
        return create(name, flags, *rest, **options)

    monkeypatch.setattr(os, "open", refuse)
    with pytest.raises(PermissionError) as raised:
        NET.save(tmp_path / "net.npz")
    assert str(raised.value) == (f"[Errno {errno.EACCES}] {os.strerror(errno.EACCES)}: "
                                 f"'{tmp_path / 'net.npz'}'")


@pytest.mark.parametrize("code", [errno.EXDEV, errno.EACCES])
def test_a_rename_that_fails_is_reported_as_the_destination(tmp_path, monkeypatch, code):
    """os.replace's error names the temporary and the destination: the one line names only
    the destination asked for, with the same errno (and class), and no temporary is left."""
    def refuse(source, destination):
        raise OSError(code, os.strerror(code), os.fspath(source), None,  # no winerror
                      os.fspath(destination))

    monkeypatch.setattr(os, "replace", refuse)
    path = tmp_path / "out.json"
    with pytest.raises(OSError) as raised:
        files.write_whole(path, lambda partial: partial.write_text("{}"))
    assert str(raised.value) == f"[Errno {code}] {os.strerror(code)}: '{path}'"
    assert type(raised.value) is type(OSError(code, "x")) and os.listdir(tmp_path) == []
