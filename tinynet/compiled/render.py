"""A definition read once and written into compiled code: the one source of every kernel's maths.

An activation's ``forward_and_derivative``, a loss's ``value_and_gradient`` (see
:mod:`tinynet.maths`) is a Python method over arrays, which the NumPy backend calls as it is.
This module reads the method's source, checks that it uses nothing but the words of
:mod:`tinynet.maths`, and gives it back as lines of scalar Python for the kernels::

    >>> definition = read(Sigmoid(), "forward_and_derivative", arguments=1, results=2)
    >>> definition.instantiate({"z": "z0_0_1"}, {}, "_0_0_1")
    (['e__0_0_0_1 = vector_exp(-abs(z0_0_1))'],
     ['(1.0 if z0_0_1 >= 0 else e__0_0_0_1) / (1.0 + e__0_0_0_1)', 'e__0_0_0_1 / ...'])

``exp`` is written as the kernels' ``vector_exp``, ``where(c, a, b)`` as ``a if c else b``,
``log``, ``log1p``, ``sqrt`` and ``tanh`` as ``math``'s, ``self.alpha`` as whatever the kernel
holds the parameter in. Anything else (another function, a loop, an ``if``, an attribute that
is not a parameter) raises :class:`NotCompilableError`, naming the definition, the line and
what the compiled backend cannot build: nothing unknown ever runs as something else.

The arithmetic is kept as written, operation by operation: a kernel built from a definition
rounds as the NumPy backend does, but for the exp (:func:`tinynet.compiled.scalars.vector_exp`,
within 1 ulp of the correctly rounded exp) and the C library's functions.
"""

from __future__ import annotations

import ast
import builtins
import copy
import dataclasses
import functools
import inspect
import numbers
import textwrap
from dataclasses import dataclass

from .. import maths

__all__ = ["NotCompilableError", "Definition", "read", "parameters"]

_SCALAR = {"exp": "vector_exp", "log": "math.log", "log1p": "math.log1p", "sqrt": "math.sqrt",
           "tanh": "math.tanh", "abs": "abs"}
"""How the compiled kernels write each function of :data:`tinynet.maths.VOCABULARY` (``where``
is written as a conditional expression)."""

_WRITTEN_AS = {"vector_exp", "math"}
"""The names :data:`_SCALAR` writes, which a definition's argument may not take."""

_OPERATORS = (ast.Add, ast.Sub, ast.Mult, ast.Div, ast.Pow, ast.USub, ast.UAdd, ast.Gt,
              ast.GtE, ast.Lt, ast.LtE, ast.Eq, ast.NotEq)


class NotCompilableError(ValueError):
    """The compiled backend cannot build a definition: it names the definition and what in it
    the backend cannot write, and says which backend runs it (NumPy)."""


@dataclass(frozen=True)
class Definition:
    """A definition read from its source: ``arguments`` as the method names them (after
    ``self``), its assignments as ``(local, expression)`` and the expressions it returns, all
    as ASTs of scalar Python. Each assignment has a local of its own, ``name__k`` for the
    k-th assignment (to ``name``): two underscores, which no definition's name and no name
    the kernels write has, so a local never stands for anything else."""

    arguments: tuple[str, ...]
    assignments: tuple[tuple[str, ast.expr], ...]
    results: tuple[ast.expr, ...]

    def instantiate(self, arguments: dict[str, str], parameters: dict[str, str],
                    suffix: str) -> tuple[list[str], list[str]]:
        """The definition for one use: ``(lines, results)``, its assignments as lines
        ``name__k{suffix} = ...`` and the expressions it returns, with each argument and
        parameter replaced by the expression given for it."""
        names = {**arguments, **{local: f"{local}{suffix}" for local, _ in self.assignments}}
        rename = _Rename(names, parameters)
        lines = [f"{local}{suffix} = {rename.text(expression)}"
                 for local, expression in self.assignments]
        return lines, [rename.text(expression) for expression in self.results]


class _Rename(ast.NodeTransformer):
    """Replace names and ``self.<parameter>`` by the given source text."""

    def __init__(self, names: dict[str, str], parameters: dict[str, str]) -> None:
        self.names, self.parameters = names, parameters

    def visit_Name(self, node: ast.Name) -> ast.AST:
        return ast.parse(self.names[node.id], mode="eval").body if node.id in self.names \
            else node

    def visit_Attribute(self, node: ast.Attribute) -> ast.AST:
        if isinstance(node.value, ast.Name) and node.value.id == "self" and \
                node.attr in self.parameters:
            return ast.parse(self.parameters[node.attr], mode="eval").body
        return node  # math.tanh and the like, or a parameter left for later

    def text(self, expression: ast.expr) -> str:
        return ast.unparse(self.visit(copy.deepcopy(expression)))


