"""``--save-failed``'s folders (tinynet.xor.failed): a folder reached through a symlink is
followed, as the writes follow it (``--save-failed results`` where ``results -> /scratch/x``);
two arms never share a folder, nor save into ``..``; and the checks before training refuse
what the writes after it would (:func:`tinynet.files.check_destination`,
:func:`tinynet.files.writable_folder`, shared with the other outputs)."""

import os
from pathlib import Path

import pytest

from tinynet.xor.cli import main
from tinynet.xor.failed import arm_folder, check_folder

TINY = ["--seeds", "2", "--epochs", "1", "--backend", "numpy"]


def test_a_symlinked_folder_takes_the_failed_seeds(tmp_path, monkeypatch, capsys):
    """``--save-failed results`` with ``results -> scratch``: the failed seeds land in
    ``scratch``, the link stays a link."""
    (tmp_path / "scratch").mkdir()
    (tmp_path / "results").symlink_to(tmp_path / "scratch")
    monkeypatch.chdir(tmp_path)
    main(["--init", "normal", *TINY, "--save-failed", "results"])
    written = sorted(path.name for path in (tmp_path / "scratch" / "2-2-2-1" / "normal").iterdir())
    assert written == ["seed0.json", "seed0_initial.npz", "seed0_trained.npz",
                       "seed1.json", "seed1_initial.npz", "seed1_trained.npz"]
    assert (tmp_path / "results").is_symlink()


def test_a_shape_folder_that_is_a_symlink_to_a_folder_is_followed(tmp_path):
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "failed").mkdir()
    (tmp_path / "failed" / "2-2-1").symlink_to(tmp_path / "elsewhere")
    check_folder(tmp_path / "failed", ["2-2-1"], ["normal"], range(4))  # raises nothing


@pytest.mark.parametrize("target,kind", [("nothing here", "a symlink to nothing"),
                                         ("results", "a symlink in a loop")])
def test_a_link_to_nothing_or_in_a_loop_is_refused_in_one_line(tmp_path, target, kind):
    (tmp_path / "results").symlink_to(tmp_path / target)
    with pytest.raises(ValueError) as refused:
        check_folder(tmp_path / "results", ["2-2-1"], ["normal"], range(4))
    assert str(refused.value) == (f"not a directory that can be written ({tmp_path / 'results'}"
                                  f" is {kind}; tinynet writes the failed seeds into folders "
                                  "only)")


def test_two_arms_that_would_share_a_folder_are_refused_naming_both(tmp_path):
    """"a b" and "a_b" both map to ``a_b``: each would overwrite the other's failed seeds."""
    assert arm_folder(tmp_path, "2-2-1", "a b") == arm_folder(tmp_path, "2-2-1", "a_b")
    with pytest.raises(ValueError) as refused:
        check_folder(tmp_path, ["2-2-1"], ["normal", "a b", "a_b"], range(4))
    assert str(refused.value) == (
        "the arms 'a b' and 'a_b' would both save their failed seeds into the folder 'a_b'; "
        "give them labels that differ in letters, digits, dots, hyphens or underscores")


@pytest.mark.parametrize("arm", ["..", ".", " .. "])
def test_an_arm_whose_folder_would_be_a_dot_folder_is_refused(tmp_path, arm):
    """An arm named ".." would save into the shape's parent folder."""
    with pytest.raises(ValueError) as refused:
        check_folder(tmp_path, ["2-2-1"], [arm], range(4))
    name = arm.strip()
    assert str(refused.value) == (
        f"the arm {arm!r} would save its failed seeds into {name!r}, not a folder of its own; "
        "give it a label with a letter or digit")


def test_a_link_to_a_folder_at_a_seeds_name_is_refused_before_training(tmp_path):
    """The write would follow it and stop at the folder (IsADirectoryError) after training:
    refused before, as the write would refuse it."""
    arm = arm_folder(tmp_path, "2-2-1", "normal")
    arm.mkdir(parents=True)
    (tmp_path / "folder").mkdir()
    (arm / "seed1.json").symlink_to(tmp_path / "folder")
    with pytest.raises(ValueError) as refused:
        check_folder(tmp_path, ["2-2-1"], ["normal"], range(4))
    assert str(refused.value) == (
        f"{arm / 'seed1.json'} is a directory, not a regular file; tinynet writes only regular "
        "files; a failed seed's file would be written there: move it away")


def test_every_output_asks_for_a_folder_it_can_write_and_search(tmp_path, monkeypatch, capsys):
    """--json and --save-failed ask the same of their folder (write and search, as creating
    the temporary needs), not write only for one of them. Simulated: root may search any
    folder."""
    folder = tmp_path / "out"
    folder.mkdir()
    access = os.access

    def no_search(path, mode, **options):
        if Path(path) == folder and mode & os.X_OK:
            return False
        return access(path, mode, **options)

    monkeypatch.setattr(os, "access", no_search)
    for flag, value in (("--json", folder / "r.json"), ("--save-failed", folder / "failed")):
        with pytest.raises(SystemExit) as exit:
            main(["--init", "normal", *TINY, flag, str(value)])
        err = capsys.readouterr().err
        assert exit.value.code == 2 and str(folder) in err and err.count("\n") == 1, err
