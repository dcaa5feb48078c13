"""``toolreg serve`` over HTTP: the ASGI app behind the guard and the probes, and its socket.

Imports ``mcp``; only HTTP serve loads it.
"""

from __future__ import annotations

import socket
import sys
from typing import TYPE_CHECKING, Any

import anyio.to_thread

from .event_store import RETRY_MS, SessionEvents, SessionScopes
from .http_guard import HttpGuard, is_loopback_host
from .probes import ProbeRoutes
from .server_calls import DisconnectWatch

if TYPE_CHECKING:
    from .server import ToolServer

HTTP_PATH = "/mcp"


def http_app(
    server: ToolServer, host: str, *, stateless: bool = False, token: str | None = None
) -> Any:
    """The ASGI app: streamable HTTP at ``/mcp`` behind the guard, and the health probes.

    The guard (``http_guard``) checks Host and Origin on a loopback ``host``,
    and the bearer ``token`` when there is one; ``/healthz`` and ``/readyz``
    are answered ahead of it, with details only for requests it admits (``probes``).
    """
    from mcp.server.transport_security import TransportSecuritySettings

    async def details() -> dict[str, Any]:
        tools = await anyio.to_thread.run_sync(server.definitions)
        return {"tools": len(tools), "generation": server.registry.generation}

    # Sessions keep their streams' events for a client that resumes (event_store).
    events = None if stateless else SessionEvents(server.event_store)
    app = server.server.streamable_http_app(
        streamable_http_path=HTTP_PATH,
        stateless_http=stateless,
        event_store=events,
        retry_interval=None if events is None else RETRY_MS,
        # The guard checks Host and Origin for every route and every loopback
        # address; the SDK's own check knows three spellings and only /mcp.
        transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False),
    )
    inner = DisconnectWatch(app) if events is None else SessionScopes(DisconnectWatch(app))
    guard = HttpGuard(inner, loopback=is_loopback_host(host), token=token)
    return ProbeRoutes(guard, guard.admits, details)


def bind(host: str, port: int) -> socket.socket:
    """A listening TCP socket on ``host:port`` (port 0: any free port)."""
    family, kind, proto, _, address = socket.getaddrinfo(
        host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
    )[0]
    sock = socket.socket(family, kind, proto)
    if sys.platform != "win32":
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind(address)
        sock.listen(2048)
    except OSError:
        sock.close()
        raise
    return sock


def url_for(sock: socket.socket) -> str:
    host, port = sock.getsockname()[:2]
    shown = f"[{host}]" if ":" in host else host
    return f"http://{shown}:{port}{HTTP_PATH}"
