"""The training step is written once (tinynet.step): the NumPy fit runs it through the layers a
student reads, the NumPy ensembles through views, the kernel generator writes the generated
kernels' step by running it on names, and kernel_source shows the kernel that runs."""

import re
import sys
from pathlib import Path

import numpy as np
import pytest

import tinynet
from tinynet import step
from tinynet.compiled import codegen, fused, kit, tracing, unrolled
from tinynet.compiled.sources import load_module
from tinynet.kernels import kernel_source
from tinynet.layers import Layer
from tinynet.packing import draw, layout, pack

X, Y = tinynet.data.xor()


class Stopped(Exception):
    pass


def _stop(*args, **kwargs):
    raise Stopped


@pytest.mark.parametrize("method", ["forward", "backward"])
def test_the_numpy_fit_runs_the_layers_forward_and_backward(monkeypatch, method):
    """Made to raise, Layer.forward or Layer.backward stops the NumPy fit: it runs them."""
    net = tinynet.mlp([2, 2, 1])
    monkeypatch.setattr(Layer, method, _stop)
    with pytest.raises(Stopped):
        tinynet.fit(net, X, Y, epochs=2, lr=0.1, backend="numpy")


@pytest.mark.unrolled
@pytest.mark.parametrize("method", ["forward", "backward"])
def test_ensembles_and_the_kernel_generator_run_the_one_description(monkeypatch, method):
    """Made to raise, tinynet.step.Dense's forward or backward stops the NumPy ensembles and
    the writing of a generated kernel's step: both run that one description."""
    like = tinynet.mlp([2, 2, 1])
    monkeypatch.setattr(step.Dense, method, _stop)
    with pytest.raises(Stopped):
        tinynet.fit_packed(like, draw(like, range(3)), X, Y, seeds=range(3), epochs=2, lr=0.1,
                           backend="numpy")
    with pytest.raises(Stopped):
        kernel_source(like, ensemble=True)


def test_a_numpy_fit_is_its_ensemble_member_bit_for_bit():
    """One loop (tinynet.reference.train): the single fit on the network's own layers, the
    ensemble on views with a members axis, the same numbers."""
    for optimizer, update in (("sgd", "after_backward"), ("adam", "during_backward")):
        nets = [tinynet.mlp([2, 3, 2, 1], activation="tanh", seed=s) for s in range(3)]
        alone = tinynet.mlp([2, 3, 2, 1], activation="tanh", seed=1)
        history = tinynet.fit(alone, X, Y, epochs=30, lr=0.2, backend="numpy",
                              optimizer=optimizer, update=update, batch_size=2)
        result = tinynet.fit_ensemble(nets, X, Y, epochs=30, lr=0.2, backend="numpy",
                                      optimizer=optimizer, update=update, batch_size=2,
                                      record_every=1)
        assert pack(nets[1]).tobytes() == pack(alone).tobytes()
        assert np.asarray(history.loss).tobytes() == result.loss[1].tobytes()


def test_the_traced_step_names_where_each_line_comes_from():
    """Every group of the generated step's lines sits under a comment naming the layer, the
    function of tinynet.step and its line, which holds the word that wrote them."""
    net = tinynet.mlp([2, 2, 1])
    maths = kit.maths_of(net, tinynet.losses.get_loss("bce"),
                         tinynet.optimizers.get_optimizer("momentum"))
    lines = tracing.step(kit.layout_for(layout(net), maths), maths, 1, during=True)
    source = Path(step.__file__).read_text().splitlines()
    comments = [line for line in lines if codegen.is_comment(line)]
    words = {"pre_activation", "activate", "backward_activation", "backward_parameters",
             "update(self)", "backward_input", "ops.loss"}
    said = set()
    for comment in comments:
        number = int(re.search(r"step\.py:(\d+)", comment).group(1))
        said |= {word for word in words if word in source[number - 1]}
    assert said == words
    assert any("Sigmoid.forward_and_derivative" in c for c in comments)
    assert any("LeakyReLU.forward_and_derivative" in c for c in comments)
    assert any("BCE.value_and_gradient" in c for c in comments)
    assert sum("Momentum.update" in c for c in comments) == 2  # each layer steps in backward


