"""Turn the lessons into notebooks with their outputs; keep the lessons of docs/teaching.md.

    pip install ".[teach]"                              # JupyterLab, Jupytext, the kernel
    python tutorial/make_notebooks.py                   # every lesson, into tutorial/notebooks/
    python tutorial/make_notebooks.py 02 --out /tmp/nb  # one lesson, elsewhere
    python tutorial/make_notebooks.py --cold --readme docs/teaching.md   # the docs' run times

Each lesson (``tutorial/NN_*.py``, Jupytext percent format) is read as a notebook and run
cell by cell in a Jupyter kernel with its default settings, in the output folder (it writes
its figures into ``lesson_figures/`` there); the notebook is saved there with every output
(``NN_*.ipynb``).
With ``--cold`` each lesson first runs with empty kernel caches, and both times are kept.
``--cold --readme docs/teaching.md`` (every lesson) also keeps the run: its record (times and what
each lesson printed) in ``tutorial/figures/lessons.json``, the figure of each lesson that the
teaching page shows in ``tutorial/figures/``, and that page's lesson list
rendered from the record (tests/test_tutorial.py keeps the two equal, and the lessons' text
in step with what they printed).

The tests run the lessons through :func:`with_parameters` too, with small settings: a cell
that sets them follows the lesson's cell tagged ``parameters``, papermill's convention.
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import platform
import shutil
import sys
import tempfile
import time
from pathlib import Path
from unittest.mock import patch

from tinynet.files import put_between

HERE = Path(__file__).resolve().parent
LESSONS = sorted(HERE.glob("[0-9][0-9]_*.py"))
"""The lessons, in order."""

FIGURES = HERE / "figures"
RECORD = FIGURES / "lessons.json"

OUTPUTS = "lesson_figures"
"""The folder, under the one a lesson runs in, that it writes its figures into (git ignores
it: a lesson run in a checkout leaves ``git status`` clean)."""

SHOWN_FIGURES = {
    "01_a_network_by_hand": ("01_boundaries.png", "a decision boundary, before and after"),
    "02_many_seeds": ("02_studies_of_100.png", "the same study of 100 seeds, repeated"),
    "03_when_he_is_normal": ("03_widths.png", "success rate against width, N(0,1) and He"),
    "04_depth": ("04_depth.png", "success rate against depth, six initializers"),
    "05_distributions_and_fans": ("05_fans.png", "second moments through m → n → m stacks"),
    "06_what_fixes_99mlp": ("06_fixes.png", "each change against the notes' network"),
    "07_beyond_xor": ("07_digits_curves.png", "test accuracy and loss over epochs on the "
                                             "digits, median and quartiles over seeds"),
    "08_depth_that_trains": ("08_residual_depth.png", "success rate at 4 and 32 layers: the "
                                                     "plain stack, pre-norm blocks, ReZero"),
}
"""Per lesson, the figure it writes that the teaching page shows, and what it shows."""

MARKERS = ("<!-- tutorial: start -->", "<!-- tutorial: end -->")

PARAMETERS_CELL = '# %% tags=["parameters"]\n'
"""How a lesson's settings cell starts."""

CACHES = ("TINYNET_KERNEL_DIR", "NUMBA_CACHE_DIR")
"""Where the compiled kernels are cached: tinynet's generated ones, and Numba's."""

INSTALL_HINT = 'the notebooks need the teach extra: pip install ".[teach]"'


def _jupytext():
    try:
        import jupytext
    except ImportError:
        raise SystemExit(f"jupytext is not installed; {INSTALL_HINT}") from None
    return jupytext


def parameter_names(notebook) -> list[str]:
    """The names the notebook's cell tagged ``parameters`` assigns."""
    cells = [cell for cell in notebook.cells
             if "parameters" in cell.get("metadata", {}).get("tags", [])]
    if len(cells) != 1:
        raise ValueError(f"a lesson needs exactly one cell tagged 'parameters', found "
                         f"{len(cells)}")
    names = []
    for node in ast.parse(cells[0].source).body:
        for target in node.targets if isinstance(node, ast.Assign) else []:
            names += [name.id for name in ast.walk(target) if isinstance(name, ast.Name)]
    return names


