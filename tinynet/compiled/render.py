"""A definition read once and written into compiled code: the one source of every kernel's maths.

An activation's ``forward_and_derivative``, a loss's ``value_and_gradient`` (see
:mod:`tinynet.maths`) is a Python method over arrays, which the NumPy backend calls as it is.
This module reads the method's source, checks that it uses nothing but the words of
:mod:`tinynet.maths`, and gives it back as lines of scalar Python for the kernels::

    >>> definition = read(Sigmoid(), "forward_and_derivative", arguments=1, results=2)
    >>> definition.instantiate({"z": "z0_0_1"}, {}, "_0_0_1")
    (['e__0_0_0_1 = vector_exp(-abs(z0_0_1))'],
     ['(1.0 if z0_0_1 >= 0 else e__0_0_0_1) / (1.0 + e__0_0_0_1)', 'e__0_0_0_1 / ...'])

``exp``, ``log`` and ``log1p`` are written as the kernels' ``vector_exp``, ``vector_log`` and
``vector_log1p``, ``where(c, a, b)`` as ``a if c else b``, ``sqrt`` and ``tanh`` as
``math``'s, ``self.alpha`` as whatever the kernel holds the parameter in. Anything else
(another function, a loop, an ``if``, an attribute that is not a parameter) raises
:class:`NotCompilableError`, naming the definition, the line and what the compiled backend
cannot build: nothing unknown ever runs as something else. So does
integer arithmetic that numba's 64-bit integers would get wrong (``2 ** 64``; ``a * a`` after
``a = 2 ** 40``) or that the check cannot bound (``k * 3`` after ``k = where(z > 0, 2, 1)``).

The arithmetic is kept as written, operation by operation: a kernel built from a definition
rounds as the NumPy backend does, but for the exp, log and log1p
(:mod:`tinynet.compiled.scalars`, each within 1 ulp of the exact value) and the C library's
functions.
"""

from __future__ import annotations

import ast
import builtins
import copy
import dataclasses
import functools
import inspect
import linecache
import math
import numbers
import operator
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path

from .. import maths
from ..validation import shorten

__all__ = ["NotCompilableError", "Definition", "read", "written", "parameters", "Writer",
           "scalar_function", "compiled_for_check", "said_by"]

_SCALAR = {"exp": "vector_exp", "log": "vector_log", "log1p": "vector_log1p",
           "sqrt": "math.sqrt", "tanh": "math.tanh", "abs": "abs"}
"""How the compiled kernels write each function of :data:`tinynet.maths.VOCABULARY` (``where``
is written as a conditional expression)."""

_WRITTEN_AS = {"vector_exp", "vector_log", "vector_log1p", "math"}
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

    @functools.cached_property
    def reduces(self) -> bool:
        """Whether it calls a reduction over a layer's units (:data:`tinynet.maths.
        REDUCTIONS`), which :mod:`tinynet.compiled.reducing` writes as loops."""
        return any(isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                   and node.func.id in maths.REDUCTIONS
                   for expression in (*(value for _, value in self.assignments), *self.results)
                   for node in ast.walk(expression))

    @functools.cached_property
    def text(self) -> str:
        """The definition as the kernels are written from it, in one line: what the
        in-process kernel caches key it by (:meth:`tinynet.compiled.kit.Maths.key`), as the
        files on disk are named by their text, so that a method edited in place compiles
        anew."""
        return "; ".join([f"({', '.join(self.arguments)})",
                          *(f"{local} = {ast.unparse(value)}" for local, value in self.assignments),
                          f"return {', '.join(ast.unparse(value) for value in self.results)}"])

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
    what = what or f"{owner!r} ({type(owner).__name__})"
    for name, value in parameters(owner):
        if not isinstance(value, numbers.Real) or isinstance(value, bool):
            raise NotCompilableError(f"backend 'numba' cannot run {what}: its parameter "
                                     f"{name}={value!r} is not a number; pass backend='numpy'")
    return _definition(type(owner), method, arguments, results, what)


def written(owner: object, method: str, arguments: int, results: int) -> str:
    """The :attr:`Definition.text` of ``owner.<method>``, which does not depend on the values
    of its parameters: looked up by class, function and code (which ``%autoreload``
    replaces), a kernel's key costs a few lookups per definition. Raises what :func:`read`
    raises, naming the class."""
    function = getattr(type(owner), method)
    return _written(type(owner), function, getattr(function, "__code__", None), method,
                    arguments, results)


@functools.lru_cache(maxsize=256)
def _written(cls: type, function: object, code: object, method: str, arguments: int,
             results: int) -> str:
    """:func:`written`'s work, once per class, function and code."""
    return _definition(cls, method, arguments, results, cls.__qualname__).text


