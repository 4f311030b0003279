"""The playground's form: its fields as the page sends them (text, as in the page's URL), read
into a study (:class:`~tinynet.xor.Arm` A, an optional B, and their
:class:`~tinynet.xor.Setup`), each field checked by the library's own checks.

A field is checked by making the library object it belongs to with that field alone given
(``Setup(epochs=...)``, ``Arm(init=...)``, ``Task(data=..., n=...)``), so the page shows the
library's message, one line, beside the field. Then the whole study is made, which adds the
checks between fields (a batch larger than the data set) and the limits below; their messages
go to the field they name, or to ``study``.

Limits (also in ``docs/playground.md``): each field at most :data:`MAX_FIELD_CHARS`
characters; 1 to :data:`MAX_SEEDS` seeds; at most :data:`MAX_SAMPLES` samples; at most
:data:`MAX_WORK` parameter-sample-steps per study (seeds x epochs x samples x parameters,
summed over the arms), about a minute of SGD on 2 cores; at most :data:`MAX_PAGE_BYTES` of
data for the page; the memory the library's :func:`~tinynet.xor.bench.check_study_memory`
allows. (The trainer also stops a study after
:data:`~tinynet.playground.worker.MAX_SECONDS`.)

The samples and the work are sized from the fields alone, before the data set is drawn, so a
form of 10^8 samples is refused at once, not after drawing them; a form within the limits
draws its data set once.
"""

from __future__ import annotations

import inspect
import math
import re
from dataclasses import dataclass
from collections.abc import Mapping
from types import MappingProxyType
from urllib.parse import urlencode

from .. import packing
from ..activations import ACTIVATIONS, get_activation
from ..data import CLASSIFICATION, DATASETS, Split
from ..init import available
from ..losses import LOSSES, check_output, get_loss
from ..network import RESIDUALS
from ..optimizers import OPTIMIZERS
from ..residual import NORMS
from ..validation import MAX_SEED, check_choice, check_float, check_int, shorten
from ..xor import Arm, Setup, Task
from ..xor.bench import check_arms, check_study_memory
from .payload import page_bytes

__all__ = ["DEFAULTS", "MAX_SEEDS", "MAX_EPOCHS", "MAX_SAMPLES", "MAX_WORK", "MAX_PAGE_BYTES",
           "MAX_FIELD_CHARS", "RECORDS", "TRUE", "FALSE", "FormError", "Form", "read_form",
           "choices", "samples_of"]

DEFAULTS = {"data": "xor", "n": "", "noise": "", "hidden": "8", "activation": "leaky_relu",
            "residual": "", "norm": "", "branch": "1",
            "a": "normal", "b": "he_normal", "loss": "mse", "optimizer": "sgd", "lr": "0.03",
            "epochs": "2000", "batch": "1", "shuffle": "0", "seeds": "100", "first": "0"}
"""Every field and its default, as text: 100 seeds of a 2-8-1 XOR network, N(0,1) against
He, 2,000 epochs of per-sample SGD at lr 0.03 (N(0,1) solves about 89 % of seeds there, He
about 98 %). An empty ``n`` is XOR's four points; an empty ``noise`` the data set's default;
an empty ``b`` no second arm; an empty ``residual`` a chain of layers (``residual``, ``norm``
and ``branch`` are :class:`~tinynet.xor.Arm`'s: the hidden layers after the first grouped
into residual blocks of ``branch`` layers, a LayerNorm before or after each)."""

MAX_SEEDS = 1000
"""The most seeds a playground study trains per arm: a grid a page can still show."""

MAX_EPOCHS = 1_000_000
"""The most epochs a playground study trains: the library takes up to 2⁵³, which no study
within :data:`MAX_WORK` could reach on more than a sample or two."""

MAX_SAMPLES = 100_000
"""The most samples a playground data set may have: the page draws every one, the study's
data carries them, and the server keeps the last few studies' data."""

MAX_FIELD_CHARS = 200
"""The longest text a field may hold: ``hidden`` of dozens of layers fits, a 5,000-digit
number (longer than Python reads as an int) does not."""

MAX_WORK = 25 * 10**10
"""The most parameter-sample-steps a study may take (seeds x epochs x samples x parameters,
summed over its arms): about a minute of per-sample SGD on 2 cores for small layouts, at the
4e9 a second that 1,000 seeds of 2-8-1 train at (``benchmarks/bench_playground.py``); Adam
takes many times longer per step."""

MAX_PAGE_BYTES = 32 * 2**20
"""The most data a study may send the page (:func:`~tinynet.playground.payload.page_bytes`):
32 MiB, enough for 1,000 seeds of 2-32-32-1 for each of A and B; the server keeps the last
few studies' data, and the browser draws every seed."""

RECORDS = 100
"""About how many points of each seed's loss curve a study keeps."""

