"""How fast the playground answers: its default study (100 seeds of a 2-8-1 XOR network for
each of two initializers, 2,000 epochs of per-sample SGD), and the same at 1,000 seeds.

    python benchmarks/bench_playground.py --readme docs/playground.md    # about a minute

For each study, interleaved in one process, ``REPEATS`` times each, with warm kernels:

* **the server's answer**: from the Train request to the study's data in hand, as the page
  asks for it but polling every 10 ms (the page: every 150 ms), without the page's drawing:
  the HTTP requests, the trainer process's ``run_study`` and
  :func:`~tinynet.playground.payload.study_payload`, and the JSON;
* **run_study**: the library's call for the same two arms, in this process;
* **the page's data**: ``study_payload`` and its JSON, in this process;
* **the bar**: ``benchmarks/handwritten.py``'s ``train``, the same training written by hand
  as a plain Numba loop, on the same initial weights (checked first to train the same
  networks).

It also prints (not in the table) how long the server takes to refuse forms over its limits,
a data set of 10^8 samples and a study of 10^13 parameter-sample-steps: the form is sized
before anything is drawn, so each is a few milliseconds.

The table gives each one's median and fastest time and the median answer over the bar.
Thread settings: BLAS threads 1; numba threads 2 in this process and in the trainer's; the
load average is printed with the table. Results: benchmarks/results/bench_playground.json,
.md, and with ``--readme`` between the playground markers of docs/playground.md
(``tests/test_readme.py``).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import threading
import time
import urllib.request
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numba  # noqa: E402
import numpy as np  # noqa: E402

from tinynet.packing import draw, layout  # noqa: E402
from tinynet.playground import Playground, read_form, study_payload  # noqa: E402
from tinynet.xor import build_network, run_study  # noqa: E402
from tinynet.xor.report import finite_or_none  # noqa: E402

from handwritten import train as handwritten  # noqa: E402
from readme_block import publish  # noqa: E402

README_START, README_END = "<!-- playground: start -->", "<!-- playground: end -->"
STUDIES = {"default: 2 x 100 seeds": {}, "2 x 1,000 seeds": {"seeds": "1000"}}
REPEATS = 20
POLL = 0.01


def answer(url: str, fields: dict) -> float:
    """Seconds from the Train request to the study's data in hand."""
    started = time.perf_counter()
    request = urllib.request.Request(url + "api/studies", json.dumps(fields).encode(),
                                     {"Content-Type": "application/json"})
    with urllib.request.urlopen(request) as response:
        job = json.loads(response.read())
    while job["state"] != "done":
        if job["state"] in ("failed", "cancelled"):
            raise RuntimeError(f"the study {job['state']}: {job['error']}")
        time.sleep(POLL)
        with urllib.request.urlopen(f"{url}api/studies/{job['id']}") as response:
            job = json.loads(response.read())
    with urllib.request.urlopen(f"{url}api/studies/{job['id']}/result") as response:
        response.read()
    return time.perf_counter() - started


REFUSED = {"a data set of 10^8 samples": {"data": "moons", "n": str(10**8)},
           "10^13 parameter-sample-steps": {"data": "moons", "n": "100000", "seeds": "1000"}}
"""Forms the server refuses, for :func:`refusal`."""


def refusal(url: str, fields: dict) -> tuple[float, str]:
    """Seconds from sending ``fields`` to ``/api/check`` to the refusal in hand, and its
    message."""
    started = time.perf_counter()
    request = urllib.request.Request(url + "api/check", json.dumps(fields).encode(),
                                     {"Content-Type": "application/json"})
    with urllib.request.urlopen(request) as response:
        errors = json.loads(response.read())["errors"]
    seconds = time.perf_counter() - started
    if not errors:
        raise RuntimeError(f"the server accepted {fields}")
    return seconds, "; ".join(errors.values())


def timed(function) -> float:
    started = time.perf_counter()
    function()
    return time.perf_counter() - started


def measure(url: str, name: str, fields: dict) -> dict:
    form = read_form(fields)
    setup = form.setup
    X, y = setup.task.training_data()
    starts = []
    for arm in form.arms:
        like = build_network(setup, arm, setup.first_seed)
        starts.append((draw(like, setup.seed_range), layout(like).table))
    study = run_study(form.arms, setup, progress=False, record_every=form.record_every)
    for (theta, table), result in zip(starts, study.results):  # the bar trains the same nets
        np.testing.assert_allclose(handwritten(theta, table, X, y, setup.epochs, setup.lr),
                                   result.trained, rtol=1e-9, atol=1e-9)
    jobs = {
        "the server's answer": lambda: answer(url, fields),
        "run_study": lambda: timed(lambda: run_study(form.arms, setup, progress=False,
                                                     record_every=form.record_every)),
        "the page's data": lambda: timed(lambda: json.dumps(finite_or_none(
            study_payload(study, form.fields, form.record_every)))),
        "the bar: hand-written Numba": lambda: timed(lambda: [
            handwritten(theta, table, X, y, setup.epochs, setup.lr) for theta, table in starts]),
    }
    for job in jobs.values():  # warm: every kernel compiled, the trainer's too
        job()
    times = {label: [] for label in jobs}
    for _ in range(REPEATS):
        for label, job in jobs.items():
            times[label].append(job())
    return {"study": name, "fields": fields, "describe": setup.describe(),
            "seconds": {label: {"median": float(np.median(values)), "fastest": min(values)}
                        for label, values in times.items()}}


def markdown(results: list[dict], machine: dict) -> str:
    lines = ["| study | measured | median | fastest |", "| --- | --- | --- | --- |"]
    for result in results:
        for label, seconds in result["seconds"].items():
            lines.append(f"| {result['study']} | {label} | {seconds['median'] * 1000:,.0f} ms "
                         f"| {seconds['fastest'] * 1000:,.0f} ms |")
    ratios = "; ".join(
        f"{r['study']}: {r['seconds']['''the server's answer''']['median'] / r['seconds']['the bar: hand-written Numba']['median']:.1f}x"  # noqa: E501
        for r in results)
    return "\n".join([
        *lines, "",
        f"The server's answer over the bar (medians): {ratios}. {REPEATS} runs each, "
        f"interleaved, warm kernels. {results[0]['describe']}.",
        f"Machine: {machine['cpus']} cores ({machine['processor']}), numba threads "
        f"{machine['numba_threads']}, BLAS threads 1, load average "
        f"{machine['load_before']:.2f} before and {machine['load_after']:.2f} after.", ""])


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--readme", type=Path,
                        help="put the table into this page (docs/playground.md)")
    args = parser.parse_args(argv)
    load_before = os.getloadavg()[0]
    server = Playground(port=0)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        for name, fields in REFUSED.items():
            seconds = min(refusal(server.url, fields)[0] for _ in range(REPEATS))
            print(f"refused {name} in {seconds * 1000:.1f} ms (fastest of {REPEATS}): "
                  f"{refusal(server.url, fields)[1]}")
        results = [measure(server.url, name, fields) for name, fields in STUDIES.items()]
    finally:
        server.shutdown()
        server.server_close()
    machine = {"cpus": os.cpu_count(), "processor": platform.processor() or platform.machine(),
               "numba_threads": numba.get_num_threads(), "load_before": load_before,
               "load_after": os.getloadavg()[0], "python": sys.version.split()[0]}
    publish("bench_playground", {"results": results, "machine": machine, "repeats": REPEATS},
            markdown(results, machine), args.readme, README_START, README_END)


if __name__ == "__main__":
    main()
