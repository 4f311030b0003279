"""Saving and loading networks: plain ``.npz`` files that can never run code.

    >>> net.save("xor.npz")
    >>> same = tinynet.load("xor.npz")

A file holds a format tag and version, the layer sizes, each layer's activation, alpha, initializer
name and bias initializer (a constant, or an initializer name), the network's seed, every W and b as
float64 arrays, and the optimizer's state if the network has one (``net.optimizer_state``: a
built-in optimizer's name, hyperparameters and state), all as plain NumPy arrays (strings as
fixed-width unicode, never Python objects). Loading gives back the same numbers, bit for bit, and
runs no initializer: the initializers are looked up by name (for :meth:`Network.reset_parameters`)
but never called, the weights come from the file.

An activation of your own (any class but the built-ins themselves, even one named ``"tanh"`` or
a subclass of LeakyReLU) is saved as its class, ``module:QualifiedName``, its fields and a
digest of its definition's source, and loads as that class again, never as a built-in of the
same name, nor as another class of that name or an edited one (its digest would differ: the
network would compute something other than what it was trained with). Loading finds the class
only among the modules already imported, and imports nothing a file names: import the class's
module before loading (the error says so). See :mod:`tinynet.saving_activations`.

Saving goes through :func:`tinynet.files.write_whole`: a temporary of its own beside the
destination, created exclusively, fsync'ed, then renamed into place atomically, so an
interrupted save, a killed one or two at once leave a complete file, old or new.

Loading trusts nothing in the file, and reads no more than it allows:

* the file must be a regular file of at most :data:`MAX_LOAD_BYTES`, a zip archive of at
  most :data:`MAX_MEMBERS` members, each an ``.npy`` array named once, whose uncompressed
  sizes add up to at most :data:`MAX_LOAD_BYTES`;
* before its data is read, each member's ``.npy`` header (format 1.0 or 2.0, of at most
  :data:`MAX_HEADER_BYTES`) must declare a plain dtype, numbers or text (never Python
  objects, so nothing is ever unpickled, nor records), and a shape whose bytes are exactly
  what the member holds;
* the data is then read with a read bounded by that size, whatever the compressed stream
  would expand to (and zipfile checks its CRC);
* the contents must make sense: ``sizes`` lists layer sizes >= 1 whose parameters fit in
  :data:`MAX_LOAD_BYTES`, every entry has its type and one value per layer, W and b are
  float64 of the shapes ``sizes`` gives, an activation class is an Activation subclass
  already imported whose definition has the digest saved, and its fields are finite numbers.

A file that fails any of these, whatever the cause (not a zip archive, truncated, bytes
flipped, a bad CRC, a bad header, sizes or shapes beyond the limits, a deflate bomb, entries
of the wrong type or shape, names no activation or initializer can be built from, an
activation class not imported or of another definition) raises
:class:`~tinynet.validation.FileFormatError`, naming the path and what is wrong. A path with
no file raises FileNotFoundError; a well-formed initializer name that is not registered raises
UnknownNameError, saying how to register it.
"""

from __future__ import annotations

import dataclasses
import io
import math
import os
import stat
import struct
import zipfile
from pathlib import Path
from typing import IO

import numpy as np

from . import init, packing, saving_activations
from .activations import BUILT_IN, get_activation
from .files import write_whole
from .layers import Layer
from .network import Network
from .optimizers import OPTIMIZERS, State
from .validation import FileFormatError, UnknownNameError, check_instance

__all__ = ["FORMAT", "VERSION", "MAX_LOAD_BYTES", "MAX_DIRECTORY_BYTES", "MAX_MEMBERS",
           "MAX_HEADER_BYTES", "MAX_NAME_LENGTH", "FileFormatError", "save", "load"]

FORMAT = "tinynet-network"
VERSION = 4
"""Format 2 added drawn biases (entry ``bias_initializers``), format 3 the optimizer's state
(entries ``optimizer``, ``optimizer_hyperparameters``, ``optimizer_state``), format 4
activations of your own (entries ``activation_classes``, ``activation_digests`` and their
fields). A file is written in
the lowest format that holds it: a network of built-in activations with constant biases and no
optimizer state as format 1, which every version of tinynet reads; only a network with an
activation of your own as format 4, which an older tinynet refuses (by its version) rather
than load a built-in in its place."""

