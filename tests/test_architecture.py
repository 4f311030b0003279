"""The package's layering: no import cycle anywhere (function-level imports included), and a
model that knows nothing of its trainer, its backends or its file format."""

import ast
from pathlib import Path

import tinynet

PACKAGE = Path(tinynet.__file__).resolve().parent


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
