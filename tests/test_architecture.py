"""The package's layering: no import cycle anywhere (function-level imports included), a
model that knows nothing of its trainer, its backends or its file format, plots that import
nothing of the XOR harness (its study figures sit beside it), and a short way from the command
to the training kernel, counted on the stack the kernel is called with."""

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

from helpers import checkout_environment

import tinynet
from tinynet.compiled import unrolled

PACKAGE = Path(tinynet.__file__).resolve().parent
ROOT = PACKAGE.parent


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {module_name(path): path for path in PACKAGE.rglob("*.py")}


def imports(name: str) -> set[str]:
    """The tinynet modules that module ``name`` imports, at any depth of its code, with an
    import statement or ``importlib.import_module("tinynet....")``."""
    path = MODULES[name]
    package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.Call) and "import_module" in (getattr(node.func, "attr", ""),
                                                                getattr(node.func, "id", "")):
            targets = [arg.value for arg in node.args if isinstance(arg, ast.Constant)]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                base = f"{anchor}.{base}" if base else anchor
            targets = [f"{base}.{alias.name}" if f"{base}.{alias.name}" in MODULES else base
                       for alias in node.names]
        else:
            continue
        found |= {target for target in targets if target in MODULES and target != name}
    return found


GRAPH = {name: imports(name) for name in MODULES}


def test_the_graph_was_read():
    assert {"tinynet.training", "tinynet.network"} <= GRAPH["tinynet"]
    assert {"tinynet.reference", "tinynet.compiled"} <= GRAPH["tinynet.training"]
    assert "tinynet.compiled.backend" in GRAPH["tinynet.compiled"]  # through importlib
    assert "tinynet.compiled.kit" in GRAPH["tinynet.compiled.backend"]


def test_no_import_cycle():
    visiting, done, path = set(), set(), []

    def visit(name):
        visiting.add(name)
        path.append(name)
        for target in sorted(GRAPH[name]):
            assert target not in visiting, "import cycle: " + " -> ".join(
                path[path.index(target):] + [target])
            if target not in done:
                visit(target)
        visiting.discard(name)
        done.add(name)
        path.pop()

    for name in sorted(GRAPH):
        if name not in done:
            visit(name)


def test_the_model_knows_no_trainer_backend_or_file_format():
    forbidden = {"tinynet.training", "tinynet.reference", "tinynet.packing", "tinynet.saving"} | \
        {name for name in MODULES if name.startswith("tinynet.compiled")}
    for model in ["tinynet.network", "tinynet.layers", "tinynet.dense"]:
        assert not GRAPH[model] & forbidden, (model, GRAPH[model] & forbidden)


def test_only_the_compiled_package_imports_numba():
    for name, path in MODULES.items():
        text = path.read_text()
        if not name.startswith("tinynet.compiled."):  # the package's __init__ included
            assert "import numba" not in text and "from numba" not in text, name


def test_net_methods_are_the_functions():
    assert tinynet.Network.fit is tinynet.fit
    assert tinynet.Network.predict is tinynet.predict
    assert tinynet.Network.save is tinynet.save


# --- the path from the command to the kernel -----------------------------------------------------

CALLS_TO_THE_KERNEL = 8
"""The most Python calls from ``python -m tinynet.xor`` to the training kernel: the command's
``main`` (1), ``run_study`` (2), the harness's ``blocks.train`` (3), ``tinynet.fit_packed`` (4),
the compiled backend's ``fit_packed`` (5), ``run_in_chunks`` (6), ``unrolled.fit_lanes`` (7) and
the kernel (8), each a step a reader follows by its name (issue 41: 17 calls before). Counted
as the frames on the stack the kernel is called with that come after the frame of
``tinynet/xor/__main__.py`` (the module ``python -m`` runs), the kernel's own included: every
function, closure, lambda, comprehension or decorator's wrapper on the way is one."""

CALLS_IN_A_POOL_THREAD = 2
"""The most Python calls in one of the ensemble kernels' pool threads, from the thread's start
(the last frame of ``threading`` and ``concurrent.futures``) to the kernel: the function the
pool runs for a block of seeds (1) and the kernel (2)."""

