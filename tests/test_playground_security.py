"""The playground's server against requests it did not ask for: only the hosts it was started
on, POSTs from its own page only, no framing, bodies within their limits answered 400 in one
line (and measured in linear time), idle and vanished clients let go quietly. (The page itself, framed and opened from a link, is in
``tests/test_playground_browser.py``.)"""

from __future__ import annotations

import http.client
import json
import socket
import threading

import pytest
from playground_server import WAIT, Served

from tinynet.playground import Playground
from tinynet.playground.server import MAX_BODY, MAX_DEPTH, MAX_DIGITS, TIMEOUT, Handler, \
    host_names, nesting_depth


def answer(port: int, host: str | None, address: str = "127.0.0.1",
           path: str = "/api/options") -> tuple[int, str]:
    """(status, body) of a GET of ``path`` from ``address`` with Host ``host`` (None: no
    Host header at all)."""
    connection = http.client.HTTPConnection(address, port, timeout=WAIT)
    try:
        connection.putrequest("GET", path, skip_host=True)
        if host is not None:
            connection.putheader("Host", host)
        connection.endheaders()
        response = connection.getresponse()
        return response.status, response.read().decode()
    finally:
        connection.close()


def post(port: int, body: bytes, length: str | None = None,
         headers: dict | None = None) -> tuple[int, dict]:
    """(status, JSON answer) of a POST of ``body`` as JSON, its Content-Length ``length``,
    with ``headers`` besides."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=WAIT)
    try:
        connection.putrequest("POST", "/api/check")
        connection.putheader("Content-Type", "application/json")
        connection.putheader("Content-Length", str(len(body)) if length is None else length)
        for name, value in (headers or {}).items():
            connection.putheader(name, value)
        connection.endheaders()
        connection.send(body)
        response = connection.getresponse()
        return response.status, json.loads(response.read())
    finally:
        connection.close()


@pytest.fixture(scope="module")
def served():
    served = Served()
    yield served
    served.close()


@pytest.mark.parametrize("host, accepted", [
    ("127.0.0.1", ["127.0.0.1", "localhost", "LocalHost"]),
    ("localhost", ["127.0.0.1", "localhost"]),
    ("127.0.0.2", ["127.0.0.2", "localhost", "127.0.0.1"]),
    ("0.0.0.0", ["127.0.0.1", "localhost", "[::1]", socket.gethostname(), "192.0.2.7"]),
])
def test_the_server_answers_the_hosts_it_was_started_on_and_no_other(host, accepted):
    server = Playground(host, 0)
    try:
        threading.Thread(target=server.serve_forever, daemon=True).start()
        address, port = server.server_address
        address = "127.0.0.1" if address == "0.0.0.0" else address
        for name in accepted:
            assert answer(port, f"{name}:{port}", address)[0] == 200, name
        refused = ["evil.example", "localhost.evil.example", "127.0.0.1.nip.io"]
        if host != "0.0.0.0":  # IPv4 only: a browser's [::1] never reaches it
            refused.append("[::1]")
        for name in refused:
            status, body = answer(port, f"{name}:{port}", address)
            assert status == 403 and name in json.loads(body)["error"], name
        assert answer(port, f"localhost:{port + 1}", address)[0] == 403  # another port
        assert answer(port, "localhost", address)[0] == 403  # no port, and it is not 80
        assert answer(port, None, address)[0] == 403  # no Host at all
    finally:
        server.shutdown()
        server.server_close()


def test_a_server_on_an_address_not_loopback_answers_that_address_and_its_name_only():
    assert host_names("192.0.2.2", "192.0.2.2", 8000) == {"192.0.2.2:8000"}
    assert host_names("Box.Example", "192.0.2.2", 80) == {"box.example:80", "192.0.2.2:80"}


def unbound(host: str, address: str, port: int) -> Playground:
    """A :class:`Playground` as started on ``host``, bound to ``address`` and ``port``, for
    its checks of a request's headers; no socket (port 80 needs privileges)."""
    server = Playground.__new__(Playground)
    server.hosts, server.port = host_names(host, address, port), port
    server.any_address = address == "0.0.0.0"
    return server


