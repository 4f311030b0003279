"""The playground's server keeps results, not data sets: its memory stays bounded over many
studies of the largest data set it allows (Linux's /proc gives the server's resident size);
and a study's HTML download copies its data once."""

from __future__ import annotations

import json
import re
import select
import signal
import subprocess
import sys
import time
import tracemalloc
import urllib.request
from pathlib import Path

import pytest
from helpers import default_sigint
from playground_server import WAIT

from tinynet.playground import standalone_page
from tinynet.playground.form import MAX_SAMPLES
from tinynet.playground.worker import KEPT_RESULTS

LARGEST = {"data": "moons", "n": str(MAX_SAMPLES), "seeds": "1", "epochs": "1", "b": ""}
"""A study whose data set dominates its memory: the most samples, one seed, one epoch."""

STUDIES = 50
LIMIT = 200 * 2**20
"""The most the server may hold, in bytes, after :data:`STUDIES` of :data:`LARGEST`."""

GROWTH = 40 * 2**20
"""The most it may grow from the end of study :data:`KEPT_RESULTS` + 1 (when the server
first drops a result) to the last's: the allocator's ups and downs, not a data set a study
(2.4 MB each, over 100 MB in all)."""


def resident(pid: int) -> int:
    """Process ``pid``'s resident memory in bytes (VmRSS)."""
    status = Path(f"/proc/{pid}/status").read_text()
    return int(re.search(r"^VmRSS:\s+(\d+) kB", status, re.M).group(1)) * 1024


def studied(url: str, fields: dict) -> None:
    """Run a study of ``fields`` on the server at ``url`` to its end, which must be done."""
    request = urllib.request.Request(url + "api/studies", data=json.dumps(fields).encode(),
                                     headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=WAIT) as response:
        job_id = json.loads(response.read())["id"]
    deadline = time.monotonic() + WAIT
    while time.monotonic() < deadline:
        with urllib.request.urlopen(f"{url}api/studies/{job_id}", timeout=WAIT) as response:
            job = json.loads(response.read())
        if job["state"] not in ("queued", "running", "compiling"):
            assert job["state"] == "done", job
            return
        time.sleep(0.05)
    raise AssertionError(f"study {job_id} did not end in {WAIT} s: {job}")


@pytest.mark.slow
def test_the_servers_memory_stays_bounded_over_many_studies_of_the_largest_data_set():
    process = subprocess.Popen([sys.executable, "-m", "tinynet.playground", "--no-browser"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               preexec_fn=default_sigint)
    try:
        assert select.select([process.stdout], [], [], WAIT)[0], "the server printed nothing"
        url = re.search(r"http://\S+/", process.stdout.readline()).group(0)
        for _ in range(KEPT_RESULTS + 1):
            studied(url, LARGEST)
        first = resident(process.pid)
        for _ in range(STUDIES - KEPT_RESULTS - 1):
            studied(url, LARGEST)
        last = resident(process.pid)
    finally:
        process.send_signal(signal.SIGINT)
        process.communicate(timeout=WAIT)
    assert last < LIMIT, f"{last / 2**20:.0f} MB after {STUDIES} studies"
    assert last - first < GROWTH, (f"grew {(last - first) / 2**20:.0f} MB over the last "
                                   f"{STUDIES - KEPT_RESULTS - 1} "
                                   f"studies of {MAX_SAMPLES:,} samples, keeping "
                                   f"{KEPT_RESULTS} results")


def test_the_html_download_copies_the_studys_data_once():
    result = b'{"fields":"</script><b>", "x":"' + b"7" * 8 * 2**20 + b'"}'  # 8 MiB of data
    tracemalloc.start()
    try:
        parts = standalone_page(result)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    head, data, tail = parts
    assert data == result.replace(b"</", b"<\\/")  # no "</script>" inside the data
    assert head.endswith(b'<script id="study-data" type="application/json">')
    assert tail.startswith(b"</script>") and tail.rstrip().endswith(b"</html>")
    assert peak < len(result) + len(head) + len(tail) + 2**20, (
        f"{peak / len(result):.1f} times the data at the peak")  # one copy, not four
