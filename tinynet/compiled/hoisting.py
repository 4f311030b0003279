"""An optimizer's definition split in two: what is the same for every parameter, computed once
per step, and what is not, computed per parameter (loop-invariant code motion).

An optimizer is defined for one parameter (``update(p, g, lr, *state)``,
:mod:`tinynet.optimizers`). Some of what it computes depends on neither the parameter nor its
gradient: Adam's bias corrections ``lr / (1 − β1^t)`` and ``√(1 − β2^t)`` depend on its
hyperparameters, the learning rate and the step count t alone. Written into the kernels as it
stands, each is computed for every parameter of every network at every step, two ``pow`` calls
per parameter, which do not vectorise: Adam ran 30 to 90 times as long as SGD. This module
reads the definition once and splits it:

* **counters**: the state values whose new value depends only on such values (Adam's
  ``t ← t + 1``). Every state value starts at 0 and every parameter steps together, so a
  counter holds the same number for every parameter of a network: the kernels keep one per
  network (in parameter 0's slot while they run, written into every parameter's slot when a
  run ends, so that the saved state is as it always was);
* **per step** (:attr:`Split.per_step`): from the learning rate and the counters, the
  counters' new values and every *step value*: each largest subexpression of the rest of the
  definition that is the same for every parameter (``1 − β1``, ``lr / (1 − β1^t)``,
  ``√(1 − β2^t)``), and each local of that kind it reads;
* **per parameter** (:attr:`Split.per_element`): the rest, reading the step values as
  arguments.

Nothing is reordered or re-associated: each value is computed by the same operations on the
same operands as in the definition, so the kernels round exactly as before, once instead of
P times. For Adam::

    >>> split(read(Adam(), "update", 6, 4)).per_step.text
    '(lr, t); t_next__0 = t + 1.0; return 1.0 - self.beta1, 1.0 - self.beta2,
     lr / (1.0 - self.beta1 ** t_next__0), math.sqrt(1.0 - self.beta2 ** t_next__0), t_next__0'
"""

from __future__ import annotations

import ast
import copy
import functools
from dataclasses import dataclass

from .render import Definition

__all__ = ["Split", "split", "STEP_VALUE"]

STEP_VALUE = "__step{}"
"""How the per-parameter part names step value k: no local of a definition starts with two
underscores (:class:`~tinynet.compiled.render.Definition`), so it stands for nothing else."""

_ALWAYS_UNIFORM = {"self", "math", "vector_exp", "vector_log", "vector_log1p", "abs"}
"""Names the same for every parameter in any definition: its owner (whose fields are the
hyperparameters) and the functions the kernels write."""


@dataclass(frozen=True)
class Split:
    """An optimizer's ``update`` split (see the module's docstring). ``counters``: the state
    slots that are counters; ``per_step``: ``(lr, *counters' state) → (*step values,
    *counters' new values)``; ``per_element``: ``(p, g, lr, *the other slots' state, *step
    values) → (new p, *the other slots' new state)``."""

    counters: tuple[int, ...]
    per_step: Definition
    per_element: Definition
    step_values: int

    def element_slots(self, slots: int) -> list[int]:
        """The state slots (of ``slots``) kept per parameter: all but the counters."""
        return [slot for slot in range(slots) if slot not in self.counters]


def _names(node: ast.AST) -> set[str]:
    return {child.id for child in ast.walk(node) if isinstance(child, ast.Name)}


def _uniform_locals(definition: Definition, uniform: set[str]) -> set[str]:
    """``uniform`` and every local computed from nothing else, in the definition's order."""
    uniform = set(uniform)
    for local, expression in definition.assignments:
        if _names(expression) <= uniform:
            uniform.add(local)
    return uniform


def _trivial(node: ast.expr) -> bool:
    """A value with nothing to compute: a constant, a name, a parameter or a function."""
    return isinstance(node, (ast.Constant, ast.Name, ast.Attribute)) or (
        isinstance(node, ast.UnaryOp) and isinstance(node.operand, ast.Constant))


class _Hoist(ast.NodeTransformer):
    """Replace each largest subexpression that is the same for every parameter (and is not
    trivial, or names a uniform local or counter) by a step value's name, collecting them."""

    def __init__(self, uniform: set[str], available: set[str], hoisted: dict[str, ast.expr]):
        self.uniform, self.available, self.hoisted = uniform, available, hoisted

    def _step_value(self, node: ast.expr) -> ast.Name:
        text = ast.unparse(node)
        if text not in self.hoisted:
            self.hoisted[text] = node
        index = list(self.hoisted).index(text)
        return ast.Name(id=STEP_VALUE.format(index), ctx=ast.Load())

    def visit(self, node: ast.AST) -> ast.AST:
        if isinstance(node, ast.expr) and _names(node) <= self.uniform:
            if isinstance(node, ast.Name) and node.id in self.available:
                return node                               # lr, or a parameter's own name
            if not _trivial(node) or isinstance(node, ast.Name):
                return self._step_value(node)
            return node
        if isinstance(node, ast.Call):                    # the function itself stays
            node.args = [self.visit(argument) for argument in node.args]
            return node
        return self.generic_visit(node)


@functools.lru_cache(maxsize=256)
def split(definition: Definition) -> Split:
    """The :class:`Split` of an optimizer's ``update`` definition (arguments ``p, g, lr,
    *state``; results the new ``p`` and the new state)."""
    p, g, lr, *state = definition.arguments
    new_state = definition.results[1:]
    counters = set(range(len(state)))
    while True:                                 # the largest set of slots that stay uniform
        uniform = _uniform_locals(definition, {lr, *_ALWAYS_UNIFORM,
                                               *(state[slot] for slot in counters)})
        kept = {slot for slot in counters if _names(new_state[slot]) <= uniform}
        if kept == counters:
            break
        counters = kept
    others = [slot for slot in range(len(state)) if slot not in counters]
    hoisted: dict[str, ast.expr] = {}
    hoist = _Hoist(uniform, {lr}, hoisted)
    assignments = tuple((local, hoist.visit(copy.deepcopy(expression)))
                        for local, expression in definition.assignments
                        if local not in uniform)
    results = tuple(hoist.visit(copy.deepcopy(expression)) for expression
                    in (definition.results[0], *(new_state[slot] for slot in others)))
    step_results = (*hoisted.values(), *(new_state[slot] for slot in sorted(counters)))
    needed = set().union(*(_names(result) for result in step_results))
    step_assignments = []
    for local, expression in reversed(definition.assignments):   # what they read, in order
        if local in uniform and local in needed:
            step_assignments.insert(0, (local, expression))
            needed |= _names(expression)
    element_arguments = (p, g, lr, *(state[slot] for slot in others),
                         *(STEP_VALUE.format(index) for index in range(len(hoisted))))
    return Split(tuple(sorted(counters)),
                 Definition((lr, *(state[slot] for slot in sorted(counters))),
                            tuple(step_assignments), step_results),
                 Definition(element_arguments, assignments, results), len(hoisted))
