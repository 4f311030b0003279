"""The lessons' exercises, each as the change its text asks for; run them for the answer key.

    python tutorial/exercises.py    # every exercise, with its lesson's default settings

Each exercise runs as its lesson's script with its change made (settings after the lesson's
``parameters`` cell, or one line of the lesson replaced), in a new folder, with the lesson's
other settings at their defaults, as a student runs it. What each printed is kept in
``tutorial/answers/exercises.json``; the answer key, ``tutorial/answers/README.md``, quotes it
(tests/test_tutorial.py keeps every quoted line in step with the record, and runs every
exercise with small settings).
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import make_notebooks

HERE = Path(__file__).resolve().parent
RECORD = HERE / "answers" / "exercises.json"


@dataclass(frozen=True)
class Exercise:
    """One exercise: its lesson (``"02_many_seeds"``), the words of its text that name the
    change (``says``), the settings it makes, and the line of the lesson it replaces, if any:
    (the line, the line it becomes)."""

    lesson: str
    says: str
    settings: dict = field(default_factory=dict)
    edit: tuple[str, str] | None = None

    def script(self, parameters: dict | None = None) -> str:
        """The lesson's script with this exercise's change, and ``parameters`` set first (the
        exercise's own settings win)."""
        text = make_notebooks.script(HERE / f"{self.lesson}.py",
                                     {**(parameters or {}), **self.settings})
        if self.edit is not None:
            line, changed = self.edit
            if text.count(line) != 1:
                raise ValueError(f"{self.lesson} has {text.count(line)} lines {line!r}, not one")
            text = text.replace(line, changed)
        return text


EXERCISES = [
    Exercise("01_a_network_by_hand", "Set `SEED = 0`", {"SEED": 0}),
    Exercise("01_a_network_by_hand",
             "`report = tinynet.gradcheck(tinynet.mlp([2, 2, 2, 1], seed=SEED), X, y)`",
             edit=("report = tinynet.gradcheck(net, X, y)",
                   "report = tinynet.gradcheck(tinynet.mlp([2, 2, 2, 1], seed=SEED), X, y)")),
    Exercise("01_a_network_by_hand", "change `z > 0` to `z >= 0`",
             edit=("np.where(z > 0, 1.0, ALPHA)", "np.where(z >= 0, 1.0, ALPHA)")),
    Exercise("02_many_seeds", "Set `SEEDS = 10_000`", {"SEEDS": 10_000}),
    Exercise("02_many_seeds", 'use `Arm("normal", shuffle=True)`',
             edit=('run_study([Arm("normal")]', 'run_study([Arm("normal", shuffle=True)]')),
    Exercise("02_many_seeds", "`[(0.406, 0.425)]`",
             edit=("[(0.45, 0.55), (0.40, 0.45), (0.40, 0.41), (0.91, 0.98)]",
                   "[(0.406, 0.425)]")),
    Exercise("03_when_he_is_normal", '`INITS = ("normal", "he_leaky", "xavier_normal")`',
             {"INITS": ("normal", "he_leaky", "xavier_normal")}),
    Exercise("03_when_he_is_normal", "Set `WIDTHS = (16, 32, 64)`", {"WIDTHS": (16, 32, 64)}),
    Exercise("03_when_he_is_normal", "`Setup(hidden=(width, width), seeds=SEEDS)`",
             edit=("Setup(hidden=(width,), seeds=SEEDS)",
                   "Setup(hidden=(width, width), seeds=SEEDS)")),
    Exercise("04_depth", 'Set `ACTIVATION = "tanh"`', {"ACTIVATION": "tanh"}),
    Exercise("04_depth", "Set `DEPTHS = (1, 2, 4, 8, 16)`", {"DEPTHS": (1, 2, 4, 8, 16)}),
    Exercise("04_depth", "Set `SIGNAL_DEPTH = 32`", {"SIGNAL_DEPTH": 32}),
    Exercise("05_distributions_and_fans", "Set `N = 1024`", {"N": 1024}),
    Exercise("05_distributions_and_fans", "Set `CUT = 1.0`", {"CUT": 1.0}),
    Exercise("05_distributions_and_fans", 'Set `ACTIVATION = "relu"`', {"ACTIVATION": "relu"}),
    Exercise("06_what_fixes_99mlp", "Set `SEEDS = 2000`", {"SEEDS": 2000}),
    Exercise("06_what_fixes_99mlp",
             '`[*preset.arms, Arm("normal", loss="bce", optimizer="adam", lr=0.01, '
             'label="Adam + BCE")]`',
             edit=("arms = list(preset.arms)",
                   'arms = [*preset.arms, Arm("normal", loss="bce", optimizer="adam", lr=0.01, '
                   'label="Adam + BCE")]')),
    Exercise("06_what_fixes_99mlp", '`tuned = change("momentum")`',
             edit=('tuned = change("adam")', 'tuned = change("momentum")')),
    Exercise("07_beyond_xor", 'Set `ACTIVATION = "sigmoid"`', {"ACTIVATION": "sigmoid"}),
    Exercise("07_beyond_xor", "Set `SEEDS = 200`", {"SEEDS": 200}),
    Exercise("07_beyond_xor",
             '`arms.append(Arm("lecun_normal", loss="cross_entropy", shuffle=True, '
             'label="Xavier"))`',
             edit=("study = run_study(arms, setup",
                   'arms.append(Arm("lecun_normal", loss="cross_entropy", shuffle=True, '
                   'label="Xavier"))\nstudy = run_study(arms, setup')),
    Exercise("08_depth_that_trains", 'Set `NORM = "post"`', {"NORM": "post"}),
    Exercise("08_depth_that_trains", "Set `DEPTH = 64`", {"DEPTH": 64}),
    Exercise("08_depth_that_trains", "Set `WARMUP = 400`", {"WARMUP": 400}),
]
"""Every lesson's exercises, in order."""


def numbered() -> dict[str, Exercise]:
    """The exercises by name: the lesson's number and the exercise's, ``"02.3"``."""
    names, count = {}, {}
    for exercise in EXERCISES:
        count[exercise.lesson] = count.get(exercise.lesson, 0) + 1
        names[f"{exercise.lesson[:2]}.{count[exercise.lesson]}"] = exercise
    return names


def run(exercise: Exercise, folder: Path, parameters: dict | None = None
        ) -> subprocess.CompletedProcess:
    """Run ``exercise`` (with ``parameters``, see :meth:`Exercise.script`) as a script in
    ``folder``, with this Python and its environment; its output captured."""
    script = folder / f"{exercise.lesson}.py"
    script.write_text(exercise.script(parameters))
    return subprocess.run([sys.executable, script.name], cwd=folder, capture_output=True,
                          text=True)


def main() -> None:
    record = {}
    for name, exercise in numbered().items():
        with tempfile.TemporaryDirectory() as folder:
            done = run(exercise, Path(folder))
        if done.returncode != 0:
            raise SystemExit(f"exercise {name} ({exercise.says}) failed:\n{done.stderr}")
        record[name] = done.stdout
        print(f"exercise {name}: {exercise.says}", file=sys.stderr)
    RECORD.parent.mkdir(exist_ok=True)
    RECORD.write_text(json.dumps(record, indent=2, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()