MAX_LOAD_BYTES = 2**30
"""The most :func:`load` reads: a file's size on disk, and the total size of its arrays
uncompressed, are at most 1 GiB. That is some 134 million float64 parameters, far more than
the networks tinynet trains, yet no file can make loading take more than about three times
it (the arrays read, then the network's weights and gradients) and the list of members
(:data:`MAX_DIRECTORY_BYTES`). Set
``tinynet.saving.MAX_LOAD_BYTES`` higher to load a bigger network."""

MAX_DIRECTORY_BYTES = 1 << 20
"""The longest list of members (ZIP central directory) :func:`load` reads: 1 MiB, some 100
bytes for each of :data:`MAX_MEMBERS` (a member's entry takes 46 bytes and its name, a few
more with NumPy's ZIP64 fields). Read before the members can be counted, so it bounds the
work of refusing a file of a million empty entries."""

MAX_MEMBERS = 10_000
"""The most arrays a file may hold: a network of L layers has 2 L + 14 at most, and one more
for each field of its own activations, so networks of up to 4,993 layers load."""

MAX_HEADER_BYTES = 10_000
"""The longest ``.npy`` header read (NumPy's own limit); tinynet writes about 128 bytes."""

MAX_NAME_LENGTH = 1_000
"""The longest activation or initializer name read (parsing a name costs far more memory than
its text)."""

_LENGTH_FIELD = {(1, 0): 2, (2, 0): 4}
"""The bytes of a ``.npy`` header's length field, by the format versions read."""

_KINDS = {"activations": "U", "alphas": "iuf", "inits": "U", "bias_inits": "iuf",
          "bias_initializers": "U", "activation_classes": "U", "activation_digests": "U"}
"""The dtype kinds of the per-layer entries: text ("U") or real numbers."""


def _savable_name(initializer: init.Initializer, shape: tuple[int, int], layer: Layer,
                  what: str) -> str:
    """The initializer's name, if loading it by that name gives the same initializer."""
    name = initializer.name
    try:
        same = init.get(name).variance(shape, layer.activation) == \
            initializer.variance(shape, layer.activation)
    except (ValueError, TypeError):
        same = False
    if not same:
        raise ValueError(f"{what} {name!r} cannot be saved by name: the registry does not give "
                         "it back; register it with tinynet.init.register(name, ...) and build "
                         "the layer with that name")
    return name


def _bias_entries(net: Network) -> dict[str, np.ndarray]:
    """``bias_inits``: each layer's constant (NaN where drawn); ``bias_initializers`` (format
    2 only): the initializer names that draw them ("" for a constant)."""
    constants = [layer.bias_init if isinstance(layer.bias_init, float) else np.nan
                 for layer in net.layers]
    if not np.isnan(constants).any():
        return {"bias_inits": np.array(constants)}
    names = ["" if isinstance(layer.bias_init, float) else
             _savable_name(layer.bias_init, layer.bias_shape, layer,
                           f"layer {i}'s bias initializer")
             for i, layer in enumerate(net.layers)]
    return {"bias_inits": np.array(constants), "bias_initializers": np.array(names)}


def _optimizer_entries(net: Network) -> dict[str, np.ndarray]:
    """The optimizer's state (``net.optimizer_state``), if it has one: the optimizer's name
    (a built-in one: :data:`tinynet.optimizers.OPTIMIZERS`), hyperparameters and state."""
    kept = net.optimizer_state
    if kept is None:
        return {}
    optimizer = kept.optimizer
    if OPTIMIZERS.get(optimizer.name) is not type(optimizer):
        raise ValueError(f"cannot save the state of optimizer {optimizer!r} "
                         f"({type(optimizer).__name__}): a file names a built-in optimizer "
                         f"({', '.join(OPTIMIZERS)}), which loading can rebuild; set "
                         "net.optimizer_state = None to save the network without it")
    return {"optimizer": np.array(optimizer.name),
            "optimizer_hyperparameters": optimizer.hyperparameters(),
            "optimizer_state": kept.values}


