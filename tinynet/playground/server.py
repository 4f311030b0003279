"""The playground's web server: the page, its static files and a small JSON API.

The standard library's ``http.server`` serves it: the page needs a handful of local
addresses, one user and no templates, which a framework would add a dependency for and
nothing else.

    GET  /                           the page
    GET  /static/<file>              its script and style files (:data:`STATIC`)
    GET  /api/options                the fields' defaults, choices and limits
    POST /api/check                  the fields -> {"errors": {field: message}}
    POST /api/studies                the fields -> 202 {"id": ...} (400 {"errors": ...})
    GET  /api/studies/<id>           how far it has got (:meth:`Job.status`)
    POST /api/studies/<id>/stop      cancel it
    GET  /api/studies/<id>/result    the page's data (:func:`~.payload.study_payload`)
    GET  /api/studies/<id>/study.json   the same, as a download
    GET  /api/studies/<id>/study.html   one HTML file with the page and the data inside,
                                        which opens without a server

Bound to 127.0.0.1, the server answers only requests addressed to it by that name or
``localhost`` (a web page elsewhere cannot reach it through a DNS name that resolves to
this machine), and takes POST bodies only as JSON (which another site's form cannot send).
"""

from __future__ import annotations

import json
import re
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib import resources

from .form import DEFAULTS, MAX_PAGE_BYTES, MAX_SEEDS, MAX_WORK, TRUE, FormError, choices, \
    read_form
from .worker import MAX_SECONDS, Trainer

__all__ = ["STATIC", "Playground", "standalone_page", "MAX_BODY"]

STATIC = {"style.css": "text/css", "codec.js": "text/javascript",
          "boundary.js": "text/javascript", "charts.js": "text/javascript",
          "form.js": "text/javascript", "results.js": "text/javascript",
          "detail.js": "text/javascript", "app.js": "text/javascript"}
"""The page's files under ``static/``, and their types: nothing else is served."""

MAX_BODY = 64 * 1024
"""The largest request body accepted, in bytes: a form is a few hundred."""

LOOPBACK = ("127.0.0.1", "localhost")
"""The addresses that mean this machine only (the server speaks IPv4)."""


def _static(name: str) -> str:
    return resources.files(__package__).joinpath("static", name).read_text(encoding="utf-8")


def standalone_page(result: bytes) -> str:
    """The page with its style and scripts inline and a study's data (JSON ``result``) inside:
    one file that shows that study without a server."""
    page = _static("index.html")
    page = page.replace('<link rel="stylesheet" href="static/style.css">',
                        f"<style>\n{_static('style.css')}</style>")
    page = re.sub(r'<script src="static/([a-z]+\.js)"></script>',
                  lambda match: f"<script>\n{_static(match.group(1))}</script>", page)
    data = result.decode().replace("</", "<\\/")  # no "</script>" inside the data
    return page.replace("<!-- study -->",
                        f'<script id="study-data" type="application/json">{data}</script>')


class Playground(ThreadingHTTPServer):
    """The server and its trainer; ``url`` is where the page is."""

    daemon_threads = True

    def __init__(self, host: str = "127.0.0.1", port: int = 0) -> None:
        self.trainer: Trainer | None = None  # started once the address is bound
        super().__init__((host, port), Handler)
        self.trainer = Trainer()
        self.port = self.server_address[1]
        self.url = f"http://{'127.0.0.1' if host in ('', '0.0.0.0') else host}:{self.port}/"
        self.allowed_hosts = ({f"{name}:{self.port}" for name in LOOPBACK}
                              if host in LOOPBACK else None)

    def server_close(self) -> None:
        super().server_close()
        if self.trainer is not None:
            self.trainer.close()


