"""Every check of user input, and the exceptions they raise.

Inputs are checked once, where they enter tinynet (a public function or constructor); the
code behind an entry point trusts what it is given, so no training loop re-checks per step.
Every message names the argument, the value it got and what was expected, so a learner can
fix the call without reading tinynet's source.
"""

from __future__ import annotations

import dataclasses
import difflib
import functools
import math
import numbers
import os
from collections.abc import Iterable, Sequence
from pathlib import Path

import numpy as np

from .schedules import DECAYS

__all__ = ["ShapeError", "UnknownNameError", "FileFormatError", "TooLargeError", "MAX_SEED",
           "MAX_EPOCHS", "BACKENDS", "check_packed", "check_state", "check_not_masked",
           "check_hidden", "check_memory", "machine_memory", "size_text", "shorten", "summarised",
           "check_int", "check_seed", "check_float", "check_bool", "check_probability",
           "check_counts", "check_backend", "check_choice", "as_float_matrix",
           "check_training_data", "check_training_settings", "check_members", "check_instance",
           "check_sequence", "check_chain", "check_schedule", "check_seeds", "check_accuracy",
           "check_callable", "check_fields"]


class ShapeError(ValueError):
    """An array or a layer size does not fit where it is used."""


class UnknownNameError(ValueError):
    """A name (activation, initializer, backend...) that tinynet does not know."""

    def __init__(self, kind: str, name: object, valid: Iterable[str], hint: str = "",
                 suggestion: str | None = None) -> None:
        """``suggestion``: the valid name to offer; by default the closest by spelling."""
        valid = sorted(valid)
        close = [suggestion] if suggestion is not None else _closest(name, valid)
        shown = repr(name) if isinstance(name, str) else describe_value(name)
        message = f"unknown {kind} {shown}; expected one of: {summarised(valid)}"
        if close:
            message += f" (did you mean {close[0]!r}?)"
        if hint:
            message += f". {hint}"
        super().__init__(message)
        self.name = name
        self.valid = valid


def _closest(name: object, valid: list[str]) -> list[str]:
    """The valid name closest to ``name`` by spelling, whatever its case (``Xavier`` finds
    ``xavier_normal``), or one it begins; none for a name that is not a string."""
    if not isinstance(name, str) or not name:
        return []
    lowered = {v.lower(): v for v in valid}
    wanted = name.lower()
    if wanted in lowered:
        return [lowered[wanted]]
    close = difflib.get_close_matches(wanted, list(lowered), n=1)
    return [lowered[close[0]]] if close else [v for v in valid if v.lower().startswith(wanted)][:1]


SHOWN = 16
"""The most items a message lists in full (:func:`summarised`)."""


def summarised(items: Sequence[object], shown: int = SHOWN, sep: str = ", ") -> str:
    """``items`` joined by ``sep`` if there are at most ``shown``, else the first
    ``shown - 4`` and how many there are in all: a message stays one readable line."""
    texts = [str(item) for item in items]
    if len(texts) <= shown:
        return sep.join(texts)
    return f"{sep.join(texts[:shown - 4])}{sep}... ({len(texts)} in all)"


class DefinitionError(ValueError):
    """A definition that would train wrongly or not at all: the message names the class, the
    method, and what is wrong (at which point, with which numbers). Raised by
    :func:`tinynet.check`, by the registries' ``register`` and by
    :func:`tinynet.activations.evaluate`."""


class TooLargeError(ValueError):
    """A request that would need more memory than this machine has, refused before any of it
    is allocated."""


class FileFormatError(ValueError):
    """A file that is not a tinynet network this version can read: foreign, corrupted,
    truncated, or written by a newer tinynet."""


def check_int(name: str, value: object, *, minimum: int, maximum: int | None = None) -> int:
    """Return ``value`` as an int if it is an integer in [minimum, maximum]; raise otherwise."""
    expected = f"an integer >= {minimum}" if maximum is None else \
        f"an integer from {minimum} to {maximum}"
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be {expected}, got {value!r} "
                        f"of type {type(value).__name__}")
    if value < minimum or (maximum is not None and value > maximum):
        raise ValueError(f"{name} must be {expected}, got {value!r}")
    return int(value)


