"""Saving and loading: exact round trips, and clear errors for every file that is not one."""

import io
import os
import struct
import tracemalloc
import zipfile
import zlib

import numpy as np
import pytest

import tinynet
from tinynet import FileFormatError, UnknownNameError, saving
from tinynet.saving import VERSION

MiB, GiB = 2**20, 2**30


@pytest.fixture
def trained():
    X, y = tinynet.data.xor()
    net = tinynet.mlp([2, 4, 3, 1], activation="leaky_relu", init="xavier_uniform(gain=1.5)",
                      output_init="he_leaky(alpha=0.2)", alpha=0.3, seed=17, bias_init=0.25)
    net.fit(X, y, epochs=30, lr=0.1)
    return net


def test_round_trip_is_bit_exact(trained, tmp_path):
    path = trained.save(tmp_path / "net")
    assert path == tmp_path / "net.npz"
    loaded = tinynet.load(path)
    assert loaded.sizes == trained.sizes and loaded.seed == 17
    assert [repr(l.activation) for l in loaded.layers] == [repr(l.activation) for l in trained.layers]
    assert [l.init.name for l in loaded.layers] == ["xavier_uniform(gain=1.5)"] * 2 + \
        ["he_leaky(alpha=0.2)"]
    assert [l.bias_init for l in loaded.layers] == [0.25] * 3
    for p, q in zip(trained.parameters(), loaded.parameters()):
        np.testing.assert_array_equal(p, q)
    X = np.random.default_rng(0).normal(size=(5, 2))
    np.testing.assert_array_equal(loaded.forward(X), trained.forward(X))
    assert repr(loaded) == repr(trained)


def test_non_finite_weights_come_back_as_they_were(tmp_path):
    net = tinynet.mlp([2, 2, 1], seed=0)
    net.layers[0].W[0, 0], net.layers[1].b[0] = np.nan, -np.inf
    loaded = tinynet.load(net.save(tmp_path / "diverged.npz"))
    assert np.isnan(loaded.layers[0].W[0, 0]) and loaded.layers[1].b[0] == -np.inf


def test_truncated_file(trained, tmp_path):
    path = trained.save(tmp_path / "net.npz")
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])
    with pytest.raises(FileFormatError, match="is not a readable tinynet network file"):
        tinynet.load(path)


def test_corrupted_file(trained, tmp_path):
    path = trained.save(tmp_path / "net.npz")
    data = bytearray(path.read_bytes())
    middle = len(data) // 2
    data[middle:middle + 64] = bytes(64)
    path.write_bytes(bytes(data))
    with pytest.raises(FileFormatError):
        tinynet.load(path)


def test_foreign_files(tmp_path):
    np.savez(tmp_path / "other.npz", weights=np.arange(4.0))
    with pytest.raises(FileFormatError, match="is not a tinynet network file"):
        tinynet.load(tmp_path / "other.npz")
    (tmp_path / "text.npz").write_text("hello")
    with pytest.raises(FileFormatError, match="is not a readable tinynet network file"):
        tinynet.load(tmp_path / "text.npz")
    with pytest.raises(FileNotFoundError):
        tinynet.load(tmp_path / "missing.npz")


def rewrite(path, **changes):
    """Save a copy of the archive at ``path`` with some entries replaced."""
    with np.load(path) as archive:
        arrays = {name: archive[name] for name in archive.files}
    arrays.update(changes)
    np.savez(path, **arrays)


def test_newer_format_version(trained, tmp_path):
    path = trained.save(tmp_path / "net.npz")
    rewrite(path, version=np.array(VERSION + 1))
    with pytest.raises(FileFormatError, match=f"format {VERSION + 1}; this tinynet reads up to "
                                              f"format {VERSION}: upgrade tinynet"):
        tinynet.load(path)


def test_inconsistent_contents(trained, tmp_path):
    path = trained.save(tmp_path / "net.npz")
    rewrite(path, W1=np.zeros((2, 2)))
    with pytest.raises(FileFormatError, match=r"layer 1 holds W \(2, 2\) float64"):
        tinynet.load(path)
    path = trained.save(tmp_path / "net.npz")
    rewrite(path, inits=np.array(["normal"]))
    with pytest.raises(FileFormatError, match="describes 3 layers but its entry 'inits' is"):
        tinynet.load(path)