EMPTY: Mapping[str, Split] = MappingProxyType({})
"""No data sets of the user's own."""

UNKNOWN_SHOWN = 5
"""How many unknown fields a message names before it counts the rest."""

TRUE, FALSE = ("1", "true", "on", "yes"), ("0", "false", "off", "no", "")


class FormError(ValueError):
    """Fields the library refused: ``errors`` maps each field (or ``"study"``) to its
    one-line message."""

    def __init__(self, errors: dict[str, str]) -> None:
        super().__init__("; ".join(f"{field}: {message}" for field, message in errors.items()))
        self.errors = errors


@dataclass(frozen=True)
class Form:
    """A checked form: the study's arms (A, and B if given) and setup, the fields as text
    (``fields``, what the page's URL holds), and how often the loss is recorded."""

    arms: tuple[Arm, ...]
    setup: Setup
    fields: dict
    record_every: int

    @property
    def query(self) -> str:
        """The fields as a URL query string, defaults left out."""
        return urlencode({name: value for name, value in self.fields.items()
                          if value != DEFAULTS[name]})

    @property
    def work(self) -> int:
        """Parameter-sample-steps of the whole study (see :data:`MAX_WORK`)."""
        setup = self.setup
        return _work(len(self.arms), setup.seeds, setup.epochs, setup.task.samples,
                     setup.parameters)


def choices(own: Mapping[str, Split] = EMPTY) -> dict[str, list[str]]:
    """The names each choice field takes, for the page's menus; ``own``: the data sets of
    the user's files (``--data``), by name."""
    return {"data": [*DATASETS, *CLASSIFICATION, *own],
            "activation": [a for a, kind in ACTIVATIONS.items()
                           if a != "identity" and not kind.over_units],
            "residual": list(RESIDUALS), "norm": list(NORMS),
            "a": available(), "b": available(),
            "loss": list(LOSSES),  # the 2-D sets' sigmoid takes all but cross_entropy, which
            "optimizer": list(OPTIMIZERS)}  # the digits' softmax takes alone


def read_form(values: dict, own: Mapping[str, Split] = EMPTY) -> Form:
    """Check the page's ``values`` (field name: text; missing fields take :data:`DEFAULTS`)
    and make the study; raise :class:`FormError` with every refused field's message.
    ``own``: the user's data sets (``--data`` files, :func:`tinynet.data.read_split`) by
    name, which ``data`` may name too; each is learned as a data set of many classes is.

    The samples and the work are sized from the fields before anything is drawn; the data set
    is drawn once, and only within :data:`MAX_SAMPLES` and :data:`MAX_WORK`."""
    unknown = sorted(set(values) - set(DEFAULTS))
    if unknown:
        named = ", ".join(map(shorten, unknown[:UNKNOWN_SHOWN]))
        more = f" and {len(unknown) - UNKNOWN_SHOWN:,} more" if len(unknown) > UNKNOWN_SHOWN \
            else ""
        raise FormError({"study": f"unknown field(s) {named}{more}; the fields are "
                                  f"{', '.join(DEFAULTS)}"})
    text = {**DEFAULTS, **values}
    for name, value in text.items():
        if not isinstance(value, str):
            raise FormError({name: f"{name} must be sent as text, got {shorten(value)}"})
        if len(value) > MAX_FIELD_CHARS:
            raise FormError({name: f"{name} must be at most {MAX_FIELD_CHARS} characters, got "
                                   f"{len(value):,}"})
    errors: dict[str, str] = {}
    typed = {}
    for name, read in _READERS.items():
        try:
            typed[name] = read(text[name])
            if name == "data":
                check_choice("data", typed[name], {**DATASETS, **CLASSIFICATION, **own},
                             kind="data set")  # Task's check, nothing drawn
            else:
                _check_alone(name, typed[name])
        except (ValueError, TypeError) as error:
            errors[name] = _one_line(error)
    errors.update(_sized(typed, errors, own))
    task = None
    if not errors.keys() & {"data", "n", "noise", "study"}:  # n, noise: as the data set says
        try:
            task = _task(typed, own)  # the one draw
        except (ValueError, TypeError) as error:
            errors[_field_of(error)] = _one_line(error)
    if errors:
        raise FormError(errors)
    try:
        return _form(typed, task, {name: text[name] for name in DEFAULTS})
    except FormError:
        raise
    except (ValueError, TypeError) as error:
        raise FormError({_field_of(error): _one_line(error)}) from None


def samples_of(data_set: str, n: int | None, own: Mapping[str, Split] = EMPTY) -> int:
    """How many samples ``Task(data_set, n=n)`` draws, known without drawing them: ``n``, or
    the generator's default (XOR: its four points); a data set of many classes' training
    samples (made once per process), one of ``own`` its training samples."""
    if data_set in own:
        return len(own[data_set].X)
    if data_set in CLASSIFICATION:
        return len(CLASSIFICATION[data_set]().X)
    if n is None:
        n = inspect.signature(DATASETS[data_set]).parameters["n"].default
    return 4 if n is None else n


