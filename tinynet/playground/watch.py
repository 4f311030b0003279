"""One network of a study, watched: a seed trained again for A and B with the study's own
settings, its parameters recorded after about :data:`SNAPSHOTS` epochs
(:func:`tinynet.snapshots.fit_snapshots`, the same backend and kernels as the study, so the
last snapshot is the study's trained network bit for bit), and at each snapshot what the page
draws as TensorFlow Playground does: every hidden unit's output over the plane as a small map,
the weights, the network's output map, and the loss and accuracy on the training data.

The snapshots come thick at the start, where training changes the network most: epochs 0,
then log-spaced to the last (:func:`snapshot_epochs`). A unit's map is
:data:`UNIT_RESOLUTION` ² bytes, its output scaled by its own largest size on the map at that
snapshot (0-250, 125 for 0; 255 where not finite) so that its shape shows however large it
is, with that scale sent beside it; the output map is the study's boundary
(:func:`~.payload.boundaries`). Every number comes from the library's forward pass
(:func:`~.payload.outputs_at`); the page only draws.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..evaluation import scores
from ..losses import get_loss
from ..packing import draw, layer_rows
from ..snapshots import fit_snapshots
from ..validation import check_seed
from ..xor import build_network
from ..xor.outcome import THRESHOLD
from .form import Form, FormError
from .payload import NOT_FINITE, RESOLUTION, boundaries, extent, grid, outputs_at, packed, \
    positions

__all__ = ["SNAPSHOTS", "UNIT_RESOLUTION", "MAX_UNITS", "Watch", "snapshot_epochs",
           "unit_maps", "widths", "watch_payload"]

SNAPSHOTS = 40
"""About how many snapshots of a watched seed's training the page replays."""

UNIT_RESOLUTION = 24
"""Grid points per side of a hidden unit's map: 576 bytes a unit and snapshot."""

MAX_UNITS = 16
"""The most units of a layer the page draws (TensorFlow Playground draws 8); the rest are
counted."""


@dataclass(frozen=True)
class Watch:
    """A request to watch ``seed`` of the study of ``form``."""

    form: Form
    seed: int

    def __post_init__(self) -> None:
        """Raise :class:`~.form.FormError` naming ``seed`` or ``data`` if it cannot be."""
        try:
            check_seed("seed", self.seed)
        except (TypeError, ValueError) as error:
            raise FormError({"seed": str(error)}) from None
        task = self.form.setup.task
        if task.classification:
            raise FormError({"data": f"a seed is watched on a 2-D data set, whose plane the "
                                     f"page draws; data set {task.name!r} has {task.classes} "
                                     "classes"})


def snapshot_epochs(epochs: int, count: int = SNAPSHOTS) -> list[int]:
    """0 and about ``count`` - 1 epochs log-spaced from 1 to ``epochs`` (distinct, rounded;
    fewer for a short run), ``epochs`` last."""
    spaced = np.rint(np.geomspace(1, epochs, max(1, count - 1))).astype(int)
    return [0, *sorted(set(spaced.tolist()) | {epochs})]


def unit_maps(theta: np.ndarray, like, box: list[float]) -> tuple[list[np.ndarray],
                                                                   list[np.ndarray]]:
    """Each hidden position's first :data:`MAX_UNITS` units over a grid of ``box``, for the
    T networks like ``like`` of ``theta`` (T, P): per hidden position, bytes (T, units, R, R)
    (R = :data:`UNIT_RESOLUTION`; 125 + 125 · output / scale, 255 where not finite) and the
    scales (T, units), each map's largest finite absolute output (1 where it has none)."""
    points, R = grid(box, UNIT_RESOLUTION), UNIT_RESOLUTION
    hidden = len(positions(like)) - 1
    maps: list[np.ndarray] = []
    scales: list[np.ndarray] = []
    for _, per_position in outputs_at(theta, like, points):  # (T, R², width) each
        for outputs in per_position[:hidden]:
            shown = np.moveaxis(outputs[..., :MAX_UNITS], -1, 1)  # (T, units, R²)
            finite = np.isfinite(shown)
            size = np.max(np.abs(np.where(finite, shown, 0.0)), axis=-1)
            size = np.where(size > 0, size, 1.0)
            scaled = np.rint(125 + 125 * np.where(finite, shown, 0.0) / size[..., None])
            maps.append(np.where(finite, scaled, NOT_FINITE).astype(np.uint8)
                        .reshape(*shown.shape[:2], R, R))
            scales.append(size)
    if len(maps) > hidden:  # in chunks of networks: join each position's
        maps = [np.concatenate(maps[k::hidden]) for k in range(hidden)]
        scales = [np.concatenate(scales[k::hidden]) for k in range(hidden)]
    return maps, scales


