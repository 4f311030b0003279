"""What ``import tinynet`` and the command's start load, each checked in a new Python (this one
has imported everything already): the XOR bench, the plots (so matplotlib), Numba, SciPy and the
cluster code only where they are used, so that the warm default CLI job keeps within its
second (benchmarks/bench_startup.py)."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from helpers import checkout_environment

from tinynet.compiled import caches

ROOT = Path(__file__).resolve().parents[1]

LAZY = ("checking", "diagnostics", "experiments", "plots", "xor")
"""The submodules of tinynet that load on first use."""

NOT_AT_IMPORT = (*(f"tinynet.{name}" for name in LAZY), "matplotlib", "numba", "llvmlite",
                 "scipy", "dask")
"""What ``import tinynet`` leaves out: the XOR bench, the plots, the gradient check and the
signal diagnostics load on first use, the rest only when a fit, a figure or a test needs
them."""

NOT_IN_A_LOCAL_RUN = ("numba", "llvmlite", "scipy", "matplotlib", "dask", "tinynet.checking",
                      "tinynet.plots", "tinynet.xor.figures", "tinynet.compiled.backend",
                      "tinynet.xor.cluster", "socket")
"""What the command does not load for --help, nor for a run on the NumPy backend that draws
nothing and has no cluster: the compiled backend, the figures, the gradient check, the cluster
code (and the socket module it needs to name a worker)."""

THREAD_POOLS = ("numba.np.ufunc.omppool", "numba.np.ufunc.tbbpool", "numba.np.ufunc.workqueue")
"""The modules of Numba's threading layers, one of which loads when Numba starts its own
thread pool (which the generated kernels never use: they run on a pool of Python threads)."""


def loaded_after(code: str) -> list[str]:
    """The module names in ``sys.modules`` once ``code`` has run in a new Python."""
    code += "\nimport json, sys\nprint(json.dumps(sorted(sys.modules)))"
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=checkout_environment(),
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def among(modules: list[str], names: tuple[str, ...]) -> list[str]:
    """Which of ``names`` (packages with their submodules) are in ``modules``."""
    return [name for name in names
            if any(module == name or module.startswith(name + ".") for module in modules)]


def test_import_tinynet_loads_neither_the_bench_nor_plots_nor_numba_nor_scipy():
    loaded = loaded_after("import tinynet")
    assert among(loaded, NOT_AT_IMPORT) == []
    assert among(loaded, ("tinynet.network", "tinynet.training")) == ["tinynet.network",
                                                                      "tinynet.training"]


def test_the_plots_load_neither_the_bench_nor_matplotlib():
    # The library's figures import nothing of the harness: a study's figures sit beside it
    # (tinynet.xor.figures), and matplotlib loads when a figure is drawn.
    assert among(loaded_after("import tinynet.plots"), ("tinynet.xor", "matplotlib")) == []


def test_every_public_name_resolves_and_the_lazy_modules_load_on_first_use():
    code = "\n".join([
        "import json, sys, types, tinynet",
        "report = {'loaded_at_import': [name for name in tinynet.__all__",
        "                               if f'tinynet.{name}' in sys.modules], 'wrong': []}",
        "for name in tinynet.__all__:",
        "    value = getattr(tinynet, name)",
        "    module = sys.modules.get(f'tinynet.{name}')",
        "    if isinstance(value, types.ModuleType) and value is not module:",
        "        report['wrong'].append(name)",
        "report['not_in_dir'] = sorted(set(tinynet.__all__) - set(dir(tinynet)))",
        "try:",
        "    tinynet.no_such_name",
        "except AttributeError as error:",
        "    report['unknown'] = str(error)",
        "namespace = {}",
        "exec('from tinynet import *', namespace)",
        "report['star'] = sorted(set(tinynet.__all__) - set(namespace))",
        "report['experiments'] = tinynet.experiments.XorSetup is tinynet.xor.Setup",
        "report['gradcheck'] = tinynet.gradcheck is tinynet.checking.gradcheck",
        "from tinynet import plots",
        "report['from_import'] = plots is sys.modules['tinynet.plots']",
        "print(json.dumps(report))"])
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=checkout_environment(),
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert not set(LAZY) & set(report["loaded_at_import"]), report
    assert report["wrong"] == [] and report["not_in_dir"] == [] and report["star"] == [], report
    assert report["unknown"] == "module 'tinynet' has no attribute 'no_such_name'"
    assert report["experiments"] and report["gradcheck"] and report["from_import"]


@pytest.mark.parametrize("arguments", [
    ["--help"],
    ["--backend", "numpy", "--hidden", "2", "--seeds", "4", "--epochs", "20"],
], ids=["help", "numpy backend"])
def test_the_command_loads_no_numba_figures_or_cluster_code_it_does_not_use(arguments):
    code = "\n".join([
        "import runpy, sys",
        f"sys.argv = ['xor.py', *{arguments!r}]",
        "try:",
        "    runpy.run_path('examples/xor.py', run_name='__main__')",
        "except SystemExit as stop:",
        "    assert stop.code in (0, None), stop.code"])
    assert among(loaded_after(code), NOT_IN_A_LOCAL_RUN) == []


@pytest.mark.slow  # compiles the 2-2-1 kernel if no cache has it
def test_the_compiled_job_does_not_start_numbas_thread_pool():
    code = "\n".join([
        "from tinynet.xor.cli import main",
        "main(['--init', 'he_leaky', '--shuffle', '--hidden', '2', '--seeds', '100',",
        "      '--epochs', '50'])"])
    modules = loaded_after(code)
    assert among(modules, ("numba",)) == ["numba"]  # it did train on the compiled backend
    assert among(modules, THREAD_POOLS) == []


def test_a_trusted_kernel_folder_is_walked_once(tmp_path, monkeypatch):
    folder = tmp_path / "kernels"
    (folder / "__pycache__").mkdir(parents=True)
    for name in ("a.py", "__pycache__/a.nbi", "__pycache__/a.nbc"):
        (folder / name).write_text("")
    checked = []
    entry = caches._untrusted_entry
    monkeypatch.setattr(caches, "_untrusted_entry",
                        lambda path, *rest, **named: checked.append(Path(path)) or entry(
                            path, *rest, **named))
    assert caches.unusable(folder) is None
    inside = [path for path in checked if folder in path.parents]
    assert sorted(inside) == sorted(folder / name for name in
                                    ("__pycache__", "a.py", "__pycache__/a.nbi",
                                     "__pycache__/a.nbc"))