def _definition(cls: type, method: str, arguments: int, results: int, what: str) -> Definition:
    """The definition ``cls.<method>``, its parameters the class's dataclass fields, after
    checking how many arguments it takes and values it returns."""
    function = getattr(cls, method)
    where = f"{what}: {cls.__qualname__}.{method}"
    fields = tuple(field.name for field in dataclasses.fields(cls)) \
        if dataclasses.is_dataclass(cls) else ()
    definition = _read(function, getattr(function, "__code__", None), fields, where)
    if method != "forward_over_units" and definition.reduces:
        raise NotCompilableError(
            f"backend 'numba' cannot run {where}: it reduces over a layer's units "
            f"({', '.join(maths.REDUCTIONS)}), which only an activation's "
            "forward_over_units may (every other definition is element-wise); pass "
            "backend='numpy'")
    if len(definition.arguments) != arguments or len(definition.results) != results:
        raise NotCompilableError(
            f"backend 'numba' cannot run {where}: it must take {arguments} argument(s) after "
            f"self and return {results} values, not {len(definition.arguments)} and "
            f"{len(definition.results)}; pass backend='numpy'")
    return definition


@functools.lru_cache(maxsize=256)
def _read(function: object, code: object, fields: tuple[str, ...], where: str) -> Definition:
    """:func:`read`'s work, once per function and code: ``code`` is the function's
    ``__code__``, which IPython's ``%autoreload`` replaces in place when the method is
    edited."""
    def refuse(reason: str, node: ast.AST | None = None) -> NotCompilableError:
        line = f" (line {first_line + node.lineno - 1})" if node is not None and \
            hasattr(node, "lineno") else ""
        return NotCompilableError(f"backend 'numba' cannot run {where}{line}: {reason}; "
                                  "write it with tinynet.maths (exp, log, log1p, sqrt, tanh, "
                                  "where, abs, unit_max, unit_sum) and arithmetic, or pass "
                                  "backend='numpy'")

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
    integers: dict[str, object] = {}  # the locals that hold an integer, and its value
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
        expression, integer = _checked(statement.value, current, integers, fields, function,
                                       refuse)
        integers.pop(target, None)
        if integer is not None:
            integers[target] = integer
        current[target] = f"{target}__{index}"
        assignments.append((current[target], expression))
    if not body or not isinstance(body[-1], ast.Return) or body[-1].value is None:
        raise refuse("it must end with a return of its results", node)
    returned = body[-1].value
    results = returned.elts if isinstance(returned, ast.Tuple) else [returned]
    results = tuple(_checked(result, current, integers, fields, function, refuse)[0]
                    for result in results)
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


def _checked(expression: ast.expr, current: dict[str, str], integers: dict[str, object],
             fields: tuple[str, ...], function: object, refuse) -> tuple[ast.expr, object]:
    """``(written, integer)``: ``expression`` written for the kernels (:data:`_SCALAR`), each
    local read as its latest assignment's (``current``), after checking every node; and what
    :func:`_integer` says of it, given the locals that hold integers (``integers``)."""
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
    integer = _integer(expression, refuse, integers)
    scalar = _Scalar().visit(copy.deepcopy(expression))
    return _Rename({name: local for name, local in current.items() if name != local},
                   {}).visit(scalar), integer


_INT64_END = 2 ** 63
"""The 64-bit integers are those from -2**63 up to (not including) 2**63."""

_ARITHMETIC = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul}

_SOME_INTEGER = object()
"""What :func:`_integer` says of an integer whose value the checker does not know: a
comparison's (True or False, which numba counts as 1 and 0) or a ``where`` of integers."""


def _integer(node: ast.AST, refuse, integers: dict[str, object]) -> object:
    """The value of ``node`` if it is integer arithmetic (integers, the locals ``integers``
    gives the value of, ``+ - * **``, ``abs``); :data:`_SOME_INTEGER` if it is an integer of a
    value not known here; else None (a float: the arguments and parameters, which the
    kernels hold as floats, and anything computed from one). Every integer in it, each
    part's value included, is checked against the 64-bit integers numba computes such
    arithmetic in: Python folds ``2**64`` into a constant numba cannot type, and computes
    ``2**200``, or ``a * a`` for ``a = 2**40``, exactly where numba's wraps to 0. Arithmetic
    on an integer of unknown value, which the checker cannot bound, is refused."""
    if isinstance(node, ast.Constant):
        value = node.value if type(node.value) is int else None
    elif isinstance(node, ast.Name):
        return integers.get(node.id)
    elif isinstance(node, (ast.UnaryOp, ast.BinOp)):
        operands = [_integer(operand, refuse, integers) for operand in (
            [node.operand] if isinstance(node, ast.UnaryOp) else [node.left, node.right])]
        if None in operands or isinstance(node.op, ast.Div):
            return None
        if _SOME_INTEGER in operands:
            raise refuse(f"it computes {ast.unparse(node)} in integers from a value it "
                         "cannot bound (a comparison, or a where of integers): write the "
                         "integers as floats (1.0, not 1)", node)
        value = _arithmetic(node.op, *operands)
    elif isinstance(node, ast.Compare):
        for child in ast.iter_child_nodes(node):
            _integer(child, refuse, integers)
        return _SOME_INTEGER
    elif isinstance(node, (ast.Call, ast.IfExp)):
        arguments = [_integer(argument, refuse, integers) for argument in (
            node.args if isinstance(node, ast.Call) else [node.test, node.body, node.orelse])]
        if isinstance(node, ast.Call) and node.func.id == "abs":
            value = abs(arguments[0]) if type(arguments[0]) is int else arguments[0]
        elif isinstance(node, ast.IfExp) or node.func.id == "where":
            return _SOME_INTEGER if None not in arguments[1:] else None
        else:
            return None
    else:
        for child in ast.iter_child_nodes(node):
            _integer(child, refuse, integers)
        return None
    if type(value) is int and not -_INT64_END <= value < _INT64_END:
        shown = shorten(value) if isinstance(node, ast.Constant) else ast.unparse(node) + (
            "" if value == _INT64_END else f" = {shorten(value)}")
        raise refuse(f"its integer {shown} is outside the 64-bit integers "
                     "the compiled kernels compute integers in (write it with a float, as "
                     "2.0 ** 64)", node)
    return value