def check_hidden(hidden: object) -> tuple[int, ...]:
    """``hidden`` as a tuple of layer widths, each at least 1 (it may be empty: no hidden
    layer); a string or a non-sequence is refused."""
    if isinstance(hidden, (str, bytes)) or not isinstance(hidden, Iterable):
        raise TypeError(f"hidden must be a sequence of layer widths such as (2, 2), got "
                        f"{hidden!r}")
    return tuple(check_int(f"hidden[{i}]", width, minimum=1) for i, width in enumerate(hidden))


MAX_SEED = 2**63 - 1
"""Seeds are 63-bit, so that every backend can hold them in a signed 64-bit integer."""

MAX_EPOCHS = 2**53
"""The most epochs a run takes (and the largest ``record_every`` or ``print_every``): epoch
numbers stay exact as float64 and far from the compiled kernels' 64-bit limit. At 10 ns an
epoch it is three years of training; a run that long is stopped with Ctrl-C, which works
between chunks of about a second."""


def check_seed(name: str, value: object) -> int:
    """Return ``value`` if it is a valid seed: an integer from 0 to 2**63 - 1."""
    return check_int(name, value, minimum=0, maximum=MAX_SEED)


def check_float(name: str, value: object, *, minimum: float, inclusive: bool) -> float:
    """Return ``value`` as a finite float above ``minimum`` (or equal, if ``inclusive``)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a real number, got {value!r} of type "
                        f"{type(value).__name__}")
    bound = "" if minimum == -math.inf else f" {'>=' if inclusive else '>'} {minimum}"
    try:
        value = float(value)
    except OverflowError:
        raise ValueError(f"{name} must be a finite number{bound}, got {shorten(value)} (too "
                         "large for a float)") from None
    if not math.isfinite(value) or value < minimum or (value == minimum and not inclusive):
        raise ValueError(f"{name} must be a finite number{bound}, got {value!r}")
    return value


def check_fields(owner: object) -> None:
    """Refuse a dataclass field of ``owner`` (an activation's, a loss's or an optimizer's
    parameter) that is not a finite real number: NaN or inf would train to NaN, text would
    run on one backend only. The ValueError names the class, the field and the value."""
    for field in dataclasses.fields(owner):
        value = getattr(owner, field.name)
        name = f"{type(owner).__name__}'s {field.name} must be a finite number, got"
        if isinstance(value, bool) or not isinstance(value, numbers.Real):
            raise ValueError(f"{name} {shorten(value)} of type {type(value).__name__}")
        try:
            finite = math.isfinite(value)
        except OverflowError:
            raise ValueError(f"{name} {shorten(value)} (too large for a float)") from None
        if not finite:
            raise ValueError(f"{name} {float(value)!r}")


def shorten(value: object, width: int = 40) -> str:
    """``repr(value)``, cut in the middle if longer than ``width`` (a 400-digit number)."""
    text = repr(value)
    if len(text) <= width:
        return text
    return f"{text[:width // 2]}...{text[-width // 2:]} ({len(text)} characters)"


def describe_value(value: object) -> str:
    """A value in a message, never its whole contents: ``"ndarray of shape (50, 2)"``,
    ``"list of 2 items"``, else :func:`shorten`'s repr."""
    if isinstance(value, np.ndarray):
        return f"ndarray of shape {value.shape}"
    if isinstance(value, (list, tuple, dict, set)):
        return f"{type(value).__name__} of {len(value)} item{'s' * (len(value) != 1)}"
    return shorten(value)


def check_not_masked(name: str, value: object) -> object:
    """Refuse a masked array: NumPy would drop its mask and use the hidden values."""
    if isinstance(value, np.ma.MaskedArray):
        raise TypeError(f"{name} is a masked array; tinynet does not skip masked values (NumPy "
                        f"would use the values under the mask): pass {name}.compressed(), "
                        f"{name}.filled(value) or only the rows you mean")
    return value


