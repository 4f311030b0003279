"""einsum against matmul for the NumPy backend's dense layer, with and without a members axis.

    python benchmarks/bench_dense_formulation.py             # two full runs, about 3 minutes
    python benchmarks/bench_dense_formulation.py --runs 1

The NumPy backend trains S networks at once: X (S, B, n_in), W (S, n_out, n_in), b (S, n_out);
one network (S = 1 here) has no members axis: X (B, n_in), W (n_out, n_in), b (n_out,).
Both formulations below work for either, unchanged. With a members axis, each case runs in
both memory orders: members slowest (C order, each member's matrices contiguous, as NumPy
makes arrays) and members fastest (Fortran order, member s's number next to member s + 1's,
as :mod:`tinynet.reference` stores per-sample SGD of many small networks):

    forward:  Z = X Wᵀ + b, A = φ(Z)
    backward: dZ = dA ⊙ φ'(Z); dW = dZᵀ X (into dW); db = Σ_rows dZ (into db); dX = dZ W

Standalone on purpose (tinynet's core is not imported). The two formulations are checked to
agree (rtol 1e-13) before anything is timed. Each time is the best of several repeats of a loop
sized by ``timeit.Timer.autorange``, the two formulations alternating repeat by repeat so that
a busy machine slows both alike. BLAS/OpenMP threads are 1 (set before NumPy is imported).
Results go to benchmarks/results/bench_dense_formulation.json.
"""

from __future__ import annotations

import os

for _variable in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_variable] = "1"

import argparse  # noqa: E402
import json  # noqa: E402
import platform  # noqa: E402
import timeit  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

ALPHA = 0.01
MEMBERS = (1, 100, 1000)          # 1: 2-D arrays, no members axis
ORDERS = {"C": "members slowest", "F": "members fastest"}
SIZES = (2, 8, 64)                # n_in = n_out
BATCHES = (1, 4)
NETWORK = (2, 2, 2, 1)            # leaky_relu, leaky_relu, sigmoid
RTOL = 1e-13


# --- activations ---------------------------------------------------------------------------

def leaky_relu(z):
    return np.where(z > 0, z, ALPHA * z)


def leaky_relu_derivative(z, a):
    return np.where(z > 0, 1.0, ALPHA)


def sigmoid(z):
    return 1.0 / (1.0 + np.exp(-z))


def sigmoid_derivative(z, a):
    return a * (1.0 - a)


# --- the two formulations ------------------------------------------------------------------

def forward_einsum(X, W, b, phi):
    Z = np.einsum("...bi,...ji->...bj", X, W) + b[..., None, :]
    return Z, phi(Z)


def backward_einsum(dA, Z, A, X, W, dW, db, phi_derivative):
    dZ = dA * phi_derivative(Z, A)
    np.einsum("...bj,...bi->...ji", dZ, X, out=dW)
    np.sum(dZ, axis=-2, out=db)
    return np.einsum("...bj,...ji->...bi", dZ, W)


def forward_matmul(X, W, b, phi):
    Z = X @ np.swapaxes(W, -1, -2) + b[..., None, :]
    return Z, phi(Z)


def backward_matmul(dA, Z, A, X, W, dW, db, phi_derivative):
    dZ = dA * phi_derivative(Z, A)
    np.matmul(np.swapaxes(dZ, -1, -2), X, out=dW)
    np.sum(dZ, axis=-2, out=db)
    return dZ @ W


FORMULATIONS = {"einsum": (forward_einsum, backward_einsum),
                "matmul": (forward_matmul, backward_matmul)}


# --- the two workloads ---------------------------------------------------------------------

def members_shape(members, *shape):
    """``shape`` with a leading members axis, except for one network (S = 1: plain 2-D)."""
    return shape if members == 1 else (members, *shape)


def orders(members):
    """The memory orders to run: both with a members axis, C alone without one."""
    return ORDERS if members > 1 else {"C": ORDERS["C"]}


def normal(rng, shape, order):
    return np.asarray(rng.normal(size=shape), order=order)


