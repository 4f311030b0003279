"""Numba against NumPy: kernels, the XOR job, a medium MLP, and compile time.

    python benchmarks/bench_jit_vs_numpy.py            # about a minute; long cases extrapolated
    python benchmarks/bench_jit_vs_numpy.py --full     # every case in full (many minutes)
    python benchmarks/bench_jit_vs_numpy.py --plot benchmarks/results/bench.png
    python benchmarks/bench_jit_vs_numpy.py --readme docs/performance.md   # and rewrite its tables

Every figure is measured in this one run, on this machine, so ratios compare like with like.
Times are the best of a few repeats (``timeit``'s autorange picks the loop count). BLAS
threads are set before NumPy is imported (default 1: with 2 threads OpenBLAS slows badly when
the other core is busy, and fights numba's threads); the numba ensemble uses numba's threads
(default: every core). Results go to benchmarks/results/bench_jit_vs_numpy.json and, as the
Markdown the performance page shows, to .md beside it (``--readme`` also puts it in that page,
between its benchmark markers). To compare two versions of tinynet, use
benchmarks/bench_before_after.py, which runs them interleaved in one process.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import subprocess
import sys
import tempfile
import timeit
from pathlib import Path


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    parser.add_argument("--full", action="store_true",
                        help="run the slow XOR baselines in full instead of extrapolating")
    parser.add_argument("--blas-threads", type=int, default=1, help="OpenBLAS/OMP threads")
    parser.add_argument("--numba-threads", type=int, default=None,
                        help="numba threads for the ensemble (default: every core)")
    parser.add_argument("--json", type=Path,
                        default=Path(__file__).parent / "results" / "bench_jit_vs_numpy.json")
    parser.add_argument("--plot", type=Path, default=None, help="also write a PNG bar chart")
    parser.add_argument("--readme", type=Path, default=None,
                        help="replace the tables between this page's benchmark markers "
                             "(docs/performance.md)")
    return parser.parse_args()


ARGS = parse_args()
for variable in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[variable] = str(ARGS.blas_threads)

import numba  # noqa: E402  (after the thread settings)
import numpy as np  # noqa: E402

import tinynet  # noqa: E402
from tinynet.compiled import kit, single, unrolled  # noqa: E402
from tinynet.losses import MSE  # noqa: E402

from generic import generic_kernels  # noqa: E402
from learner import learner_loop  # noqa: E402
from readme_block import put_between  # noqa: E402

# The dense-layer kernels are internal to the compiled backend; the benchmark times them alone,
# with the LeakyReLU(0.01) of the kit of a network of LeakyReLU layers.
_LEAKY = tinynet.mlp([2, 1], output="leaky_relu")
ACTIVATE = kit.load(kit.maths_of(_LEAKY, MSE())).activate_pairs
LEAKY_KIND = int(tinynet.packing.layout(_LEAKY).kinds[0])
PARAMETERS = tinynet.packing.layout(_LEAKY).parameters


@numba.njit
def dense_step(X, W, b, Z, A, dA, dZ, dW, db, dX, parameters, lr):
    """A dense layer's forward and backward pass and its SGD step, compiled, in the words the
    generic kernel's step is written in (tinynet.compiled.looping); φ'(Z) goes to dZ first."""
    single.affine(X, W, b, Z)
    ACTIVATE(LEAKY_KIND, parameters, 0, Z, A, dZ)
    single.times(dA, dZ, dZ)
    single.gradients(dZ, X, dW, db)
    single._matmul_into(dZ, W, dX)
    for k in range(W.shape[0]):
        for i in range(W.shape[1]):
            W[k, i] -= lr * dW[k, i]
    for k in range(b.size):
        b[k] -= lr * db[k]


if ARGS.numba_threads:
    numba.set_num_threads(ARGS.numba_threads)


def best_time(function, repeats: int = 5) -> float:
    """Seconds per call: the best of ``repeats`` loops of at least 0.2 s (``timeit``)."""
    timer = timeit.Timer(function)
    calls, _ = timer.autorange()
    return min(timer.repeat(repeat=repeats, number=calls)) / calls


# --- (a) one dense layer: forward, backward and SGD step -----------------------------------

def bench_kernels() -> list[dict]:
    rows = []
    for size in [2, 8, 64, 256, 1024]:
        for batch in [1, 64]:
            rng = np.random.default_rng(0)
            layer = tinynet.Layer(size, size, activation="leaky_relu", init="he_normal", rng=0)
            X, dA = rng.normal(size=(batch, size)), rng.normal(size=(batch, size))

            def numpy_step():
                layer.forward(X)
                layer.backward(dA)
                layer.W -= 1e-9 * layer.dW
                layer.b -= 1e-9 * layer.db

            W, b = layer.W.copy(), layer.b.copy()
            Z, A, dZ = (np.empty((batch, size)) for _ in range(3))
            dW, db, dX = np.empty_like(W), np.empty_like(b), np.empty((batch, size))

            def numba_step():
                dense_step(X, W, b, Z, A, dA, dZ, dW, db, dX, PARAMETERS, 1e-9)

            numba_step()
            t_numpy, t_numba = best_time(numpy_step), best_time(numba_step)
            rows.append({"case": f"{size}x{size}, batch {batch}", "numpy_us": t_numpy * 1e6,
                         "numba_us": t_numba * 1e6, "speedup": t_numpy / t_numba})
    return rows


# --- (b) the XOR job ------------------------------------------------------------------------

def bench_xor(sizes: list[int], full: bool) -> list[dict]:
    X, y = tinynet.data.xor()
    seeds, epochs = list(range(100)), 20_000
    job = len(seeds) * epochs * len(X)

    def nets(count):
        return [tinynet.mlp(sizes, init="he_leaky", seed=s) for s in range(count)]

    def each_fit(backend, count, run_epochs):
        for net in nets(count):
            net.fit(X, y, epochs=run_epochs, lr=0.01, backend=backend)

    built = {count: nets(count) for count in (2, 100, 1000)}  # building is not training

    def ensemble(count, run_epochs, backend="numba"):
        return tinynet.fit_ensemble(built[count], X, y, epochs=run_epochs, lr=0.01,
                                    backend=backend)

    def generic(count, run_epochs):
        with generic_kernels(tinynet):
            return ensemble(count, run_epochs)

    def uncut(count, run_epochs):
        with exps_not_cut():
            return ensemble(count, run_epochs)

    for count in (2, 100, 1000):  # compile (or load) every kernel outside the timing
        ensemble(count, 2)
        generic(count, 2)
    uncut(100, 2)
    tinynet.mlp(sizes).fit(X, y, epochs=2, lr=0.01)  # and the fused single-fit kernel
    cases = [  # name, function(seeds, epochs), seeds and epochs when not --full
        ("learner-style NumPy loop (baseline)",
         lambda c, e: learner_loop(sizes, seeds[:c], e, X, y), 1, 2_000),
        ("NumPy Network.fit, one seed at a time", lambda c, e: each_fit("numpy", c, e), 1, 2_000),
        ("NumPy ensemble (all seeds at once)",
         lambda c, e: ensemble(c, e, "numpy"), 100, 2_000),
        ("NumPy ensemble, 1000 seeds at once (rate only)",
         lambda c, e: ensemble(c, e, "numpy"), 1000, 500),
        ("numba fit, one seed at a time", lambda c, e: each_fit("numba", c, e), 10, 20_000),
        ("numba ensemble, generic kernel", generic, 100, 20_000),
        ("numba ensemble, generic kernel, 1000 seeds (rate only)", generic, 1000, 2_000),
        ("numba ensemble, kernel for this layout, exps not cut", uncut, 100, 20_000),
        ("numba ensemble, kernel for this layout", ensemble, 100, 20_000),
        ("numba ensemble, kernel for this layout, 1000 seeds (rate only)", ensemble, 1000,
         2_000),
    ]
    rows = []
    for name, run, count, run_epochs in cases:
        if full:
            count, run_epochs = max(count, len(seeds)), epochs
        steps = count * run_epochs * len(X)
        repeats = 5 if steps < job else 2  # the shared machine's noise: keep the best
        seconds = min(_timed(lambda: run(count, run_epochs)) for _ in range(repeats))
        rows.append({"case": name, "steps_per_s": steps / seconds,
                     "job_seconds": job * seconds / steps, "extrapolated": steps < job,
                     "rate_only": "rate only" in name})
    base = rows[0]["steps_per_s"]
    for row in rows:
        row["vs_baseline"] = row["steps_per_s"] / base
    return rows


@contextlib.contextmanager
def exps_not_cut():
    """Generate the lane kernels with each lane's whole step in one loop, as before the step
    was cut at the exps (tinynet.compiled.unrolled.CUT_AT_EXPS)."""
    saved, unrolled.CUT_AT_EXPS = unrolled.CUT_AT_EXPS, False
    try:
        yield
    finally:
        unrolled.CUT_AT_EXPS = saved


def bench_deep(full: bool) -> list[dict]:
    """A deep narrow net, 2-16x8-1 with batches of 2: too big to unroll, so the generic kernel,
    against the NumPy ensemble, at 100 and 1000 seeds."""
    X, y = tinynet.data.xor()
    sizes, epochs = [2, *[16] * 8, 1], 200 if full else 50
    rows = []
    for count in (100, 1000):
        nets = [tinynet.mlp(sizes, init="he_leaky", seed=s) for s in range(count)]
        for backend in ("numpy", "numba"):
            def run():
                tinynet.fit_ensemble(nets, X, y, epochs=epochs, lr=0.01, batch_size=2,
                                     backend=backend)
            if backend == "numba":
                run()  # compile outside the timing
            seconds = min(_timed(run) for _ in range(2))
            rows.append({"case": f"{count} seeds, {backend}",
                         "steps_per_s": count * epochs * len(X) / seconds})
        rows[-1]["vs_numpy"] = rows[-1]["steps_per_s"] / rows[-2]["steps_per_s"]
    return rows


def _timed(function) -> float:
    """Seconds for one call."""
    return timeit.timeit(function, number=1)


# --- (c) a medium MLP, minibatches ----------------------------------------------------------

def bench_mlp() -> list[dict]:
    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(2048, 64)), rng.uniform(size=(2048, 10))
    rows = []
    for backend in ["numpy", "numba"]:
        net = tinynet.mlp([64, 256, 256, 10], activation="relu", output="sigmoid", seed=0)
        net.fit(X[:128], y[:128], epochs=1, lr=0.01, batch_size=64, backend=backend)
        seconds = min(_timed(lambda: net.fit(X, y, epochs=2, lr=0.01, batch_size=64,
                                             backend=backend)) for _ in range(3))
        rows.append({"case": f"64-256-256-10, batch 64, {backend}",
                     "samples_per_s": 2 * len(X) / seconds})
    rows[1]["vs_numpy"] = rows[1]["samples_per_s"] / rows[0]["samples_per_s"]
    return rows


# --- (e) one network: the pace of a chain -------------------------------------------------

def bench_chain() -> list[dict]:
    """Nanoseconds per SGD step of a numba fit on XOR (shuffled; 30,000 epochs less a fit of
    one, so that the call's overhead drops out), beside nanoseconds per sigmoid when each
    waits on the one before: the part of a step no kernel can overlap."""
    from tinynet.activations import Sigmoid
    sigmoid = kit.load(kit.Maths([Sigmoid()], MSE())).activation_0  # as the kernels write it

    @numba.njit
    def chained(count, z):
        for _ in range(count):
            z = sigmoid(z, ())[0] - 0.25  # the next sigmoid waits for this one
        return z

    chained(10, 0.0)
    count = 10_000_000
    rows = [{"case": "one sigmoid (vector_exp) and a subtraction, each waiting on the last",
             "ns": best_time(lambda: chained(count, 0.0), repeats=3) / count * 1e9}]
    X, y = tinynet.data.xor()
    for sizes in ([2, 2, 1], [2, 2, 2, 1], [2, 8, 1]):
        net = tinynet.mlp(sizes, init="he_leaky", seed=0)
        times = {}
        for epochs in (1, 30_000):
            net.fit(X, y, epochs=epochs, lr=0.01)
            times[epochs] = min(_timed(lambda: net.fit(X, y, epochs=epochs, lr=0.01))
                                for _ in range(5))
        rows.append({"case": f"numba fit {'-'.join(map(str, sizes))}, one SGD step",
                     "ns": (times[30_000] - times[1]) / (29_999 * len(X)) * 1e9})
    for row in rows:
        row["steps_per_s"] = 1e9 / row["ns"]
    return rows


# --- compile time and start-up --------------------------------------------------------------

def bench_startup() -> dict:
    snippet = ("import tinynet; X, y = tinynet.data.xor(); "
               "nets = [tinynet.mlp([2, 2, 2, 1], seed=s) for s in range(100)]; "
               "tinynet.fit_ensemble(nets, X, y, epochs=20000, lr=0.01)")
    with tempfile.TemporaryDirectory() as cache:
        env = {**os.environ, "NUMBA_CACHE_DIR": cache, "TINYNET_KERNEL_DIR": cache}
        cold = _timed(lambda: subprocess.run([sys.executable, "-c", snippet], env=env, check=True))
        warm = _timed(lambda: subprocess.run([sys.executable, "-c", snippet], env=env, check=True))
    bare = _timed(lambda: subprocess.run([sys.executable, "-c", "import tinynet"], check=True))
    return {"first run, compiling (s)": cold, WARM: warm,
            "import tinynet alone (s)": bare}


WARM = "second run, cached kernels (s)"
"""The start-up times stay in the JSON (a target below reads the warm one) but not in the
Markdown: the performance page quotes the start-up once, from benchmarks/bench_startup.py and
benchmarks/bench_compile.py."""


def ratios(results: dict) -> list[str]:
    """What the generated kernels gain, per XOR layout: the kernel written for the layout
    against the generic kernel, and the step cut at its exps against the step whole."""
    lines = []
    for shape, rows in results["xor"].items():
        xor = {row["case"]: row for row in rows}
        made = xor["numba ensemble, kernel for this layout"]["steps_per_s"]
        generic = xor["numba ensemble, generic kernel"]["steps_per_s"]
        uncut = xor["numba ensemble, kernel for this layout, exps not cut"]["steps_per_s"]
        lines += [f"{shape}: kernel for this layout / generic kernel, 100 seeds: "
                  f"{made / generic:.2f}x",
                  f"{shape}: kernel cut at the exps / not cut, 100 seeds: {made / uncut:.2f}x"]
    return lines


def targets(results: dict) -> list[str]:
    """The targets of past issues this run can check, each met or not: printed and kept in the
    JSON, not in the Markdown (the CHANGELOG records them per issue). (Against the commit
    before the generated kernels, and the NumPy ensemble against the learner's loop,
    interleaved in one run: benchmarks/bench_before_after.py, whose verdict is the one; table
    (b) here shows the same ratio as its "vs baseline" column.)"""
    slowest = min(row["speedup"] for row in results["kernels"])
    warm = results["startup"][WARM]

    def verdict(met: bool) -> str:
        return "met" if met else "NOT met"

    return [
        f"numba never slower than NumPy (one layer step): slowest ratio {slowest:.2f}: "
        f"{verdict(slowest >= 1.0)}",
        f"warm start, 100-seed ensemble job in a new process under 2 s: {warm:.2f} s: "
        f"{verdict(warm < 2.0)}",
    ]


def table(rows: list[dict], columns: list[tuple[str, str, str]]) -> str:
    """A Markdown table: columns are (key, heading, format)."""
    lines = ["| " + " | ".join(h for _, h, _ in columns) + " |",
             "|" + "|".join(" --- " for _ in columns) + "|"]
    for row in rows:
        cells = [format(row[k], f) if k in row else "" for k, _, f in columns]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


README_START, README_END = "<!-- benchmark: start -->", "<!-- benchmark: end -->"
"""The performance page's lines between these markers are :func:`report`'s output."""


def report(results: dict) -> str:
    """The run as Markdown: settings, one table per section and the generated kernels'
    ratios."""
    parts = [f"This run: {results['settings']}.",
             "#### (a) one dense layer: forward + backward + SGD step (leaky_relu)",
             table(results["kernels"], [("case", "layer, batch", "s"),
                                        ("numpy_us", "NumPy µs", ".2f"),
                                        ("numba_us", "numba µs", ".2f"),
                                        ("speedup", "NumPy/numba", ".1f")])]
    for name, rows in results["xor"].items():
        parts += [f"#### (b) XOR job {name}: 100 seeds x 20,000 epochs x 4 samples, shuffled",
                  table(rows, [("case", "how", "s"), ("steps_per_s", "sample-steps/s", ",.0f"),
                               ("vs_baseline", "x baseline", ",.1f"),
                               ("job_seconds", "job (s)", ".3g"), ("note", "", "s")])]
    parts += ["#### (c) deep narrow net 2-16x8-1, batches of 2 (the generic kernel: too big to "
              "unroll)",
              table(results["deep"], [("case", "case", "s"),
                                      ("steps_per_s", "sample-steps/s", ",.0f"),
                                      ("vs_numpy", "numba/NumPy", ".1f")]),
              "#### (d) medium MLP, minibatch SGD",
              table(results["mlp"], [("case", "case", "s"), ("samples_per_s", "samples/s", ",.0f"),
                                     ("vs_numpy", "numba/NumPy", ".2f")]),
              "#### (e) one network at a time: a chain of dependent operations",
              table(results["chain"], [("case", "case", "s"), ("ns", "ns", ".1f"),
                                       ("steps_per_s", "per second", ",.0f")]),
              "#### the generated kernels' ratios",
              "\n".join(f"- {line}" for line in ratios(results))]
    return "\n\n".join(parts) + "\n"


def main() -> None:
    settings = (f"Python {platform.python_version()}, NumPy {np.__version__}, numba "
                f"{numba.__version__}, {os.cpu_count()} cores, BLAS threads {ARGS.blas_threads}, "
                f"numba threads {numba.get_num_threads()}")
    results = {"settings": settings, "kernels": bench_kernels(), "xor": {}}
    for sizes in ([2, 2, 1], [2, 8, 1], [2, 2, 2, 1]):
        rows = bench_xor(sizes, ARGS.full)
        for row in rows:
            row["note"] = ("job time at this rate" if row["rate_only"] else
                           "extrapolated from a shorter run" if row["extrapolated"] else "measured")
        results["xor"]["-".join(map(str, sizes))] = rows
    results["deep"] = bench_deep(ARGS.full)
    results["mlp"] = bench_mlp()
    results["chain"] = bench_chain()
    results["startup"] = bench_startup()
    results["targets"] = targets(results)
    markdown = report(results)
    print(f"# tinynet: numba vs NumPy\n\n{markdown}\ntargets of past issues:\n"
          + "\n".join(f"- {line}" for line in results["targets"]))

    ARGS.json.parent.mkdir(parents=True, exist_ok=True)
    ARGS.json.write_text(json.dumps(results, indent=2))
    ARGS.json.with_suffix(".md").write_text(markdown)
    print(f"wrote {ARGS.json} and {ARGS.json.with_suffix('.md')}")
    if ARGS.readme:
        put_between(ARGS.readme, README_START, README_END, markdown)
        print(f"wrote the tables into {ARGS.readme}")
    if ARGS.plot:
        plot(results, ARGS.plot)
        print(f"wrote {ARGS.plot}")


def plot(results: dict, path: Path) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(12, 4.5))
    rows = results["kernels"]
    axes[0].bar(range(len(rows)), [r["speedup"] for r in rows])
    axes[0].set_xticks(range(len(rows)), [r["case"] for r in rows], rotation=60, ha="right")
    axes[0].axhline(1.0, color="black", linewidth=0.8)
    axes[0].set_yscale("log")
    axes[0].set_ylabel("NumPy time / numba time")
    axes[0].set_title("one dense layer step")
    rows = results["xor"]["2-2-1"]
    axes[1].barh(range(len(rows)), [r["steps_per_s"] for r in rows])
    axes[1].set_yticks(range(len(rows)), [r["case"] for r in rows])
    axes[1].set_xscale("log")
    axes[1].set_xlabel("sample-steps per second")
    axes[1].set_title("XOR job 2-2-1, 100 seeds")
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120)


if __name__ == "__main__":
    main()
