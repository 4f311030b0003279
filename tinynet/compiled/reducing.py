"""A definition over a layer's units written as compiled code: its reductions become loops.

Softmax is defined over a whole layer (:class:`tinynet.activations.Softmax`)::

    def forward_over_units(self, z):
        e = exp(z - unit_max(z))
        return e / unit_sum(e)

Each value in such a definition is either one per unit (``z``, and what is computed from it)
or one per row of the batch (a reduction, :func:`tinynet.maths.unit_max` or
:func:`~tinynet.maths.unit_sum`, and what is computed from reductions and parameters alone).
:func:`stages` reads the definition (:mod:`tinynet.compiled.render`) into that order of work:
each reduction a local of its own, computed before the first line that reads it, over every
unit. Then it is written in one of two ways:

* :func:`unit_lines`, for a layer whose units are locals with names (the kernels generated
  for one layout): straight-line code, each value per unit once per unit, each reduction a
  chain over the units, first to last;
* :func:`unit_loops`, for a layer of a width known only at run time (the generic kernels):
  a loop over the units per reduction and one that writes the results. A value per unit is
  computed inside each loop that reads it, again (a softmax's exp twice per unit: an output
  layer's handful of units, against the layers of products before it).

Both add a sum's terms in the order :func:`tinynet.maths.unit_sum` does, from the first unit
to the last, so that they round as NumPy does. A maximum propagates a NaN, as ``np.max``.
"""

from __future__ import annotations

import ast
import copy
from collections.abc import Callable
from dataclasses import dataclass

from ..maths import REDUCTIONS
from .render import Definition, NotCompilableError, _Rename, compiled_for_check

__all__ = ["Stages", "stages", "unit_lines", "unit_loops", "row_functions", "row_function"]


@dataclass(frozen=True)
class Stages:
    """A definition over units in its order of work: ``work``, each ``(local, reduction,
    expression)`` with ``reduction`` None for an assignment and ``"unit_max"`` or
    ``"unit_sum"`` for a reduction of ``expression`` over the units; ``per_unit``, the locals
    (and the argument) that hold one value per unit; ``results``, the expressions returned,
    one per unit. Reductions are locals ``unit_max__r0``, ``unit_sum__r1``, ...: two
    underscores, as every local of a definition (:class:`~tinynet.compiled.render.
    Definition`), and a prefix no definition may assign."""

    argument: str
    work: tuple[tuple[str, str | None, ast.expr], ...]
    per_unit: frozenset[str]
    results: tuple[ast.expr, ...]

    def needs(self, expression: ast.expr) -> list[str]:
        """The per-unit locals ``expression`` reads, directly or through others, in the order
        of :attr:`work`: what a loop computes at each unit before it."""
        made = {local: value for local, reduction, value in self.work if reduction is None}
        todo, seen = _read(expression), set()
        while todo:
            name = todo.pop()
            if name not in seen and name in made and name in self.per_unit:
                seen.add(name)
                todo += _read(made[name])
        return [local for local, reduction, _ in self.work
                if reduction is None and local in seen]


def stages(definition: Definition, what: str) -> Stages:
    """``definition`` (of one argument, the layer's z) in its order of work (:class:`Stages`);
    or :class:`~tinynet.compiled.render.NotCompilableError`, naming ``what``, for a reduction
    of a value that is one per row already (there is nothing to reduce over)."""
    (argument,) = definition.arguments
    work: list[tuple[str, str | None, ast.expr]] = []
    per_unit = {argument}

    def hoisted(expression: ast.expr) -> ast.expr:
        """``expression`` with each reduction (innermost first) replaced by its local."""
        class Hoist(ast.NodeTransformer):
            def visit_Call(self, node: ast.Call) -> ast.AST:
                self.generic_visit(node)
                if not (isinstance(node.func, ast.Name) and node.func.id in REDUCTIONS):
                    return node
                (reduced,) = node.args
                if not set(_read(reduced)) & per_unit:
                    raise NotCompilableError(
                        f"backend 'numba' cannot run {what}: {node.func.id}("
                        f"{ast.unparse(reduced)}) reduces a value that is one per row "
                        "already; pass backend='numpy'")
                local = f"{node.func.id}__r{sum(r is not None for _, r, _ in work)}"
                work.append((local, node.func.id, reduced))
                return ast.Name(id=local, ctx=ast.Load())
        return Hoist().visit(copy.deepcopy(expression))

    for local, expression in definition.assignments:
        value = hoisted(expression)
        if set(_read(value)) & per_unit:
            per_unit.add(local)
        work.append((local, None, value))
    results = tuple(hoisted(result) for result in definition.results)
    return Stages(argument, tuple(work), frozenset(per_unit), results)


def _read(expression: ast.expr) -> list[str]:
    """The names ``expression`` reads."""
    return [node.id for node in ast.walk(expression) if isinstance(node, ast.Name)]


def _text(expression: ast.expr, names: dict[str, str], parameters: dict[str, str]) -> str:
    return _Rename(names, parameters).text(expression)


def _most(name: str, value: str, before: str | None = None) -> str:
    """``name`` ← the larger of ``before`` (default: ``name``) and ``value``, a NaN in either
    kept (as ``np.max`` keeps it)."""
    before = before or name
    return f"{name} = {value} if {value} > {before} or {value} != {value} else {before}"