def _sized(typed: dict, errors: dict[str, str], own: Mapping[str, Split]) -> dict[str, str]:
    """The limits on the samples and the work, from the fields alone (nothing drawn): their
    messages by field, for the fields already read without ``errors``."""
    if errors.keys() & {"data", "n"}:
        return {}
    samples = samples_of(typed["data"], typed["n"], own)
    if samples > MAX_SAMPLES:
        given = f"{samples:,}" if samples < 10**15 else shorten(samples)  # 200 digits: cut
        return {"n": f"n must be at most {MAX_SAMPLES:,} in the playground (the page draws "
                     f"every sample), got {given}"}
    if errors.keys() & {"hidden", "epochs", "seeds", "b"}:
        return {}
    arms = 1 if typed["b"] is None else 2
    work = _work(arms, typed["seeds"], typed["epochs"], samples,
                 packing.count(_sizes(typed["data"], typed["hidden"], own)))
    if work > MAX_WORK:
        return {"study": f"seeds x epochs x samples x parameters is {work:.3g} over the arms, "
                         f"above the playground's limit of {MAX_WORK:.2g} (about a minute of "
                         "training); use fewer seeds, epochs or samples"}
    return {}


def _sizes(data_set: str, hidden: tuple[int, ...], own: Mapping[str, Split]) -> list[int]:
    """The layer sizes of a network of ``hidden`` widths on ``data_set``: its inputs first
    and its outputs last (one per class on a data set of many classes, and on ``own``'s)."""
    if data_set in own or data_set in CLASSIFICATION:
        split = own[data_set] if data_set in own else CLASSIFICATION[data_set]()
        return [split.X.shape[1], *hidden, split.classes]
    return [2, *hidden, 1]


def _form(typed: dict, task: Task, fields: dict) -> Form:
    """The study of checked ``typed`` fields on ``task``, with the checks between fields."""
    output = "softmax" if task.classification else "sigmoid"
    try:
        check_output(get_loss(typed["loss"]), get_activation(output))
    except ValueError as error:
        raise FormError({"loss": f"data set {task.name} trains a {output} output: "
                                 f"{_one_line(error)}"}) from None
    common = dict(loss=typed["loss"], optimizer=typed["optimizer"], shuffle=typed["shuffle"],
                  **_blocks(typed))
    arms = [Arm(typed["a"], label=f"A: {typed['a']}", **common)]
    if typed["b"] is not None:
        arms.append(Arm(typed["b"], label=f"B: {typed['b']}", **common))
    setup = Setup(hidden=typed["hidden"], activation=typed["activation"], lr=typed["lr"],
                  epochs=typed["epochs"], seeds=typed["seeds"], first_seed=typed["first"],
                  batch_size=typed["batch"], task=task, output=output)
    try:
        check_arms([setup], arms[:1])  # both arms have the same blocks
    except ValueError as error:
        message = _one_line(error).split(" groups ", 1)[-1]
        raise FormError({"hidden": f"residual blocks group {message}"}) from None
    record_every = math.ceil(setup.epochs / RECORDS)
    size = page_bytes(setup, arms, record_every)
    if size > MAX_PAGE_BYTES:
        raise FormError({"study": f"the page's data would be {size / 2**20:,.0f} MiB (every "
                                  f"seed's boundary, loss curve and weights), above the "
                                  f"playground's limit of {MAX_PAGE_BYTES // 2**20} MiB; use "
                                  "fewer seeds or narrower layers"})
    check_study_memory([setup], arms, record_every,
                       record_every if task.classification else None)
    return Form(tuple(arms), setup, fields, record_every)


def _blocks(typed: dict) -> dict:
    """The arms' residual settings of the fields: none for a chain, which takes no norm and a
    branch of 1."""
    if typed["residual"] is not None:
        return dict(residual=typed["residual"], norm=typed["norm"], branch=typed["branch"])
    for name, alone in (("norm", None), ("branch", 1)):
        if typed[name] != alone:
            raise FormError({name: f"{name} {typed[name]!r} is a residual block's: choose a "
                                   "residual block, or leave it at its default"})
    return {}


def _work(arms: int, seeds: int, epochs: int, samples: int, parameters: int) -> int:
    """Parameter-sample-steps of a study of that size (see :data:`MAX_WORK`)."""
    return arms * seeds * epochs * samples * parameters


