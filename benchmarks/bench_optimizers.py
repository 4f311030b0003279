"""Every optimizer and loss at SGD's pace: the compiled ensemble's time per arm, against its own
MSE + SGD arm and against the same Adam job written plainly in NumPy.

    python benchmarks/bench_optimizers.py --readme docs/performance.md   # about four minutes

The job: 1,000 seeds of 2-2-2-1 and of 2-8-1 (hidden layers LeakyReLU(0.01), 99mlp's, or tanh;
a sigmoid output) on XOR's four points in data order, per-sample steps at lr 0.01 for 2,000
epochs, each seed's network from ``tinynet.mlp(sizes, seed=s)``. The arms: MSE + SGD (the
notes' job, the yardstick), MSE + momentum 0.9, BCE + SGD, MSE + Adam (PyTorch's defaults),
each trained by ``tinynet.fit_packed`` (warm kernels: every arm runs once untimed first). The
arms of one network run one after another, round after round (``ROUNDS``), and the table gives
each arm's median and its time over the MSE + SGD arm's.

The bars for Adam: :func:`numpy_adam`, the same Adam job written plainly in NumPy, vectorised
over the seeds (every member's step in one array operation), no JIT, one BLAS thread; and, for
LeakyReLU hidden layers, the hand-written Numba SIMD loops of the SGD and the Adam job
(``handwritten.py``, ``handwritten_adam.py``: the bias corrections once per step, math.exp),
whose ratio is what Adam's per-parameter work (a square root and two divisions per parameter,
in PyTorch's order of operations) costs on this machine when nothing else is in the way. Each
is checked to train what tinynet trains (to 1e-9, after 20 epochs) before anything is timed,
and timed once per round beside the arms.

Thread settings: numba threads 2 (every core of the 2-core machine this was measured on), BLAS
threads 1; the CPU's name, the vector width Numba compiled for and the load average are
printed with the table. Results: benchmarks/results/bench_optimizers.json and .md, and with
``--readme`` between the optimizers markers of docs/performance.md (``tests/test_readme.py``).
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import time
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numba  # noqa: E402
import numpy as np  # noqa: E402

import tinynet  # noqa: E402
from tinynet.packing import draw, layout  # noqa: E402

from handwritten import train as hand_sgd  # noqa: E402
from handwritten_adam import train as hand_adam  # noqa: E402
from machine import describe  # noqa: E402
from readme_block import publish  # noqa: E402

README_START, README_END = "<!-- optimizers: start -->", "<!-- optimizers: end -->"

LAYOUTS = {"2-2-2-1": [2, 2, 2, 1], "2-8-1": [2, 8, 1]}
HIDDEN = {"LeakyReLU(0.01)": "leaky_relu", "tanh": "tanh"}
ARMS = {"MSE + SGD": ("mse", "sgd"), "MSE + momentum 0.9": ("mse", "momentum"),
        "BCE + SGD": ("bce", "sgd"), "MSE + Adam": ("mse", "adam")}
SEEDS = 1_000
EPOCHS = 2_000
ROUNDS = 3
LR = 0.01


def tinynet_run(like, theta, X, y, epochs, loss, optimizer):
    trained = theta.copy()
    tinynet.fit_packed(like, trained, X, y, seeds=range(len(theta)), epochs=epochs, lr=LR,
                       shuffle=False, loss=loss, optimizer=optimizer)
    return trained


def _activation(name, z):
    """(φ(z), φ'(z)) as tinynet defines them, in NumPy."""
    if name == "leaky_relu":
        return np.where(z > 0, z, 0.01 * z), np.where(z > 0, 1.0, 0.01)
    if name == "tanh":
        value = np.tanh(z)
        return value, 1.0 - value * value
    e = np.exp(-np.abs(z))                             # the sigmoid output
    value = np.where(z >= 0, 1.0, e) / (1.0 + e)
    return value, value * (1.0 - value)


def numpy_adam(like, theta, X, y, epochs, hidden, beta1=0.9, beta2=0.999, eps=1e-8):
    """The Adam job written plainly in NumPy: theta (S, P) packed as tinynet packs it, every
    member's per-sample step at once (arrays (S, ...)), samples in data order; returns the
    trained (S, P)."""
    table = layout(like).table
    S = len(theta)
    weights = [theta[:, w:w + n_out * n_in].reshape(S, n_out, n_in).copy()
               for n_in, n_out, w, _ in table]
    biases = [theta[:, b:b + n_out].copy() for _, n_out, _, b in table]
    params = weights + biases
    sizes = [int(table[0, 0])] + [int(n) for n in table[:, 1]]
    layers = len(sizes) - 1
    m = [np.zeros_like(p) for p in params]
    v = [np.zeros_like(p) for p in params]
    t = 0
    for _ in range(epochs):
        for sample, target in zip(X, y):
            a = [np.broadcast_to(sample, (S, sizes[0]))]
            slopes = []
            for k in range(layers):
                z = np.einsum("soi,si->so", params[k], a[-1]) + params[layers + k]
                value, slope = _activation(hidden if k < layers - 1 else "sigmoid", z)
                a.append(value)
                slopes.append(slope)
            delta = 2.0 * (a[-1] - target)
            grads = [None] * (2 * layers)
            for k in range(layers - 1, -1, -1):
                delta = delta * slopes[k]
                grads[k] = delta[:, :, None] * a[k][:, None, :]
                grads[layers + k] = delta
                if k > 0:
                    delta = np.einsum("so,soi->si", delta, params[k])
            t += 1
            for p, g, m_p, v_p in zip(params, grads, m, v):
                m_p *= beta1
                m_p += (1.0 - beta1) * g
                v_p *= beta2
                v_p += (1.0 - beta2) * g * g
                step_size = LR / (1.0 - beta1 ** t)
                p -= step_size * (m_p / (np.sqrt(v_p) / np.sqrt(1.0 - beta2 ** t) + eps))
    trained = np.empty_like(theta)
    for (n_in, n_out, w, b), W, bias in zip(table, weights, biases):
        trained[:, w:w + n_out * n_in] = W.reshape(S, -1)
        trained[:, b:b + n_out] = bias
    return trained


def rows_for(name, sizes, hidden_name, hidden, X, y) -> list[dict]:
    like = tinynet.mlp(sizes, activation=hidden, seed=0)
    theta = draw(like, range(SEEDS))
    runs = {arm: (lambda epochs, lo=lo, op=op: tinynet_run(like, theta, X, y, epochs, lo, op))
            for arm, (lo, op) in ARMS.items()}
    for run in runs.values():
        run(20)                                             # compile, warm
    np.testing.assert_allclose(numpy_adam(like, theta, X, y, 20, hidden),
                               runs["MSE + Adam"](20), rtol=0, atol=1e-9)
    runs["NumPy Adam loop"] = lambda epochs: numpy_adam(like, theta, X, y, epochs, hidden)
    if hidden == "leaky_relu":                  # the hand-written Numba loops: the floor
        table = layout(like).table
        np.testing.assert_allclose(hand_adam(theta, table, X, y, 20, LR),
                                   runs["MSE + Adam"](20), rtol=0, atol=1e-9)
        runs["hand-written SGD loop"] = lambda epochs: hand_sgd(theta, table, X, y, epochs, LR)
        runs["hand-written Adam loop"] = lambda epochs: hand_adam(theta, table, X, y, epochs,
                                                                  LR)
    times = {arm: [] for arm in runs}
    for _ in range(ROUNDS):
        for arm, run in runs.items():
            start = time.perf_counter()
            run(EPOCHS)
            times[arm].append(time.perf_counter() - start)
    base = statistics.median(times["MSE + SGD"])
    adam = statistics.median(times["MSE + Adam"])
    rows = []
    for arm, kept in times.items():
        median = statistics.median(kept)
        over = median / statistics.median(times["hand-written SGD loop"]) \
            if arm.startswith("hand-written") else median / base
        rows.append({"layout": name, "hidden": hidden_name, "arm": arm, "median_s": median,
                     "times_s": kept, "over_sgd": over,
                     "numpy_over_tinynet_adam": median / adam if arm == "NumPy Adam loop"
                     else None})
        print(rows[-1], file=sys.stderr)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--readme", type=Path, default=None,
                        help="also put the table between the optimizers markers of this page")
    readme = parser.parse_args().readme
    numba.set_num_threads(min(2, numba.config.NUMBA_NUM_THREADS))
    X, y = tinynet.data.xor()
    load_start = os.getloadavg()[0]
    rows = [row for name, sizes in LAYOUTS.items() for hidden_name, hidden in HIDDEN.items()
            for row in rows_for(name, sizes, hidden_name, hidden, X, y)]
    machine = describe()
    lines = [f"Every arm's time per job, compiled ensembles of {SEEDS:,} seeds x {EPOCHS:,} "
             f"epochs of XOR (data order, per-sample steps, lr {LR}), warm kernels, the arms of "
             f"a network interleaved over {ROUNDS} rounds, median; the NumPy Adam loop is the "
             f"same Adam job written plainly in NumPy, vectorised over the seeds. {machine}, "
             f"{numba.get_num_threads()} numba threads, 1 BLAS thread; Python "
             f"{platform.python_version()}, numba {numba.__version__}; 1-minute load average "
             f"{load_start:.1f} at the start and {os.getloadavg()[0]:.1f} at the end.", "",
             "| layout | hidden | arm | median (s) | x MSE + SGD |",
             "| --- | --- | --- | --- | --- |"]
    for r in rows:
        over = f"{r['over_sgd']:.2f}x" + (
            f" (tinynet's Adam {r['numpy_over_tinynet_adam']:.1f}x as fast)"
            if r["numpy_over_tinynet_adam"] else " (of the hand-written SGD loop)"
            if r["arm"] == "hand-written Adam loop" else "")
        lines.append(f"| {r['layout']} | {r['hidden']} | {r['arm']} | {r['median_s']:.3f} | "
                     f"{over} |")
    publish("bench_optimizers", {"rows": rows, "machine": machine, "load": load_start},
            "\n".join(lines) + "\n", readme, README_START, README_END)


if __name__ == "__main__":
    main()
