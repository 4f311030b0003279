"""A finished study as the page draws it: per arm and seed the outcome, the decision boundary
on a grid, the loss curve and the weights as initialised and as trained; per arm the rate
with its Wilson interval, the failures, the second moment after each layer and residual
block at initialization, measured over the seeds and predicted by
:mod:`tinynet.diagnostics`; the Fisher test between A and B; and the study itself as the
library writes it (:meth:`~tinynet.xor.Study.to_dict`).

Large arrays travel as base64 text of their bytes (:func:`packed`), which the page reads into
typed arrays: a boundary is :data:`RESOLUTION` x :data:`RESOLUTION` bytes, the network's
output scaled to 0-250 (255: not finite); curves and weights are float32. Every number is
computed here, from the library's own forward pass
(:func:`tinynet.reference.layer_outputs_many`, or for residual blocks
:func:`tinynet.reference.described`'s); the page only draws.
"""

from __future__ import annotations

import base64
import copy
from collections.abc import Sequence

import numpy as np

from ..diagnostics import propagate, stream
from ..evaluation import scores
from ..losses import get_loss
from ..network import Network
from ..packing import draw, layer_rows, layout, offsets
from ..reference import described, layer_outputs_many
from ..residual import Residual
from ..xor import FAILURES, Arm, ArmResult, Setup, Study, build_network, solved_epochs
from ..xor.arms import arm_parameters
from ..xor.bench import LAYER_ARRAYS
from ..xor.outcome import THRESHOLD

__all__ = ["RESOLUTION", "NOT_FINITE", "FLOAT_CHARS", "SAMPLE_BYTES", "OUTCOME_BYTES",
           "CHUNK_BYTES", "packed", "study_payload", "extent", "grid", "outputs_at",
           "boundaries", "positions",
           "block_parameters",
           "second_moments", "predicted_moments", "confusions", "page_bytes"]

RESOLUTION = 40
"""Grid points per side of a seed's decision boundary: 1,600 bytes a seed and arm."""

NOT_FINITE = 255
"""A boundary byte where the output is NaN or infinite (a diverged seed)."""

FLOAT_CHARS = 24
"""The most characters a float64 takes as JSON: Python writes its shortest repr, at most 17
significant digits, a sign, a point and an exponent such as ``e-308``
(``-1.2345678901234567e-308``)."""

SAMPLE_BYTES = 3 * FLOAT_CHARS + 5
"""The most bytes a training sample takes in the page's data: its two coordinates and its
target (float64, :data:`FLOAT_CHARS` each at most), the brackets of its pair and three
commas."""

OUTCOME_BYTES = max(map(len, FAILURES)) + 3
"""The most bytes a seed's outcome takes in the page's data: the longest name, in quotes,
and a comma."""

CHUNK_BYTES = 32 * 2**20
"""About how much memory a forward pass over many seeds may take at once."""