def save(net: Network, path: str | os.PathLike) -> Path:
    """Write ``net`` to ``path`` (``.npz`` is added if missing); return the path written.
    ``net.save(path)`` is the same call. The optimizer's state (``net.optimizer_state``)
    goes with it, so a loaded network's next fit continues as the saved one's would.

    The file is written whole (:func:`tinynet.files.write_whole`): an interrupted or
    concurrent save never leaves a half-written file under the final name.
    """
    check_instance("net", net, Network, "a tinynet Network")
    if net.residuals:
        raise ValueError(f"tinynet.save cannot store residual blocks yet (net.blocks"
                         f"[{net.blocks.index(net.residuals[0])}] is {net.residuals[0]!r}); "
                         "pickle the network, or save tinynet.packing.pack(net)")
    path = Path(path)
    if path.suffix != ".npz":
        path = path.with_name(path.name + ".npz")
    biases = _bias_entries(net)
    optimizer = _optimizer_entries(net)
    activations = saving_activations.entries([layer.activation for layer in net.layers])
    version = 4 if activations else 3 if optimizer else 2 if "bias_initializers" in biases else 1
    if version >= 3:  # formats 3 and 4 have every entry of format 2
        biases.setdefault("bias_initializers", np.full(len(net.layers), ""))
    arrays = {
        "format": np.array(FORMAT), "version": np.array(version),
        "sizes": np.array(net.sizes, dtype=np.int64), "seed": np.array(net.seed, dtype=np.int64),
        "activations": np.array([layer.activation.name for layer in net.layers]),
        "alphas": np.array([layer.activation.alpha if type(layer.activation) in BUILT_IN else
                            np.nan for layer in net.layers]),  # NaN: the fields hold it
        "inits": np.array([_savable_name(layer.init, layer.shape, layer, f"layer {i}'s initializer")
                           for i, layer in enumerate(net.layers)]),
        **biases, **optimizer, **activations,
    }
    for i, layer in enumerate(net.layers):
        arrays[f"W{i}"], arrays[f"b{i}"] = layer.W, layer.b
    return write_whole(path, lambda partial: _savez(partial, arrays))


def _savez(path: Path, arrays: dict[str, np.ndarray]) -> None:
    with open(path, "wb") as file:  # a file object: np.savez would add ".npz" to a name
        np.savez(file, **arrays)


def _read(path: Path) -> dict[str, np.ndarray]:
    """Every array in the file at ``path``, read within the limits."""
    status = path.stat()  # FileNotFoundError as it is
    if not stat.S_ISREG(status.st_mode):
        raise FileFormatError(f"{path} is not a regular file, so not a tinynet network file")
    if status.st_size > MAX_LOAD_BYTES:
        raise FileFormatError(f"{path} takes {status.st_size} bytes, more than "
                              f"tinynet.saving.MAX_LOAD_BYTES ({MAX_LOAD_BYTES})")
    with open(path, "rb") as file:
        try:
            return _read_archive(file)
        except FileFormatError as error:  # found wrong by the checks below
            raise FileFormatError(f"{path} is not a readable tinynet network file: "
                                  f"{error}") from None
        except Exception as error:  # whatever the bytes make zipfile, its decompressors
            # or NumPy's header parser raise
            raise FileFormatError(f"{path} is not a readable tinynet network file "
                                  f"({type(error).__name__}: {error})") from None


def _read_archive(file: IO[bytes]) -> dict[str, np.ndarray]:
    """The arrays of the ``.npz`` archive ``file``, by name."""
    if file.read(len(np.lib.format.MAGIC_PREFIX)) == np.lib.format.MAGIC_PREFIX:
        raise FileFormatError("it holds a single array (written by np.save), not an archive")
    _check_directory_size(file)
    file.seek(0)
    with zipfile.ZipFile(file) as archive:
        return {member.filename.removesuffix(".npy"): _read_member(archive, member)
                for member in _members(archive)}


def _check_directory_size(file: IO[bytes]) -> None:
    """Refuse an archive whose central directory (its list of members, which ``zipfile``
    reads whole before anything can be checked) is longer than :data:`MAX_DIRECTORY_BYTES`.
    The size is read from the end-of-central-directory record, the last 22 bytes plus a
    comment of at most 65,535; without one, ``zipfile`` says what is wrong."""
    end = file.seek(0, os.SEEK_END)
    file.seek(max(0, end - _END_RECORD.size - 0xFFFF))
    tail = file.read()
    at = tail.rfind(b"PK\x05\x06")
    if at < 0 or at + _END_RECORD.size > len(tail):
        return
    *_, members, directory_bytes, _, _ = _END_RECORD.unpack_from(tail, at)
    if members == 0xFFFF or directory_bytes == 0xFFFFFFFF:
        raise FileFormatError("it is a ZIP64 archive of too many members for a network file")
    if members > MAX_MEMBERS:
        raise FileFormatError(f"it holds {members} members, more than "
                              f"tinynet.saving.MAX_MEMBERS ({MAX_MEMBERS})")
    if directory_bytes > MAX_DIRECTORY_BYTES:
        raise FileFormatError(f"its list of members takes {directory_bytes} bytes, more than "
                              f"tinynet.saving.MAX_DIRECTORY_BYTES ({MAX_DIRECTORY_BYTES})")


