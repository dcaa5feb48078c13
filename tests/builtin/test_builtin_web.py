"""http_request against a real HTTP server on 127.0.0.1 (no internet needed)."""

from __future__ import annotations

import contextlib
import json
import socket
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from conftest import builtin_registry, ok, registered_strictly
from toolreg.builtin_tools import web_tools
from toolreg.builtin_tools.web_tools import http_request

BIG = b"0123456789" * 500  # 5000 bytes


class Handler(BaseHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:  # keep test output quiet
        pass

    def _send(self, status: int, body: bytes, content_type: str, **headers: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        for key, value in headers.items():
            self.send_header(key.replace("_", "-"), value)
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:
        if self.path == "/hello":
            self._send(200, "héllo".encode(), "text/plain; charset=utf-8", X_Test="yes")
        elif self.path == "/latin1":
            self._send(200, "café".encode("latin-1"), "text/plain; charset=iso-8859-1")
        elif self.path == "/big":
            self._send(200, BIG, "text/plain")
        elif self.path == "/headers":
            seen = json.dumps(dict(self.headers.items())).encode()
            self._send(200, seen, "application/json")
        elif self.path == "/redirect":
            self._send(302, b"", "text/plain", Location="/hello")
        elif self.path == "/redirect-ftp":
            self._send(302, b"", "text/plain", Location="ftp://127.0.0.1/file")
        elif self.path == "/slow":
            time.sleep(3)
            # The client timed out and left, as the test meant it to; unsuppressed, the
            # server's traceback lands in whichever later test is capturing stderr.
            with contextlib.suppress(ConnectionError):
                self._send(200, b"late", "text/plain")
        else:
            self._send(404, b"nothing here", "text/plain")

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        ctype = self.headers.get("Content-Type", "")
        self._send(201, body, "text/plain; charset=utf-8", X_Received_Type=ctype)


@pytest.fixture(autouse=True)
def no_proxy(monkeypatch: pytest.MonkeyPatch) -> None:
    # A proxy from the environment would otherwise intercept loopback requests.
    for var in ("http_proxy", "https_proxy", "all_proxy"):
        monkeypatch.delenv(var, raising=False)
        monkeypatch.delenv(var.upper(), raising=False)


@pytest.fixture(scope="module")
def base_url() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def err(result: str) -> str:
    data = json.loads(result)
    assert set(data) >= {"error"} and "status" not in data, data
    return data["error"]


def test_get(base_url: str) -> None:
    data = ok(http_request({"url": f"{base_url}/hello"}))
    assert data["status"] == 200
    assert data["body"] == "héllo"
    assert data["headers"]["X-Test"] == "yes"
    assert data["truncated"] is False


def test_charset_from_headers(base_url: str) -> None:
    assert ok(http_request({"url": f"{base_url}/latin1"}))["body"] == "café"


def test_post_body_is_sent_and_echoed(base_url: str) -> None:
    payload = json.dumps({"q": "ünïcode"})
    data = ok(
        http_request(
            {
                "url": f"{base_url}/echo",
                "method": "post",
                "headers": {"Content-Type": "application/json"},
                "body": payload,
            }
        )
    )
    assert data["status"] == 201
    assert data["body"] == payload
    assert data["headers"]["X-Received-Type"] == "application/json"


def test_custom_headers_and_default_user_agent(base_url: str) -> None:
    seen = json.loads(ok(http_request({"url": f"{base_url}/headers"}))["body"])
    assert seen["User-Agent"].startswith("toolreg")
    seen = json.loads(
        ok(
            http_request(
                {"url": f"{base_url}/headers", "headers": {"User-Agent": "me", "X-A": "1"}}
            )
        )["body"]
    )
    assert seen["User-Agent"] == "me"
    assert seen["X-A"] == "1"


def test_http_error_status_is_a_result(base_url: str) -> None:
    data = ok(http_request({"url": f"{base_url}/missing"}))
    assert data["status"] == 404
    assert data["body"] == "nothing here"


def test_redirect_is_followed(base_url: str) -> None:
    data = ok(http_request({"url": f"{base_url}/redirect"}))
    assert data["status"] == 200
    assert data["url"] == f"{base_url}/hello"
    assert data["body"] == "héllo"


def test_redirect_to_other_scheme_is_refused(base_url: str) -> None:
    assert "ftp://" in err(http_request({"url": f"{base_url}/redirect-ftp"}))


def test_body_is_capped(base_url: str) -> None:
    data = ok(http_request({"url": f"{base_url}/big", "max_bytes": 1000}))
    assert data["body"] == BIG[:1000].decode()
    assert data["truncated"] is True
    exact = ok(http_request({"url": f"{base_url}/big", "max_bytes": len(BIG)}))
    assert exact["body"] == BIG.decode()
    assert exact["truncated"] is False


@pytest.mark.parametrize(
    "url", ["ftp://127.0.0.1/x", "file:///etc/passwd", "127.0.0.1/x", "http://"]
)
def test_non_http_urls_are_refused(url: str) -> None:
    assert "only http:// and https://" in err(http_request({"url": url}))


def test_connection_refused_is_a_tool_error() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    # The port was just released, so nothing listens there.
    message = err(http_request({"url": f"http://127.0.0.1:{port}/", "timeout": 5}))
    assert "failed" in message and str(port) in message


def test_timeout_is_a_tool_error(base_url: str) -> None:
    assert "timed out" in err(http_request({"url": f"{base_url}/slow", "timeout": 0.5}))


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        ({"method": "DELETE"}, "method"),
        ({"body": "x"}, "POST"),
        ({"method": "POST", "body": {"a": 1}}, "body"),
        ({"headers": {"X-N": 1}}, "headers"),
        ({"max_bytes": 0}, "max_bytes"),
        ({"timeout": -1}, "timeout"),
    ],
)
def test_bad_arguments(base_url: str, args: dict[str, Any], needle: str) -> None:
    assert needle in err(http_request({"url": f"{base_url}/hello", **args}))


def test_registered_with_a_strict_schema() -> None:
    registered_strictly(web_tools, "http_request", "web", ["url"])


def test_dispatch_through_registry(base_url: str) -> None:
    reg = builtin_registry(web_tools)
    data = json.loads(reg.dispatch("http_request", {"url": f"{base_url}/hello"}))
    assert data["status"] == 200
    assert data["body"] == "héllo"


def test_annotations_say_the_web_is_an_open_world() -> None:
    entry = builtin_registry(web_tools).get_entry("http_request")
    hints = dict(entry.annotations)
    assert hints["openWorldHint"] is True
    # A POST may change what the server holds: never claimed read-only or harmless.
    assert hints["readOnlyHint"] is False and hints["destructiveHint"] is True
    assert hints["idempotentHint"] is False