def unit_lines(staged: Stages, units: list[str], parameters: dict[str, str],
               suffix: str) -> tuple[list[str], list[list[str]]]:
    """The definition over a row whose units' z are the locals ``units``: ``(lines,
    results)``, straight-line code and, for each returned value, its expression at each
    unit. Locals are named ``{local}{suffix}`` (one per row) or ``{local}{suffix}_{j}`` (one
    per unit j), each assigned once (a reduction's chain too); ``parameters`` gives the
    expression of each parameter (``self.<name>``)."""
    per_row = {local: f"{local}{suffix}" for local, _, _ in staged.work
               if local not in staged.per_unit}

    def at(j: int) -> dict[str, str]:
        return {**per_row, staged.argument: units[j],
                **{local: f"{local}{suffix}_{j}" for local in staged.per_unit
                   if local != staged.argument}}

    lines: list[str] = []
    for local, reduction, expression in staged.work:
        if reduction is None and local in staged.per_unit:
            lines += [f"{local}{suffix}_{j} = {_text(expression, at(j), parameters)}"
                      for j in range(len(units))]
        elif reduction is None:
            lines.append(f"{per_row[local]} = {_text(expression, per_row, parameters)}")
        else:  # a chain of locals of their own (each assigned once), the last one's name
            values = [_text(expression, at(j), parameters) for j in range(len(units))]
            chain = [f"{per_row[local]}_{j}" for j in range(len(units) - 1)] + [per_row[local]]
            lines.append(f"{chain[0]} = {values[0]}")
            for before, name, value in zip(chain, chain[1:], values[1:]):
                lines.append(f"{name} = {before} + {value}" if reduction == "unit_sum"
                             else _most(name, value, before))
    return lines, [[_text(result, at(j), parameters) for j in range(len(units))]
                   for result in staged.results]


def unit_loops(staged: Stages, width: str, unit: str, read: Callable[[str], str],
               write: Callable[[int, str], list[str]], parameters: dict[str, str]) -> list[str]:
    """The definition over a row of ``width`` units (an expression), as loops over ``unit``
    (the loop's variable): ``read(j)`` is the expression of z at unit ``j`` (an expression),
    ``write(k, value)`` the lines that store returned value ``k`` at ``unit``. Reductions go
    into locals of their own names; a per-unit local is computed inside each loop that
    reads it (:meth:`Stages.needs`). The results may be written over z: each loop reads z at
    its own unit alone."""
    names = {staged.argument: read(unit)}
    lines: list[str] = []

    def per_unit(expression: ast.expr, indent: str) -> list[str]:
        return [f"{indent}{local} = {_text(value, names, parameters)}"
                for local, reduction, value in staged.work
                if reduction is None and local in staged.needs(expression)]

    for local, reduction, expression in staged.work:
        if reduction is None and local not in staged.per_unit:
            lines.append(f"{local} = {_text(expression, names, parameters)}")
        elif reduction is not None:
            first = {**names, staged.argument: read("0")}
            lines += [f"{name} = {_text(value, first, parameters)}"
                      for name, r, value in staged.work
                      if r is None and name in staged.needs(expression)]
            lines.append(f"{local} = {_text(expression, first, parameters)}")
            value = _text(expression, names, parameters)
            lines += [f"for {unit} in range(1, {width}):", *per_unit(expression, "    "),
                      "    " + (f"{local} = {local} + {value}" if reduction == "unit_sum"
                                else _most(local, value))]
    body = [line for result in staged.results for line in per_unit(result, "    ")]
    stores = [line for k, result in enumerate(staged.results)
              for line in write(k, _text(result, names, parameters))]
    return lines + [f"for {unit} in range({width}):", *dict.fromkeys(body),
                    *(f"    {line}" for line in stores)]


def row_functions(staged: Stages, parameters: dict[str, str], doc: str) -> list[str]:
    """The kit's two functions of a definition over units (:mod:`tinynet.compiled.kit`), in
    place on rows that hold z, each row's units in a loop (:func:`unit_loops`):
    ``over_units_rows(out, parameters)`` on one network's rows (rows, n), and
    ``over_units_lanes(A, k, rows, n, parameters)`` on A[k] (rows, n, lanes), a lane at a
    time. ``parameters`` gives each parameter's expression; ``doc`` names the definition."""
    rows = unit_loops(staged, "out.shape[1]", "u", lambda j: f"out[r, {j}]",
                      lambda k, value: [f"out[r, u] = {value}"], parameters)
    lanes = unit_loops(staged, "n", "u", lambda j: f"A[k, r, {j}, l]",
                       lambda k, value: [f"A[k, r, u, l] = {value}"], parameters)
    inline = '@njit(cache=True, error_model="numpy", inline="always")\n'
    return [inline + 'def over_units_rows(out, parameters):\n'
            f'    """{doc}, over each row of out (rows, n), which holds z."""\n'
            '    for r in range(out.shape[0]):\n' + "".join(f"        {line}\n" for line in rows),
            inline + 'def over_units_lanes(A, k, rows, n, parameters):\n'
            f'    """{doc}, over each row of A[k] (rows, n, lanes) in every lane, which holds '
            'z."""\n'
            '    for r in range(rows):\n'
            '        for l in range(A.shape[3]):\n'
            + "".join(f"            {line}\n" for line in lanes)]


def row_function(staged: Stages, width: int, names: list[str]) -> object:
    """The definition over one row of ``width`` units as a function ``f(z_0, ..., z_{n-1},
    *parameters)`` (its parameters ``names``, in field order) returning its first result at
    each unit, compiled by numba alone (:func:`unit_lines`): what :func:`tinynet.check` holds
    to NumPy's values (:func:`tinynet.compiled.render.compiled_for_check`)."""
    units = [f"z{j}" for j in range(width)]
    parameters = [f"q_{name}" for name in names]
    lines, results = unit_lines(staged, units, dict(zip(names, parameters)), "")
    return compiled_for_check(units + parameters, lines, results[0])