def parameters(owner: object) -> tuple[tuple[str, float], ...]:
    """The numeric parameters of a definition's owner: its dataclass fields, ``(name,
    value)`` in field order (an activation's ``alpha``)."""
    if not dataclasses.is_dataclass(owner):
        return ()
    return tuple((field.name, getattr(owner, field.name)) for field in dataclasses.fields(owner))


def read(owner: object, method: str, arguments: int, results: int,
         what: str | None = None) -> Definition:
    """The definition ``owner.<method>``, a method of ``arguments`` arguments (after self)
    returning ``results`` values, as :class:`Definition`; or :class:`NotCompilableError`
    naming ``what`` (default: the owner and its class) and what the compiled backend cannot
    build."""
    function = getattr(type(owner), method)
    fields = parameters(owner)
    what = what or f"{owner!r} ({type(owner).__name__})"
    where = f"{what}: {type(owner).__qualname__}.{method}"
    for name, value in fields:
        if not isinstance(value, numbers.Real) or isinstance(value, bool):
            raise NotCompilableError(f"backend 'numba' cannot run {what}: its parameter "
                                     f"{name}={value!r} is not a number; pass backend='numpy'")
    definition = _read(function, tuple(name for name, _ in fields), where)
    if len(definition.arguments) != arguments or len(definition.results) != results:
        raise NotCompilableError(
            f"backend 'numba' cannot run {where}: it must take {arguments} argument(s) after "
            f"self and return {results} values, not {len(definition.arguments)} and "
            f"{len(definition.results)}; pass backend='numpy'")
    return definition


@functools.lru_cache(maxsize=256)
def _read(function: object, fields: tuple[str, ...], where: str) -> Definition:
    def refuse(reason: str, node: ast.AST | None = None) -> NotCompilableError:
        line = f" (line {first_line + node.lineno - 1})" if node is not None and \
            hasattr(node, "lineno") else ""
        return NotCompilableError(f"backend 'numba' cannot run {where}{line}: {reason}; "
                                  "write it with tinynet.maths (exp, log, log1p, sqrt, tanh, "
                                  "where, abs) and arithmetic, or pass backend='numpy'")

    try:
        source, first_line = inspect.getsourcelines(function)
    except (OSError, TypeError):
        raise refuse("its source cannot be read (was it typed at a prompt?)") from None
    tree = ast.parse(textwrap.dedent("".join(source)))
    node = tree.body[0]
    if not isinstance(node, ast.FunctionDef):
        raise refuse("it is not a plain method (def)")
    if node.decorator_list or node.args.vararg or node.args.kwarg or node.args.kwonlyargs \
            or node.args.defaults or node.args.posonlyargs or not node.args.args:
        raise refuse("it must be a plain method def name(self, ...) without decorators, "
                     "defaults or *args", node)
    arguments = tuple(argument.arg for argument in node.args.args[1:])
    if set(arguments) & {*maths.VOCABULARY, *_WRITTEN_AS}:
        raise refuse("an argument is named as a function of tinynet.maths or of the kernels",
                     node)
    if any("__" in name for name in arguments):
        raise refuse("a name with two underscores in a row is the kernels' own", node)
    body = node.body
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
            and isinstance(body[0].value.value, str):
        body = body[1:]  # the docstring
    current = {name: name for name in arguments}  # each name's latest local
    assignments = []
    for index, statement in enumerate(body[:-1]):
        if not (isinstance(statement, ast.Assign) and len(statement.targets) == 1
                and isinstance(statement.targets[0], ast.Name)):
            raise refuse("only assignments to one name (x = ...) may come before the return",
                         statement)
        target = statement.targets[0].id
        if target in maths.VOCABULARY or target in _WRITTEN_AS or target == "self":
            raise refuse(f"it assigns {target}, a name of tinynet.maths or of the kernels",
                         statement)
        if target in arguments:
            raise refuse(f"it assigns its argument {target}", statement)
        if "__" in target:
            raise refuse("a name with two underscores in a row is the kernels' own", statement)
        expression = _checked(statement.value, current, fields, function, refuse)
        current[target] = f"{target}__{index}"
        assignments.append((current[target], expression))
    if not body or not isinstance(body[-1], ast.Return) or body[-1].value is None:
        raise refuse("it must end with a return of its results", node)
    returned = body[-1].value
    results = returned.elts if isinstance(returned, ast.Tuple) else [returned]
    results = tuple(_checked(result, current, fields, function, refuse) for result in results)
    if not _same_code(tree, function):
        raise refuse("its source file has changed since it was imported (import it again)")
    return Definition(arguments, tuple(assignments), results)