@functools.cache
def machine_memory() -> int | None:
    """Bytes of memory this process may use: the machine's physical memory, or the
    container's limit (cgroup v2 ``memory.max``) if lower; None where the OS does not say."""
    sizes = []
    try:
        sizes.append(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES"))
    except (ValueError, OSError, AttributeError):
        pass
    try:
        limit = Path("/sys/fs/cgroup/memory.max").read_text().strip()
        if limit.isdigit():
            sizes.append(int(limit))
    except OSError:
        pass
    return min(sizes, default=None)


def size_text(nbytes: float) -> str:
    """``nbytes`` in binary units: ``3.2 GiB`` (past 1024 PiB, as a power of ten)."""
    if nbytes >= 1024**6:
        return f"about 10^{len(str(int(nbytes))) - 1} bytes"
    for unit in ("bytes", "KiB", "MiB", "GiB", "TiB", "PiB"):
        if nbytes < 1024 or unit == "PiB":
            return f"{nbytes:,.0f} {unit}" if unit == "bytes" else f"{nbytes:,.1f} {unit}"
        nbytes /= 1024
    raise AssertionError("unreachable")


def check_memory(what: str, nbytes: int, advice: str = "") -> None:
    """Raise :class:`TooLargeError` if ``what`` needs ``nbytes``, more than this machine's
    memory; ``advice`` says what to change."""
    memory = machine_memory()
    if memory is not None and nbytes > memory:
        raise TooLargeError(f"{what} would need {size_text(nbytes)}, more than this machine's "
                            f"{size_text(memory)} of memory{'; ' + advice if advice else ''}")


def as_float_matrix(name: str, value: object, *, columns: int | None = None) -> np.ndarray:
    """Return ``value`` as a C-contiguous float64 array of shape ``(B, columns)``.

    Booleans, integers and floats are converted exactly (integers up to 2**53); complex,
    string and object data are refused rather than truncated. Rows must be finite. The result
    is always a copy, so later changes to the caller's array cannot reach a layer's cache.
    """
    check_not_masked(name, value)
    try:
        array = np.asarray(value)
    except ValueError:  # rows of different lengths
        raise ShapeError(f"{name} must be a rectangular (batch, features) array; its rows have "
                         "different lengths") from None
    if array.dtype.kind not in "biuf":
        raise TypeError(f"{name} must hold real numbers, got an array of dtype {array.dtype}")
    if array.ndim != 2:
        raise ShapeError(f"{name} must be 2-D with shape (batch, features), got shape "
                         f"{array.shape}")
    if array.shape[0] == 0:
        raise ShapeError(f"{name} must hold at least one sample, got shape {array.shape}")
    if columns is not None and array.shape[1] != columns:
        raise ShapeError(f"{name} must have {columns} columns (the network's "
                         f"{'input' if name == 'X' else 'output'} size), got shape {array.shape}")
    array = np.array(array, dtype=np.float64, order="C", copy=True)
    if not np.all(np.isfinite(array)):
        bad = tuple(int(i) for i in np.argwhere(~np.isfinite(array))[0])
        raise ValueError(f"{name} must be finite, got {array[bad]} at index {bad}")
    return array


def check_seeds(seeds: object, count: int) -> np.ndarray:
    """Return ``seeds`` as int64 (count,) if it gives one valid seed per network."""
    if isinstance(seeds, (str, bytes)) or not isinstance(seeds, Iterable):
        raise TypeError(f"seeds must be a sequence of integer seeds, got {seeds!r}")
    check_not_masked("seeds", seeds)
    if isinstance(seeds, range) or (isinstance(seeds, np.ndarray) and seeds.ndim == 1 and
                                    seeds.dtype.kind in "iu"):  # checked at once
        if len(seeds) != count:
            raise ValueError(f"seeds must give one seed per network ({count}), got "
                             f"{len(seeds)}")
        if len(seeds):  # the ends of a range, or NumPy's min and max: no Python loop
            low, high = sorted((seeds[0], seeds[-1])) if isinstance(seeds, range) else \
                (seeds.min(), seeds.max())
            if low < 0 or high > MAX_SEED:
                bad = low if low < 0 else high
                check_seed(f"seeds[{list(seeds).index(bad)}]", int(bad))
        if isinstance(seeds, range):
            return np.arange(seeds.start, seeds.stop, seeds.step, dtype=np.int64)
        return seeds.astype(np.int64, copy=False)
    seeds = list(seeds)
    if len(seeds) != count:
        raise ValueError(f"seeds must give one seed per network ({count}), got {len(seeds)}")
    return np.array([check_seed(f"seeds[{k}]", s) for k, s in enumerate(seeds)], dtype=np.int64)


def check_bool(name: str, value: object) -> bool:
    """Return ``value`` if it is True or False (NumPy's bools included); raise otherwise."""
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be True or False, got {value!r}")
    return bool(value)


def check_probability(name: str, value: object, strict: bool = False) -> float:
    """Return ``value`` if it lies in [0, 1], or in (0, 1) when ``strict``."""
    value = check_float(name, value, minimum=-math.inf, inclusive=False)
    inside = 0 < value < 1 if strict else 0 <= value <= 1
    if not inside:
        bounds = "strictly between 0 and 1" if strict else "from 0 to 1"
        raise ValueError(f"{name} must be a probability {bounds}, got {value!r}")
    return value


def check_accuracy(name: str, value: object) -> float:
    """Return ``value`` if it is a fraction of samples in (0, 1]."""
    value = check_float(name, value, minimum=0.0, inclusive=False)
    if value > 1.0:
        raise ValueError(f"{name} must be a fraction in (0, 1], got {value!r}")
    return value


def check_callable(name: str, value: object, expected: str) -> object:
    """Return ``value`` if it is callable or None; ``expected`` says what it should be."""
    if value is not None and not callable(value):
        raise TypeError(f"{name} must be {expected}, or None; got {value!r}")
    return value


def check_counts(successes: object, n: object, suffix: str = "") -> tuple[int, int]:
    """Return ``(successes, n)`` if they are counts with 0 <= successes <= n and n >= 1."""
    n = check_int(f"n{suffix}", n, minimum=1)
    successes = check_int(f"successes{suffix}", successes, minimum=0)
    if successes > n:
        raise ValueError(f"successes{suffix} must be at most n{suffix} ({n}), got {successes}")
    return successes, n


def check_choice(name: str, value: object, choices: Iterable[str], kind: str = "") -> str:
    """Return ``value`` if it is one of ``choices``; raise :class:`UnknownNameError` otherwise."""
    choices = tuple(choices)
    if not isinstance(value, str) or value not in choices:
        raise UnknownNameError(kind or name, value, choices)
    return value


BACKENDS = ("numba", "numpy")
"""``numpy``: the readable reference (:mod:`tinynet.reference`). ``numba``: the same
arithmetic, each whole training run in compiled code, no Python per step
(:mod:`tinynet.compiled`)."""


def check_backend(backend: object) -> str:
    """Return ``backend`` if it is one of :data:`BACKENDS`."""
    return check_choice("backend", backend, BACKENDS)


def check_training_data(X: object, y: object, n_in: int, n_out: int, labels: bool = False,
                        suffix: str = "") -> tuple[np.ndarray, np.ndarray]:
    """Return X (B, n_in) and y (B, n_out) as float64, or raise naming what does not fit
    (``X`` and ``y``, or with ``suffix`` ``"_test"``, ``X_test`` and ``y_test``).

    A 1-D ``y`` is taken as one target per sample when the network has a single output;
    with ``labels`` (a softmax output of ``n_out`` classes), as class labels, returned as
    one-hot rows (:func:`one_hot`).
    """
    x_name, y_name = f"X{suffix}", f"y{suffix}"
    X = as_float_matrix(x_name, X, columns=n_in)
    y_array = np.asarray(check_not_masked(y_name, y))
    given_shape = y_array.shape
    if labels and y_array.ndim == 1:
        y_array = one_hot(y_name, y_array, n_out)
    if y_array.ndim == 1 and n_out == 1 and y_array.dtype.kind in "biuf":
        y_array = y_array.reshape(-1, 1)
    y = as_float_matrix(y_name, y_array, columns=n_out)
    if len(X) != len(y):
        raise ShapeError(f"{x_name} and {y_name} must have the same number of samples, got "
                         f"{x_name} {X.shape} and {y_name} {given_shape}")
    return X, y


def check_labels(name: str, labels: np.ndarray, classes: int | None = None) -> np.ndarray:
    """``labels`` as int64 if they are integer class labels (of ``classes`` classes if
    given, labels 0 to ``classes`` − 1; else labels from 0), or a one-line error naming
    ``name``: strings or objects, floats, a label below 0 (or, given ``classes``, above its
    last)."""
    span = "from 0" if classes is None else f"0 to {classes - 1}"
    if labels.dtype.kind in "USO":
        shown = labels.flat[0] if labels.size else ""
        kind = "strings" if isinstance(shown, str) else f"{type(shown).__name__} objects"
        raise TypeError(f"{name}: class labels must be integers {span}, got {kind} such as "
                        f"{_plain(shown)!r}; number them first "
                        f"(np.unique({name}, return_inverse=True)[1])")
    if labels.dtype.kind not in "iu":
        rows = "" if classes is None else f", or one-hot rows of shape (samples, {classes})"
        raise TypeError(f"{name}: class labels must be integers {span}, got dtype "
                        f"{labels.dtype}; pass {name}.astype(int) if they are whole "
                        f"numbers{rows}")
    outside = np.flatnonzero((labels < 0) | (labels >= (np.inf if classes is None else classes)))
    if outside.size:
        index = int(outside[0])
        where = ("; class labels count from 0" if classes is None else
                 f", outside {span} (the output layer has {classes} units, one per class)")
        raise ValueError(f"{name}[{index}] is class {int(labels[index])}{where}")
    return labels.astype(np.int64)


def one_hot(name: str, labels: np.ndarray, classes: int) -> np.ndarray:
    """Class labels (B,), integers from 0 to ``classes`` − 1, as one-hot rows (B, classes) of
    float64; or a one-line error naming ``name`` and the first label that is not one
    (:func:`check_labels`)."""
    labels = check_labels(name, labels, classes)
    rows = np.zeros((labels.size, classes))
    rows[np.arange(labels.size), labels] = 1.0
    return rows


def _plain(value: object) -> object:
    """A NumPy scalar as the Python value it holds (``'cat'``, not ``np.str_('cat')``)."""
    return value.item() if isinstance(value, np.generic) else value


def check_training_settings(samples: int, epochs: object, lr: object, batch_size: object,
                            shuffle: object, threshold: object, record_every: object,
                            members: int = 1) -> tuple[int, float, int, bool, float, int]:
    """Return (epochs, lr, batch_size, shuffle, threshold, record_every) checked: 1 <= epochs
    <= :data:`MAX_EPOCHS`, lr > 0 and finite, 1 <= batch_size <= samples, shuffle a bool,
    threshold finite, 1 <= record_every <= :data:`MAX_EPOCHS` (``None``: 0, record nothing),
    and the losses recorded for ``members`` networks must fit in memory."""
    epochs = check_int("epochs", epochs, minimum=1, maximum=MAX_EPOCHS)
    lr = check_float("lr", lr, minimum=0.0, inclusive=False)
    batch_size = check_int("batch_size", batch_size, minimum=1)
    if batch_size > samples:
        raise ValueError(f"batch_size must be at most the number of samples ({samples}), "
                         f"got {batch_size}")
    shuffle = check_bool("shuffle", shuffle)
    threshold = check_float("threshold", threshold, minimum=-math.inf, inclusive=False)
    record_every = 0 if record_every is None else \
        check_int("record_every", record_every, minimum=1, maximum=MAX_EPOCHS)
    if record_every:
        kept = epochs // record_every
        check_memory(f"record_every={record_every} keeps {kept:,} losses per network over "
                     f"{epochs:,} epochs; for {members:,} network{'s' * (members > 1)} it",
                     8 * members * kept,
                     "pass a larger record_every, or record_every=None to keep none")
    return epochs, lr, batch_size, shuffle, threshold, record_every


def check_packed(name: str, theta: object, parameters: int) -> np.ndarray:
    """Return ``theta`` if it is a writeable C-contiguous float64 array (S, ``parameters``)
    with S >= 1: packed parameters, trained in place (so never a converted copy)."""
    check_not_masked(name, theta)
    if not isinstance(theta, np.ndarray) or theta.dtype != np.float64 or theta.ndim != 2 or \
            not theta.flags.c_contiguous or not theta.flags.writeable:
        shown = (f"{theta.dtype} array of shape {theta.shape}" if isinstance(theta, np.ndarray)
                 else type(theta).__name__)
        raise TypeError(f"{name} must be a writeable C-contiguous float64 NumPy array (members, "
                        f"{parameters}), trained in place, got a {shown}")
    if theta.shape[0] < 1 or theta.shape[1] != parameters:
        raise ShapeError(f"{name} must have shape (members >= 1, {parameters}), got "
                         f"{theta.shape}")
    return theta


def check_state(name: str, state: object, shape: tuple[int, ...], what: str) -> np.ndarray:
    """Return ``state`` if it is a writeable C-contiguous float64 array of ``shape``
    (``what`` it holds), trained in place (so never a converted copy)."""
    check_not_masked(name, state)
    if not isinstance(state, np.ndarray) or state.dtype != np.float64 or \
            not state.flags.c_contiguous or not state.flags.writeable:
        shown = (f"{state.dtype} array of shape {state.shape}" if isinstance(state, np.ndarray)
                 else type(state).__name__)
        raise TypeError(f"{name} must be a writeable C-contiguous float64 NumPy array {shape}, "
                        f"{what}, trained in place, got a {shown}")
    if state.shape != shape:
        raise ShapeError(f"{name} must have shape {shape}, {what}, got {state.shape}")
    return state


def check_chain(layers: Sequence) -> None:
    """Raise :class:`ShapeError` unless each of ``layers`` (layers or blocks, with ``n_in``
    and ``n_out``) takes as many inputs as the one before gives."""
    for index in range(1, len(layers)):
        previous, layer = layers[index - 1], layers[index]
        if layer.n_in != previous.n_out:
            shapes = [getattr(part, "shape", None) for part in (previous, layer)]
            raise ShapeError(
                f"layers[{index}] takes {layer.n_in} inputs but layers[{index - 1}] gives "
                f"{previous.n_out} outputs" + ("" if None in shapes else
                                               f" (weight shapes {shapes[0]} then {shapes[1]}, "
                                               "as (n_out, n_in))"))


def check_schedule(warmup: object, decay: object) -> tuple[int, str]:
    """``(warmup, decay)`` of a learning-rate schedule (:mod:`tinynet.schedules`), checked: a
    warmup of 0 to :data:`MAX_EPOCHS` steps, a decay of :data:`tinynet.schedules.DECAYS`."""
    return (check_int("warmup", warmup, minimum=0, maximum=MAX_EPOCHS),
            check_choice("decay", decay, DECAYS))


def check_sequence(name: str, values: object, kind: type | tuple[type, ...], what: str,
                   distinct: bool = False) -> list:
    """Return ``values`` as a non-empty list of ``kind`` objects (``what``: how the user knows
    one, such as "tinynet Layer"); with ``distinct``, no object may stand in it twice.
    ``kind`` may be a tuple of classes, any of which will do."""
    kinds = kind if isinstance(kind, tuple) else (kind,)
    if isinstance(values, (str, bytes, *kinds)) or not isinstance(values, Iterable):
        raise TypeError(f"{name} must be a sequence of {what} objects, got {values!r}")
    values = list(values)
    if not values:
        raise ValueError(f"{name} must hold at least one "
                         f"{' or '.join(k.__name__ for k in kinds)}, got an empty sequence")
    seen: dict[int, int] = {}
    for index, value in enumerate(values):
        check_instance(f"{name}[{index}]", value, kind, f"a {what}")
        if distinct and id(value) in seen:
            raise ValueError(f"{name}[{index}] is the same {type(value).__name__} object as "
                             f"{name}[{seen[id(value)]}]")
        seen[id(value)] = index
    return values


def check_members(networks: object, kind: type) -> list:
    """Return ``networks`` as a list of distinct ``kind`` objects that share one shape and one
    set of activations (an ensemble's members); a single network is a list of one."""
    networks = check_sequence("networks", [networks] if isinstance(networks, kind) else networks,
                              kind, "tinynet Network", distinct=True)
    first = networks[0]

    def described(net) -> str:
        blocks = [block.formula() for block in net.residuals]
        return (f"({'-'.join(map(str, net.sizes))}, "
                f"{[repr(layer.activation) for layer in net.layers]}"
                + (f", blocks {blocks}" if blocks else "") + ")")

    owners: dict[int, int] = {}
    for index, net in enumerate(networks):  # one set of weights trained twice otherwise
        for position, layer in enumerate(net.layers):
            other = owners.setdefault(id(layer), index)
            if other != index:
                raise ValueError(f"networks[{index}].layers[{position}] is also a layer of "
                                 f"networks[{other}]: an ensemble's members share no layer")
    for index, net in enumerate(networks[1:], start=1):
        if net.sizes != first.sizes or net.structure() != first.structure() or \
                [l.activation for l in net.layers] != [l.activation for l in first.layers]:
            raise ShapeError(f"networks[{index}] {described(net)} differs from networks[0] "
                             f"{described(first)}: an ensemble's members share one shape and "
                             "one set of activations and blocks")
    return networks


def check_instance(name: str, value: object, kind: type, what: str) -> object:
    """Return ``value`` if it is a ``kind`` (described to the user as ``what``)."""
    if not isinstance(value, kind):
        shown = repr(value)
        shown = (f"a {type(value).__name__}" if "\n" in shown or len(shown) > 60 else
                 f"{shown} of type {type(value).__name__}")
        raise TypeError(f"{name} must be {what}, got {shown}")
    return value
