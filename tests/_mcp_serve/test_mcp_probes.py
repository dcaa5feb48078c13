"""The health probes of ``toolreg serve --transport http``: /healthz, /readyz, and loading.

Every server is a real ``toolreg serve`` subprocess on loopback. A local
plugin that blocks its own import until a file exists holds the server in
its loading phase for as long as a test needs.
"""

from __future__ import annotations

import json
import os
import socket
from collections.abc import Callable
from pathlib import Path

import pytest

from serve_harness import HttpServer, ServeSetup, run, text_of

pytest.importorskip("mcp")

from mcp import Client  # noqa: E402

from toolreg._mcp_serve.probes import LOADING_MESSAGE  # noqa: E402

TOKEN = "probe-token-for-tests-0123456789"

GATE = """\
import os
import time
from pathlib import Path

release = Path(os.environ["GATE_RELEASE"])
while not release.exists():
    time.sleep(0.01)
"""


@pytest.fixture
def gated(serve_setup: ServeSetup) -> Path:
    """A plugin whose import waits for the returned path to exist; no import deadline."""
    (serve_setup.plugin.parent / "gate.py").write_text(GATE)
    serve_setup.config.write_text(serve_setup.config.read_text() + "import_timeout = 0\n")
    release = serve_setup.tmp / "gate.release"
    serve_setup.env["GATE_RELEASE"] = str(release)
    serve_setup.env["TOOLREG_PLUGINS"] = "local:demo,local:gate"
    return release


def test_probes_and_mcp_while_loading_then_ready(
    http_server: Callable[..., HttpServer], gated: Path
) -> None:
    server = http_server("--stateless", serving=False)
    assert server.probe("/healthz") == (200, {"status": "ok"})
    assert server.probe("/readyz") == (503, {"status": "loading"})
    for method in ("POST", "GET", "DELETE"):
        status, body, headers = server.fetch(method, "/mcp")
        assert status == 503, method
        assert json.loads(body) == {"error": LOADING_MESSAGE}
        assert headers["Retry-After"] == "1"
    assert server.proc.poll() is None  # still loading, still alive

    gated.touch()
    server.wait_serving()
    status, body = server.probe("/readyz")
    assert status == 200 and body["status"] == "ready" and body["tools"] >= 3
    assert server.probe("/healthz")[1]["status"] == "ok"

    async def call() -> None:
        async with Client(server.url) as client:
            assert text_of(await client.call_tool("greet", {"name": "R"})) == "hello R"

    run(call)


def test_probes_need_neither_host_nor_token_and_tell_only_the_status(
    serve_setup: ServeSetup, http_server: Callable[..., HttpServer]
) -> None:
    server = http_server(env={"TOOLREG_SERVE_TOKEN": TOKEN})
    bearer = {"Authorization": f"Bearer {TOKEN}"}
    port = server.authority.rpartition(":")[2]
    strangers = [
        {},  # no token
        {"Host": f"balancer.example:{port}"},  # a balancer's own name
        {"Host": f"attacker.example:{port}", "Origin": "http://attacker.example"},
    ]
    for headers in strangers:
        assert server.probe("/healthz", headers) == (200, {"status": "ok"}), headers
        assert server.probe("/readyz", headers) == (200, {"status": "ready"}), headers
    # HTTP/1.0 without Host, as HAProxy's plain `option httpchk` sends it.
    for path, word in (("/healthz", b"ok"), ("/readyz", b"ready")):
        reply = raw_http(server, f"GET {path} HTTP/1.0\r\n\r\n".encode())
        assert reply.startswith(b"HTTP/1.1 200 ")
        assert reply.endswith(b'{"status":"' + word + b'"}')
    # The guard still holds for MCP: the same requests to /mcp are refused.
    assert server.status("POST", "/mcp", {}) == 401
    assert server.status("POST", "/mcp", {**bearer, "Host": f"attacker.example:{port}"}) == 421
    # Admitted, a probe also says what is offered.
    status, body = server.probe("/healthz", bearer)
    assert status == 200 and body["tools"] >= 3 and isinstance(body["generation"], int)
    assert server.probe("/readyz", bearer)[1]["tools"] == body["tools"]


def test_probes_answer_only_get_and_head(http_server: Callable[..., HttpServer]) -> None:
    server = http_server()
    status, _, headers = server.fetch("POST", "/readyz")
    assert status == 405 and headers["Allow"] == "GET, HEAD"
    status, body, _ = server.fetch("HEAD", "/readyz")
    assert (status, body) == (200, b"")


def test_a_probe_while_loading_answers_head_and_survives_hangups(
    http_server: Callable[..., HttpServer], gated: Path
) -> None:
    server = http_server(serving=False)
    host, _, port = server.authority.rpartition(":")
    for _ in range(5):  # connect and leave without a word, or mid-request
        with socket.create_connection((host.strip("[]"), int(port)), timeout=5) as sock:
            sock.sendall(b"GET /rea")
    status, body, _ = server.fetch("HEAD", "/readyz")
    assert (status, body) == (503, b"")
    gated.touch()
    server.wait_serving()
    assert server.probe("/readyz")[0] == 200
    assert "Traceback" not in serve_log(server)


def raw_http(server: HttpServer, request: bytes) -> bytes:
    """Send ``request`` as it is; the whole reply (the server closes after an HTTP/1.0 one)."""
    host, _, port = server.authority.rpartition(":")
    with socket.create_connection((host.strip("[]"), int(port)), timeout=10) as sock:
        sock.sendall(request)
        chunks = []
        while chunk := sock.recv(65536):
            chunks.append(chunk)
    return b"".join(chunks)


def serve_log(server: HttpServer) -> str:
    server.log.flush()
    return Path(server.log.name).read_text() if os.path.exists(server.log.name) else ""
