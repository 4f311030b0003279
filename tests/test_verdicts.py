"""An epoch's two verdicts, an output on the wrong side and a run diverged, and the slot of
its loss in the history are written once (tinynet.verdicts): NumPy runs them on arrays, every
kernel calls them compiled, and no other source in the package spells them."""

import math
import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tinynet
from tinynet import verdicts
from tinynet.compiled import verdicts as compiled_verdicts
from tinynet.kernels import kernel_source

from helpers import ROOT

ANY_FLOAT = st.floats(allow_nan=True, allow_infinity=True)


@given(st.lists(ANY_FLOAT, min_size=1, max_size=40))
def test_the_summed_marks_are_zero_exactly_when_every_value_is_finite(values):
    values = np.array(values)
    with np.errstate(invalid="ignore"):
        marks = verdicts.finite_mark(values).sum()
    assert bool(verdicts.diverged(marks)) == (not np.isfinite(values).all())


@settings(deadline=None)  # the first example compiles the three functions
@given(ANY_FLOAT, ANY_FLOAT)
def test_the_compiled_verdicts_agree_with_numpy_on_scalars(value, other):
    with np.errstate(invalid="ignore"):
        mark = verdicts.finite_mark(np.float64(value)) + verdicts.finite_mark(np.float64(other))
    compiled = compiled_verdicts.finite_mark(value) + compiled_verdicts.finite_mark(other)
    assert math.isnan(compiled) == math.isnan(mark)
    assert compiled_verdicts.diverged(compiled) == verdicts.diverged(mark)
    assert compiled_verdicts.wrong_side(value, other, 0.5) == \
        verdicts.wrong_side(np.float64(value), np.float64(other), 0.5)


@pytest.mark.parametrize("y_hat, y, wrong", [
    (0.9, 1.0, False), (0.1, 0.0, False),   # each on its target's side
    (0.1, 1.0, True), (0.9, 0.0, True),     # each on the other side
    (0.5, 0.0, False), (0.5, 1.0, True),    # at the threshold: not above it, so with 0
    (math.nan, 0.0, False), (math.nan, 1.0, True),  # NaN is above nothing
])
def test_an_output_is_on_the_wrong_side_when_it_and_its_target_straddle_the_threshold(
        y_hat, y, wrong):
    assert verdicts.wrong_side(y_hat, y, 0.5) == wrong
    assert compiled_verdicts.wrong_side(y_hat, y, 0.5) == wrong


def test_no_other_source_spells_either_verdict():
    """The tests themselves appear in tinynet/verdicts.py and nowhere else in the package: not
    a comparison of an output and a target with the threshold, not x · 0 as a finiteness
    check, not isfinite on what training records."""
    spelled = {
        "wrong side": re.compile(r">\s*threshold\)?\s*!=|!=\s*\(?[\w\[\], ]+>\s*threshold"),
        "finite mark": re.compile(r"\*\s*0\.0\b"),
        "isfinite in an epoch loop": re.compile(r"isfinite\((epoch_loss|params)\)|"
                                                r"all\(np\.isfinite\(theta\)\)"),
        "history slot": re.compile(r"%\s*[\w.]*every\b|\((e|epoch)\s*\+\s*1\)\s*//"),
    }
    found = []
    for path in sorted((ROOT / "tinynet").rglob("*.py")):
        if path.name == "verdicts.py" and path.parent.name == "tinynet":
            continue
        text = path.read_text(encoding="utf-8")
        found += [f"{path.relative_to(ROOT)}: {name}" for name, pattern in spelled.items()
                  if pattern.search(text)]
    assert found == []


@pytest.mark.parametrize("every", [0, 1, 3, 7])
def test_the_history_keeps_every_kth_epoch_in_its_slots_in_order(every):
    """Over 30 epochs, the history's slots are 0, 1, ... in the order of the epochs that fill
    them, each once, one every ``every`` epochs (epochs every − 1, 2·every − 1, ...), as
    many as Record.empty makes; with every = 0, none. The compiled function agrees."""
    epochs = 30
    slots = [(epoch, verdicts.history_slot(epoch, every)) for epoch in range(epochs)]
    kept = [(epoch, slot) for epoch, slot in slots if slot >= 0]
    records = tinynet.results.Record.empty(1, epochs, every).loss.shape[1]
    assert [slot for _, slot in kept] == list(range(records))
    assert [epoch for epoch, _ in kept] == [every * (k + 1) - 1 for k in range(records)]
    assert all(slot == -1 for epoch, slot in slots if (epoch, slot) not in kept)
    assert [compiled_verdicts.history_slot(epoch, every) for epoch in range(epochs)] == \
        [slot for _, slot in slots]


@pytest.mark.parametrize("sizes, ensemble", [([2, 2, 1], False), ([2, 2, 1], True),
                                             ([2, 64, 1], False)])
def test_the_kernels_call_the_verdicts(sizes, ensemble):
    """The kernels (a generated fused single fit and unrolled ensemble, and the kit of the
    generic kernels) import the compiled verdicts, call them, and spell neither test."""
    text = kernel_source(tinynet.mlp(sizes), ensemble=ensemble)
    assert "from tinynet.compiled.verdicts import" in text
    body = text.split("\n\n\n", 1)[1]   # past the docstring and imports
    assert "wrong_side(" in body
    assert "> threshold" not in text and "* 0.0" not in text
