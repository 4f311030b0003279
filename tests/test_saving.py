"""Saving and loading: exact round trips, and clear errors for every file that is not one."""

import os
import zipfile

import numpy as np
import pytest

import tinynet
from tinynet import FileFormatError, UnknownNameError
from tinynet.saving import VERSION


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
    (dict(alphas=np.array(["a", "b", "c"])), "layer 0 cannot be rebuilt: could not convert string to float"),
    (dict(alphas=np.array([-1.0, 0.3, 0.3])), "layer 0 cannot be rebuilt: alpha must be"),
    (dict(bias_inits=np.array([np.nan, 0.0, 0.0])), "layer 0 cannot be rebuilt: bias_init"),
    (dict(activations=np.array(["tanh", "softmax", "tanh"])), "layer 1 cannot be rebuilt: unknown activation 'softmax'"),
    (dict(inits=np.array(["normal(", "normal", "normal"])), "layer 0's initializer entry is garbled"),
])
def test_garbled_entries(trained, tmp_path, changes, message):
    path = trained.save(tmp_path / "net.npz")
    rewrite(path, **changes)
    with pytest.raises(FileFormatError, match=message):
        tinynet.load(path)


def test_a_single_array_file_is_not_a_network(tmp_path):
    np.save(tmp_path / "array.npy", np.arange(3.0))
    (tmp_path / "array.npy").rename(tmp_path / "array.npz")
    with pytest.raises(FileFormatError, match="holds a single ndarray, not an archive"):
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
    with pytest.raises(FileFormatError, match="Object arrays cannot be loaded"):
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
