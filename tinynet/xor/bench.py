"""Running a study: every arm trains the setup's network from each of its seeds, all seeds of
an arm in one ensemble call, and the arms are then compared."""

from __future__ import annotations

import sys
import time
from collections.abc import Sequence

from .. import data
from ..packing import stack
from ..training import fit_ensemble
from ..validation import check_instance, check_sequence
from .arms import DEFAULT_SETUP, Arm, XorSetup, build_network
from .outcome import THRESHOLD, ArmResult
from .report import Study, compare

__all__ = ["run_study"]


def run_study(arms: Sequence[Arm], setup: XorSetup = DEFAULT_SETUP,
              progress: bool | None = None, record_every: int | None = None) -> Study:
    """Train every arm on ``setup.seeds`` seeds and compare the arms.

    ``progress`` prints a line per arm to stderr; by default it does once the study has run
    for more than a second. ``record_every=k`` keeps every seed's loss every k epochs
    (``study.result(arm).ensemble.loss``: 8 bytes per seed and record; off by default). The
    trained parameters are kept either way (``study.network(arm, seed)``).
    """
    arms = check_sequence("arms", arms, Arm, "tinynet.xor Arm")
    check_instance("setup", setup, XorSetup, "an XorSetup")
    X, y = data.xor()
    seeds = range(setup.first_seed, setup.first_seed + setup.seeds)
    started = time.perf_counter()
    results = []
    for index, arm in enumerate(arms):
        nets = [build_network(setup, arm, seed) for seed in seeds]
        arm_started = time.perf_counter()
        outcome = fit_ensemble(nets, X, y, epochs=setup.epochs, lr=setup.lr,
                               shuffle=arm.shuffle, update=arm.update, backend=setup.backend,
                               threshold=THRESHOLD, record_every=record_every)
        seconds = time.perf_counter() - arm_started
        results.append(ArmResult.from_ensemble(arm, outcome, y,
                                               [layer.init_std() for layer in nets[0].layers],
                                               seconds, trained=stack(nets)))
        if progress or (progress is None and time.perf_counter() - started > 1.0):
            print(f"[{index + 1}/{len(arms)}] {arm.name}: {results[-1].successes}/"
                  f"{setup.seeds} solved ({seconds:.1f} s)", file=sys.stderr)
    return Study(setup, results, compare(results))
