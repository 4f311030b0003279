"""One SGD step of a small network written out as straight-line Python, and the cache that
writes, imports and compiles the kernels built from it.

For a layout known in advance (sizes, activations, batch size, update order) every loop over
units can be unrolled and every value given a name of its own: ``p3`` is parameter 3,
``a1_0_1`` the activation of layer 1 for batch row 0, unit 1, ``g3`` the gradient of ``p3``
and ``q3`` its new value. The compiler then keeps the values in registers instead of storing
and reloading them through scratch arrays. Two kernels are built from the step:
:mod:`tinynet.compiled.unrolled` runs it for many networks side by side in SIMD lanes, and
:mod:`tinynet.compiled.fused` for one network, parameters held in locals for the whole run.

Every value is computed as the generic kernels compute it, in the same order (dot products
from ``0.0`` and the first input upwards, then the bias; ``db`` from the first row; the same
scalar functions), so the generated kernels are bit-identical to them.

Generated sources are written to :func:`kernel_dir` (``$TINYNET_KERNEL_DIR``, or
``~/.cache/tinynet/kernels``), named by a hash of their text, and compiled with numba's
``cache=True``: a kernel is compiled once per machine for each of what its text holds (the
layout, batch size, sample count, update order and, for ensembles, the lanes per block), and a
change of the generator writes new files. Layouts with more than :data:`MAX_UNROLLED_WORK`
multiply-adds per SGD step are left to the generic kernels, whose compile time does not grow
with the network.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.util
import os
import re
import sys
import tempfile
from pathlib import Path
from types import ModuleType

import numpy as np

from ..activations import IDENTITY, LEAKY_RELU, RELU, SIGMOID, TANH
from ..files import write_whole
from ..packing import Layout
from .caches import CacheUnwritableError, cache_error

__all__ = ["MAX_UNROLLED_WORK", "step_work", "supports", "n_params", "step", "forward",
           "is_exp", "names_used", "name_defined", "module_header", "indent", "kernel_dir",
           "COMPILED_IN", "fingerprint", "announce_compiling", "layout_of", "kernel",
           "load_module"]

MAX_UNROLLED_WORK = 160
"""Generate a kernel for a layout when one SGD step has at most this many multiply-adds in its
weight products (forward, dW and dX: 3 · batch size · Σ n_in · n_out). Above it, the generic
kernels. Chosen by compile time, which grows with the unrolled code (the committed benchmark's
cold start, README "Performance", includes one such compile)."""


def step_work(layout: Layout, batch_size: int) -> int:
    """Multiply-adds in the weight products of one SGD step: forward, dW and dX."""
    return 3 * batch_size * sum(n_in * n_out for n_in, n_out in layout.table[:, :2].tolist())


def supports(layout: Layout, batch_size: int) -> bool:
    """True when the layout is small enough to unroll (:data:`MAX_UNROLLED_WORK`)."""
    return step_work(layout, batch_size) <= MAX_UNROLLED_WORK


def n_params(layout: Layout) -> int:
    """Parameters of the layout: the last layer's bias offset plus its width."""
    return int(layout.table[-1, 3] + layout.table[-1, 1])


# --- the step -------------------------------------------------------------------------------

def _weight(table: np.ndarray, layer: int, j: int, i: int) -> int:
    return int(table[layer, 2] + j * table[layer, 0] + i)


def _bias(table: np.ndarray, layer: int, j: int) -> int:
    return int(table[layer, 3] + j)


def _activation(code: int, layer: int, unit: str, derivative: bool) -> list[str]:
    """Lines setting ``a{layer+1}_{unit}`` = φ(z) and, if asked, ``d{layer}_{unit}`` = φ'(z)
    from ``z{layer}_{unit}``, as :func:`~tinynet.compiled.scalars.activate` and
    ``activate_derivative`` compute them. Sigmoid reads ``e{layer}_{unit}`` = exp(−|z|)."""
    z, a, d, e = f"z{layer}_{unit}", f"a{layer + 1}_{unit}", f"d{layer}_{unit}", f"e{layer}_{unit}"
    if code == SIGMOID:
        return [f"{a} = (1.0 if {z} >= 0 else {e}) / (1.0 + {e})"] + (
            [f"{d} = {e} / ((1.0 + {e}) * (1.0 + {e}))"] if derivative else [])
    if code == TANH:
        return [f"{a} = math.tanh({z})"] + ([f"{d} = 1.0 - {a} * {a}"] if derivative else [])
    if code == RELU:
        return [f"{a} = {z} if {z} > 0 else 0.0"] + (
            [f"{d} = 1.0 if {z} > 0 else 0.0"] if derivative else [])
    if code == LEAKY_RELU:
        return [f"{a} = {z} if {z} > 0 else alpha{layer} * {z}"] + (
            [f"{d} = 1.0 if {z} > 0 else alpha{layer}"] if derivative else [])
    if code == IDENTITY:
        return [f"{a} = {z}"] + ([f"{d} = 1.0"] if derivative else [])
    raise ValueError(f"no compiled activation with code {code}")