def check_parameters(lesson: Path, parameters: dict) -> None:
    """Refuse a name that is not one of the lesson's parameters."""
    names = parameter_names(_jupytext().read(lesson))
    unknown = sorted(set(parameters) - set(names))
    if unknown:
        raise ValueError(f"{lesson.name} has no parameter {', '.join(unknown)}; its "
                         f"parameters are {', '.join(names)}")


def with_parameters(lesson: Path, parameters: dict | None = None):
    """The lesson as a notebook (``nbformat.NotebookNode``); with ``parameters``, followed
    after its ``parameters`` cell by a cell that sets them. Every name must be one of the
    lesson's parameters."""
    notebook = _jupytext().read(lesson)
    if parameters:
        check_parameters(lesson, parameters)
        from nbformat.v4 import new_code_cell
        index = next(i for i, cell in enumerate(notebook.cells)
                     if "parameters" in cell.get("metadata", {}).get("tags", []))
        source = "\n".join(f"{name} = {value!r}" for name, value in parameters.items())
        notebook.cells.insert(index + 1, new_code_cell(
            source, metadata={"tags": ["injected-parameters"]}))
    return notebook


def script(lesson: Path, parameters: dict | None = None) -> str:
    """The lesson's own text; with ``parameters``, lines that set them follow its
    ``parameters`` cell, as :func:`with_parameters` does for the notebook."""
    text = lesson.read_text()
    if not parameters:
        return text
    check_parameters(lesson, parameters)
    start = text.index(PARAMETERS_CELL)
    end = text.index("\n# %%", start + len(PARAMETERS_CELL)) + 1
    lines = "".join(f"{name} = {value!r}\n" for name, value in parameters.items())
    return f"{text[:end]}# %%\n{lines}\n{text[end:]}"


def execute(notebook, folder: Path, timeout: int = 900):
    """Run every cell of ``notebook`` in a new Python kernel whose working folder is
    ``folder``; return it with its outputs. A cell that raises raises here
    (``nbclient.exceptions.CellExecutionError``, with the cell and its traceback)."""
    try:
        from nbclient import NotebookClient
    except ImportError:
        raise SystemExit(f"nbclient is not installed; {INSTALL_HINT}") from None
    client = NotebookClient(notebook, timeout=timeout, kernel_name="python3",
                            resources={"metadata": {"path": str(folder)}})
    return client.execute()


def _run(lesson: Path, out: Path) -> tuple[object, float]:
    """Execute ``lesson`` with its defaults in ``out``: (the notebook, seconds)."""
    started = time.perf_counter()
    notebook = execute(with_parameters(lesson), out)
    return notebook, time.perf_counter() - started


def printed(notebook) -> str:
    """Everything the notebook's cells printed to stdout, in order."""
    return "".join(output.get("text", "") for cell in notebook.cells
                   if cell.cell_type == "code" for output in cell.outputs
                   if output.output_type == "stream" and output.name == "stdout")


def build(lessons: list[Path], out: Path, cold: bool = False) -> dict:
    """Execute ``lessons`` as notebooks in ``out`` with their defaults and save each there
    with its outputs; return the run record: per lesson its time, the load when it started
    and what it printed.

    With ``cold``, each lesson first runs with empty kernel caches of its own (tinynet's and
    Numba's: a machine that has compiled nothing), then again with what that run cached; the
    record keeps both times."""
    import nbformat
    out.mkdir(parents=True, exist_ok=True)
    record = {"machine": {"cores": os.cpu_count(), "python": platform.python_version()},
              "lessons": {}}
    for lesson in lessons:
        entry = {"load_average_1min": round(os.getloadavg()[0], 2)}
        if cold:  # the kernel process inherits this environment
            with tempfile.TemporaryDirectory() as caches, patch.dict(
                    os.environ, {name: str(Path(caches) / name) for name in CACHES}):
                entry["cold_seconds"] = round(_run(lesson, out)[1], 1)
                notebook, seconds = _run(lesson, out)
        else:
            notebook, seconds = _run(lesson, out)
        entry["seconds"] = round(seconds, 1)
        entry["output"] = printed(notebook)
        nbformat.write(notebook, out / f"{lesson.stem}.ipynb")
        record["lessons"][lesson.stem] = entry
        print(f"{lesson.name}: {seconds:.1f} s -> {out / lesson.stem}.ipynb", file=sys.stderr)
    return record


