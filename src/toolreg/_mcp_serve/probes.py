"""Health probes of ``toolreg serve --transport http``: ``/healthz`` and ``/readyz``.

Answered ahead of ``HttpGuard``, including while the tools load (a small stdlib
server on the bound socket). Nothing here imports the MCP SDK at module level.
"""

from __future__ import annotations

import http.server
import json
import logging
import socket
import socketserver
import threading
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from typing import Any

logger = logging.getLogger("toolreg.serve")

LIVENESS_PATH = "/healthz"
READINESS_PATH = "/readyz"
PROBE_METHODS = ("GET", "HEAD")
#: What a request other than a probe is told while the tools load.
LOADING_MESSAGE = "toolreg is loading its tools; retry shortly"
#: Seconds a client is asked to wait before retrying while the tools load.
LOADING_RETRY_AFTER = 1
#: Request bodies read (and dropped) while loading, so the 503 is not lost to a reset.
_MAX_DRAINED_BODY = 4 * 1024 * 1024


def probe_status(path: str, *, ready: bool) -> tuple[int, dict[str, Any]]:
    """The status code and body of a probe on ``path`` (a probe path)."""
    if path == LIVENESS_PATH:
        return 200, {"status": "ok"}
    return (200, {"status": "ready"}) if ready else (503, {"status": "loading"})


class ProbeRoutes:
    """ASGI: the probes, answered before ``guard``; every other request goes to it.

    ``admits(scope)`` is the guard's own verdict, asked quietly; ``details()``
    adds the tool count and generation for a probe it admits.
    """

    def __init__(
        self,
        guard: Any,
        admits: Callable[[Any], bool],
        details: Callable[[], Awaitable[dict[str, Any]]],
    ) -> None:
        self.guard = guard
        self.admits = admits
        self.details = details

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope["path"] not in (LIVENESS_PATH, READINESS_PATH):
            await self.guard(scope, receive, send)
            return
        from starlette.responses import JSONResponse, PlainTextResponse

        if scope["method"] not in PROBE_METHODS:
            allow = {"Allow": ", ".join(PROBE_METHODS)}
            response: Any = PlainTextResponse("Method Not Allowed", 405, headers=allow)
        else:
            status, body = probe_status(scope["path"], ready=True)
            if self.admits(scope):
                body.update(await self.details())
            response = JSONResponse(body, status)
        await response(scope, receive, send)


class _LoadingHandler(http.server.BaseHTTPRequestHandler):
    """Probes, and 503 for everything else; one request per connection (HTTP/1.0)."""

    server_version = "toolreg"
    timeout = 10  # seconds a silent connection may hold its thread

    def do_GET(self) -> None:  # noqa: N802 - the stdlib's naming
        self._answer()

    def do_HEAD(self) -> None:  # noqa: N802
        self._answer(body=False)

    def do_POST(self) -> None:  # noqa: N802
        self._drain()
        self._answer()

    do_PUT = do_PATCH = do_DELETE = do_OPTIONS = do_POST  # noqa: N815

    def _drain(self) -> None:
        try:
            length = int(self.headers.get("Content-Length") or 0)
        except ValueError:
            length = 0
        if 0 < length <= _MAX_DRAINED_BODY:
            self.rfile.read(length)

    def _answer(self, *, body: bool = True) -> None:
        path = self.path.partition("?")[0]
        if path in (LIVENESS_PATH, READINESS_PATH) and self.command in PROBE_METHODS:
            status, payload = probe_status(path, ready=False)
            headers = {}
        else:
            status, payload = 503, {"error": LOADING_MESSAGE}
            headers = {"Retry-After": str(LOADING_RETRY_AFTER)}
        data = json.dumps(payload, separators=(",", ":")).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for name, value in headers.items():
            self.send_header(name, value)
        self.end_headers()
        if body:
            self.wfile.write(data)

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the stdlib's name
        logger.debug("while loading: " + format, *args)


class _LoadingServer(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True

    def __init__(self, sock: socket.socket) -> None:
        # The socket is bound and listening already; it outlives this server.
        super().__init__(sock.getsockname()[:2], _LoadingHandler, bind_and_activate=False)
        self.socket.close()  # the unbound one the base class made
        self.socket = sock

    def handle_error(self, request: Any, client_address: Any) -> None:
        # A prober that hangs up early is no news; the stdlib would print a traceback.
        logger.debug("while loading: request from %s failed", client_address, exc_info=True)


@contextmanager
def answering_while_loading(sock: socket.socket) -> Iterator[None]:
    """Answer probes (not ready) and 503 on ``sock`` until the block ends.

    The socket stays open and listening afterwards; connections that arrive
    during the hand-over wait in its backlog for the next server.
    """
    server = _LoadingServer(sock)
    thread = threading.Thread(
        target=server.serve_forever,
        kwargs={"poll_interval": 0.05},
        name="toolreg-loading-probes",
        daemon=True,
    )
    thread.start()
    try:
        yield
    finally:
        server.shutdown()
        thread.join()
