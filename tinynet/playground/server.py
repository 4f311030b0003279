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
    POST /api/watch                  the fields and a "seed" -> 202 {"id": ...}: that seed
                                     trained again for the page's replay (:mod:`.watch`),
                                     a job followed as a study is; its result is the replay
    GET  /api/studies/<id>/result    the page's data (:func:`~.payload.study_payload`)
    GET  /api/studies/<id>/study.json   the same, as a download
    GET  /api/studies/<id>/study.html   one HTML file with the page and the data inside,
                                        which opens without a server

It answers only requests addressed to the name or address it was started on, with its port
(on a loopback address also ``localhost`` and ``127.0.0.1``; on every address also any IP
address and this machine's name; on port 80 also without the port, as browsers leave it out):
a web page elsewhere cannot reach it through a DNS name that resolves to this machine
(:func:`host_names`). It refuses a POST that a browser says comes from another page: an
``Origin`` other than ``http://`` and one of those hosts, or ``Sec-Fetch-Site: cross-site``.
It takes POST bodies only as JSON (which another site's form cannot send, nor its script
without a preflight the server does not answer), of at most :data:`MAX_BODY` bytes, nested at
most :data:`MAX_DEPTH` deep, with numbers of at most :data:`MAX_DIGITS` characters. Every
answer forbids framing (:data:`SECURITY_HEADERS`), a request idle for :data:`TIMEOUT` seconds
closes its connection, and a client that hangs up is no error.
"""

from __future__ import annotations

import ipaddress
import json
import re
import socket
import sys
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib import resources
from collections.abc import Mapping
from itertools import accumulate

from ..data import Split
from ..validation import shorten
from .form import DEFAULTS, EMPTY, MAX_EPOCHS, MAX_PAGE_BYTES, MAX_SAMPLES, MAX_SEEDS, MAX_WORK, \
    TRUE, FormError, choices, \
    read_form
from .watch import Watch
from .worker import MAX_SECONDS, Trainer

__all__ = ["STATIC", "Playground", "standalone_page", "host_names", "MAX_BODY", "MAX_DEPTH",
           "MAX_DIGITS", "TIMEOUT", "SECURITY_HEADERS"]

STATIC = {"style.css": "text/css", "codec.js": "text/javascript",
          "boundary.js": "text/javascript", "charts.js": "text/javascript",
          "form.js": "text/javascript", "results.js": "text/javascript",
          "watch.js": "text/javascript", "detail.js": "text/javascript",
          "classes.js": "text/javascript",
          "app.js": "text/javascript"}
"""The page's files under ``static/``, and their types: nothing else is served."""

MAX_BODY = 64 * 1024
"""The largest request body accepted, in bytes: a form is a few hundred."""

MAX_DEPTH = 8
"""The deepest a request body's JSON may nest: a form is one object of text."""

MAX_DIGITS = 30
"""The most characters of a number in a request body (the fields are text; Python would not
even read an int of more than 4,300 digits)."""

TIMEOUT = 30
"""Seconds a connection may wait for the client's next bytes before it is closed."""

SECURITY_HEADERS = {"X-Frame-Options": "DENY",
                    "Content-Security-Policy": "frame-ancestors 'none'",
                    "X-Content-Type-Options": "nosniff"}
"""Sent with every answer: no other page may frame the playground (where a user's clicks
could be stolen), and no file is read as another type than the one it is sent as."""

LOOPBACK_NAMES = ("localhost", "127.0.0.1")
"""The names a browser on this machine may address a loopback server by (the server listens
on IPv4 only, so ``[::1]`` never reaches it)."""

BARE_PORT = 80
"""The port a browser leaves out of the Host header (and ``Origin``): HTTP's default."""

HUNG_UP = (BrokenPipeError, ConnectionResetError, ConnectionAbortedError, TimeoutError)
"""What a client that hangs up, or goes quiet, raises where the server reads or writes."""


def host_names(host: str, address: str, port: int) -> frozenset[str]:
    """The Host headers a server started on ``host``, bound to ``address`` and ``port``,
    answers, lower case and each with the port: ``host`` and ``address`` themselves, and for a
    loopback address :data:`LOOPBACK_NAMES` too. On every address (``0.0.0.0``) they are the
    loopback names and this machine's; a request there may also name any IP address
    (:func:`_is_address`)."""
    if address == "0.0.0.0":
        names = {socket.gethostname(), *LOOPBACK_NAMES}  # no DNS look-up: it may stall
    elif _address(address) is not None and _address(address).is_loopback:
        names = {host, address, *LOOPBACK_NAMES}
    else:
        names = {host, address}
    return frozenset(f"{name.lower()}:{port}" for name in names)


def _is_address(header: str, port: int) -> bool:
    """Whether Host ``header`` is an IP address with ``port``: a name could be pointed at this
    machine by a stranger's DNS, an address cannot."""
    name, _, given_port = header.rpartition(":")
    return given_port == str(port) and _address(name) is not None


def _address(name: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    """``name`` as an IP address (IPv6 in brackets, as in a URL), or None for a name."""
    if name.startswith("[") and name.endswith("]"):
        name = name[1:-1]
    try:
        return ipaddress.ip_address(name)
    except ValueError:
        return None


def _static(name: str) -> str:
    return resources.files(__package__).joinpath("static", name).read_text(encoding="utf-8")


def standalone_page(result: bytes) -> tuple[bytes, bytes, bytes]:
    """The page with its style and scripts inline and a study's data (JSON ``result``) inside:
    one file that shows that study without a server, as its three parts (the page before the
    data, the data, the page after), so that the data, up to
    :data:`~.form.MAX_PAGE_BYTES`, is copied once, not joined into one more copy."""
    page = _static("index.html")
    page = page.replace('<link rel="stylesheet" href="static/style.css">',
                        f"<style>\n{_static('style.css')}</style>")
    page = re.sub(r'<script src="static/([a-z]+\.js)"></script>',
                  lambda match: f"<script>\n{_static(match.group(1))}</script>", page)
    head, tail = page.split("<!-- study -->")
    return ((head + '<script id="study-data" type="application/json">').encode(),
            result.replace(b"</", b"<\\/"),  # no "</script>" inside the data
            ("</script>" + tail).encode())


STRING = re.compile(r'"(?:[^"\\]|\\.)*"?')
r"""A JSON string, its closing quote optional: an unclosed one runs to the end of the text
and is matched once, not tried again from every quote inside it (which took seconds of
CPU for 64 KiB of ``"\``)."""


def nesting_depth(text: str) -> int:
    """How deep the brackets of JSON ``text`` nest, outside its strings, in one pass over
    the text (it must not take more: the text is a stranger's)."""
    return max(accumulate({"[": 1, "{": 1, "]": -1, "}": -1}.get(character, 0)
                          for character in STRING.sub("", text)), default=0)


def _read_json(body: bytes) -> object:
    """``body`` as JSON, within :data:`MAX_DEPTH` and :data:`MAX_DIGITS`; raise ValueError
    with a one-line message otherwise (the depth is measured before parsing, which would
    otherwise recurse once a level)."""
    text = body.decode("utf-8")  # UnicodeDecodeError is a ValueError
    depth = nesting_depth(text)
    if depth > MAX_DEPTH:
        raise ValueError(f"it nests {depth} deep, more than {MAX_DEPTH}")
    return json.loads(text, parse_int=_number(int), parse_float=_number(float))


def _number(read):
    """A reader of JSON numbers of at most :data:`MAX_DIGITS` characters."""
    def number(text: str) -> int | float:
        if len(text) > MAX_DIGITS:
            raise ValueError(f"it has a number of {len(text):,} characters, more than "
                             f"{MAX_DIGITS}")
        return read(text)
    return number


class Playground(ThreadingHTTPServer):
    """The server and its trainer; ``url`` is where the page is."""

    daemon_threads = True

    def __init__(self, host: str = "127.0.0.1", port: int = 0,
                 modules: tuple[str, ...] = (), own: Mapping[str, Split] = EMPTY) -> None:
        """Listen on ``host``:``port``; ``modules``, the ``--import`` arguments the server
        imported (their definitions are in the form's menus), are imported by the trainer
        process too; ``own``, the user's data sets (``--data`` files) by name, are in the
        data menu."""
        self.own = own
        self.trainer: Trainer | None = None  # started once the address is bound
        super().__init__((host, port), Handler)
        self.trainer = Trainer(modules)
        self.port = self.server_address[1]
        self.url = f"http://{'127.0.0.1' if host in ('', '0.0.0.0') else host}:{self.port}/"
        self.hosts = host_names(host, self.server_address[0], self.port)
        self.any_address = self.server_address[0] == "0.0.0.0"

    def host_allowed(self, header: str | None) -> bool:
        """Whether a request with Host ``header`` is for this server (see :func:`host_names`):
        any other is a page elsewhere that reached it through its own DNS name. On port
        :data:`BARE_PORT` a name without a port is this port, as a browser sends it."""
        if header is None:
            return False
        header = header.strip().lower()
        if self.port == BARE_PORT and not re.search(r":[0-9]+$", header):
            header += f":{BARE_PORT}"
        return header in self.hosts or self.any_address and _is_address(header, self.port)

    def origin_allowed(self, origin: str | None, fetch_site: str | None) -> bool:
        """Whether a POST whose browser sent ``Origin`` and ``Sec-Fetch-Site`` comes from this
        server's own page (or from no browser page: neither header): an ``Origin`` must be
        ``http://`` and a host :meth:`host_allowed` accepts, and the site not
        ``cross-site``."""
        if fetch_site is not None and fetch_site.strip().lower() == "cross-site":
            return False
        if origin is None:
            return True
        scheme, _, host = origin.strip().lower().partition("://")
        return scheme == "http" and "/" not in host and self.host_allowed(host)

    def handle_error(self, request: object, client_address: object) -> None:
        """Quiet for a client that hung up or went quiet (:data:`HUNG_UP`); the standard
        traceback on stderr for anything else."""
        if not isinstance(sys.exc_info()[1], HUNG_UP):
            super().handle_error(request, client_address)

    def server_close(self) -> None:
        super().server_close()
        if self.trainer is not None:
            self.trainer.close()


class Handler(BaseHTTPRequestHandler):
    """One request to the playground."""

    server: Playground
    protocol_version = "HTTP/1.1"
    timeout = TIMEOUT  # an idle connection is closed, not kept by a thread forever

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
            self._json(HTTPStatus.OK, {"defaults": DEFAULTS, "choices": choices(self.server.own),
                                       "true": list(TRUE),
                                       "limits": {"seeds": MAX_SEEDS, "epochs": MAX_EPOCHS,
                                                  "samples": MAX_SAMPLES, "work": MAX_WORK,
                                                  "page_bytes": MAX_PAGE_BYTES,
                                                  "seconds": MAX_SECONDS}})
        elif (match := re.fullmatch(r"/api/studies/(\d+)(/result|/study\.json|/study\.html)?",
                                    path)):
            self._study(int(match.group(1)), match.group(2))
        else:
            self._json(HTTPStatus.NOT_FOUND, {"error": f"no such page: {path}"})

    def do_POST(self) -> None:
        if not self._host_allowed() or not self._origin_allowed():
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
        if path not in ("/api/check", "/api/studies", "/api/watch"):
            self._json(HTTPStatus.NOT_FOUND, {"error": f"no such address: {path}"})
            return
        seed = fields.pop("seed", None) if path == "/api/watch" else None
        try:
            form = read_form(fields, self.server.own)
        except FormError as error:
            status = HTTPStatus.OK if path == "/api/check" else HTTPStatus.BAD_REQUEST
            self._json(status, {"errors": error.errors})
            return
        if path == "/api/check":
            self._json(HTTPStatus.OK, {"errors": {}, "query": form.query})
            return
        if path == "/api/watch":
            self._watch(form, seed)
            return
        job = self.server.trainer.submit(form)
        self._json(HTTPStatus.ACCEPTED, {**job.status(), "query": form.query})

    def _watch(self, form, seed: object) -> None:
        """Queue seed ``seed`` (text) of the study of ``form`` to be watched: 202 and the
        job's status, or 400 naming ``seed`` or the study."""
        try:
            if not isinstance(seed, str) or not re.fullmatch(r"\s*[0-9]{1,20}\s*", seed):
                raise FormError({"seed": f"seed must be sent as the text of an integer, got "
                                         f"{shorten(seed)}"})
            watch = Watch(form, int(seed))
        except FormError as error:
            self._json(HTTPStatus.BAD_REQUEST, {"errors": error.errors})
            return
        job = self.server.trainer.submit(watch)
        self._json(HTTPStatus.ACCEPTED, job.status())

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
            self._send(HTTPStatus.OK, standalone_page(job.result), "text/html",
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
        length = int(given) if re.fullmatch(r"[0-9]{1,12}", given) else -1  # not "²"
        if not 2 <= length <= MAX_BODY:
            self._json(HTTPStatus.REQUEST_ENTITY_TOO_LARGE if length > MAX_BODY else
                       HTTPStatus.BAD_REQUEST,
                       {"errors": {"study": f"the request body must be a JSON object of 2 to "
                                            f"{MAX_BODY} bytes, got Content-Length "
                                            f"{shorten(given)}"}})
            return None
        try:
            body = self.rfile.read(length)
        except HUNG_UP:  # the client hung up, or sent less than it said within TIMEOUT
            return None
        try:
            fields = _read_json(body)
        except ValueError as error:
            self._json(HTTPStatus.BAD_REQUEST, {"errors": {"study": f"the body is not JSON "
                                                                    f"the playground reads: "
                                                                    f"{error}"}})
            return None
        if not isinstance(fields, dict):
            self._json(HTTPStatus.BAD_REQUEST,
                       {"errors": {"study": f"the body must be a JSON object of fields, got "
                                            f"{type(fields).__name__}"}})
            return None
        return fields

    def _host_allowed(self) -> bool:
        """Whether the request's Host is this server's; if not, answer 403."""
        given = self.headers.get("Host")
        if self.server.host_allowed(given):
            return True
        hosts = ", ".join(sorted(self.server.hosts))
        if self.server.any_address:
            hosts += " or any IP address with that port"
        self._json(HTTPStatus.FORBIDDEN, {"error": f"this server answers requests for {hosts} "
                                                   f"only, got Host {shorten(given)}"})
        return False

    def _origin_allowed(self) -> bool:
        """Whether the POST comes from this server's page (:meth:`Playground.origin_allowed`);
        if not, answer 403."""
        origin, site = self.headers.get("Origin"), self.headers.get("Sec-Fetch-Site")
        if self.server.origin_allowed(origin, site):
            return True
        self._json(HTTPStatus.FORBIDDEN,
                   {"error": f"this server takes POSTs from its own page only, got Origin "
                             f"{shorten(origin)} and Sec-Fetch-Site {shorten(site)}"})
        return False

    def end_headers(self) -> None:
        """Every answer, the error pages of ``http.server`` too, with
        :data:`SECURITY_HEADERS`."""
        for name, value in SECURITY_HEADERS.items():
            self.send_header(name, value)
        super().end_headers()

    def _json(self, status: HTTPStatus, value: dict) -> None:
        self._send(status, json.dumps(value).encode(), "application/json")

    def _send(self, status: HTTPStatus, body: bytes | tuple[bytes, ...], kind: str,
              download: str | None = None) -> None:
        """Answer ``status`` with ``body`` (or its parts, written one after another) of type
        ``kind``; a client that has hung up gets nothing, quietly."""
        parts = (body,) if isinstance(body, bytes) else body
        self.send_response(status)
        self.send_header("Content-Type", f"{kind}; charset=utf-8")
        self.send_header("Content-Length", str(sum(map(len, parts))))
        self.send_header("Cache-Control", "no-store")
        if download is not None:
            self.send_header("Content-Disposition", f'attachment; filename="{download}"')
        try:
            self.end_headers()
            for part in parts:
                self.wfile.write(part)
        except HUNG_UP:
            self.close_connection = True