def widths(like) -> list[int]:
    """How many units each of :func:`~.payload.positions` has, the inputs first."""
    _, per_position = next(outputs_at(draw(like, [0]), like, np.zeros((1, like.n_in))))
    return [like.n_in, *(outputs.shape[-1] for outputs in per_position)]


def _watched_arm(form: Form, arm, seed: int, epochs: list[int], box: list[float],
                 progress) -> dict:
    """One arm's snapshots of ``seed``, trained exactly as the study trained it
    (:func:`tinynet.xor.blocks.train`'s call, on this seed alone)."""
    setup = form.setup.for_arm(arm)
    like = build_network(form.setup, arm, seed)
    X, y = setup.task.training_data()
    shots = fit_snapshots(like, draw(like, [seed]), X, y, seeds=[seed], at=epochs,
                          epochs=setup.epochs, lr=setup.lr, batch_size=setup.batch_size,
                          shuffle=arm.shuffle, update=arm.update, backend=setup.backend,
                          threshold=THRESHOLD, loss=arm.loss, optimizer=arm.optimizer,
                          warmup=setup.warmup, decay=setup.decay, progress=progress)
    theta = shots.theta[:, 0]  # (T, P): one seed
    losses, accuracies = np.empty(len(theta)), np.empty(len(theta))
    for start, per_position in outputs_at(theta, like, X):
        rows = slice(start, start + len(per_position[-1]))
        losses[rows], accuracies[rows] = scores(per_position[-1], y, get_loss(arm.loss),
                                                THRESHOLD)
    maps, sizes = unit_maps(theta, like, box)
    return {"name": arm.name, "theta": packed(theta, "float64"),
            "loss": [float(v) if math.isfinite(v) else None for v in losses],
            "accuracy": [float(v) for v in accuracies],
            "output": packed(boundaries(theta, like, box), "uint8"),
            "units": [packed(m, "uint8") for m in maps],
            "unit_scales": [packed(s, "float32") for s in sizes],
            "diverged_epoch": int(shots.result.diverged_epoch[0])}


def watch_payload(watch: Watch, progress=None) -> dict:
    """What the page replays of ``watch``'s seed: the snapshots' ``epochs``, the layout
    (its positions, each layer's rows of :func:`tinynet.packing.layer_rows`, whether it is a
    chain whose dense layers join consecutive positions), the data and the grids' box (the
    study's), and per arm every snapshot's parameters (float64, as packed), loss, accuracy,
    output map and unit maps. ``progress(arm, epochs_done)`` after each chunk of training."""
    form, seed = watch.form, watch.seed
    setup = form.setup
    X, y = setup.task.training_data()
    box = extent(X)
    epochs = snapshot_epochs(setup.epochs)
    like = build_network(setup, form.arms[0], seed)
    arms = []
    for index, arm in enumerate(form.arms):
        told = None if progress is None else (lambda done, a=index: progress(a, done))
        arms.append(_watched_arm(form, arm, seed, epochs, box, told))
    return {"kind": "watch", "seed": seed, "epochs": epochs, "fields": form.fields,
            "loss_name": form.arms[0].loss, "widths": widths(like),
            "positions": positions(like), "chain": not like.residuals,
            "table": layer_rows(like).table.tolist(), "max_units": MAX_UNITS,
            "data": {"X": X.tolist(), "y": y.ravel().tolist()},
            "grid": {"extent": box, "resolution": RESOLUTION,
                     "unit_resolution": UNIT_RESOLUTION, "not_finite": NOT_FINITE},
            "arms": arms}