def forward(layout: Layout, rows: int, derivatives: bool) -> list[str]:
    """z{k}_r_j = Σ_i a{k}_r_i w_ji + b_j and a{k+1}_r_j = φ(z{k}_r_j) for every layer k, row
    r and unit j, from the inputs a0_r_i and the parameters p0, p1, ... A sigmoid layer's
    exps, e{k}_r_j = exp(−|z{k}_r_j|), come as a run of lines of their own (:func:`is_exp`),
    after all of its z and before its activations."""
    table, lines = layout.table, []
    for k, (n_in, n_out, _, _) in enumerate(table):
        units = [f"{r}_{j}" for r in range(rows) for j in range(n_out)]
        for r in range(rows):
            for j in range(n_out):
                products = " + ".join(f"a{k}_{r}_{i} * p{_weight(table, k, j, i)}"
                                      for i in range(n_in))
                lines.append(f"z{k}_{r}_{j} = 0.0 + {products} + p{_bias(table, k, j)}")
        if layout.codes[k] == SIGMOID:
            lines += [f"e{k}_{unit} = vector_exp(-abs(z{k}_{unit}))" for unit in units]
        for unit in units:
            lines += _activation(int(layout.codes[k]), k, unit, derivatives)
    return lines


def step(layout: Layout, rows: int, during: bool) -> list[str]:
    """One SGD step on a batch of ``rows`` rows: the inputs a0_r_i and targets t_r_k and the
    parameters p0, p1, ... in, the new parameters q0, q1, ..., the batch's summed squared error
    ``loss`` and ``wrong`` (some output on the wrong side of ``threshold``) out. ``during``:
    each layer steps before passing dX = dZ W back (``update="during_backward"``)."""
    table = layout.table
    layers = len(table)
    lines = forward(layout, rows, derivatives=True)
    lines += ["loss = 0.0", "wrong = False"]             # loss, dL/dŷ = (2/B)(ŷ − y), wrong sides
    for r in range(rows):
        for k in range(int(table[-1, 1])):
            y_hat, y = f"a{layers}_{r}_{k}", f"t_{r}_{k}"
            lines += [f"diff{r}_{k} = {y_hat} - {y}",
                      f"loss = loss + diff{r}_{k} * diff{r}_{k}",
                      f"da{layers}_{r}_{k} = {2.0 / rows!r} * diff{r}_{k}",
                      f"wrong = wrong | (({y_hat} > threshold) != ({y} > threshold))"]
    for k in range(layers - 1, -1, -1):                   # backward, last layer first
        k_in, k_out = int(table[k, 0]), int(table[k, 1])
        for r in range(rows):
            lines += [f"dz{k}_{r}_{j} = da{k + 1}_{r}_{j} * d{k}_{r}_{j}" for j in range(k_out)]
        own = []
        for j in range(k_out):
            for i in range(k_in):
                terms = " + ".join(f"dz{k}_{r}_{j} * a{k}_{r}_{i}" for r in range(rows))
                lines.append(f"g{_weight(table, k, j, i)} = 0.0 + {terms}")
                own.append(_weight(table, k, j, i))
        for j in range(k_out):
            lines.append(f"g{_bias(table, k, j)} = " + " + ".join(f"dz{k}_{r}_{j}"
                                                                  for r in range(rows)))
            own.append(_bias(table, k, j))
        if during:                                        # this layer steps now
            lines += [f"q{p} = p{p} - lr * g{p}" for p in own]
        weights = "q" if during else "p"
        if k > 0:                                         # dX = dZ W, the layer before's dA
            for r in range(rows):
                for i in range(k_in):
                    terms = " + ".join(f"dz{k}_{r}_{j} * {weights}{_weight(table, k, j, i)}"
                                       for j in range(k_out))
                    lines.append(f"da{k}_{r}_{i} = 0.0 + {terms}")
    if not during:                                        # every layer steps
        lines += [f"q{p} = p{p} - lr * g{p}" for p in range(n_params(layout))]
    return lines