@pytest.mark.parametrize("changes,message", [
    (dict(version=np.array("abc")), "entry 'version' must be one integer"),
    (dict(version=np.array(1.7)), "entry 'version' must be one integer"),
    (dict(seed=np.array([1, 2])), "entry 'seed' must be one integer"),
    (dict(seed=np.array(-1)), "the network cannot be rebuilt: seed must be an integer from 0"),
    (dict(sizes=np.array([2.0, 4.0, 3.0, 1.0])), "entry 'sizes' must list at least two integers"),
    (dict(alphas=np.array(["a", "b", "c"])), "entry 'alphas' must hold real numbers"),
    (dict(alphas=np.array([-1.0, 0.3, 0.3])), "layer 0 cannot be rebuilt: alpha must be"),
    (dict(bias_inits=np.array([np.nan, 0.0, 0.0])), "layer 0 cannot be rebuilt: bias_init"),
    (dict(activations=np.array(["tanh", "softsign", "tanh"])), "layer 1 cannot be rebuilt: unknown activation 'softsign'"),
    (dict(inits=np.array(["normal(", "normal", "normal"])), "layer 0's initializer entry is garbled"),
    (dict(inits=np.array(["normal(std=" + "-" * 980 + "1)"] * 3)), "layer 0's initializer entry is garbled"),  # RecursionError in the parser
    (dict(inits=np.array(["normal" + " " * 1000] * 3)), "entry 'inits' holds names longer than 1000 characters"),
    (dict(inits=np.array([1, 2, 3])), "entry 'inits' must hold text"),
    (dict(inits=np.array([2**62] * 3)), "entry 'inits' must hold text"),
    (dict(inits=np.array([1.5, 2.5, 3.5])), "entry 'inits' must hold text"),
    (dict(activations=np.array([0, 1, 2])), "entry 'activations' must hold text"),
    (dict(bias_inits=np.array(["a", "b", "c"])), "entry 'bias_inits' must hold real numbers"),
    (dict(sizes=np.array([2**62, 4, 3, 1])), r"entry 'sizes' makes 18446744073709551639 parameters, more than tinynet.saving.MAX_LOAD_BYTES \(1073741824\) bytes hold"),
    (dict(sizes=np.array([2**64 - 1, 2**64 - 1], dtype=np.uint64)), "entry 'sizes' makes .* parameters, more than"),
    (dict(sizes=np.array([2, 4, 2**40, 1])), "entry 'sizes' makes .* parameters, more than"),
    (dict(sizes=np.array([2, -4, 3, 1])), "entry 'sizes' must hold layer sizes >= 1"),
    (dict(sizes=np.array([2, 0, 3, 1])), "entry 'sizes' must hold layer sizes >= 1"),
    (dict(sizes=np.array([[2, 4], [3, 1]])), "entry 'sizes' must list at least two integers"),
    (dict(sizes=np.array([2])), "entry 'sizes' must list at least two integers"),
    (dict(sizes=np.array(2)), "entry 'sizes' must list at least two integers"),
    (dict(seed=np.array(2**64 - 1, dtype=np.uint64)), "the network cannot be rebuilt: seed must be an integer from 0"),
    (dict(version=np.array(True)), "entry 'version' must be one integer"),
    (dict(version=np.array(2**64 - 1, dtype=np.uint64)), "format 18446744073709551615; this tinynet reads up to"),
    (dict(format=np.array(7)), "is not a tinynet network file"),
    (dict(format=np.array(["tinynet-network"])), "is not a tinynet network file"),
    (dict(W0=np.zeros((4, 2), dtype=">f8")), r"layer 0 holds W \(4, 2\) >f8"),
    (dict(b2=np.zeros(1, dtype=np.float32)), r"layer 2 holds .* and b \(1,\) float32"),
    (dict(alphas=np.array([np.inf, 0.3, 0.3])), "layer 0 cannot be rebuilt: alpha must be"),
])
def test_garbled_entries(trained, tmp_path, changes, message):
    path = trained.save(tmp_path / "net.npz")
    rewrite(path, **changes)
    with pytest.raises(FileFormatError, match=message):
        tinynet.load(path)


