"""No public writer follows a symlink (tinynet.files.write_whole under every one of them): a
link at the destination, to a file of someone's or to nowhere, relative or absolute, is
replaced by the new file, and what it pointed to is never written. A property over every
writer a user can reach: saving a network, every figure's ``path=``, the CLI's outputs, the
README sections' writer."""

import os
from pathlib import Path

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