# --- reading the lines ----------------------------------------------------------------------

_NAME = re.compile(r"[A-Za-z_]\w*")


def is_exp(line: str) -> bool:
    """True for a line of a sigmoid layer's exps (see :func:`forward`)."""
    return "vector_exp(" in line


def name_defined(line: str) -> str | None:
    """The local a line assigns, or None (a store into an array)."""
    match = re.match(r"(\w+) = ", line)
    return match.group(1) if match else None


def names_used(line: str) -> list[str]:
    """The names a line reads, in order (for an assignment, those right of ``=``)."""
    return _NAME.findall(line.split(" = ", 1)[1] if name_defined(line) else line)


def module_header(generator: str, layout: Layout, batch_size: int, samples: int, during: bool,
                  from_lanes: list[str]) -> str:
    """The start of a generated module: a docstring saying what it was generated for (with
    :func:`fingerprint`), and its imports, ``from_lanes`` from :mod:`tinynet.compiled.lanes`."""
    sizes = [int(layout.table[0, 0]), *(int(n) for n in layout.table[:, 1])]
    return f'''"""Generated by {generator}: sizes {sizes}, activation codes
{[int(c) for c in layout.codes]}, batches of {batch_size} out of {samples} samples, update
{"during" if during else "after"} backward, tinynet.compiled sources {fingerprint()}.
Do not edit: it is rewritten from the generator."""

import math

import numpy as np
from numba import njit

from tinynet.compiled.lanes import {", ".join(from_lanes)}
from tinynet.compiled.scalars import vector_exp
'''


def indent(lines: list[str], depth: int) -> str:
    """The lines as one block of text, each indented by ``depth`` levels."""
    return "\n".join("    " * depth + line for line in lines)


# --- compiling and caching ------------------------------------------------------------------

_LOADED: dict[str, ModuleType] = {}
"""The generated modules imported so far, by file."""


def kernel_dir() -> Path:
    """Where generated kernels are written: ``$TINYNET_KERNEL_DIR``, else
    ``$XDG_CACHE_HOME/tinynet/kernels`` (default ``~/.cache``), else a directory of this
    user's own in the temporary directory; numba caches their compiled code beside them (in
    ``__pycache__``) unless ``$NUMBA_CACHE_DIR`` is set. The first of these where a file can
    be created wins; when none can, :class:`~tinynet.compiled.CacheUnwritableError` (an
    ``OSError``) says so and names ``TINYNET_KERNEL_DIR``. Found once per value of those
    variables (a fit asks for it on every call)."""
    return _kernel_dir(os.environ.get("TINYNET_KERNEL_DIR"), os.environ.get("XDG_CACHE_HOME"),
                       os.environ.get("HOME"))


@functools.lru_cache(maxsize=16)
def _kernel_dir(chosen: str | None, cache_home: str | None, home: str | None) -> Path:
    # home: a key only, for "~" (os.path.expanduser reads $HOME)
    if chosen:
        if _writable(Path(chosen), private=False):
            return Path(chosen)
        raise CacheUnwritableError(f"cannot write generated kernels: TINYNET_KERNEL_DIR={chosen} "
                                   "is not a writable directory; set TINYNET_KERNEL_DIR to one")
    user_cache = Path(cache_home) if cache_home else Path(os.path.expanduser("~")) / ".cache"
    candidates = [(user_cache / "tinynet" / "kernels", False), (_private_temp_dir(), True)]
    for directory, private in candidates:
        if directory.is_absolute() and _writable(directory, private):  # "~" if no home
            return directory
    raise CacheUnwritableError("cannot write generated kernels: neither "
                               f"{candidates[0][0]} nor {candidates[1][0]} is writable; set "
                               "TINYNET_KERNEL_DIR to a writable directory")


def _private_temp_dir() -> Path:
    """The last resort for generated kernels: a directory named for this user in the
    temporary directory (shared by every user: see :func:`_writable`)."""
    user = os.getuid() if hasattr(os, "getuid") else os.environ.get("USERNAME", "user")
    return Path(tempfile.gettempdir()) / f"tinynet-kernels-{user}"