KERNEL_PROBE = '''
import json, runpy, sys, threading, traceback

from tinynet.compiled import unrolled


class Reached(BaseException):
    """Raised by the probe: no ``except Exception`` on the way catches it."""


stacks = []


def kernel_for(*layout_and_maths, **named):
    def kernel(*arguments):
        stacks.append({"main": threading.current_thread() is threading.main_thread(),
                       "frames": [[frame.filename.replace("\\\\", "/"), frame.name]
                                  for frame in traceback.extract_stack()]})
        raise Reached
    return kernel


unrolled._kernel = kernel_for
sys.argv = ["python -m tinynet.xor", *ARGUMENTS]
try:
    runpy.run_module("tinynet.xor", run_name="__main__", alter_sys=True)
except Reached:
    pass
print(json.dumps(stacks))
'''
"""Runs ``python -m tinynet.xor ARGUMENTS`` as ``python -m`` does (:func:`runpy.run_module`),
with the generated kernel (:func:`tinynet.compiled.unrolled._kernel` makes it) replaced by a
Python function that records the stack it is called with and stops the run: nothing
compiles, and the probe's frame stands where the kernel's call is (calling a compiled Numba
function adds no Python frame; the probe adds one, the kernel's own). Prints the stacks."""


def kernel_stacks(*arguments: str, threads: int = 1) -> list[dict]:
    """Each call of the kernel in ``python -m tinynet.xor *arguments`` run in a new Python on
    ``threads`` threads: whether it ran in the main thread, and its stack, outermost first, as
    [file, function] pairs."""
    code = KERNEL_PROBE.replace("ARGUMENTS", repr(list(arguments)))
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True,
                          env={**checkout_environment(), "NUMBA_NUM_THREADS": str(threads)},
                          timeout=300)
    assert done.returncode == 0, done.stderr
    stacks = json.loads(done.stdout.strip().splitlines()[-1])
    assert stacks, "the probe saw no kernel call: is tinynet.compiled.unrolled._kernel its maker?"
    return stacks


def after(frames: list[list[str]], last_before) -> list[tuple[Path, str]]:
    """The calls of ``frames`` after the last one ``last_before(file, function)`` accepts, as
    (file, function), the kernel's (the probe's) last."""
    start = max(index for index, frame in enumerate(frames) if last_before(*frame))
    return [(Path(file), function) for file, function in frames[start + 1:]]


def shown(calls: list[tuple[Path, str]]) -> str:
    return f"{len(calls)} calls: " + " -> ".join(f"{file.name}:{name}" for file, name in calls)


def in_tinynet(calls: list[tuple[Path, str]]) -> bool:
    """Whether every call but the last (the probe's) is a function of the tinynet package."""
    return all(PACKAGE in file.resolve().parents for file, _ in calls[:-1])


def test_the_command_reaches_the_kernel_in_at_most_8_calls():
    # One block of seeds (at most unrolled.LANES = 56), so the block trains in the calling
    # thread, even with two threads to train on: no thread-pool hop, one stack from the
    # command to the kernel.
    stacks = kernel_stacks("--seeds", str(unrolled.LANES), "--epochs", "10", threads=2)
    assert [stack["main"] for stack in stacks] == [True]
    calls = after(stacks[0]["frames"], lambda file, _: file.endswith("tinynet/xor/__main__.py"))
    assert calls[-1] == (Path("<string>"), "kernel")  # the probe
    assert in_tinynet(calls), shown(calls)  # no wrapper of another package on the way
    assert len(calls) <= CALLS_TO_THE_KERNEL, shown(calls)


def test_a_pool_thread_reaches_the_kernel_in_at_most_2_calls():
    # Two blocks of seeds on two threads: each block trains in a thread of the pool
    # (unrolled._pool), whose own stack starts with threading's and concurrent.futures' frames.
    stacks = kernel_stacks("--seeds", str(2 * unrolled.LANES), "--epochs", "10", threads=2)
    pooled = [stack["frames"] for stack in stacks if not stack["main"]]
    assert pooled, "no block trained in a pool thread"
    for frames in pooled:
        calls = after(frames, lambda file, _: file.endswith(("/threading.py",
                                                             "/concurrent/futures/thread.py")))
        assert calls[-1] == (Path("<string>"), "kernel")
        assert in_tinynet(calls), shown(calls)
        assert len(calls) <= CALLS_IN_A_POOL_THREAD, shown(calls)


# --- the plots and the harness -------------------------------------------------------------------

def test_the_plots_import_nothing_of_the_harness():
    # at run time: tests/test_import_weight.py
    assert {name for name in GRAPH["tinynet.plots"] if name.startswith("tinynet.xor")} == set()


def test_the_study_figures_sit_beside_the_harness():
    assert "tinynet.plots" in GRAPH["tinynet.xor.figures"]
    from tinynet import plots
    for moved in ("seed_gallery", "loss_curves", "study_curves", "rates", "against_baseline",
                  "depth", "layer_histograms", "OUTCOME_COLORS", "OUTCOME_LABELS", "PLATEAUS"):
        with pytest.raises(AttributeError, match=f"tinynet.xor.figures.{moved}"):
            getattr(plots, moved)
