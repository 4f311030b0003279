"""A digits network, one fit and 100 seeds side by side: tinynet against PyTorch and JAX.

    pip install ".[torch,data]" jax   # the peers and the digits
    python benchmarks/bench_digits.py --readme docs/performance.md   # about a minute

The job: 64-100-100-10 (ReLU hidden layers, softmax output, cross-entropy), minibatch SGD
(batches of 32, lr 0.1) on the 1,442 training images of ``tinynet.data.digits()`` in data
order (no shuffle, so that every implementation takes the same steps), ``EPOCHS`` epochs, each
network from ``tinynet.mlp(sizes, seed=s)`` with He-normal weights. Implementations, each
float64:

* one network: ``tinynet.fit`` (compiled; products of 32768 multiply-adds or more go to
  BLAS), PyTorch's loop of ``nn.Sequential`` with ``nn.CrossEntropyLoss`` and
  ``torch.optim.SGD``, and JAX (the epoch one ``jax.jit`` of a ``lax.scan`` over batches);
* 100 networks: ``tinynet.fit_ensemble`` (each member its own single fit, the members over
  the cores with BLAS on one thread each: the kit's ``fit_members``), PyTorch on the
  stacked parameters with ``torch.bmm`` (one autograd graph for all seeds), and JAX's
  ``jax.vmap`` of the one-network step under the same ``jit``.

Every implementation is run once and checked to train the same parameters (to 1e-8) before
anything is timed; then they run alternately, ``REPEATS`` times each, and the table gives each
one's fastest and median run, its speed relative to tinynet (their seconds over tinynet's:
above 1, tinynet is faster), and the fraction of the machine's float64 peak it reaches,
measured as the multiply-adds of the job (forward, dW and dX: 3 · Σ n_in · n_out per sample,
the first layer's dX not needed) over the seconds, against a large DGEMM by NumPy's BLAS in
the same process (its FMA rate on both cores: the practical peak), and the rates of the
ensemble's own GEMM shapes on one BLAS thread, for scale. Threads: numba 2,
PyTorch 2 (``torch.set_num_threads``), BLAS 2 (``OPENBLAS_NUM_THREADS``), JAX's own (XLA's
CPU client, its default). The CPU (``machine.describe``) and the load average are printed
with the table. Results go to benchmarks/results/bench_digits.json and .md, and with
``--readme`` between the digits markers of docs/performance.md.
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "2")

import numba  # noqa: E402
import numpy as np  # noqa: E402

import tinynet  # noqa: E402

from machine import describe  # noqa: E402
from readme_block import publish  # noqa: E402

README_START, README_END = "<!-- digits: start -->", "<!-- digits: end -->"

SIZES = [64, 100, 100, 10]
BATCH, LR, EPOCHS, SEEDS, REPEATS = 32, 0.1, 3, 100, 5


def networks(count: int) -> list:
    return [tinynet.mlp(SIZES, activation="relu", output="softmax", init="he_normal", seed=s)
            for s in range(count)]


def stacked(nets: list) -> list[np.ndarray]:
    """[W0, b0, W1, ...] of every network, each with the seeds first: (S, n_out, n_in)."""
    return [np.stack([net.parameters()[k] for net in nets])
            for k in range(len(nets[0].parameters()))]


# --- tinynet ---------------------------------------------------------------------------------

def tinynet_one(X, y, epochs):
    net = networks(1)[0]
    net.fit(X, y, epochs=epochs, lr=LR, batch_size=BATCH, shuffle=False, loss="cross_entropy",
            record_every=None)
    return stacked([net])


def tinynet_many(X, y, epochs, seeds=SEEDS):
    nets = networks(seeds)
    tinynet.fit_ensemble(nets, X, y, epochs=epochs, lr=LR, batch_size=BATCH, shuffle=False,
                         loss="cross_entropy")
    return stacked(nets)


# --- PyTorch ---------------------------------------------------------------------------------

def torch_one(X, y, epochs):
    import torch
    params = [torch.tensor(p[0]) for p in stacked(networks(1))]
    model = torch.nn.Sequential(torch.nn.Linear(64, 100), torch.nn.ReLU(),
                                torch.nn.Linear(100, 100), torch.nn.ReLU(),
                                torch.nn.Linear(100, 10)).double()
    with torch.no_grad():
        for target, value in zip(model.parameters(), params):
            target.copy_(value)
    step = torch.optim.SGD(model.parameters(), lr=LR)
    criterion = torch.nn.CrossEntropyLoss()
    X, y = torch.from_numpy(X), torch.from_numpy(y)
    for _ in range(epochs):
        for start in range(0, len(X), BATCH):
            step.zero_grad()
            criterion(model(X[start:start + BATCH]), y[start:start + BATCH]).backward()
            step.step()
    return [p.detach().numpy()[None] for p in model.parameters()]


def torch_many(X, y, epochs, seeds=SEEDS):
    import torch
    params = [torch.tensor(p, requires_grad=True) for p in stacked(networks(seeds))]
    X, y = torch.from_numpy(X), torch.from_numpy(y)
    for _ in range(epochs):
        for start in range(0, len(X), BATCH):
            a = X[start:start + BATCH].expand(seeds, -1, -1)
            for k in range(0, len(params), 2):
                z = torch.baddbmm(params[k + 1][:, None, :], a, params[k].transpose(1, 2))
                a = torch.relu(z) if k + 2 < len(params) else z
            rows = a.shape[1]
            loss = torch.nn.functional.cross_entropy(a.reshape(-1, 10),
                                                     y[start:start + BATCH].repeat(seeds),
                                                     reduction="sum") / rows
            grads = torch.autograd.grad(loss, params)  # each seed's own mean over its batch
            with torch.no_grad():
                for p, g in zip(params, grads):
                    p -= LR * g
    return [p.detach().numpy() for p in params]


# --- JAX -------------------------------------------------------------------------------------

def jax_trainer(many: bool):
    """A jitted ``epochs(params, X, y)`` for one network or (``many``) a vmap over seeds."""
    import jax
    import jax.numpy as jnp
    jax.config.update("jax_enable_x64", True)

    def loss(params, x, y):
        a = x
        for k in range(0, len(params), 2):
            z = a @ params[k].T + params[k + 1]
            a = jax.nn.relu(z) if k + 2 < len(params) else z
        return -jnp.mean(jnp.take_along_axis(jax.nn.log_softmax(a), y[:, None], axis=1))

    def step(params, batch):
        grads = jax.grad(loss)(params, *batch)
        return [p - LR * g for p, g in zip(params, grads)], None

    def epoch(params, X, y):
        full = len(X) // BATCH * BATCH
        batches = (X[:full].reshape(-1, BATCH, X.shape[1]), y[:full].reshape(-1, BATCH))
        params, _ = jax.lax.scan(step, params, batches)
        if full < len(X):
            params, _ = step(params, (X[full:], y[full:]))
        return params

    one = jax.vmap(epoch, in_axes=(0, None, None)) if many else epoch
    return jax.jit(one)


def jax_run(trainer, params, X, y, epochs):
    import jax
    import jax.numpy as jnp
    params = [jnp.asarray(p) for p in params]
    X, y = jnp.asarray(X), jnp.asarray(y)
    for _ in range(epochs):
        params = trainer(params, X, y)
    return [np.asarray(jax.block_until_ready(p)) for p in params]


# --- the table -------------------------------------------------------------------------------

def peak_gflops() -> float:
    """The machine's float64 GFLOP/s (2 per multiply-add) in a 2000x2000 DGEMM by NumPy's
    BLAS, best of 5."""
    a = np.random.default_rng(0).standard_normal((2000, 2000))
    best = min(_timed(lambda: a @ a) for _ in range(5))
    return 2 * 2000 ** 3 / best / 1e9


def small_gemm_gflops() -> dict[str, float]:
    """GFLOP/s of the ensemble's GEMMs, (32 x 64)(64 x 100) and (32 x 100)(100 x 100), and of
    the 2000 x 2000 one, each by NumPy's BLAS on one thread (``threadpoolctl``), best of
    many: what a member's single fit can reach per core."""
    from threadpoolctl import threadpool_limits
    rng = np.random.default_rng(0)
    rates = {}
    with threadpool_limits(1, user_api="blas"):
        for m, k, n, repeats in ((32, 64, 100, 20_000), (32, 100, 100, 20_000),
                                 (2000, 2000, 2000, 3)):
            a, b = rng.standard_normal((m, k)), rng.standard_normal((k, n))

            def many(a=a, b=b, repeats=repeats):
                for _ in range(repeats):
                    a @ b
            best = min(_timed(many) for _ in range(3))
            rates[f"{m}x{k}x{n}"] = 2 * m * k * n * repeats / best / 1e9
    return rates


