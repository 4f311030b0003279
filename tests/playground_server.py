"""A playground server in a thread for the tests, and a small client for its JSON API."""

from __future__ import annotations

import json
import threading
import time
import urllib.error
import urllib.request

from tinynet.playground import Playground

WAIT = 120.0
"""Seconds a test waits for a study at most: a bound on a hang, not a speed requirement (a
first compile on a busy 2-core machine takes up to a minute)."""


class Served:
    """A running :class:`Playground` and requests to it."""

    def __init__(self, own: dict | None = None) -> None:
        """``own``: the user's data sets by name, as ``--data`` gives them."""
        self.server = Playground(port=0, own=own or {})
        self.url = self.server.url
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def request(self, path: str, fields: dict | None = None, headers: dict | None = None,
                body: bytes | None = None, method: str | None = None) -> tuple[int, bytes, dict]:
        """(status, body, headers) of a GET, or a POST of ``fields`` as JSON (or ``body``)."""
        if fields is not None:
            body = json.dumps(fields).encode()
            headers = {"Content-Type": "application/json", **(headers or {})}
        request = urllib.request.Request(self.url + path.lstrip("/"), data=body,
                                         headers=headers or {}, method=method)
        try:
            with urllib.request.urlopen(request, timeout=WAIT) as response:
                return response.status, response.read(), dict(response.headers)
        except urllib.error.HTTPError as error:
            return error.code, error.read(), dict(error.headers)

    def json(self, path: str, fields: dict | None = None) -> tuple[int, dict]:
        status, body, _ = self.request(path, fields)
        return status, json.loads(body)

    def start(self, fields: dict) -> int:
        status, job = self.json("api/studies", fields)
        assert status == 202, job
        return job["id"]

    def start_watch(self, fields: dict) -> int:
        """Ask to watch ``fields["seed"]`` of the study of the other fields; the job's id."""
        status, job = self.json("api/watch", fields)
        assert status == 202, job
        return job["id"]

    def wait(self, job_id: int, until: tuple[str, ...] = ("done", "cancelled", "failed"),
             seen: list | None = None) -> dict:
        """Poll study ``job_id`` until its state is one of ``until``; ``seen`` collects every
        status polled."""
        deadline = time.monotonic() + WAIT
        while time.monotonic() < deadline:
            _, job = self.json(f"api/studies/{job_id}")
            if seen is not None:
                seen.append(job)
            if job["state"] in until:
                return job
            time.sleep(0.05)
        raise AssertionError(f"study {job_id} did not reach {until} in {WAIT} s: {job}")

    def result(self, fields: dict) -> dict:
        """Train ``fields`` and return the page's data."""
        job_id = self.start(fields)
        job = self.wait(job_id)
        assert job["state"] == "done", job
        status, payload = self.json(f"api/studies/{job_id}/result")
        assert status == 200
        return payload
