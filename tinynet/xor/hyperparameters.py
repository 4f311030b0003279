"""One command-line flag per hyperparameter of every registered activation, loss and
optimizer, named after its class: ``--adam-eps``, ``--leaky-relu-alpha``, ``--huber-delta``,
and for a user's ``rmsprop`` with a field ``eps``, ``--rmsprop-eps``. Two classes that share a
field name get two flags, so neither shadows the other.

The flags are made from the registries (:data:`~tinynet.activations.ACTIVATIONS`,
:data:`~tinynet.losses.LOSSES`, :data:`~tinynet.optimizers.OPTIMIZERS`) when the parser is
built, after ``--import`` (:mod:`~tinynet.xor.imports`), one per dataclass field. A flag whose
name another flag already has (two registries with a class of the same name, or a class
named after a setting, ``first`` with a field ``seed``) is prefixed with its kind:
``--loss-huber-delta``. The built-in classes' fields keep their short flags as aliases
(:data:`ALIASES`: ``--alpha``, ``--momentum``, ``--beta1``, ``--beta2``, ``--eps``).

A flag belongs to its class: given with another class chosen (``--adam-eps`` with
``--optimizer momentum``), it is refused in one line (:func:`chosen_spec`).
"""

from __future__ import annotations

import argparse
from dataclasses import MISSING, dataclass, fields

from ..activations import ACTIVATIONS
from ..losses import LOSSES
from ..optimizers import OPTIMIZERS

__all__ = ["KINDS", "ALIASES", "Hyperparameter", "hyperparameters", "add_flags", "given",
           "chosen_spec"]

KINDS = {"activation": ACTIVATIONS, "loss": LOSSES, "optimizer": OPTIMIZERS}
"""Each kind of definition that has hyperparameter flags, and its registry (read when the
flags are made, so that what ``--import`` registered is in it)."""

ALIASES = {("activation", "leaky_relu", "alpha"): "--alpha",
           ("optimizer", "momentum", "momentum"): "--momentum",
           ("optimizer", "adam", "beta1"): "--beta1",
           ("optimizer", "adam", "beta2"): "--beta2",
           ("optimizer", "adam", "eps"): "--eps"}
"""The short flags of the built-in classes' fields, kept as aliases of the long ones
(``--eps`` is ``--adam-eps``): (kind, class name, field) -> flag."""


@dataclass(frozen=True)
class Hyperparameter:
    """One field ``field`` of the class registered as ``name`` in the registry of ``kind``,
    set by ``flags`` (the long one first), with its ``default``."""

    kind: str
    name: str
    field: str
    default: object
    flags: tuple[str, ...]

    @property
    def dest(self) -> str:
        """Where argparse keeps its value (a name no other option uses)."""
        return f"hyperparameter:{self.kind}:{self.name}:{self.field}"

    @property
    def owner(self) -> str:
        """Who the field belongs to, for messages: ``adam's eps (an optimizer)``."""
        article = "a" if self.kind == "loss" else "an"  # an activation, an optimizer
        return f"{self.name}'s {self.field} ({article} {self.kind})"


def hyperparameters(taken: set[str] = frozenset()) -> list[Hyperparameter]:
    """Every field of every registered class of :data:`KINDS`, with its flags: its long flag
    ``--<class>-<field>`` (underscores as dashes), or ``--<kind>-<class>-<field>`` if that
    name is in ``taken`` (the parser's other flags) or would be made twice; and its alias of
    :data:`ALIASES`, if any."""
    found = [(kind, name, field) for kind, registry in KINDS.items()
             for name, cls in sorted(registry.items()) for field in fields(cls)]
    plain = [f"--{name}-{field.name}".replace("_", "-") for _, name, field in found]
    clashes = {flag for flag in plain if plain.count(flag) > 1 or flag in taken}
    made = []
    for (kind, name, field), flag in zip(found, plain):
        if flag in clashes:
            flag = f"--{kind}-{flag[2:]}"
        alias = ALIASES.get((kind, name, field.name))
        default = field.default if field.default is not MISSING else None
        made.append(Hyperparameter(kind, name, field.name, default,
                                   (flag, alias) if alias and alias not in taken else (flag,)))
    return made


def _number(text: str) -> float:
    """argparse type of a hyperparameter: a real number (its class checks its range)."""
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None


def add_flags(parser: argparse.ArgumentParser) -> list[Hyperparameter]:
    """Add every :func:`hyperparameters` flag to ``parser``, in one group per kind, and return
    them; the flags ``parser`` has already are left alone."""
    taken = {flag for action in parser._actions for flag in action.option_strings}
    made = hyperparameters(taken)
    for kind in KINDS:
        group = parser.add_argument_group(
            f"{kind} hyperparameters",
            f"--<{kind}>-<field>: a field of the chosen {kind}; another {kind}'s is refused")
        for hyperparameter in (h for h in made if h.kind == kind):
            default = ("" if hyperparameter.default is None else  # a real number, if any
                       f" (default {hyperparameter.default:g})")
            group.add_argument(*hyperparameter.flags, dest=hyperparameter.dest, type=_number,
                               default=None, metavar="X",
                               help=f"{hyperparameter.name}'s {hyperparameter.field}{default}")
    return made


def given(args: argparse.Namespace, made: list[Hyperparameter],
          kind: str) -> list[tuple[Hyperparameter, float]]:
    """The flags of ``kind`` given on the command line, with their values."""
    return [(h, getattr(args, h.dest)) for h in made
            if h.kind == kind and getattr(args, h.dest, None) is not None]


def chosen_spec(args: argparse.Namespace, made: list[Hyperparameter], kind: str,
                chosen: str) -> str | None:
    """The spec of the class ``chosen`` (a name of ``kind``'s registry) with the values of
    its flags, ``"adam(eps=1e-06)"``, or None if no flag of ``kind`` was given. A flag of
    another class raises ``ValueError``, one line, naming it, its class and ``chosen``; a
    value the class refuses (out of its range, not finite), the class's own error."""
    values = given(args, made, kind)
    for hyperparameter, _ in values:
        if hyperparameter.name != chosen:
            flags = " (".join(hyperparameter.flags) + ")" * (len(hyperparameter.flags) - 1)
            raise ValueError(f"{flags} is {hyperparameter.owner}; give --{kind} "
                             f"{hyperparameter.name}, not {chosen}")
    if not values:
        return None
    KINDS[kind][chosen](**{h.field: value for h, value in values})  # checked by its class
    return f"{chosen}({', '.join(f'{h.field}={value!r}' for h, value in values)})"