_END_RECORD = struct.Struct("<4s4H2LH")
"""A ZIP end-of-central-directory record: signature, disk numbers (2), member counts (2),
the central directory's size and offset, the comment's length."""


def _members(archive: zipfile.ZipFile) -> list[zipfile.ZipInfo]:
    """The archive's members, if they are at most MAX_MEMBERS ``.npy`` arrays, each named
    once, of at most MAX_LOAD_BYTES together uncompressed."""
    members = archive.infolist()
    if len(members) > MAX_MEMBERS:
        raise FileFormatError(f"it holds {len(members)} members, more than "
                              f"tinynet.saving.MAX_MEMBERS ({MAX_MEMBERS})")
    names = [member.filename for member in members]
    for name in names:
        if not name.endswith(".npy"):
            raise FileFormatError(f"its member {name!r} is not an .npy array")
    if len(set(names)) < len(names):
        raise FileFormatError("it holds two members of one name")
    total = sum(member.file_size for member in members)
    if total > MAX_LOAD_BYTES:
        raise FileFormatError(f"its arrays take {total} bytes uncompressed, more than "
                              f"tinynet.saving.MAX_LOAD_BYTES ({MAX_LOAD_BYTES})")
    return members


def _read_member(archive: zipfile.ZipFile, member: zipfile.ZipInfo) -> np.ndarray:
    """The array in ``member``: its header checked, then the bytes it declares read, and no
    more."""
    name = member.filename
    with archive.open(member) as stream:
        shape, fortran_order, dtype, header_bytes = _read_header(stream, name)
        size = math.prod(shape) * dtype.itemsize
        if size != member.file_size - header_bytes:
            raise FileFormatError(f"member {name!r} declares {dtype} {shape}, {size} bytes, "
                                  f"but holds {member.file_size - header_bytes}")
        data = stream.read(size)  # at most size bytes, however far the stream would expand
    if len(data) != size:
        raise FileFormatError(f"member {name!r} ends after {len(data)} of its {size} bytes")
    if dtype.kind == "U" and (np.frombuffer(data, dtype=dtype.str[0] + "u4") > 0x10FFFF).any():
        raise FileFormatError(f"member {name!r} holds text that is not Unicode")
    array = np.frombuffer(data, dtype=dtype)
    return array.reshape(shape[::-1]).T if fortran_order else array.reshape(shape)


def _read_header(stream: IO[bytes], name: str) -> tuple[tuple[int, ...], bool, np.dtype, int]:
    """The ``.npy`` header at the start of ``stream`` (member ``name``), checked: its shape,
    whether it is in Fortran order, its dtype, and the header's length in bytes."""
    version = np.lib.format.read_magic(stream)
    if version not in _LENGTH_FIELD:
        raise FileFormatError(f"member {name!r} is in .npy format {version}; tinynet reads "
                              f"formats {', '.join(map(str, _LENGTH_FIELD))}")
    field = stream.read(_LENGTH_FIELD[version])
    length = int.from_bytes(field, "little")
    if length > MAX_HEADER_BYTES:
        raise FileFormatError(f"member {name!r} has a header of {length} bytes, more than "
                              f"{MAX_HEADER_BYTES}")
    header = io.BytesIO(field + stream.read(length))
    if version == (1, 0):
        shape, fortran_order, dtype = np.lib.format.read_array_header_1_0(header)
    else:
        shape, fortran_order, dtype = np.lib.format.read_array_header_2_0(header)
    if dtype.kind not in "biufU" or dtype.itemsize == 0:
        raise FileFormatError(f"member {name!r} holds an array of dtype {dtype}; a tinynet "
                              "file holds only numbers and text")
    if any(n < 0 for n in shape):
        raise FileFormatError(f"member {name!r} declares the shape {shape}")
    return shape, fortran_order, dtype, np.lib.format.MAGIC_LEN + len(field) + length