def dense_case(members, size, batch, order="C", seed=0):
    rng = np.random.default_rng(seed)
    X = normal(rng, members_shape(members, batch, size), order)
    W = normal(rng, members_shape(members, size, size), order)
    b = normal(rng, members_shape(members, size), order)
    dA = normal(rng, members_shape(members, batch, size), order)
    return X, W, b, dA


def dense_step(name, X, W, b, dA, dW, db):
    """One forward and backward pass of a leaky_relu dense layer."""
    forward, backward = FORMULATIONS[name]
    Z, A = forward(X, W, b, leaky_relu)
    dX = backward(dA, Z, A, X, W, dW, db, leaky_relu_derivative)
    return Z, A, dX


def network_case(members, order="C", seed=0):
    rng = np.random.default_rng(seed)
    params = []
    for n_in, n_out in zip(NETWORK[:-1], NETWORK[1:]):
        W = normal(rng, members_shape(members, n_out, n_in), order)
        b = normal(rng, members_shape(members, n_out), order)
        params.append((W, b, np.empty_like(W), np.empty_like(b)))
    x = np.asarray(rng.uniform(size=members_shape(members, 1, NETWORK[0])), order=order)
    y = rng.integers(0, 2, size=members_shape(members, 1, NETWORK[-1])).astype(np.float64)
    return params, x, np.asarray(y, order=order)


def sgd_step(name, params, x, y, lr=0.5):
    """One per-sample SGD step (batch 1, mean squared error) of every member at once."""
    forward, backward = FORMULATIONS[name]
    activations = [(leaky_relu, leaky_relu_derivative)] * (len(params) - 1) + \
        [(sigmoid, sigmoid_derivative)]
    caches, A = [], x
    for (W, b, _, _), (phi, _) in zip(params, activations):
        Z, A_next = forward(A, W, b, phi)
        caches.append((A, Z, A_next))
        A = A_next
    dA = A - y
    for (W, b, dW, db), (_, phi_derivative), (X, Z, A) in zip(
            reversed(params), reversed(activations), reversed(caches)):
        dA = backward(dA, Z, A, X, W, dW, db, phi_derivative)
        W -= lr * dW
        b -= lr * db
    return A


# --- agreement, then timing ----------------------------------------------------------------

def assert_agree(einsum_result, matmul_result):
    """Equal to rtol 1e-13, and to 1e-13 of the array's largest entry: a sum of 64 products
    can cancel to near zero, where the two summation orders' rounding (~1e-15 absolute)
    is large relative to the result but not to the terms."""
    assert einsum_result.shape == matmul_result.shape
    np.testing.assert_allclose(einsum_result, matmul_result, rtol=RTOL,
                               atol=RTOL * np.max(np.abs(matmul_result)))


def check_agreement():
    for members in MEMBERS:
        for order in orders(members):
            for size in SIZES:
                for batch in BATCHES:
                    X, W, b, dA = dense_case(members, size, batch, order)
                    results = {}
                    for name in FORMULATIONS:
                        dW, db = np.empty_like(W), np.empty_like(b)
                        results[name] = (*dense_step(name, X, W, b, dA, dW, db), dW, db)
                    for e, m in zip(results["einsum"], results["matmul"]):
                        assert_agree(e, m)
            results = {}
            for name in FORMULATIONS:
                params, x, y = network_case(members, order)
                outputs = [sgd_step(name, params, x, y) for _ in range(3)]
                results[name] = outputs + [array for layer in params for array in layer]
            for e, m in zip(results["einsum"], results["matmul"]):
                assert_agree(e, m)