def _timed(job) -> float:
    start = time.perf_counter()
    job()
    return time.perf_counter() - start


def job_gflops(samples: int, networks_: int) -> float:
    """The job's floating-point operations per epoch, in GFLOP: 2 per multiply-add."""
    layers = list(zip(SIZES[:-1], SIZES[1:]))
    per_sample = sum((3 if k else 2) * n_in * n_out for k, (n_in, n_out) in enumerate(layers))
    return 2 * per_sample * samples * networks_ / 1e9


def measure() -> dict:
    import torch
    torch.set_num_threads(2)
    numba.set_num_threads(min(2, numba.config.NUMBA_NUM_THREADS))
    split = tinynet.data.digits()
    X, y = split.X, split.y
    one_jax, many_jax = jax_trainer(False), jax_trainer(True)
    cases = {
        "one network": {
            "tinynet": lambda e: tinynet_one(X, y, e),
            "PyTorch (nn.Sequential loop)": lambda e: torch_one(X, y, e),
            "JAX (jit, lax.scan)": lambda e: [p[None] for p in jax_run(
                one_jax, [p[0] for p in stacked(networks(1))], X, y, e)]},
        f"{SEEDS} networks": {
            "tinynet": lambda e: tinynet_many(X, y, e),
            "PyTorch (bmm, one graph)": lambda e: torch_many(X, y, e),
            "JAX (vmap, jit, lax.scan)": lambda e: jax_run(many_jax, stacked(networks(SEEDS)),
                                                           X, y, e)}}
    rows = []
    for case, runs in cases.items():
        reference = None
        for who, run in runs.items():  # compile and check: the same parameters
            trained = run(1)
            if reference is None:
                reference = trained
            for ours, theirs in zip(reference, trained):
                np.testing.assert_allclose(theirs, ours, rtol=0, atol=1e-8, err_msg=who)
        times = {who: [] for who in runs}
        for _ in range(REPEATS):
            for who, run in runs.items():
                times[who].append(_timed(lambda: run(EPOCHS)))
        work = job_gflops(len(X), 1 if case == "one network" else SEEDS) * EPOCHS
        for who, seconds in times.items():
            rows.append({"case": case, "who": who, "best_s": min(seconds),
                         "median_s": float(np.median(seconds)),
                         "relative": min(seconds) / min(times["tinynet"]),
                         "gflops": work / min(seconds)})
            print(rows[-1], file=sys.stderr)
    return {"rows": rows, "peak_gflops": peak_gflops(), "one_thread_gemm": small_gemm_gflops(),
            "machine": describe()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--readme", type=Path, default=None,
                        help="also put the table between the digits markers of this page")
    args = parser.parse_args()
    import jax
    import torch
    load_start = os.getloadavg()[0]
    data = measure()
    load = os.getloadavg()[0]
    peak = data["peak_gflops"]
    lines = [f"A digits network ({'-'.join(map(str, SIZES))}, ReLU, softmax, cross-entropy, "
             f"minibatches of {BATCH}, SGD at lr {LR}, {EPOCHS} epochs of the 1,442 training "
             f"images in data order), fastest and median of {REPEATS} alternating runs. "
             f"{data['machine']}; Python {platform.python_version()}, numba "
             f"{numba.__version__}, PyTorch {torch.__version__}, JAX {jax.__version__}; "
             f"threads: numba 2, PyTorch 2, BLAS 2, JAX its default. Peak: a 2000x2000 DGEMM "
             f"by NumPy's BLAS, {peak:.1f} GFLOP/s; on one thread, "
             + ", ".join(f"{shape} {rate:.1f}" for shape, rate in
                         data["one_thread_gemm"].items())
             + f" GFLOP/s. 1-minute load average {load_start:.1f} at the start and {load:.1f} "
             "at the end.", "",
             "| job | implementation | fastest (s) | median (s) | its time / tinynet's | "
             "GFLOP/s | of the DGEMM peak |", "| --- | --- | --- | --- | --- | --- | --- |"]
    lines += [f"| {r['case']} | {r['who']} | {r['best_s']:.3f} | {r['median_s']:.3f} | "
              f"{r['relative']:.2f}x | {r['gflops']:.1f} | {r['gflops'] / peak:.0%} |"
              for r in data["rows"]]
    publish("bench_digits", {**data, "load": [load_start, load]}, "\n".join(lines) + "\n",
            args.readme, README_START, README_END)


if __name__ == "__main__":
    main()