def _integer(arrays: dict[str, np.ndarray], key: str, path: Path) -> int:
    value = arrays.get(key)
    if value is None or value.shape != () or value.dtype.kind not in "iu":
        raise FileFormatError(f"{path}: entry {key!r} must be one integer, got {value!r}")
    return int(value)


def _version(arrays: dict[str, np.ndarray], path: Path) -> int:
    """The file's format version, if it is a tinynet network file this tinynet reads."""
    tag = arrays.get("format")
    if tag is None or tag.shape != () or tag.dtype.kind != "U" or str(tag) != FORMAT:
        raise FileFormatError(f"{path} is not a tinynet network file (its 'format' entry is "
                              f"missing or not {FORMAT!r})")
    version = _integer(arrays, "version", path)
    if version > VERSION:
        raise FileFormatError(f"{path} was written in tinynet network format {version}; this "
                              f"tinynet reads up to format {VERSION}: upgrade tinynet")
    if version < 1:
        raise FileFormatError(f"{path} has an invalid format version {version}")
    return version


def _sizes(arrays: dict[str, np.ndarray], path: Path) -> list[int]:
    """Entry ``sizes``, if it lists layer sizes >= 1 whose parameters fit in
    MAX_LOAD_BYTES."""
    sizes = arrays.get("sizes")
    if sizes is None or sizes.ndim != 1 or sizes.dtype.kind not in "iu" or \
            not 2 <= len(sizes) <= MAX_MEMBERS:
        raise FileFormatError(f"{path}: entry 'sizes' must list at least two integers (and "
                              f"at most {MAX_MEMBERS}), got {sizes!r}")
    if (sizes < 1).any():
        raise FileFormatError(f"{path}: entry 'sizes' must hold layer sizes >= 1, got "
                              f"{sizes!r}")
    sizes = [int(n) for n in sizes]
    parameters = packing.count(sizes)
    if 8 * parameters > MAX_LOAD_BYTES:
        raise FileFormatError(f"{path}: entry 'sizes' makes {parameters} parameters, more than "
                              f"tinynet.saving.MAX_LOAD_BYTES ({MAX_LOAD_BYTES}) bytes hold")
    return sizes


def _entries(arrays: dict[str, np.ndarray], version: int, layers: int,
             path: Path) -> dict[str, np.ndarray]:
    """The per-layer entries (activations, alphas, inits, bias_inits, bias_initializers,
    activation_classes, activation_digests), each with one value of its kind per layer."""
    entries = {key: arrays.get(key) for key in _KINDS}
    if version < 2:
        entries["bias_initializers"] = np.full(layers, "")
    if version < 4:
        entries["activation_classes"] = entries["activation_digests"] = np.full(layers, "")
    for key, entry in entries.items():
        if entry is None or entry.shape != (layers,):
            raise FileFormatError(f"{path} describes {layers} layers but its entry {key!r} is "
                                  f"{entry!r}")
        if entry.dtype.kind not in _KINDS[key]:
            kind = "text" if _KINDS[key] == "U" else "real numbers"
            raise FileFormatError(f"{path}: entry {key!r} must hold {kind}, got {entry!r}")
        if entry.dtype.kind == "U" and entry.dtype.itemsize // 4 > MAX_NAME_LENGTH:
            raise FileFormatError(f"{path}: entry {key!r} holds names longer than "
                                  f"{MAX_NAME_LENGTH} characters")
    return entries


def _parameters(arrays: dict[str, np.ndarray], sizes: list[int], path: Path) -> list[np.ndarray]:
    """``[W0, b0, W1, b1, ...]``, if each is float64 of the shape ``sizes`` gives."""
    parameters = []
    for i, (n_in, n_out) in enumerate(zip(sizes, sizes[1:])):
        W, b = arrays.get(f"W{i}"), arrays.get(f"b{i}")
        if W is None or b is None or W.shape != (n_out, n_in) or b.shape != (n_out,) or \
                W.dtype != np.float64 or b.dtype != np.float64:
            raise FileFormatError(
                f"{path}: layer {i} holds W {getattr(W, 'shape', None)} "
                f"{getattr(W, 'dtype', None)} and b {getattr(b, 'shape', None)} "
                f"{getattr(b, 'dtype', None)}; its sizes say float64 {(n_out, n_in)} and "
                f"{(n_out,)}")
        parameters += [W, b]
    return parameters


