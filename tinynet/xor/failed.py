"""``--save-failed DIR``: every seed that did not succeed, written into a folder per shape and
arm, ``DIR/<shape>/<arm>/``: ``seed<N>_initial.npz``, ``seed<N>_trained.npz`` (read them with
``tinynet.load``) and ``seed<N>.json`` (outcome, final loss, loss history).

Those files are written after training, so a folder that cannot take them would lose the
failed networks with the hours spent training them. :func:`check_folder` therefore finds,
before any training, every problem a write would meet there, and says it in one line.
"""

from __future__ import annotations

import errno
import json
import os
import re
import stat
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from ..files import check_destination, check_reachable, writable_folder, write_whole
from .report import Study, finite_or_none

__all__ = ["check_folder", "save_failed", "arm_folder"]

_SEED_FILE = re.compile(r"seed(?P<seed>[0-9]+)(_initial\.npz|_trained\.npz|\.json)")
"""The name of each file :func:`save_failed` writes for a seed."""


def arm_folder(directory: Path, shape: str, arm: str) -> Path:
    """Where the failed seeds of ``arm`` (its name) on ``shape`` go: ``directory/shape/arm``,
    the arm's name kept to letters, digits, dots, hyphens and underscores (two arms may so
    share a folder, or an arm get ``..``: :func:`check_folder` refuses both)."""
    return Path(directory) / shape / _folder_name(arm)


def _folder_name(arm: str) -> str:
    """The name of ``arm``'s folder (see :func:`arm_folder`)."""
    return re.sub(r"[^A-Za-z0-9._-]+", "_", arm).strip("_") or "arm"


def check_folder(directory: Path, shapes: Sequence[str], arms: Sequence[str],
                 seeds: range) -> None:
    """Raise ValueError (OSError for a path the system cannot even look up), in one line, if
    the failed seeds of ``arms`` (their names) on ``shapes`` could not all be written under
    ``directory``, each arm into a folder of its own; nothing is created.

    Two arms whose names give one folder (``"a b"`` and ``"a_b"``), or an arm whose folder
    would be ``.`` or ``..``, are refused. ``directory`` must exist, or its parent folder
    must (as ``mkdir`` without ``-p``: a typo in the parent is caught, not made). Every
    folder on the way, ``directory``, each ``<shape>`` and ``<arm>`` in it, must be a folder
    where it exists (a symlink to a folder is followed, as the writes follow it; a link to
    nothing, or in a loop, is refused), and the last that exists must be writable. In an
    arm's folder that exists, nothing may stand at a name one of ``seeds`` would write that
    the write would refuse (:func:`tinynet.files.check_destination`)."""
    directory = Path(directory)
    _check_arm_names(arms)
    check_reachable(directory)  # a name too long, a file or a loop on the way: its OSError
    if _kind(directory) is None:
        parent = directory.absolute().parent
        if _kind(parent) != "folder" or not writable_folder(parent):
            why = "not a folder" if _kind(parent) != "folder" else "read-only"
            raise ValueError(f"not a directory that can be written ({parent} is {why})")
        return
    for shape in shapes:
        for arm in arms:
            _check_chain([directory, directory / shape, arm_folder(directory, shape, arm)],
                         seeds)


def _check_arm_names(arms: Sequence[str]) -> None:
    """Raise ValueError if two of ``arms`` would save into one folder (each would overwrite
    the other's failed seeds), or one into ``.`` or ``..`` (the shape's folder, or the one
    above it)."""
    taken: dict[str, str] = {}
    for arm in arms:
        name = _folder_name(arm)
        if name in (".", ".."):
            raise ValueError(f"the arm {arm!r} would save its failed seeds into {name!r}, not "
                             "a folder of its own; give it a label with a letter or digit")
        if name in taken:
            raise ValueError(f"the arms {taken[name]!r} and {arm!r} would both save their "
                             f"failed seeds into the folder {name!r}; give them labels that "
                             "differ in letters, digits, dots, hyphens or underscores")
        taken[name] = arm


def _check_chain(chain: list[Path], seeds: range) -> None:
    """The folders ``chain``, each in the one before, the first existing: each that exists a
    folder (links followed), the last of those writable, and the seeds' names free in the
    last if it exists (see :func:`check_folder`)."""
    last = chain[0]
    for folder in chain:
        kind = _kind(folder)
        if kind is None:
            break
        if kind != "folder":
            raise ValueError(f"not a directory that can be written ({folder} is {kind}; "
                             "tinynet writes the failed seeds into folders only)")
        last = folder
    if not writable_folder(last):
        raise ValueError(f"not a directory that can be written ({last} is read-only)")
    if last == chain[-1]:
        _check_seed_names(last, seeds)


def _kind(path: Path) -> str | None:
    """What stands at ``path``, a symlink followed: ``"folder"``, ``"a regular file"``,
    ``"something other than a folder"``, ``"a symlink to nothing"``, ``"a symlink in a
    loop"``, or None if nothing does."""
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        return "a symlink to nothing" if os.path.islink(path) else None
    except OSError as error:
        if error.errno == errno.ELOOP:
            return "a symlink in a loop"
        raise
    return ("folder" if stat.S_ISDIR(mode) else "a regular file" if stat.S_ISREG(mode) else
            "something other than a folder")


def _check_seed_names(folder: Path, seeds: range) -> None:
    """Raise ValueError if a folder or a special file stands in ``folder`` at the name of a
    file one of ``seeds`` would write (the write would stop there, after training)."""
    with os.scandir(folder) as entries:
        for entry in entries:
            match = _SEED_FILE.fullmatch(entry.name)
            if match and int(match["seed"]) in seeds:
                try:
                    check_destination(Path(entry.path))
                except (IsADirectoryError, ValueError) as error:
                    raise ValueError(f"{error}; a failed seed's file would be written there: "
                                     "move it away") from None


def save_failed(study: Study, directory: Path, written: list[Path]) -> None:
    """Write every seed of ``study`` that did not succeed under ``directory`` (see the
    module's docstring), each file whole (:func:`tinynet.files.write_whole`), adding each to
    ``written`` as it is."""
    for arm, result in enumerate(study.results):
        folder = arm_folder(directory, study.setup.shape, result.arm.name)
        history = result.ensemble
        for index in np.flatnonzero(result.outcomes != "solved"):
            folder.mkdir(parents=True, exist_ok=True)
            seed = study.seeds[index]
            for trained, name in ((False, "initial"), (True, "trained")):
                written.append(study.network(arm, seed, trained=trained).save(
                    folder / f"seed{seed}_{name}.npz"))  # save writes the file whole
            record = history[int(index)]
            text = json.dumps(finite_or_none({
                "arm": result.arm.name, "seed": int(seed), "outcome": result.outcomes[index],
                "final_loss": record.final_loss, "diverged_epoch": record.diverged_epoch,
                "record_every": record.record_every,  # loss[i]: epoch (i + 1) * record_every
                "loss": record.loss.tolist()}), indent=1)
            written.append(write_whole(folder / f"seed{seed}.json",
                                       lambda partial: partial.write_text(text + "\n")))