def _same_code(tree: ast.Module, function: object) -> bool:
    """Whether the source read for ``function`` compiles to the code that runs: the file may
    have been edited since the import, and the lines read then belong to something else.
    (Asked of a definition that passed every check: one that calls an imported module's
    function compiles differently outside its module, and is refused for that anyway.)"""
    code = compile(tree, "<definition>", "exec")
    compiled = next((const for const in code.co_consts if isinstance(const, type(code))), None)
    running = getattr(function, "__code__", None)
    return compiled is not None and running is not None and \
        (compiled.co_code, compiled.co_consts, compiled.co_names, compiled.co_varnames) == \
        (running.co_code, running.co_consts, running.co_names, running.co_varnames)


def _checked(expression: ast.expr, current: dict[str, str], fields: tuple[str, ...],
             function: object, refuse) -> ast.expr:
    """``expression`` written for the kernels (:data:`_SCALAR`), each local read as its
    latest assignment's (``current``), after checking every node."""
    owners = {id(node.value) for node in ast.walk(expression) if isinstance(node, ast.Attribute)}
    called = {id(node.func) for node in ast.walk(expression) if isinstance(node, ast.Call)}
    for node in ast.walk(expression):
        if id(node) in owners:  # the self of self.<parameter>: checked with its attribute
            continue
        if isinstance(node, ast.Call):
            if not isinstance(node.func, ast.Name) or node.keywords or \
                    node.func.id not in maths.VOCABULARY:
                raise refuse(f"it calls {ast.unparse(node.func)}, which is not in "
                             "tinynet.maths", node)
            resolved = function.__globals__.get(node.func.id, getattr(builtins, node.func.id,
                                                                      None))
            if resolved is not maths.VOCABULARY[node.func.id]:
                raise refuse(f"its {node.func.id} is not tinynet.maths.{node.func.id}", node)
            if len(node.args) != (3 if node.func.id == "where" else 1):
                raise refuse(f"{node.func.id} takes {3 if node.func.id == 'where' else 1} "
                             "argument(s)", node)
        elif isinstance(node, ast.Name):
            if node.id not in current and id(node) not in called:
                raise refuse(f"it reads {node.id}, which is neither an argument, a local "
                             "nor a parameter (a function of tinynet.maths is called, not "
                             "passed)", node)
        elif isinstance(node, ast.Attribute):
            if not (isinstance(node.value, ast.Name) and node.value.id == "self"
                    and node.attr in fields):
                raise refuse(f"it reads {ast.unparse(node)}, which is not one of its "
                             f"parameters {list(fields)}", node)
        elif isinstance(node, ast.Constant):
            if not isinstance(node.value, (int, float)) or isinstance(node.value, bool):
                raise refuse(f"it uses the constant {node.value!r}", node)
        elif isinstance(node, ast.Compare):
            if len(node.ops) != 1:
                raise refuse("a comparison must compare two values (a < b, not a < b < c)",
                             node)
        elif not isinstance(node, (ast.BinOp, ast.UnaryOp, ast.IfExp, ast.Load) + _OPERATORS):
            raise refuse(f"it uses {ast.unparse(node) if isinstance(node, ast.expr) else ''}"
                         f" ({type(node).__name__})", node)
    scalar = _Scalar().visit(copy.deepcopy(expression))
    return _Rename({name: local for name, local in current.items() if name != local},
                   {}).visit(scalar)


class _Scalar(ast.NodeTransformer):
    """``exp(x)`` as ``vector_exp(x)``, ``where(c, a, b)`` as ``a if c else b``, and so on."""

    def visit_Call(self, node: ast.Call) -> ast.AST:
        self.generic_visit(node)
        if node.func.id == "where":
            condition, a, b = node.args
            return ast.IfExp(test=condition, body=a, orelse=b)
        node.func = ast.parse(_SCALAR[node.func.id], mode="eval").body
        return node
