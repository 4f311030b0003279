"""The epoch loop is written once (tinynet.step.train): NumPy runs it, and every compiled
kernel's loop is written by running it on words, each group of lines under a comment naming
the line of tinynet/step.py that said it."""

import inspect
import re

import pytest

import tinynet
from tinynet import step
from tinynet.kernels import kernel_source

X, Y = tinynet.data.xor()

# The kernels' texts, written (not compiled) for the layouts that get generated kernels.
pytestmark = pytest.mark.unrolled

# The four compiled kernels: a generated single fit (fused) and ensemble (unrolled), and the
# kit of the generic kernels, whose fit_network and train_block are the two generic loops.
KERNELS = {"fused": ([2, 2, 1], False), "unrolled": ([2, 2, 1], True),
           "kit": ([2, 64, 1], False)}


class Stopped(Exception):
    pass


def _stop(*args, **kwargs):
    raise Stopped


def test_the_numpy_fits_run_the_one_epoch_loop(monkeypatch):
    """Made to raise, tinynet.step.train stops the NumPy fit and the NumPy ensembles."""
    monkeypatch.setattr(step, "train", _stop)
    with pytest.raises(Stopped):
        tinynet.fit(tinynet.mlp([2, 2, 1]), X, Y, epochs=2, lr=0.1, backend="numpy")
    with pytest.raises(Stopped):
        tinynet.fit_ensemble([tinynet.mlp([2, 2, 1], seed=s) for s in range(3)], X, Y,
                             epochs=2, lr=0.1, backend="numpy")


@pytest.mark.parametrize("kernel", KERNELS)
def test_every_kernel_loop_is_written_by_the_one_epoch_loop(monkeypatch, kernel):
    """Made to raise, tinynet.step.train stops the writing of every compiled kernel."""
    sizes, ensemble = KERNELS[kernel]
    monkeypatch.setattr(step, "train", _stop)
    with pytest.raises(Stopped):
        kernel_source(tinynet.mlp(sizes), ensemble=ensemble)


def _said_lines() -> dict[int, str]:
    """The lines of tinynet.step.train that say a word (a call of ``ops`` or ``step``), by
    line number in tinynet/step.py."""
    lines, first = inspect.getsourcelines(step.train)
    return {first + k: line.strip() for k, line in enumerate(lines)
            if re.search(r"\bops\.\w+\(|= step\(", line)}


@pytest.mark.parametrize("kernel", KERNELS)
def test_each_written_loop_names_every_line_of_the_description(kernel):
    """Every line of step.train that says a word is named, by its line number, in a comment
    of the kernel's text: for the kit, once in fit_network and once in each train_block."""
    sizes, ensemble = KERNELS[kernel]
    text = kernel_source(tinynet.mlp(sizes), ensemble=ensemble)
    loops = 3 if kernel == "kit" else 1     # fit_network, train_block, train_block_during
    for number in _said_lines():
        assert text.count(f"# train (step.py:{number})") == loops, number


@pytest.mark.parametrize("kernel", KERNELS)
def test_each_word_writes_code_inside_its_block(kernel):
    """Under each comment of step.train's lines comes code (or, for the step written out, the
    step's own commented lines), not only the comment; the step,
    the sum of the loss and the wrong-side test sit inside the loop over the batches, which
    sits inside the loop over the epochs (each line indented deeper than its block's
    header); the record and the divergence test inside the loop over the epochs only; the
    finish after it."""
    sizes, ensemble = KERNELS[kernel]
    lines = kernel_source(tinynet.mlp(sizes), ensemble=ensemble).splitlines()
    said = _said_lines()
    in_batch = {number for number, line in said.items()
                if "step(x, y)" in line or "add_loss" in line or "saw" in line}
    depth = {}                                   # the indentation of each block's header
    for k, line in enumerate(lines):
        stripped = line.lstrip()
        indent = len(line) - len(stripped)
        if stripped.startswith("for run in range(settings.epochs):"):
            depth["epochs"] = indent
        elif re.match(r"for start in range\((0, )?n", stripped):
            depth["batches"] = indent
        said_here = re.match(r"# train \(step\.py:(\d+)\)", stripped)
        if said_here is None or int(said_here.group(1)) not in said:
            continue
        number = int(said_here.group(1))
        following = lines[k + 1] if k + 1 < len(lines) else ""
        if "ops.saw(" in said[number] and kernel == "kit" and "train_block" in \
                "\n".join(lines[:k]).rsplit("\ndef ", 1)[-1].split("(")[0]:
            continue     # the lanes' loss_rows sets the last wrong epoch (see BlockWords.saw)
        code = following.strip() and not following.strip().startswith("#")
        step_said = "step(x, y)" in said[number] and "(step.py:" in following  # the step's
        assert code or step_said, (number, k)                  # own lines, under their comments
        if "ops.epochs(" in said[number] or "ops.batches(" in said[number]:
            continue     # said just before the block it opens
        if "ops.finish(" in said[number]:
            assert indent == depth["epochs"], number      # after the loop over the epochs
            continue
        assert indent > depth["epochs"], number
        if number in in_batch:
            assert indent > depth["batches"], number


@pytest.mark.parametrize("kernel", KERNELS)
def test_each_written_loop_stops_when_the_run_diverges(kernel):
    """The divergence word writes the stop: a break under the test of the summed marks."""
    sizes, ensemble = KERNELS[kernel]
    text = kernel_source(tinynet.mlp(sizes), ensemble=ensemble)
    test = r"if (diverged\(marks\)|alive == 0):\n\s+(diverged_epoch\[0\] = epoch\n\s+)?break"
    loops = 3 if kernel == "kit" else 1     # fit_network, train_block, train_block_during
    assert len(re.findall(test, text)) == loops