def test_a_single_array_file_is_not_a_network(tmp_path):
    np.save(tmp_path / "array.npy", np.arange(3.0))
    (tmp_path / "array.npy").rename(tmp_path / "array.npz")
    with pytest.raises(FileFormatError, match=r"holds a single array \(written by np.save\), not an archive"):
        tinynet.load(tmp_path / "array.npz")


def test_load_adds_the_suffix_as_save_does(trained, tmp_path):
    trained.save(tmp_path / "plain")
    assert tinynet.load(tmp_path / "plain").sizes == trained.sizes
    assert [path.name for path in tmp_path.iterdir()] == ["plain.npz"]  # no partial file


def test_an_initializer_that_cannot_be_named_is_refused_at_save(tmp_path):
    by_lambda = tinynet.mlp([2, 2, 1], init=lambda shape, rng: rng.normal(0, 0.3, size=shape))
    with pytest.raises(ValueError, match="layer 0's initializer '<lambda>' cannot be saved by name"):
        by_lambda.save(tmp_path / "lambda.npz")
    impostor = tinynet.Layer(2, 1, init=tinynet.init.VarianceScaling("he_normal", 3.0, "fan_in",
                                                                     "normal"))
    with pytest.raises(ValueError, match="initializer 'he_normal' cannot be saved by name"):
        tinynet.Network([impostor]).save(tmp_path / "impostor.npz")
    assert not list(tmp_path.iterdir())


def test_unknown_initializer_says_how_to_register_it(tmp_path, restore_registry):
    @tinynet.init.register("my_special")
    def my_special(shape, rng):
        return rng.normal(0.0, 0.1, size=shape)

    path = tinynet.mlp([2, 2, 1], init="my_special").save(tmp_path / "custom.npz")
    del tinynet.init.registry._REGISTRY["my_special"]
    with pytest.raises(UnknownNameError, match=r"unknown initializer 'my_special'.*saved with it "
                                               r"\(layer 0's initializer\); register it with "
                                               r"tinynet.init.register\('my_special', ...\)"):
        tinynet.load(path)


class Payload:
    """Unpickling this would create a file: proof that loading runs no code."""

    def __init__(self, target):
        self.target = target

    def __reduce__(self):
        return (open, (self.target, "w"))


def test_pickled_objects_are_never_unpickled(tmp_path):
    target = tmp_path / "pwned"
    path = tmp_path / "evil.npz"
    with zipfile.ZipFile(path, "w") as archive:  # an .npy member holding a pickled object
        with archive.open("format.npy", "w") as member:
            np.lib.format.write_array(member, np.array([Payload(str(target))], dtype=object),
                                      allow_pickle=True)
    assert b"pwned" in path.read_bytes()  # the payload is really in the file
    with pytest.raises(FileFormatError, match="member 'format.npy' holds an array of dtype object"):
        tinynet.load(path)
    assert not target.exists()
    assert os.listdir(tmp_path) == ["evil.npz"]


def test_drawn_biases_round_trip_as_format_2(tmp_path):
    net = tinynet.mlp([2, 3, 1], init="he_leaky", bias_init="normal(std=0.5)", seed=4)
    path = net.save(tmp_path / "biases.npz")
    with np.load(path) as archive:
        assert int(archive["version"]) == 2
        assert list(archive["bias_initializers"]) == ["normal(std=0.5)"] * 2
    loaded = tinynet.load(path)
    assert [layer.bias_init.name for layer in loaded.layers] == ["normal(std=0.5)"] * 2
    for p, q in zip(net.parameters(), loaded.parameters()):
        np.testing.assert_array_equal(p, q)
    loaded.reset_parameters()  # the loaded initializers draw the same biases again
    for p, q in zip(net.parameters(), loaded.parameters()):
        np.testing.assert_array_equal(p, q)


def test_constant_biases_are_still_written_as_format_1(trained, tmp_path):
    with np.load(trained.save(tmp_path / "net.npz")) as archive:
        assert int(archive["version"]) == 1 and "bias_initializers" not in archive.files