def _writable(directory: Path, private: bool) -> bool:
    """Whether ``directory`` exists or can be made, and a file can be created in it (tried, as
    numba tries its cache directories). A ``private`` one must also belong to this user and be
    writable by no one else: numba's cache files there are pickles, loaded as code."""
    try:
        directory.mkdir(mode=0o700 if private else 0o777, parents=True, exist_ok=True)
        if private and hasattr(os, "geteuid"):
            status = directory.stat()
            if status.st_uid != os.geteuid() or status.st_mode & 0o022:
                return False
        tempfile.TemporaryFile(dir=directory).close()
    except OSError:
        return False
    return True


COMPILED_IN = ("compiled/lanes.py", "compiled/scalars.py", "compiled/orders.py",
               "compiled/simd.py", "shuffle.py", "activations.py")
"""The sources a generated kernel compiles in besides its own, under ``tinynet/``: what its
header imports (:func:`module_header`) and what those import in turn."""


@functools.cache
def fingerprint() -> str:
    """A hash of the sources :data:`COMPILED_IN`. Numba's cache checks only a kernel's own
    file, so each generated source names this hash: when one of them changes, the kernels get
    new files and are compiled anew, not loaded stale. (A change of the generators changes
    the generated text, and so its file name, by itself.)"""
    root = Path(__file__).resolve().parent.parent
    digest = hashlib.sha256()
    for name in COMPILED_IN:
        digest.update((root / name).read_bytes())
    return digest.hexdigest()[:16]


def announce_compiling(kernel: object, layout: Layout) -> None:
    """Print one line on stderr if numba's cache holds no compiled ``kernel`` (a generated
    kernel's numba dispatcher) yet, as it is about to compile it: a first run waits, and
    should say why (on a 2-core machine the default XOR run's first compile took 13 to 15 s
    in the committed benchmarks, up to a minute when the machine is busy). On a terminal the
    line first clears a progress line. A dispatcher without the cache numba has today is
    taken as compiled."""
    try:
        index = Path(kernel._cache._cache_file._index_path)
    except AttributeError:  # numba's private cache API moved: say nothing rather than guess
        return
    if not index.exists():
        sizes = "-".join(str(int(n)) for n in [layout.table[0, 0], *layout.table[:, 1]])
        clear = "\r\033[K" if sys.stderr.isatty() else ""
        print(f"{clear}tinynet: compiling a kernel for layout {sizes}, first run only (about "
              f"15 s, up to a minute on a busy machine); cached in {index.parent}",
              file=sys.stderr, flush=True)


def layout_of(table: bytes, codes: bytes) -> Layout:
    """The layout whose table and activation codes are ``table`` and ``codes`` as bytes (the
    hashable key the kernel caches use)."""
    return Layout(np.frombuffer(table, dtype=np.int64).reshape(-1, 4),
                  np.frombuffer(codes, dtype=np.int64), np.zeros(len(codes)))


def kernel(text: str, entry: str, layout: Layout, directory: Path) -> object:
    """The function ``entry`` of the generated module with source ``text`` (:func:`load_module`),
    after saying on stderr if it is about to compile (:func:`announce_compiling`)."""
    function = getattr(load_module(text, directory), entry)
    announce_compiling(function, layout)
    return function


def load_module(text: str, directory: Path) -> ModuleType:
    """The generated module with source ``text``, written to ``directory`` once (named by a
    hash of the text) and imported once per process."""
    name = "tinynet_kernel_" + hashlib.sha256(text.encode()).hexdigest()[:20]
    path = directory / f"{name}.py"
    if str(path) not in _LOADED:
        if not path.exists() or path.read_text() != text:
            directory.mkdir(parents=True, exist_ok=True)  # in case it went since it was found
            write_whole(path, lambda partial: partial.write_text(text))  # a racing process
            # writing the same text: both win
        spec = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module  # numba's cache finds a kernel's module by name
        try:
            spec.loader.exec_module(module)
        except RuntimeError as error:  # numba found no cache directory for it
            del sys.modules[name]
            unwritable = cache_error(error, f"the generated kernel {path}",
                                     "set NUMBA_CACHE_DIR to a writable directory")
            if unwritable is None:
                raise
            raise unwritable from error
        _LOADED[str(path)] = module
    return _LOADED[str(path)]