def publish(record: dict, out: Path) -> None:
    """Keep a build of every lesson: its record in ``tutorial/figures/lessons.json``, and the
    figure of each lesson that the teaching page shows copied from ``out``."""
    FIGURES.mkdir(exist_ok=True)
    for figure, _ in SHOWN_FIGURES.values():
        shutil.copyfile(out / OUTPUTS / figure, FIGURES / figure)
    RECORD.write_text(json.dumps(record, indent=2, ensure_ascii=False) + "\n")


def title(lesson: Path) -> str:
    """The lesson's title: its first Markdown heading, without "Lesson N: "."""
    for line in lesson.read_text().splitlines():
        if line.startswith("# # "):
            text = line[4:].split(": ", 1)[-1]
            return text[0].upper() + text[1:]
    raise ValueError(f"{lesson.name} has no '# # ' heading")


def render(record: dict) -> str:
    """The teaching page's lesson list: the lessons in order, each with its run times and figure."""
    lines = []
    for index, lesson in enumerate(LESSONS, start=1):
        entry = record["lessons"][lesson.stem]
        figure, alt = SHOWN_FIGURES[lesson.stem]
        lines += [f"{index}. [{title(lesson)}](../tutorial/{lesson.name}) ({entry['seconds']:.0f} "
                  f"s; {entry['cold_seconds']:.0f} s on a first run)", "",
                  f"   ![{alt}](../tutorial/figures/{figure})", ""]
    loads = [entry["load_average_1min"] for entry in record["lessons"].values()]
    lines.append(f"Run times: each lesson executed as a notebook with its default settings, "
                 f"kernel start included (`python tutorial/make_notebooks.py --cold`): first "
                 f"with empty kernel caches (a first run compiles the kernels its networks "
                 f"need), then again with what that run cached; on "
                 f"{record['machine']['cores']} cores at a 1-minute load average of "
                 f"{min(loads):.1f} to {max(loads):.1f} when the lessons started (Python "
                 f"{record['machine']['python']}).")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("lessons", nargs="*",
                        help="lesson numbers or names to build (default: every lesson)")
    parser.add_argument("--out", type=Path, default=HERE / "notebooks",
                        help="folder for the notebooks and the figures they write")
    parser.add_argument("--cold", action="store_true",
                        help="time each lesson's first run too, with empty kernel caches")
    parser.add_argument("--readme", type=Path,
                        help="rewrite the lesson list of this page (docs/teaching.md) "
                             "from the record")
    args = parser.parse_args(argv)
    chosen = [lesson for lesson in LESSONS if not args.lessons or any(
        lesson.stem.startswith(name) or name.isdigit() and int(lesson.stem[:2]) == int(name)
        for name in args.lessons)]
    if not chosen:
        parser.error(f"no lesson matches {args.lessons}; the lessons are "
                     f"{', '.join(lesson.stem for lesson in LESSONS)}")
    if args.readme and not (args.cold and len(chosen) == len(LESSONS)):
        parser.error("--readme needs a timed build of every lesson: --cold, no lesson names")
    record = build(chosen, args.out, args.cold)
    if args.readme:
        publish(record, args.out)
        put_between(args.readme, *MARKERS, "\n" + render(record))


if __name__ == "__main__":
    main()