def _task(typed: dict, own: Mapping[str, Split]) -> Task:
    """The task of the fields: a generator's or a named data set's, or one of ``own``."""
    if typed["data"] in own:
        if typed["n"] is not None or typed["noise"] is not None:
            raise ValueError(f"n and noise draw samples from a generator; data set "
                             f"{typed['data']!r} is your file's, got n={typed['n']!r} and "
                             f"noise={typed['noise']!r}: leave them empty")
        return Task(own[typed["data"]])
    return Task(typed["data"], n=typed["n"], noise=typed["noise"])


# --- each field: read from text, then checked alone by the library -------------------------

def _integer(text: str) -> int | str:
    """``text`` as an int, or as it is: the library's check then names the field."""
    try:
        return int(text.strip())
    except ValueError:
        return text


def _number(text: str) -> float | str:
    try:
        return float(text.strip())
    except ValueError:
        return text


def _optional(read):
    return lambda text: None if text.strip() == "" else read(text)


def _hidden(text: str) -> tuple:
    """``"8"``, ``"8,8"`` or ``"2, 2"``: the widths (``""``: no hidden layer)."""
    parts = [part.strip() for part in text.split(",")] if text.strip() else []
    return tuple(_integer(part) for part in parts)


def _boolean(text: str) -> bool:
    if text.strip().lower() in TRUE:
        return True
    if text.strip().lower() in FALSE:
        return False
    raise ValueError(f"shuffle must be 1 (on) or 0 (off), got {text!r}")


_READERS = {"data": str.strip, "n": _optional(_integer), "noise": _optional(_number),
            "hidden": _hidden, "activation": str.strip, "residual": _optional(str.strip),
            "norm": _optional(str.strip), "branch": _integer, "a": str.strip,
            "b": _optional(str.strip), "loss": str.strip, "optimizer": str.strip,
            "lr": _number, "epochs": _integer, "batch": _integer, "shuffle": _boolean,
            "seeds": _integer, "first": _integer}
"""How each field's text becomes a value for the library's checks."""

_SETUP_FIELDS = {"hidden": "hidden", "activation": "activation", "lr": "lr",
                 "epochs": "epochs", "first": "first_seed"}
"""Fields that are :class:`~tinynet.xor.Setup` arguments, and their names there."""

_FIELD_OF = {**{argument: field for field, argument in _SETUP_FIELDS.items()},
             "batch_size": "batch", "last": "first"}
"""The field of a message whose first word is a library argument of another name than the
field's ("last seed (first_seed + seeds - 1) must be ...")."""


def _field_of(error: BaseException) -> str:
    """The field a message of the library's is about: the one its first word names, or
    ``"study"``."""
    named = str(error).split(" ", 1)[0].split("=", 1)[0]  # "residual='fixup' is ..."
    return _FIELD_OF.get(named, named if named in DEFAULTS else "study")


def _check_alone(name: str, value: object) -> None:
    """Raise what the library raises for field ``name`` given ``value``, the others at their
    defaults. (``n`` and ``noise`` are checked alone as ``Task`` checks them, before the
    limits size the data set, so that a form over a limit still names a bad ``noise``; then
    together with the data set as it is drawn; a batch against
    the data set's size with the whole form.)"""
    if name == "epochs":  # the playground's limit, below the library's
        check_int("epochs", value, minimum=1, maximum=MAX_EPOCHS)
    elif name in _SETUP_FIELDS:
        Setup(**{_SETUP_FIELDS[name]: value})
    elif name == "n" and value is not None:
        check_int("n", value, minimum=2)
    elif name == "noise" and value is not None:
        check_float("noise", value, minimum=0.0, inclusive=True)  # as Task checks it
    elif name == "batch":
        check_int("batch_size", value, minimum=1)
    elif name == "seeds":
        check_int("seeds", value, minimum=1, maximum=MAX_SEEDS)
    elif name in ("a", "b"):
        if value is not None:
            Arm(value)
    elif name in ("loss", "optimizer"):
        Arm(DEFAULTS["a"], **{name: value})
    elif name == "residual" and value is not None:
        check_choice("residual", value, RESIDUALS)  # as Arm checks it
    elif name == "norm" and value is not None:
        check_choice("norm", value, NORMS)
    elif name == "branch":
        check_int("branch", value, minimum=1)


LIMITS_IN_WORDS = {str(MAX_SEED): "2⁶³ − 1"}
"""The library's limits a message may quote, as the page writes them."""


def _one_line(error: BaseException) -> str:
    """The library's message on one line, its limits in words (:data:`LIMITS_IN_WORDS`) and
    long numbers with thousands separators."""
    text = " ".join(str(error).split())
    for limit, words in LIMITS_IN_WORDS.items():
        text = text.replace(limit, words)
    # a number standing alone, not the digits inside a name such as moons20240101
    return re.sub(r"(?<![\w.-])\d{5,18}(?![\w.])", lambda number: f"{int(number[0]):,}", text)
