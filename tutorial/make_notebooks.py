"""Turn the lessons into notebooks with their outputs, and keep the README's lesson figures.

    pip install ".[docs]"                               # Jupytext, nbclient, ipykernel
    python tutorial/make_notebooks.py                   # every lesson, into tutorial/notebooks/
    python tutorial/make_notebooks.py 02 --out /tmp/nb  # one lesson, elsewhere
    python tutorial/make_notebooks.py --cold --readme README.md   # the README's run times

Each lesson (``tutorial/NN_*.py``, Jupytext percent format) is read as a notebook and run
cell by cell in a Jupyter kernel with its default settings, in the output folder, where it
writes its figures; the notebook is saved there with every output (``NN_*.ipynb``). The
figure of each lesson that the README shows is copied to ``tutorial/figures/``. With
``--cold`` each lesson also runs first with empty kernel caches, and a build of every lesson
records both times in ``tutorial/figures/lessons.json``; ``--readme`` rewrites the README's
"Teaching with tinynet" block from that record (tests/test_tutorial.py keeps the two equal).

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

HERE = Path(__file__).resolve().parent
LESSONS = sorted(HERE.glob("[0-9][0-9]_*.py"))
"""The lessons, in order."""

FIGURES = HERE / "figures"
RECORD = FIGURES / "lessons.json"

README_FIGURES = {
    "01_a_network_by_hand": ("01_boundaries.png", "a decision boundary, before and after"),
    "02_many_seeds": ("02_studies_of_100.png", "the same study of 100 seeds, repeated"),
    "03_when_he_is_normal": ("03_widths.png", "success rate against width, N(0,1) and He"),
    "04_depth": ("04_depth.png", "success rate against depth, six initializers"),
    "05_distributions_and_fans": ("05_fans.png", "second moments through m → n → m stacks"),
}
"""Per lesson, the figure it writes that the README shows, and what it shows."""

MARKERS = ("<!-- tutorial: start -->", "<!-- tutorial: end -->")

CACHES = ("TINYNET_KERNEL_DIR", "NUMBA_CACHE_DIR")
"""Where the compiled kernels are cached: tinynet's generated ones, and Numba's."""

INSTALL_HINT = 'the notebooks need the docs extra: pip install ".[docs]"'


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
    tree = ast.parse(cells[0].source)
    return [target.id for node in tree.body if isinstance(node, ast.Assign)
            for target in node.targets if isinstance(target, ast.Name)]


def with_parameters(lesson: Path, parameters: dict | None = None):
    """The lesson as a notebook (``nbformat.NotebookNode``); with ``parameters``, followed
    after its ``parameters`` cell by a cell that sets them. Every name must be one of the
    lesson's parameters."""
    jupytext = _jupytext()
    notebook = jupytext.read(lesson)
    names = parameter_names(notebook)
    if parameters:
        unknown = sorted(set(parameters) - set(names))
        if unknown:
            raise ValueError(f"{lesson.name} has no parameter {', '.join(unknown)}; its "
                             f"parameters are {', '.join(names)}")
        from nbformat.v4 import new_code_cell
        index = next(i for i, cell in enumerate(notebook.cells)
                     if "parameters" in cell.get("metadata", {}).get("tags", []))
        source = "\n".join(f"{name} = {value!r}" for name, value in parameters.items())
        notebook.cells.insert(index + 1, new_code_cell(
            source, metadata={"tags": ["injected-parameters"]}))
    return notebook


def as_script(notebook) -> str:
    """The notebook as a Python script (Jupytext percent format), as a student runs it."""
    return _jupytext().writes(notebook, fmt="py:percent")


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