def _initializer(name: str, path: Path, what: str) -> init.Initializer:
    """The registered initializer ``name`` that ``path`` names for ``what``."""
    try:
        return init.get(name)
    except UnknownNameError:
        if init.parse_spec(name)[0] in init.available():  # known, with a wrong parameter
            raise FileFormatError(f"{path}: {what} entry {name!r} has a parameter that "
                                  "initializer does not take") from None
        raise UnknownNameError(
            "initializer", name, init.available(),
            f"{path} was saved with it ({what}); register it with "
            f"tinynet.init.register({name.split('(')[0]!r}, ...) before loading") from None
    except (ValueError, TypeError, MemoryError, RecursionError) as error:  # the parser's too
        raise FileFormatError(f"{path}: {what} entry is garbled: {error}") from None


def load(path: str | os.PathLike) -> Network:
    """Read a network written by :func:`save` (or :meth:`Network.save`); like ``save``, add
    ``.npz`` to a path without it. The weights are set from the file, without running any
    initializer. Raises FileFormatError for any file that is not one (see the module's
    docstring)."""
    path = Path(path)
    if path.suffix != ".npz" and not path.exists():
        path = path.with_name(path.name + ".npz")
    arrays = _read(path)
    version = _version(arrays, path)
    seed = _integer(arrays, "seed", path)
    sizes = _sizes(arrays, path)
    entries = _entries(arrays, version, len(sizes) - 1, path)
    parameters = _parameters(arrays, sizes, path)
    layers = []
    for i, (name, alpha, init_name, bias_constant, bias_name, qualified, digest) in \
            enumerate(zip(*entries.values())):
        own = None if str(qualified) == "" else \
            saving_activations.rebuilt(str(qualified), str(digest), arrays, i, path)
        initializer = _initializer(str(init_name), path, f"layer {i}'s initializer")
        bias_init = float(bias_constant) if str(bias_name) == "" else \
            _initializer(str(bias_name), path, f"layer {i}'s bias initializer")
        try:
            activation = own if own is not None else get_activation(str(name), float(alpha))
            layers.append(Layer(sizes[i], sizes[i + 1], activation=activation,
                                init=initializer, bias_init=bias_init, rng=None))
        except (ValueError, TypeError) as error:
            raise FileFormatError(f"{path}: layer {i} cannot be rebuilt: {error}") from None
    try:
        net = Network(layers, seed=seed, parameters=parameters)
    except (ValueError, TypeError) as error:
        raise FileFormatError(f"{path}: the network cannot be rebuilt: {error}") from None
    if version >= 3 and "optimizer" in arrays:
        net.optimizer_state = _optimizer_state(arrays, net.n_parameters, path)
    return net


def _optimizer_state(arrays: dict[str, np.ndarray], parameters: int, path: Path) -> State:
    """The optimizer's state saved by :func:`_optimizer_entries`, if it makes sense: a
    built-in optimizer's name, its hyperparameters, and its state (k, P) in float64."""
    name, values = arrays.get("optimizer"), arrays.get("optimizer_hyperparameters")
    state = arrays.get("optimizer_state")
    if name is None or name.shape != () or name.dtype.kind != "U" or \
            str(name) not in OPTIMIZERS:
        raise FileFormatError(f"{path}: entry 'optimizer' must name one of "
                              f"{', '.join(OPTIMIZERS)}, got {name!r}")
    cls = OPTIMIZERS[str(name)]
    fields = dataclasses.fields(cls)
    if values is None or values.shape != (len(fields),) or values.dtype != np.float64:
        raise FileFormatError(f"{path}: entry 'optimizer_hyperparameters' must hold "
                              f"{len(fields)} float64 values for {name}, got {values!r}")
    try:
        optimizer = cls(*(float(value) for value in values))
    except ValueError as error:
        raise FileFormatError(f"{path}: the optimizer cannot be rebuilt: {error}") from None
    shape = (len(cls.state), parameters)
    if state is None or state.shape != shape or state.dtype != np.float64:
        raise FileFormatError(f"{path}: entry 'optimizer_state' must be float64 {shape} for "
                              f"{name} ({', '.join(cls.state)}), got "
                              f"{getattr(state, 'dtype', None)} {getattr(state, 'shape', None)}")
    return State(optimizer, state.copy())