def test_on_port_80_the_names_come_without_the_port_as_browsers_send_them():
    server = unbound("127.0.0.1", "127.0.0.1", 80)
    for name in ["localhost", "127.0.0.1", "localhost:80", "LOCALHOST"]:
        assert server.host_allowed(name), name
        assert server.origin_allowed(f"http://{name}", "same-origin"), name
    for name in ["evil.example", "localhost:8080", "evil.example:80"]:
        assert not server.host_allowed(name), name
    assert not unbound("127.0.0.1", "127.0.0.1", 8080).host_allowed("localhost")


def test_the_machines_name_is_not_looked_up_in_dns(monkeypatch):
    def stalls(*args) -> str:
        raise AssertionError("a DNS look-up, which can stall the start on a slow resolver")
    monkeypatch.setattr(socket, "getfqdn", stalls)
    monkeypatch.setattr(socket, "gethostname", lambda: "Box")
    assert host_names("0.0.0.0", "0.0.0.0", 8000) == {"box:8000", "localhost:8000",
                                                       "127.0.0.1:8000"}


@pytest.mark.parametrize("headers", [
    {"Origin": "http://evil.example"},
    {"Origin": "null"},  # a sandboxed frame, a file
    {"Origin": "https://127.0.0.1:{port}"},  # another scheme is another origin
    {"Origin": "http://127.0.0.1:{port}.evil.example"},
    {"Origin": "http://127.0.0.1:{port}", "Sec-Fetch-Site": "cross-site"},
    {"Sec-Fetch-Site": "cross-site"},
], ids=["other site", "null", "https", "suffix", "cross-site", "cross-site alone"])
def test_a_post_from_another_origin_is_refused_in_one_line(served, headers):
    port = served.server.port
    headers = {name: value.format(port=port) for name, value in headers.items()}
    status, answer = post(port, b'{"seeds": "3"}', headers=headers)
    assert status == 403 and set(answer) == {"error"}
    assert answer["error"].startswith("this server takes POSTs from its own page only, got")
    assert "\n" not in answer["error"]


@pytest.mark.parametrize("headers", [
    {}, {"Origin": "http://127.0.0.1:{port}"}, {"Origin": "http://LOCALHOST:{port}"},
    {"Origin": "http://localhost:{port}", "Sec-Fetch-Site": "same-origin"},
    {"Sec-Fetch-Site": "none"},  # typed into the address bar
], ids=["no browser", "own", "own by name", "same-origin", "none"])
def test_a_post_from_the_page_itself_or_no_page_is_answered(served, headers):
    port = served.server.port
    headers = {name: value.format(port=port) for name, value in headers.items()}
    assert post(port, b'{"seeds": "3"}', headers=headers) == (200, {"errors": {},
                                                                     "query": "seeds=3"})


@pytest.mark.parametrize("method, path", [
    ("GET", "/"), ("GET", "/static/app.js"), ("GET", "/api/options"), ("GET", "/nothing"),
    ("POST", "/api/studies"),  # 415: not JSON
    ("OPTIONS", "/api/studies"),  # 501, http.server's own error page
])
def test_every_answer_forbids_framing(served, method, path):
    connection = http.client.HTTPConnection("127.0.0.1", served.server.port, timeout=WAIT)
    try:
        connection.request(method, path, body=b"x=1" if method == "POST" else None)
        response = connection.getresponse()
        response.read()
    finally:
        connection.close()
    assert response.getheader("X-Frame-Options") == "DENY"
    assert response.getheader("Content-Security-Policy") == "frame-ancestors 'none'"