def test_comments_change_no_run_of_exps():
    """A comment goes with the line after it: the step cut at the exps has as many loops of
    exps as the step without its comments has."""
    net = tinynet.mlp([2, 2, 2, 1], activation="sigmoid")
    maths = kit.maths_of(net, tinynet.losses.get_loss("mse"))
    lines = tracing.step(kit.layout_for(layout(net), maths), maths, 1, during=False)
    with_comments = unrolled._segments(lines, cut=True)
    without = unrolled._segments([line for line in lines if not codegen.is_comment(line)],
                                 cut=True)
    assert len(with_comments) == len(without) > 1
    assert [[line for line in run if not codegen.is_comment(line)]
            for run in with_comments] == without


def _loaded_file(function) -> str:
    return Path(sys.modules[function.py_func.__module__].__file__).read_text()


@pytest.mark.unrolled
@pytest.mark.parametrize("ensemble", [False, True])
def test_kernel_source_is_the_text_of_the_kernel_that_runs(ensemble):
    """kernel_source's text is the generated kernel's file, byte for byte."""
    net = tinynet.mlp([2, 2, 1])
    maths = kit.maths_of(net, tinynet.losses.get_loss("mse"))
    net_layout = kit.layout_for(layout(net), maths)
    args = (net_layout.table.tobytes(), net_layout.kinds.tobytes(), maths, maths.key(), False)
    from tinynet.compiled.sources import kernel_dir
    kernel = unrolled._kernel(*args, unrolled.CUT_AT_EXPS, kernel_dir()) if ensemble \
        else fused._kernel(*args, kernel_dir())
    assert kernel_source(net, ensemble=ensemble) == _loaded_file(kernel)


@pytest.mark.unrolled
def test_kernel_source_of_the_generic_kernels_is_their_kit():
    net = tinynet.mlp([2, 64, 1])
    text = kernel_source(net, ensemble=True)
    assert text.startswith("# This kit's fit_lanes (its blocks: train_block) trains")
    assert "def activation_0(z, parameters):" in text and "\ndef train_block(" in text
    assert kernel_source(net, ensemble=True, update="during_backward").startswith(
        "# This kit's fit_lanes_during (its blocks: train_block_during) trains")
    single = kernel_source(tinynet.mlp([2, 2, 1]), batch_size=2)
    assert single.startswith("# This kit's fit_network trains") and "\ndef fit_network(" in single


def test_kernel_source_is_tinynet_kernel_source():
    assert tinynet.kernel_source is kernel_source


def test_kernel_source_refuses_what_it_cannot_show():
    net = tinynet.mlp([2, 2, 1])
    with pytest.raises(ValueError, match="update"):
        kernel_source(net, update="sometimes")
    with pytest.raises(TypeError, match="net"):
        kernel_source("2-2-1")
    with pytest.raises(TypeError, match="ensemble"):
        kernel_source(net, ensemble="yes")


@pytest.mark.slow
@pytest.mark.unrolled
def test_the_kernel_a_study_ran_compiles_from_its_text_to_the_same_result(tmp_path,
                                                                          monkeypatch):
    """kernel_source of a study's arm, compiled from the text alone (in a folder of its own)
    and run in place of the cached kernel, trains the study's seeds to the same bits."""
    from tinynet.xor import Arm, Setup, run_study

    arm = Arm(init="he_leaky", optimizer="adam", loss="bce")
    setup = Setup(seeds=8, epochs=60)
    study = run_study([arm], setup)
    net = study.network(0, 0, trained=False)
    text = kernel_source(net, loss=arm.loss, optimizer=arm.optimizer,
                                 update=arm.update, batch_size=setup.batch_size, ensemble=True)
    own = load_module(text, tmp_path).fit_block
    monkeypatch.setattr(unrolled, "_kernel", lambda *args: own)
    again = run_study([arm], setup)
    for seed in range(8):
        assert pack(again.network(0, seed)).tobytes() == pack(study.network(0, seed)).tobytes()
    assert own.signatures                                   # it ran, compiled from the text