def page_bytes(setup: Setup, arms: Sequence[Arm], record_every: int) -> int:
    """How many bytes the page's data of a study of ``arms`` has, at most but for the
    study's summary (a few kB): per arm and seed, its boundary (:data:`RESOLUTION` ² bytes),
    its loss curve and its weights as initialised and as trained (float32; a residual arm's
    with its norms and α), as base64 (4/3, and 4 bytes of padding per arm and array), its
    outcome (:data:`OUTCOME_BYTES`) and epoch of success (its digits and a comma); and the
    training data as JSON numbers (:data:`SAMPLE_BYTES` a sample at most). On a data set of
    many classes, per arm and seed instead: its test accuracy, its loss and test-accuracy
    curves (float32) and its confusion matrix (uint16, classes²), as base64, its outcome, and
    the study's JSON's test accuracy and loss as numbers; no data, no weights."""
    if setup.task.classification:
        records = setup.epochs // record_every
        evaluations = -(-setup.epochs // record_every)
        per_seed = ((4 + 4 * records + 4 * evaluations + 2 * setup.task.classes ** 2) * 4 // 3
                    + 4 + OUTCOME_BYTES + 2 * (FLOAT_CHARS + 1))  # and the study's JSON's
        # test accuracy and loss of the seed
        return len(arms) * (setup.seeds * per_seed + 4 * 4)
    total = SAMPLE_BYTES * setup.task.samples
    for arm in arms:  # weights: its dense layers', and its blocks' norms and α
        per_seed = ((RESOLUTION ** 2 + 4 * (setup.epochs // record_every + 1)
                     + 8 * arm_parameters(setup, arm)) * 4 // 3 + 1
                    + OUTCOME_BYTES + len(str(setup.epochs)) + 1)
        total += setup.seeds * per_seed + 4 * 4
    return total


def packed(array: np.ndarray, dtype: str) -> dict:
    """``array`` as ``{"dtype", "shape", "base64"}``: its bytes as ``dtype``, little-endian."""
    array = np.ascontiguousarray(array, dtype=np.dtype(dtype).newbyteorder("<"))
    return {"dtype": dtype, "shape": list(array.shape),
            "base64": base64.b64encode(array.tobytes()).decode("ascii")}


def extent(X: np.ndarray, margin: float = 0.25) -> list[float]:
    """``[x_min, x_max, y_min, y_max]``: the data's box, widened by ``margin`` of its larger
    side on every side (the same scale on both axes)."""
    low, high = X.min(axis=0), X.max(axis=0)
    centre, half = (low + high) / 2, max(float(np.max(high - low)), 1e-9) * (0.5 + margin)
    return [float(centre[0] - half), float(centre[0] + half),
            float(centre[1] - half), float(centre[1] + half)]


def grid(box: list[float], resolution: int = RESOLUTION) -> np.ndarray:
    """The (R², 2) points of an R x R grid over ``box`` (R = ``resolution``), row by row from
    the top (y decreasing): where a boundary is drawn."""
    xs = np.linspace(box[0], box[1], resolution)
    ys = np.linspace(box[3], box[2], resolution)
    gx, gy = np.meshgrid(xs, ys)
    return np.column_stack([gx.ravel(), gy.ravel()])


def positions(like: Network) -> list[str]:
    """Where the page shows a network's signal: after each layer, and after each residual
    block as a whole ("block 2 (8)"); the last is the output."""
    names, layers, blocks = [], 0, 0
    for block in like.blocks:
        if isinstance(block, Residual):
            blocks += 1
            names.append(f"block {blocks} ({block.width})")
        else:
            layers += 1
            names.append(f"layer {layers} ({block.n_out})")
    names[-1] = f"output ({like.n_out})"
    return names


def block_parameters(like: Network) -> list[list]:
    """Where ``like``'s parameters that are no dense layer's sit in ``pack(like)``, for the
    page's close-up: per residual block, its LayerNorm's gain γ and bias β and its trained α,
    each as ``[name, offset, size]``."""
    starts, rows = offsets(like), []
    for number, block in enumerate(like.residuals, 1):
        if block.norm is not None:
            rows += [[f"block {number}: LayerNorm γ", starts[id(block.norm.gain)],
                      block.norm.gain.size],
                     [f"block {number}: LayerNorm β", starts[id(block.norm.bias)],
                      block.norm.bias.size]]
        if block.train_scale:
            rows.append([f"block {number}: α", starts[id(block.scale)], block.scale.size])
    return rows


def outputs_at(theta: np.ndarray, like: Network, X: np.ndarray):
    """The output of each of :func:`positions` on X, (S, N, width), for the S networks like
    ``like`` of ``theta`` (S, P), in chunks of seeds of about :data:`CHUNK_BYTES`; yields
    (first row, [outputs per position])."""
    widths = [like.n_in, *(layer.n_out for layer in like.layers)]
    alive = LAYER_ARRAYS * (len(like.layers) + len(like.residuals))  # every position's kept
    step = max(1, CHUNK_BYTES // (8 * alive * len(X) * max(widths)))
    for start in range(0, len(theta), step):
        part = theta[start:start + step]
        with np.errstate(all="ignore"):  # a diverged network's outputs overflow to NaN
            if not like.residuals:
                yield start, list(layer_outputs_many(part, layout(like).table,
                                                     [layer.activation for layer in like.layers],
                                                     X))
                continue
            blocks, _ = described(like, part, np.empty_like(part))
            outputs, found = np.broadcast_to(X, (len(part), *X.shape)), []
            for block in blocks:
                outputs = block.forward(outputs)
                found.append(outputs)
            yield start, found


def boundaries(theta: np.ndarray, like: Network, box: list[float]) -> np.ndarray:
    """Each network's output on the grid over ``box``, as bytes (S, R, R): 0-250 for outputs
    0-1, :data:`NOT_FINITE` where it is not finite."""
    points = grid(box)
    result = np.empty((len(theta), RESOLUTION * RESOLUTION), dtype=np.uint8)
    for start, per_position in outputs_at(theta, like, points):
        output = per_position[-1][..., 0]
        scaled = np.rint(np.clip(np.nan_to_num(output, nan=0.0), 0.0, 1.0) * 250)
        result[start:start + len(output)] = np.where(np.isfinite(output), scaled, NOT_FINITE)
    return result.reshape(len(theta), RESOLUTION, RESOLUTION)


def second_moments(theta: np.ndarray, like: Network, X: np.ndarray) -> np.ndarray:
    """(S, positions): each network's second moment E[x²] over the samples and units after
    each of :func:`positions`, on X."""
    moments = np.empty((len(theta), len(positions(like))))
    for start, per_position in outputs_at(theta, like, X):
        for index, outputs in enumerate(per_position):
            with np.errstate(all="ignore"):
                moments[start:start + len(outputs), index] = np.mean(outputs ** 2, axis=(1, 2))
    return moments


def predicted_moments(like: Network, X: np.ndarray) -> list[float | None]:
    """E[x²] after each of :func:`positions` as :mod:`tinynet.diagnostics` predicts it for
    ``like`` at initialization on X, its mean over initializations: a chain's from the inputs
    through every layer (:func:`~tinynet.diagnostics.propagate`; a softmax output's
    excepted), a residual stack's after each block from the first block's measured input
    (:func:`~tinynet.diagnostics.stream`); None where it predicts nothing (the layers around
    the blocks, a softmax output), NaN where the theory divides by 0."""
    predicted: list[float | None] = [None] * len(like.blocks)
    if not like.residuals:
        layers = like.layers[:-1] if like.layers[-1].activation.over_units else like.layers
        if layers:
            chain = like if layers is like.layers else Network(
                [copy.deepcopy(layer) for layer in layers],
                parameters=[array for layer in layers for array in (layer.W, layer.b)])
            predicted[:len(layers)] = [signal.a.predicted
                                       for signal in propagate(chain, X).layers]
        return predicted
    first = like.blocks.index(like.residuals[0])
    for index, position in enumerate(stream([like], X).positions[1:]):
        predicted[first + index] = position.x.predicted
    return predicted


def _mean_and_quartiles(values: np.ndarray) -> dict:
    """The mean of ``values`` (what the theory predicts; inf or NaN if one is) and the
    quartiles of the finite ones (None if none is)."""
    with np.errstate(all="ignore"):
        return {"mean": float(np.mean(values)), "quartiles": _quartiles(values)}


def _quartiles(values: np.ndarray) -> list[float] | None:
    values = values[np.isfinite(values)]
    return None if len(values) == 0 else [float(q) for q in np.percentile(values, [25, 50, 75])]


def _arm(result: ArmResult, like: Network, setup: Setup,
         X: np.ndarray) -> tuple[dict, np.ndarray]:
    """What the page shows of every arm: its counts, rate and interval, failures, seconds,
    the second moments at initialization on X (per position, the mean and quartiles over the
    seeds, and the prediction), every seed's outcome and loss curve; and the seeds' initial
    parameters (S, P), drawn again (bit for bit the study's, which it does not keep)."""
    initial = draw(like, setup.seed_range)
    moments = second_moments(initial, like, X)
    return {
        "name": result.arm.name, "successes": result.successes, "n": result.n,
        "rate": result.rate, "interval": list(result.interval), "failures": result.failures,
        "seconds": result.seconds,
        "moments": [_mean_and_quartiles(column) for column in moments.T],
        "predicted_moments": predicted_moments(like, X),
        "outcomes": [str(kind) for kind in result.outcomes],
        "loss": packed(result.ensemble.loss, "float32"),
    }, initial


def _boundary_arm(result: ArmResult, like: Network, setup: Setup, X: np.ndarray,
                  y: np.ndarray, box: list[float]) -> dict:
    """An arm on a 2-D task: :func:`_arm`, with every seed's epoch of success, decision
    boundary, and weights as initialised and as trained. On a task judged by its accuracy
    (below 100 %: the drawn data sets) also every seed's training accuracy and their
    quartiles, and the failures counted as below the criterion or diverged, not by how many
    points are wrong (XOR's four)."""
    shown, initial = _arm(result, like, setup, X)
    shown = {**shown, "solved_epoch_quartiles": result.solved_epoch_quartiles,
             "solved_epochs": solved_epochs(result.ensemble, y).tolist(),
             "boundaries": packed(boundaries(result.trained, like, box), "uint8"),
             "initial": packed(initial, "float32"),
             "trained": packed(result.trained, "float32")}
    if setup.task.criterion >= 1.0:
        return shown
    accuracy = np.empty(len(result.trained))
    for start, per_position in outputs_at(result.trained, like, X):
        accuracy[start:start + len(per_position[-1])] = scores(
            per_position[-1], y, get_loss(result.arm.loss), THRESHOLD)[1]
    failed = [kind not in ("solved", "diverged") for kind in shown["outcomes"]]
    return {**shown, "train_accuracy": packed(accuracy, "float32"),
            "accuracy_quartiles": [float(q) for q in np.percentile(accuracy, [25, 50, 75])],
            "outcomes": ["below_criterion" if wrong else kind
                         for kind, wrong in zip(shown["outcomes"], failed)],
            "failures": {"below_criterion": sum(failed),
                         "diverged": result.failures["diverged"]}}


def _failure_labels(setup: Setup) -> dict[str, list[str]]:
    """The failures' column labels and meanings: by wrong points where every point must be
    right (XOR), else below the task's accuracy criterion or diverged."""
    if setup.task.criterion >= 1.0:
        return {kind: list(text) for kind, text in FAILURES.items()}
    criterion = setup.task.criterion
    return {"below_criterion": [f"below {criterion:.0%}",
                                f"training accuracy below {criterion:.0%}"],
            "diverged": list(FAILURES["diverged"])}


def confusions(theta: np.ndarray, like: Network, X: np.ndarray, labels: np.ndarray,
               classes: int) -> np.ndarray:
    """Each network's confusion matrix on X (S, classes, classes), uint16: row the true
    class, column the class it gave (its most probable output; a sample whose outputs are
    not finite is counted in no column)."""
    found = np.zeros((len(theta), classes * classes), dtype=np.int64)
    for start, per_position in outputs_at(theta, like, X):
        outputs = per_position[-1]
        cells = labels * classes + np.argmax(outputs, axis=-1)  # (seeds, samples)
        cells = np.where(np.all(np.isfinite(outputs), axis=-1), cells, classes * classes)
        for row, seed_cells in enumerate(cells):  # the last bin: not finite, dropped
            found[start + row] = np.bincount(seed_cells, minlength=classes * classes + 1)[:-1]
    return found.astype(np.uint16).reshape(len(theta), classes, classes)


def _test_arm(result: ArmResult, like: Network, setup: Setup, X: np.ndarray,
              X_test: np.ndarray, y_test: np.ndarray) -> dict:
    """An arm on a task with a test set: :func:`_arm`, with every seed's test accuracy,
    test-accuracy curve and confusion matrix on the test set, and the quartiles of the test
    accuracy."""
    shown, _ = _arm(result, like, setup, X)
    scores = np.asarray(result.test_accuracy)
    return {**shown, "failures": {"below_criterion": result.n - result.successes
                                                     - result.diverged,
                                  "diverged": result.diverged},
            "accuracy_quartiles": [float(q) for q in np.percentile(scores, [25, 50, 75])],
            "test_accuracy": packed(scores, "float32"),
            "test_curve": packed(result.ensemble.evaluation.test_accuracy, "float32"),
            "confusion": packed(confusions(result.trained, like, X_test, y_test,
                                           setup.task.classes), "uint16")}


def _describe(setup: Setup, arm: Arm) -> str:
    """The setup in words, and the arms' residual blocks if they have them (both arms of a
    playground study have the same)."""
    if arm.residual is None:
        return setup.describe()
    norm = f", {arm.norm}-norm" if arm.norm else ""
    own = {"fixup": "Fixup's rule draws the blocks' layers and the output layer starts at 0; "
                    "the initializer draws the first layer",
           "deepnet": "DeepNet's rule draws the blocks' layers; the initializer draws the "
                      "first and the output layer"}
    rule = f" ({own[arm.residual]})" if arm.residual in own else ""
    return (f"{setup.describe()}; the hidden layers after the first in {arm.residual} "
            f"residual blocks of {arm.branch} layer{'s' if arm.branch > 1 else ''}{norm}{rule}")


def study_payload(study: Study, fields: dict[str, str], record_every: int) -> dict:
    """What the page shows of ``study``, trained from the form's ``fields``, which recorded
    the loss every ``record_every`` epochs: JSON-ready. The numbers the page does not show
    are in ``"study"``, as :meth:`~tinynet.xor.Study.to_dict` writes them. On a 2-D task every
    seed's decision boundary (``"kind": "boundaries"``); on a task with a test set (the
    digits, MNIST-1D: ``"classes"``) every seed's test accuracy and confusion matrix."""
    setup = study.setup
    X, y = setup.task.training_data()
    likes = [build_network(setup, result.arm, setup.first_seed) for result in study.results]
    differ = []
    if len(likes) == 2:
        a, b = (result.solved for result in study.results)
        differ = np.flatnonzero(a != b).tolist()
    shared = {
        "fields": fields, "describe": _describe(setup, study.results[0].arm),
        "sizes": setup.sizes,
        "positions": positions(likes[0]),
        "first_seed": setup.first_seed, "seeds": setup.seeds,
        "record_every": record_every, "loss_name": study.results[0].arm.loss,
        "differ": differ,
        "verdict": study.comparisons[0].verdict(setup.seeds) if study.comparisons else None,
        "study": study.to_dict(),
    }
    if setup.task.classification:
        X_test, y_test = setup.task.held_out_data()
        criterion = setup.task.criterion
        return {**shared, "kind": "classes", "classes": setup.task.classes,
                "criterion": criterion,
                "evaluated": study.results[0].ensemble.evaluation.epochs.tolist(),
                "failure_labels": {"below_criterion": [f"at most {criterion:.0%}",
                                                       f"test accuracy at most {criterion:.0%}"],
                                   "diverged": list(FAILURES["diverged"])},
                "arms": [_test_arm(result, like, setup, X, X_test, y_test)
                         for result, like in zip(study.results, likes)]}
    box = extent(X)
    return {**shared, "kind": "boundaries", "table": layer_rows(likes[0]).table.tolist(),
            "block_parameters": block_parameters(likes[0]),
            "data": {"X": X.tolist(), "y": y.ravel().tolist()},
            "grid": {"extent": box, "resolution": RESOLUTION, "not_finite": NOT_FINITE},
            "failure_labels": _failure_labels(setup),
            "arms": [_boundary_arm(result, like, setup, X, y, box)
                     for result, like in zip(study.results, likes)]}
