"""``toolreg serve --deferred``: one ``ToolSession`` per MCP session.

A deferred server offers each session the always-loaded tools and a
``tool_search`` tool; what a session's searches find is offered to that
session from then on. The state is the registry's own ``ToolSession``, kept
weakly by the key ``ToolServer.session_key_of`` gives: for a handshake-era
client, the SDK's connection object (one per stdio connection or stateful
HTTP session; the ``ServerSession`` a handler gets is made per request). So
it lives exactly as long as the connection: when the SDK drops a session
(closed, timed out, or refused past its cap of live sessions), its found
tools go with it, and nothing has to be cleaned up. A 2026-07-28 client has
no connection that outlives a request; on stdio, where the process serves
one client, the server keeps one key for it. A request that belongs to no
session (stateless HTTP, or a 2026-07-28 client over HTTP) gets a new
``ToolSession`` of its own, dropped with the request.
"""

from __future__ import annotations

import weakref
from collections.abc import Iterable
from typing import Any

from .._definitions.deferred import TOOL_SEARCH
from .._registry.registry import ToolRegistry
from .._registry.session import ToolSession

__all__ = ["TOOL_SEARCH", "DeferredSessions"]


class DeferredSessions:
    """The ``ToolSession`` of each live MCP session of a deferred server."""

    def __init__(
        self,
        registry: ToolRegistry,
        always_loaded: Iterable[str],
        toolsets: Iterable[str] | None,
        min_score: float | None,
    ) -> None:
        if isinstance(always_loaded, str):
            always_loaded = (always_loaded,)  # one name, not its letters
        self.registry = registry
        self.always_loaded = tuple(always_loaded)
        self.toolsets = None if toolsets is None else tuple(toolsets)
        self.min_score = min_score
        self.new()  # a bad always-loaded item fails at start-up, not per session
        # Keyed by ToolServer.session_key_of (a connection, or the stdio key): the
        # entry goes when that object does.
        self._sessions: weakref.WeakKeyDictionary[Any, ToolSession] = weakref.WeakKeyDictionary()

    def __len__(self) -> int:
        return len(self._sessions)

    def new(self) -> ToolSession:
        """A session's state before its first search."""
        return self.registry.session(
            always_loaded=self.always_loaded, toolsets=self.toolsets, min_score=self.min_score
        )

    def of(self, key: Any) -> ToolSession:
        """The ``ToolSession`` kept for ``key``; a fresh one for None (no session)."""
        if key is None:
            return self.new()
        state = self._sessions.get(key)
        if state is None:
            state = self._sessions.setdefault(key, self.new())
        return state


def connection_of(session: Any) -> object | None:
    """The per-client ``Connection`` a per-request ``ServerSession`` speaks for.

    A private attribute, for want of a public one: the SDK (``mcp`` 2.3) keeps it as
    ``ServerSession._connection``, and the ``ServerRequestContext`` lowlevel handlers
    get has no ``connection`` (only the SDK's ``Context``, which they are not given,
    has that property). Switch once a public handle exists; the handshake-era
    tests of ``tests/_mcp_serve/test_mcp_serve_deferred.py`` fail if the attribute goes.
    """
    return getattr(session, "_connection", None)