def time_pair(statements, repeats):
    """µs per call of each statement: best of ``repeats``, the statements alternating."""
    timers = {name: timeit.Timer(statement) for name, statement in statements.items()}
    numbers = {}
    for name, timer in timers.items():
        number, seconds = timer.autorange()          # loops lasting >= 0.2 s
        numbers[name] = max(1, number // 4)          # each repeat then lasts about 0.05 s
    best = {name: float("inf") for name in timers}
    for _ in range(repeats):
        for name, timer in timers.items():
            seconds = timer.repeat(repeat=1, number=numbers[name])[0]
            best[name] = min(best[name], seconds / numbers[name])
    return {name: 1e6 * seconds for name, seconds in best.items()}


def cases():
    for members in MEMBERS:
        for order, order_name in orders(members).items():
            where = f", {order_name}" if members > 1 else ""
            for size in SIZES:
                for batch in BATCHES:
                    yield (f"dense {size}->{size}, S={members}, batch {batch}{where}",
                           {"workload": "dense", "members": members, "size": size,
                            "batch": batch, "order": order})
    for members in MEMBERS:
        for order, order_name in orders(members).items():
            where = f", {order_name}" if members > 1 else ""
            yield (f"SGD step {'-'.join(map(str, NETWORK))}, S={members}, batch 1{where}",
                   {"workload": "sgd_step", "members": members, "size": None, "batch": 1,
                    "order": order})


def statements_for(case):
    members, order = case["members"], case["order"]
    if case["workload"] == "dense":
        X, W, b, dA = dense_case(members, case["size"], case["batch"], order)
        dW, db = np.empty_like(W), np.empty_like(b)
        return {name: (lambda name=name: dense_step(name, X, W, b, dA, dW, db))
                for name in FORMULATIONS}
    statements = {}
    for name in FORMULATIONS:
        params, x, y = network_case(members, order)
        statements[name] = lambda name=name, params=params, x=x, y=y: sgd_step(name, params, x, y)
    return statements


def run(repeats):
    rows = []
    print(f"{'case':<54} {'einsum µs':>10} {'matmul µs':>10} {'einsum/matmul':>14}")
    for label, case in cases():
        times = time_pair(statements_for(case), repeats)
        ratio = times["einsum"] / times["matmul"]
        rows.append({"case": label, **case, "einsum_us": times["einsum"],
                     "matmul_us": times["matmul"], "einsum_over_matmul": ratio})
        print(f"{label:<54} {times['einsum']:>10.2f} {times['matmul']:>10.2f} {ratio:>14.2f}",
              flush=True)
    return rows


def settings():
    config = np.show_config(mode="dicts")
    blas = config.get("Build Dependencies", {}).get("blas", {})
    return {"numpy": np.__version__, "python": platform.python_version(),
            "machine": platform.machine(), "cores": os.cpu_count(),
            "blas": f"{blas.get('name', '?')} {blas.get('version', '')}".strip(),
            "threads": {v: os.environ[v] for v in
                        ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")},
            "load_average_at_start": os.getloadavg()}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=2, help="whole runs, to see if it is stable")
    parser.add_argument("--repeats", type=int, default=7, help="repeats per formulation and case")
    parser.add_argument("--json", type=Path, default=Path(__file__).parent / "results" /
                        "bench_dense_formulation.json")
    args = parser.parse_args()
    info = settings()
    print(f"NumPy {info['numpy']} ({info['blas']}), Python {info['python']}, {info['cores']} "
          f"cores, load average {', '.join(f'{x:.2f}' for x in info['load_average_at_start'])}")
    print("threads: " + ", ".join(f"{k}={v}" for k, v in info["threads"].items()))
    check_agreement()
    print(f"einsum and matmul agree (rtol {RTOL:g}) on every case, in either memory order, "
          "and so do 3 SGD steps\n")
    runs = []
    for index in range(args.runs):
        print(f"run {index + 1} of {args.runs}")
        runs.append(run(args.repeats))
        print()
    if len(runs) > 1:
        flips = [rows[0]["case"] for rows in zip(*runs)
                 if len({row["einsum_over_matmul"] > 1 for row in rows}) > 1]
        print("the faster formulation is the same in every run" if not flips else
              "the faster formulation changed between runs for: " + "; ".join(flips))
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps({"settings": info, "repeats": args.repeats, "runs": runs},
                                    indent=2) + "\n", encoding="utf-8")
    print(f"wrote {args.json}")


if __name__ == "__main__":
    main()
