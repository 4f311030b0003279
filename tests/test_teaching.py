"""A lesson runs the way a teacher runs it: ``pip install ".[teach]" && jupyter lab tutorial/``,
the lesson opened as a notebook through Jupytext's contents manager in JupyterLab's server, run
cell by cell in the Python kernel, and saved back as the lesson's text."""

import json
import shutil

import nbformat
import pytest
from nbclient import NotebookClient

from helpers import ROOT
from jupyter_lab import ask, jupyter_lab

pytestmark = pytest.mark.slow  # a JupyterLab server and a kernel: about 20 s with warm kernels

LESSON = "02_many_seeds.py"
WAIT = 120  # seconds for JupyterLab to answer; a bound on a hang, not a measure of speed


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    """``jupyter lab tutorial/`` on a copy of the lessons (they write their figures into it),
    with a token; yields (its address, the folder it serves)."""
    folder = tmp_path_factory.mktemp("lab") / "tutorial"
    shutil.copytree(ROOT / "tutorial", folder, ignore=shutil.ignore_patterns(
        "notebooks", "figures", "__pycache__"))
    with jupyter_lab(["jupyter", "lab", str(folder)], folder.parent / "jupyter", WAIT) as at:
        yield at, folder


def test_lesson_2_opens_as_a_notebook_runs_and_shows_its_figures(lab):
    address, folder = lab
    model = ask(f"{address}/api/contents/{LESSON}?type=notebook&content=1", WAIT)
    assert model["type"] == "notebook"  # Jupytext's contents manager read the .py as one
    notebook = nbformat.from_dict(model["content"])
    assert notebook.metadata["kernelspec"]["name"] == "python3"
    kernels = ask(f"{address}/api/kernelspecs", WAIT)["kernelspecs"]
    assert "python3" in kernels  # the kernel it offers
    code = [cell for cell in notebook.cells if cell.cell_type == "code"]
    assert code and any(cell.cell_type == "markdown" for cell in notebook.cells)
    # What lesson 2's figures are made of, read in its kernel after its last cell.
    notebook.cells.append(nbformat.v4.new_code_cell(PROBE))
    NotebookClient(notebook, kernel_name="python3", timeout=600,
                   resources={"metadata": {"path": str(folder)}}).execute()
    images = sum("image/png" in output.get("data", {}) for cell in notebook.cells[:-1]
                 for output in cell.get("outputs", []))
    assert images >= 3
    shown = json.loads(notebook.cells[-1].outputs[0]["text"])
    assert shown["gallery_seeds"] == list(range(100))  # lesson 2's default: 100 seeds
    assert shown["columns"] == shown["rows"] == 10
    assert shown["failed_curves"] == min(shown["failed_seeds"], 100) > 0  # the first 100
    # Saved from JupyterLab, the lesson stays a text file of code and prose, no outputs.
    notebook.cells.pop()
    ask(f"{address}/api/contents/{LESSON}", WAIT, "PUT",
        {"type": "notebook", "format": "json", "content": notebook})
    saved = (folder / LESSON).read_text()
    assert "image/png" not in saved and "execution_count" not in saved
    assert all(cell.source.splitlines()[0] in saved for cell in code if cell.source)


PROBE = """
import json
panels = [ax for ax in gallery.axes if ax.get_title().startswith("seed ")]
print(json.dumps({
    "gallery_seeds": [int(ax.get_title().split()[1]) for ax in panels],
    "columns": len({round(ax.get_position().x0, 6) for ax in panels}),
    "rows": len({round(ax.get_position().y0, 6) for ax in panels}),
    "failed_seeds": int((study.results[0].outcomes != "solved").sum()),
    "failed_curves": sum(line.get_linestyle() == "-" for line in failed.axes[0].lines)}))
"""