class Handler(BaseHTTPRequestHandler):
    """One request to the playground."""

    server: Playground
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: object) -> None:  # quiet: one user, local
        pass

    # --- routes -------------------------------------------------------------------------

    def do_GET(self) -> None:
        if not self._host_allowed():
            return
        path = self.path.split("?", 1)[0]
        if path == "/":
            self._send(HTTPStatus.OK, _static("index.html").encode(), "text/html")
        elif path.startswith("/static/") and path[len("/static/"):] in STATIC:
            name = path[len("/static/"):]
            self._send(HTTPStatus.OK, _static(name).encode(), STATIC[name])
        elif path == "/favicon.ico":
            self._send(HTTPStatus.NO_CONTENT, b"", "image/x-icon")
        elif path == "/api/options":
            self._json(HTTPStatus.OK, {"defaults": DEFAULTS, "choices": choices(),
                                       "true": list(TRUE),
                                       "limits": {"seeds": MAX_SEEDS, "work": MAX_WORK,
                                                  "page_bytes": MAX_PAGE_BYTES,
                                                  "seconds": MAX_SECONDS}})
        elif (match := re.fullmatch(r"/api/studies/(\d+)(/result|/study\.json|/study\.html)?",
                                    path)):
            self._study(int(match.group(1)), match.group(2))
        else:
            self._json(HTTPStatus.NOT_FOUND, {"error": f"no such page: {path}"})

    def do_POST(self) -> None:
        if not self._host_allowed():
            self.close_connection = True  # its body unread
            return
        path = self.path.split("?", 1)[0]
        fields = self._fields()  # read, whatever the address: the connection stays in step
        if fields is None:
            self.close_connection = True
            return
        if (match := re.fullmatch(r"/api/studies/(\d+)/stop", path)):
            job = self.server.trainer.stop(int(match.group(1)))
            if job is None:
                self._json(HTTPStatus.NOT_FOUND, {"error": f"no study {match.group(1)}"})
            else:
                self._json(HTTPStatus.OK, job.status())
            return
        if path not in ("/api/check", "/api/studies"):
            self._json(HTTPStatus.NOT_FOUND, {"error": f"no such address: {path}"})
            return
        try:
            form = read_form(fields)
        except FormError as error:
            status = HTTPStatus.OK if path == "/api/check" else HTTPStatus.BAD_REQUEST
            self._json(status, {"errors": error.errors})
            return
        if path == "/api/check":
            self._json(HTTPStatus.OK, {"errors": {}, "query": form.query})
            return
        job = self.server.trainer.submit(form)
        self._json(HTTPStatus.ACCEPTED, {**job.status(), "query": form.query})

    # --- pieces -------------------------------------------------------------------------

    def _study(self, job_id: int, part: str | None) -> None:
        job = self.server.trainer.job(job_id)
        if job is None:
            self._json(HTTPStatus.NOT_FOUND, {"error": f"no study {job_id}"})
        elif part is None:
            self._json(HTTPStatus.OK, job.status())
        elif job.result is None:
            self._json(HTTPStatus.CONFLICT, {"error": f"study {job_id} has no results: it is "
                                                      f"{job.state}", "state": job.state})
        elif part == "/result":
            self._send(HTTPStatus.OK, job.result, "application/json")
        elif part == "/study.json":
            self._send(HTTPStatus.OK, job.result, "application/json",
                       download=f"tinynet-study-{job_id}.json")
        else:
            self._send(HTTPStatus.OK, standalone_page(job.result).encode(), "text/html",
                       download=f"tinynet-study-{job_id}.html")

    def _fields(self) -> dict | None:
        """The request's JSON object of fields, or None after answering 4xx (the caller then
        closes the connection: the body may be unread)."""
        if self.headers.get("Content-Type", "").split(";")[0].strip() != "application/json":
            self._json(HTTPStatus.UNSUPPORTED_MEDIA_TYPE,
                       {"errors": {"study": "send the fields as JSON (Content-Type: "
                                            "application/json)"}})
            return None
        given = self.headers.get("Content-Length")
        if given is None or "Transfer-Encoding" in self.headers:
            self._json(HTTPStatus.LENGTH_REQUIRED,
                       {"errors": {"study": "send the body with a Content-Length and no "
                                            "Transfer-Encoding"}})
            return None
        length = int(given) if given.isdigit() else -1
        if not 2 <= length <= MAX_BODY:
            self._json(HTTPStatus.REQUEST_ENTITY_TOO_LARGE if length > MAX_BODY else
                       HTTPStatus.BAD_REQUEST,
                       {"errors": {"study": f"the request body must be a JSON object of 2 to "
                                            f"{MAX_BODY} bytes, got Content-Length {given!r}"}})
            return None
        try:
            fields = json.loads(self.rfile.read(length))
        except (UnicodeDecodeError, json.JSONDecodeError) as error:
            self._json(HTTPStatus.BAD_REQUEST, {"errors": {"study": f"the body is not JSON: "
                                                                    f"{error}"}})
            return None
        if not isinstance(fields, dict):
            self._json(HTTPStatus.BAD_REQUEST,
                       {"errors": {"study": f"the body must be a JSON object of fields, got "
                                            f"{type(fields).__name__}"}})
            return None
        return fields

    def _host_allowed(self) -> bool:
        allowed = self.server.allowed_hosts
        if allowed is None or self.headers.get("Host") in allowed:
            return True
        self._json(HTTPStatus.FORBIDDEN, {"error": f"this server answers requests for "
                                                   f"{', '.join(sorted(allowed))} only, got "
                                                   f"Host {self.headers.get('Host')!r}"})
        return False

    def _json(self, status: HTTPStatus, value: dict) -> None:
        self._send(status, json.dumps(value).encode(), "application/json")

    def _send(self, status: HTTPStatus, body: bytes, kind: str,
              download: str | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", f"{kind}; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        if download is not None:
            self.send_header("Content-Disposition", f'attachment; filename="{download}"')
        self.end_headers()
        self.wfile.write(body)