@pytest.mark.parametrize("body, field, words", [
    (b"[" * 30_000 + b"]" * 30_000, "study", f"it nests 30000 deep, more than {MAX_DEPTH}"),
    (b'{"a": {"b": {"c": [[[[[[[1]]]]]]]}}}', "study", f"it nests 10 deep, more than {MAX_DEPTH}"),
    (b'{"epochs": ' + b"9" * 5000 + b"}", "study",
     f"it has a number of 5,000 characters, more than {MAX_DIGITS}"),
    (b'{"epochs": 1.' + b"5" * 100 + b"}", "study", "it has a number of 102 characters"),
    (b'{"n": "\xff"}', "study", "the body is not JSON"),
    (b'"\\' * (MAX_BODY // 2), "study", "the body is not JSON the playground reads: "
                                         "Unterminated string"),
], ids=["deep", "nested", "5000 digits", "long float", "not utf-8", "unclosed string"])
def test_a_body_past_a_limit_is_answered_400_in_one_line(served, body, field, words, capfd):
    status, answer = post(served.server.port, body)
    assert status == 400 and list(answer["errors"]) == [field]
    assert words in answer["errors"][field] and "\n" not in answer["errors"][field]
    assert capfd.readouterr().err == ""


@pytest.mark.timeout(60)  # a bound on a hang: linear takes milliseconds, quadratic hours
def test_the_depth_is_measured_in_one_pass_even_in_a_string_that_never_closes():
    assert nesting_depth('["[[[", {"a": ["\\"]"]}]') == 3  # brackets in strings do not count
    assert nesting_depth('[[["[[[[[[[[[[[[') == 3  # nor in one that never closes
    assert nesting_depth('"\\' * 2**20) == 0  # 2 MiB: minutes for a scan from every quote


def test_a_field_of_5000_digits_is_refused_beside_it(served):
    status, answer = post(served.server.port, b'{"epochs": "' + b"9" * 5000 + b'"}')
    assert (status, answer["errors"]) == (200, {"epochs": "epochs must be at most 200 "
                                                          "characters, got 5,000"})


@pytest.mark.parametrize("length", ["²", "-1", "1e3", "0x10", "9" * 5000])
def test_a_content_length_that_is_not_a_number_is_answered_400(served, length, capfd):
    status, answer = post(served.server.port, b"{}", length=length)
    assert status == 400
    assert "a JSON object of 2 to 65536 bytes, got Content-Length" in answer["errors"]["study"]
    assert capfd.readouterr().err == ""


@pytest.fixture
def impatient(monkeypatch):
    """A server whose connections wait half a second for the client, not :data:`TIMEOUT`."""
    assert Handler.timeout == TIMEOUT == 30  # http.server's default is None: wait forever
    monkeypatch.setattr(Handler, "timeout", 0.5)
    served = Served()
    yield served
    served.close()


def test_an_idle_connection_is_closed(impatient, capfd):
    with socket.create_connection(("127.0.0.1", impatient.server.port), timeout=WAIT) as idle:
        assert idle.recv(100) == b""  # closed by the server; a hang ends in socket.timeout
    with socket.create_connection(("127.0.0.1", impatient.server.port), timeout=WAIT) as slow:
        slow.sendall(b"POST /api/check HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nContent-Type: "
                     b"application/json\r\nContent-Length: 10\r\n\r\n{}" % impatient.server.port)
        assert slow.recv(100) == b""  # 8 bytes of the body never came
    assert capfd.readouterr().err == ""


class HungUp:
    """A connection's output whose client has gone."""

    def write(self, data: bytes) -> int:
        raise BrokenPipeError(32, "Broken pipe")


def test_a_client_that_hangs_up_mid_answer_is_let_go_quietly(capfd):
    handler = Handler.__new__(Handler)  # just what answering needs: no socket
    handler.request_version, handler.command, handler.requestline = "HTTP/1.1", "GET", "GET /"
    handler.wfile, handler.close_connection = HungUp(), False
    handler._send(200, b"the page", "text/html")
    assert handler.close_connection
    server = Playground.__new__(Playground)
    for gone in (BrokenPipeError(32, "Broken pipe"), ConnectionResetError(104, "reset"),
                 TimeoutError("timed out")):
        try:
            raise gone
        except OSError:
            server.handle_error(None, ("127.0.0.1", 1))
    assert capfd.readouterr().err == ""
    try:
        raise RuntimeError("a fault of the server's own")
    except RuntimeError:
        server.handle_error(None, ("127.0.0.1", 1))
    assert "RuntimeError: a fault of the server's own" in capfd.readouterr().err