def test_an_interrupted_save_leaves_the_old_file_and_no_partial_one(trained, tmp_path,
                                                                   monkeypatch):
    path = trained.save(tmp_path / "net.npz")
    before = path.read_bytes()

    def interrupted(file, **arrays):
        file.write(b"half")
        raise KeyboardInterrupt

    monkeypatch.setattr(np, "savez", interrupted)
    with pytest.raises(KeyboardInterrupt):
        trained.save(path)
    assert path.read_bytes() == before
    assert [p.name for p in tmp_path.iterdir()] == ["net.npz"]


def test_put_between_replaces_one_section_whole_and_names_missing_markers(tmp_path):
    from tinynet.files import put_between
    readme = tmp_path / "README.md"
    readme.write_text("a\n<!-- s -->old<!-- e -->\nb <!-- e -->\n")
    put_between(readme, "<!-- s -->", "<!-- e -->", "\nnew\n")
    assert readme.read_text() == "a\n<!-- s -->\nnew\n<!-- e -->\nb <!-- e -->\n"
    assert [p.name for p in tmp_path.iterdir()] == ["README.md"]  # no partial file left
    with pytest.raises(ValueError, match="has no section between '<!-- x -->' and '<!-- e -->'"):
        put_between(readme, "<!-- x -->", "<!-- e -->", "y")


def test_load_does_not_call_the_initializers(tmp_path, restore_registry):
    calls = []

    @tinynet.init.register("counting")
    def counting(shape, rng):
        calls.append(shape)
        return rng.normal(0.0, 0.5, size=shape)

    net = tinynet.mlp([2, 3, 1], init="counting", bias_init="counting", seed=5)
    assert calls  # drawn at construction
    path = net.save(tmp_path / "counted.npz")
    calls.clear()
    loaded = tinynet.load(path)
    assert calls == []
    assert [layer.init.name for layer in loaded.layers] == ["counting"] * 2
    for p, q in zip(net.parameters(), loaded.parameters()):
        np.testing.assert_array_equal(p, q)


def test_an_initializer_that_raises_does_not_stop_loading(tmp_path, restore_registry):
    @tinynet.init.register("flaky")
    def flaky(shape, rng, scale=1.0):
        return rng.uniform(-scale, scale, size=shape)

    net = tinynet.mlp([3, 4, 2], init="flaky(scale=0.5)", bias_init="flaky", seed=9)
    path = net.save(tmp_path / "flaky.npz")

    @tinynet.init.register("flaky", override=True)
    def broken(shape, rng, scale=1.0):
        raise RuntimeError("the initializer was called")

    loaded = tinynet.load(path)
    for p, q in zip(net.parameters(), loaded.parameters()):
        np.testing.assert_array_equal(p, q)
    with pytest.raises(Exception, match="the initializer was called"):  # as it is, or wrapped
        loaded.reset_parameters()  # the broken one is what the loaded network holds


# Archives forged byte by byte: what np.savez and zipfile never write.

def npy(array=None, **header):
    """The bytes of an .npy member: ``array`` as NumPy writes it, or only a header declaring
    ``header`` (descr, fortran_order, shape) and no data."""
    buffer = io.BytesIO()
    if array is not None:
        np.lib.format.write_array(buffer, array)
    else:
        np.lib.format.write_array_header_1_0(buffer, {"fortran_order": False, **header})
    return buffer.getvalue()


def member(name, stored, size, crc, method=zipfile.ZIP_STORED):
    """A zip member as :func:`write_zip` writes it: ``stored`` bytes in the file, and the
    uncompressed ``size`` and ``crc`` it declares, true or not."""
    return name, stored, size, crc, method


def honest(name, data):
    """A member holding ``data`` uncompressed, declaring its true size and CRC."""
    return member(name, data, len(data), zlib.crc32(data))