def build(lessons: list[Path], out: Path, cold: bool = False) -> dict:
    """Execute ``lessons`` as notebooks in ``out`` with their defaults, save each there with
    its outputs, copy each README figure to ``tutorial/figures/``; return the run record.

    With ``cold``, each lesson first runs with empty kernel caches of its own (tinynet's and
    Numba's: a machine that has compiled nothing), then again with what that run cached; the
    record keeps both times."""
    import nbformat
    out.mkdir(parents=True, exist_ok=True)
    FIGURES.mkdir(exist_ok=True)
    record = {"machine": {"cores": os.cpu_count(), "python": platform.python_version()},
              "lessons": {}}
    for lesson in lessons:
        entry = {"load_average_1min": round(os.getloadavg()[0], 2)}
        with tempfile.TemporaryDirectory() as caches:
            saved = {name: os.environ.get(name) for name in CACHES}
            if cold:  # the kernel process inherits this environment
                os.environ.update({name: str(Path(caches) / name) for name in CACHES})
                entry["cold_seconds"] = round(_run(lesson, out)[1], 1)
            try:
                notebook, seconds = _run(lesson, out)
            finally:
                for name, value in saved.items():
                    if value is None:
                        os.environ.pop(name, None)
                    else:
                        os.environ[name] = value
        entry["seconds"] = round(seconds, 1)
        nbformat.write(notebook, out / f"{lesson.stem}.ipynb")
        figure, _ = README_FIGURES[lesson.stem]
        shutil.copyfile(out / figure, FIGURES / figure)
        record["lessons"][lesson.stem] = entry
        print(f"{lesson.name}: {seconds:.1f} s -> {out / lesson.stem}.ipynb", file=sys.stderr)
    return record


def title(lesson: Path) -> str:
    """The lesson's title: its first Markdown heading, without "Lesson N: "."""
    for line in lesson.read_text().splitlines():
        if line.startswith("# # "):
            text = line[4:].split(": ", 1)[-1]
            return text[0].upper() + text[1:]
    raise ValueError(f"{lesson.name} has no '# # ' heading")


def render(record: dict) -> str:
    """The README's block: the lessons in order with their figures and run times."""
    lines = []
    for index, lesson in enumerate(LESSONS, start=1):
        entry = record["lessons"][lesson.stem]
        lines.append(f"{index}. [{title(lesson)}](tutorial/{lesson.name}) ({entry['seconds']:.0f} "
                     f"s; {entry['cold_seconds']:.0f} s on a first run)")
    loads = [entry["load_average_1min"] for entry in record["lessons"].values()]
    lines += ["", f"Run times: each lesson executed as a notebook with its default settings, "
                  f"kernel start included (`python tutorial/make_notebooks.py --cold`): first "
                  f"with empty kernel caches (a first run compiles the kernels its networks "
                  f"need), then again with what that run cached; on "
                  f"{record['machine']['cores']} cores at a 1-minute load average of "
                  f"{min(loads):.1f} to {max(loads):.1f} when the lessons started (Python "
                  f"{record['machine']['python']}).", ""]
    for lesson in LESSONS:
        figure, alt = README_FIGURES[lesson.stem]
        lines.append(f"![{alt}](tutorial/figures/{figure})")
    return "\n".join(lines) + "\n"


def put_between(readme: Path, markdown: str) -> None:
    """Replace what stands between the README's tutorial markers with ``markdown``."""
    start, end = MARKERS
    text = readme.read_text()
    after = text.index(start) + len(start)
    readme.write_text(text[:after] + "\n" + markdown + text[text.index(end):])


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("lessons", nargs="*",
                        help="lesson numbers or names to build (default: every lesson)")
    parser.add_argument("--out", type=Path, default=HERE / "notebooks",
                        help="folder for the notebooks and the figures they write")
    parser.add_argument("--cold", action="store_true",
                        help="time each lesson's first run too, with empty kernel caches")
    parser.add_argument("--readme", type=Path,
                        help="rewrite this README's tutorial block from the record")
    args = parser.parse_args(argv)
    chosen = [lesson for lesson in LESSONS
              if not args.lessons or any(lesson.stem.startswith(name) for name in args.lessons)]
    if not chosen:
        parser.error(f"no lesson matches {args.lessons}; the lessons are "
                     f"{', '.join(lesson.stem for lesson in LESSONS)}")
    record = build(chosen, args.out, args.cold)
    if len(chosen) == len(LESSONS) and args.cold:
        RECORD.write_text(json.dumps(record, indent=2) + "\n")
    if args.readme:
        put_between(args.readme, render(json.loads(RECORD.read_text())))


if __name__ == "__main__":
    main()