def _arithmetic(operator_: ast.operator | ast.unaryop, *operands: int) -> int | None:
    """``operands`` combined by ``operator_`` as Python computes integers (None for a
    negative power, which is a float); for a power of magnitude ``2**64`` or more, ``2**63``
    (outside the 64-bit integers) without computing it."""
    if isinstance(operator_, ast.USub):
        return -operands[0]
    if isinstance(operator_, ast.UAdd):
        return operands[0]
    left, right = operands
    if isinstance(operator_, ast.Pow):
        if right >= 64 and abs(left) >= 2:  # 2**64 or more: too large, whatever it is
            return _INT64_END
        return left ** right if right >= 0 else None
    return _ARITHMETIC[type(operator_)](left, right)


class _Scalar(ast.NodeTransformer):
    """``exp(x)`` as ``vector_exp(x)``, ``where(c, a, b)`` as ``a if c else b``, and so on."""

    def visit_Call(self, node: ast.Call) -> ast.AST:
        self.generic_visit(node)
        if node.func.id in maths.REDUCTIONS:  # loops over a layer's units: reducing's to write
            return node
        if node.func.id == "where":
            condition, a, b = node.args
            return ast.IfExp(test=condition, body=a, orelse=b)
        node.func = ast.parse(_SCALAR[node.func.id], mode="eval").body
        return node


def scalar_function(definition: Definition, names: list[str]) -> object:
    """``definition`` as one scalar function ``f(*arguments, *parameters)`` (its parameters
    ``names``, in field order) returning its results and then its locals, compiled by numba
    alone (no cache, no kit): what :func:`tinynet.check` holds to NumPy's values."""
    arguments = [f"a{i}" for i in range(len(definition.arguments))]
    parameters = [f"q_{name}" for name in names]
    lines, results = definition.instantiate(dict(zip(definition.arguments, arguments)),
                                            dict(zip(names, parameters)), "")
    locals_ = [local for local, _ in definition.assignments]
    return compiled_for_check(arguments + parameters, lines, [*results, *locals_])


def compiled_for_check(arguments: list[str], lines: list[str], results: list[str]) -> object:
    """``def f(*arguments): lines; return (*results,)`` compiled by numba alone, with the
    kernels' scalar functions in scope: what :func:`tinynet.check` holds to NumPy's values
    (:func:`scalar_function`, and :func:`tinynet.compiled.reducing.row_function`)."""
    import numba

    from .scalars import vector_exp, vector_log, vector_log1p
    body = "".join(f"    {line}\n" for line in lines)
    text = f"def f({', '.join(arguments)}):\n{body}    return ({', '.join(results)},)\n"
    namespace = {"math": math, "vector_exp": vector_exp, "vector_log": vector_log,
                 "vector_log1p": vector_log1p}
    exec(compile(text, "<tinynet.check>", "exec"), namespace)  # noqa: S102  (rendered text)
    return numba.njit(error_model="numpy")(namespace["f"])


def said_by(depth: int = 2) -> str:
    """Where the word being written was said, for a comment above its generated lines: the
    function of :mod:`tinynet.step` ``depth`` frames up (named by the class that defines
    it), its line number, and the formula in that line's comment."""
    frame = sys._getframe(depth)
    code = frame.f_code
    line = linecache.getline(code.co_filename, frame.f_lineno).strip()
    formula = line.split("#", 1)[1].strip() if "#" in line else line
    owner = frame.f_locals.get("self")
    name = code.co_name
    for klass in type(owner).__mro__ if owner is not None else ():  # the class defining it
        if getattr(vars(klass).get(code.co_name), "__code__", None) is code:
            name = f"{klass.__name__}.{code.co_name}"
    return f"{name} ({Path(code.co_filename).name}:{frame.f_lineno}): {formula}"


class Writer:
    """Lines at an indentation that blocks (loops, ifs) open and close."""

    def __init__(self, depth: int) -> None:
        self.lines: list[str] = []
        self.depth = depth

    def write(self, *lines: str) -> None:
        self.lines += ["    " * self.depth + line for line in lines]

    def open(self, header: str) -> None:
        self.write(header)
        self.depth += 1

    def close(self) -> None:
        self.depth -= 1