def write_zip(path, members):
    """Write a zip archive of ``members`` byte by byte, declaring the sizes they say."""
    body, directory = bytearray(), bytearray()
    for name, stored, size, crc, method in members:
        name = name.encode()
        common = (method, 0, 0x21, crc, len(stored), size, len(name))  # time, date: 1980-01-01
        directory += struct.pack("<4s6H3L5H2L", b"PK\x01\x02", 20, 20, 0, *common, 0, 0, 0, 0,
                                 0, len(body)) + name
        body += struct.pack("<4s5H3L2H", b"PK\x03\x04", 20, 0, *common, 0) + name + stored
    end = struct.pack("<4s4H2LH", b"PK\x05\x06", 0, 0, len(members), len(members),
                      len(directory), len(body), 0)
    path.write_bytes(bytes(body + directory + end))


def forge(path, extra=(), **forged):
    """Rewrite the network file at ``path`` by hand, some members replaced (``W0=member(...)``)
    and ``extra`` members added."""
    with zipfile.ZipFile(path) as archive:
        members = {name.removesuffix(".npy"): honest(name, archive.read(name))
                   for name in archive.namelist()}
    write_zip(path, [*{**members, **forged}.values(), *extra])


def deflate_bomb(prefix, zeros):
    """A raw deflate stream of ``prefix`` then ``zeros`` zero bytes (a whole number of MiB),
    made in a blink: one MiB of zeros compressed once (to about 1 KB), then repeated."""
    compressor = zlib.compressobj(9, zlib.DEFLATED, -15)
    head = compressor.compress(prefix) + compressor.flush(zlib.Z_FULL_FLUSH)
    block = compressor.compress(bytes(MiB)) + compressor.flush(zlib.Z_FULL_FLUSH)
    return head + block * (zeros // MiB) + compressor.flush()


def zeros_crc(prefix, zeros):
    """The CRC of ``prefix`` then ``zeros`` zero bytes."""
    crc = zlib.crc32(prefix)
    for _ in range(zeros // MiB):
        crc = zlib.crc32(bytes(MiB), crc)
    return crc


def refused_lightly(path, message):
    """Assert that loading ``path`` raises FileFormatError matching ``message`` before
    reading what the file declares: allocating under 1 MiB (reading it would allocate the
    declared size). Not timed: a wall-clock bound fails on a busy machine."""
    tracemalloc.start()
    try:
        with pytest.raises(FileFormatError, match=message):
            tinynet.load(path)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < MiB


def test_a_tiny_file_declaring_2_to_the_40_elements_is_refused_at_once(trained, tmp_path):
    path = trained.save(tmp_path / "net.npz")
    forge(path, W0=honest("W0.npy", npy(descr="<f8", shape=(2**40,))))
    assert path.stat().st_size < 4000
    refused_lightly(path, r"net.npz is not a readable tinynet network file: member 'W0.npy' "
                          r"declares float64 \(1099511627776,\), 8796093022208 bytes, but holds 0")


def test_a_deflate_bomb_declaring_its_size_is_refused_before_it_is_inflated(trained, tmp_path):
    path = trained.save(tmp_path / "net.npz")
    header = npy(descr="<f8", shape=(3 * GiB // 8,))
    bomb = deflate_bomb(header, 3 * GiB)  # never read: its CRC does not matter
    forge(path, W0=member("W0.npy", bomb, len(header) + 3 * GiB, 0, zipfile.ZIP_DEFLATED))
    assert path.stat().st_size < 4 * MiB
    refused_lightly(path, r"its arrays take \d+ bytes uncompressed, more than "
                          r"tinynet.saving.MAX_LOAD_BYTES \(1073741824\)")


@pytest.mark.parametrize("crc_over", ["declared", "inflated"])
def test_a_deflate_bomb_lying_about_its_size_is_read_no_further_than_it_declares(
        trained, tmp_path, crc_over):
    """W0's compressed stream holds W0, then 64 MiB of zeros that its size does not declare.
    With the CRC of what it declares, W0 loads as it was; with the CRC of all of it (as a zip
    tool writes), the CRC check refuses it. Either way, without inflating the zeros."""
    path = trained.save(tmp_path / "net.npz")
    data = npy(trained.layers[0].W)
    crc = zlib.crc32(data) if crc_over == "declared" else zeros_crc(data, 64 * MiB)
    forge(path, W0=member("W0.npy", deflate_bomb(data, 64 * MiB), len(data), crc,
                          zipfile.ZIP_DEFLATED))
    if crc_over == "declared":
        tracemalloc.start()
        try:
            loaded = tinynet.load(path)
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
        assert peak < MiB
        for p, q in zip(trained.parameters(), loaded.parameters()):
            np.testing.assert_array_equal(p, q)
    else:
        refused_lightly(path, r"BadZipFile: Bad CRC-32 for file 'W0.npy'")


def test_the_limits_are_module_settings(trained, tmp_path, monkeypatch):
    path = trained.save(tmp_path / "net.npz")
    monkeypatch.setattr(saving, "MAX_LOAD_BYTES", 2 * MiB)
    header = npy(descr="<f8", shape=(MiB // 8,))  # within the limit: read, then refused
    forge(path, W0=member("W0.npy", deflate_bomb(header, MiB), len(header) + MiB,
                          zeros_crc(header, MiB), zipfile.ZIP_DEFLATED))
    with pytest.raises(FileFormatError, match=r"layer 0 holds W \(131072,\) float64"):
        tinynet.load(path)
    header = npy(descr="<f8", shape=(4 * MiB // 8,))  # beyond it: refused unread
    forge(path, W0=member("W0.npy", deflate_bomb(header, 4 * MiB), len(header) + 4 * MiB, 0,
                          zipfile.ZIP_DEFLATED))
    refused_lightly(path, r"its arrays take \d+ bytes uncompressed, more than "
                          r"tinynet.saving.MAX_LOAD_BYTES \(2097152\)")

    path = trained.save(tmp_path / "net.npz")
    monkeypatch.setattr(saving, "MAX_LOAD_BYTES", 1000)
    refused_lightly(path, rf"net.npz takes {path.stat().st_size} bytes, more than "
                          r"tinynet.saving.MAX_LOAD_BYTES \(1000\)")
    monkeypatch.setattr(saving, "MAX_LOAD_BYTES", GiB)
    monkeypatch.setattr(saving, "MAX_MEMBERS", 5)
    refused_lightly(path, r"it holds 14 members, more than tinynet.saving.MAX_MEMBERS \(5\)")


def not_unicode():
    data = bytearray(npy(np.array("abc")))
    data[-4:] = (0x110000).to_bytes(4, "little")  # beyond the last code point
    return bytes(data)


@pytest.mark.parametrize("data,message", [
    (b"\x93NUMPY\x02\x00\xff\xff\xff\xff", "member 'W0.npy' has a header of 4294967295 bytes, more than 10000"),
    (npy(np.zeros((4, 2)))[:-8], r"member 'W0.npy' declares float64 \(4, 2\), 64 bytes, but holds 56"),
    (npy(descr="<f8", shape=(2**8,) * 8), r"declares float64 \(256, 256, 256, 256, 256, 256, 256, 256\), 147573952589676412928 bytes, but holds 0"),
    (npy(descr="<f8", shape=(-4, -2)) + bytes(64), r"member 'W0.npy' declares the shape \(-4, -2\)"),
    (npy(descr="<U0", shape=(2**40,)), "member 'W0.npy' holds an array of dtype <U0"),
    (npy(np.zeros(2, dtype=[("a", "<f8")])), r"member 'W0.npy' holds an array of dtype \[\('a', '<f8'\)\]"),
    (npy(descr="|V8", shape=(8,)) + bytes(64), "member 'W0.npy' holds an array of dtype .V8"),
    (npy(np.zeros((4, 2), dtype=complex)), "member 'W0.npy' holds an array of dtype complex128"),
    (not_unicode(), "member 'W0.npy' holds text that is not Unicode"),
    (b"\x93NUMPY\x03\x00" + npy(np.zeros((4, 2)))[8:], r"member 'W0.npy' is in .npy format \(3, 0\); tinynet reads formats \(1, 0\), \(2, 0\)"),
    (b"\x93NUMP", "EOF: reading magic string"),
    (b"\x93NUMPY\x01\x00\x14\x00{'descr': '<f8'}    ", "Header does not contain the correct keys"),
    (b"PK\x03\x04\x14\x00\x00\x00", "the magic string is not correct"),
])
def test_members_are_checked_before_their_data_is_read(trained, tmp_path, data, message):
    path = trained.save(tmp_path / "net.npz")
    forge(path, W0=honest("W0.npy", data))
    refused_lightly(path, message)


def test_a_member_in_fortran_order_loads_as_it_was(trained, tmp_path):
    path = trained.save(tmp_path / "net.npz")
    data = npy(np.asfortranarray(trained.layers[0].W))
    assert b"'fortran_order': True" in data
    forge(path, W0=honest("W0.npy", data))
    np.testing.assert_array_equal(tinynet.load(path).layers[0].W, trained.layers[0].W)


@pytest.mark.parametrize("extra,message", [
    ([honest("W0.npy", npy(np.zeros((4, 2))))], "it holds two members of one name"),
    ([honest("notes.txt", b"hello")], "its member 'notes.txt' is not an .npy array"),
])
def test_the_members_must_be_npy_arrays_named_once(trained, tmp_path, extra, message):
    path = trained.save(tmp_path / "net.npz")
    forge(path, extra=extra)
    refused_lightly(path, message)


def test_a_path_that_is_not_a_regular_file_is_a_file_format_error(tmp_path):
    (tmp_path / "folder.npz").mkdir()
    (tmp_path / "null.npz").symlink_to(os.devnull)
    for name in ("folder.npz", "null.npz"):
        with pytest.raises(FileFormatError, match=f"{name} is not a regular file"):
            tinynet.load(tmp_path / name)


def test_flipped_bytes_and_truncations_give_the_network_or_a_file_format_error(tmp_path):
    """Whatever byte is damaged, load returns the saved network exactly (the byte was one
    zipfile does not use, such as a date) or raises FileFormatError: never another error,
    never other numbers. 600 damaged files of the 5,000 or so possible (1.5 ms a load)."""
    net = tinynet.mlp([1, 1], seed=3)
    path = net.save(tmp_path / "net.npz")
    data = path.read_bytes()
    rng = np.random.default_rng(0)
    damaged = [data[:i] + bytes([data[i] ^ int(rng.integers(1, 256))]) + data[i + 1:]
               for i in rng.choice(len(data), 400, replace=False)]
    damaged += [data[:n] for n in rng.choice(len(data), 200, replace=False)]
    refused = 0
    for version in damaged:
        path.write_bytes(version)
        try:
            loaded = tinynet.load(path)
        except FileFormatError:
            refused += 1
        else:
            for p, q in zip(net.parameters(), loaded.parameters()):
                np.testing.assert_array_equal(p, q)
    assert refused > 0.8 * len(damaged)


def test_a_file_of_empty_member_entries_is_refused_before_zipfile_reads_them(tmp_path):
    """200,000 central-directory entries in 9 MB: zipfile would build a ZipInfo for each
    (some 70 MB, seconds) before the members could be counted."""
    entry = struct.pack("<4s6H3L5H2L", b"PK\x01\x02", 20, 20, 0, 0, 0, 0, 0, 0, 0, 5, 0, 0,
                        0, 0, 0, 0) + b"a.npy"
    directory = entry * 200_000
    end = struct.pack("<4s4H2LH", b"PK\x05\x06", 0, 0, 9_000, 9_000, len(directory), 0, 0)
    path = tmp_path / "many.npz"
    path.write_bytes(directory + end)
    refused_lightly(path, r"its list of members takes 10200000 bytes")


def test_a_registered_initializer_with_a_wrong_parameter_is_a_format_error(tmp_path):
    path = tinynet.mlp([2, 2, 1], init="he_normal").save(tmp_path / "n.npz")
    with np.load(path) as archive:
        arrays = dict(archive)
    arrays["inits"] = np.array(["he_normal(mode='fan_avg')", "he_normal"])
    with open(path, "wb") as file:
        np.savez(file, **arrays)
    with pytest.raises(FileFormatError, match=r"layer 0's initializer entry "
                                              r"\"he_normal\(mode='fan_avg'\)\" has a parameter"):
        tinynet.load(path)
