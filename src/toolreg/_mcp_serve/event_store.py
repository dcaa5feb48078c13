"""Resumable HTTP streams for ``toolreg serve``: the SDK's ``EventStore``, per session and bounded.

:class:`MemoryEventStore` keeps events in memory, bounded; :class:`SessionEvents`
keys them by session so one session cannot replay another's, learning the
session from the :class:`SessionScopes` middleware.
"""

from __future__ import annotations

import logging
import secrets
import weakref
from collections import OrderedDict, deque
from contextvars import ContextVar
from typing import Any

import mcp_types as types
from mcp.server.streamable_http import EventCallback, EventId, EventMessage, EventStore, StreamId
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS

logger = logging.getLogger("toolreg.serve")

#: Streams kept; past this the least recently written one is let go.
MAX_STREAMS = 1000
#: Events kept per stream; past this its oldest is let go.
MAX_EVENTS_PER_STREAM = 256
#: Characters of stored messages (their JSON) over all streams.
MAX_CHARS = 32 * 1024 * 1024
#: Milliseconds a client should wait before resuming (the SSE ``retry`` field).
RETRY_MS = 1000

_SESSION_HEADER = b"mcp-session-id"
#: The first protocol revision whose clients resume (they understand the priming event).
RESUMABLE_SINCE = "2025-11-25"


def resumable(request: Any) -> bool:
    """Whether the client of this HTTP request can resume its stream when it breaks.

    Only handshake-era sessions of 2025-11-25 and later can: stateless and
    2026-07-28 requests carry no session, and older clients cannot resume.
    """
    if request is None:
        return False
    headers = request.headers
    version = headers.get("mcp-protocol-version", "")
    return (
        headers.get("mcp-session-id") is not None
        and version in HANDSHAKE_PROTOCOL_VERSIONS
        and version >= RESUMABLE_SINCE
    )


class SessionScope:
    """One HTTP session, as the event store knows it: a random key."""

    __slots__ = ("key", "__weakref__")

    def __init__(self) -> None:
        self.key = secrets.token_hex(8)


_scope: ContextVar[SessionScope | None] = ContextVar("toolreg_session_scope", default=None)


class SessionScopes:
    """ASGI middleware: the :class:`SessionScope` of the request's session, in the context.

    A request with ``Mcp-Session-Id`` gets its session's scope. One without
    opens a session (or is stateless): it gets a new scope, which the session
    id in its answer then names. The SDK starts a session's own tasks (the one
    that stores its messages) from that first request, so they carry the scope
    too. A scope lives while some context or stream holds it.
    """

    def __init__(self, app: Any) -> None:
        self.app = app
        self._sessions: weakref.WeakValueDictionary[str, SessionScope] = (
            weakref.WeakValueDictionary()
        )

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        session = dict(scope["headers"]).get(_SESSION_HEADER)
        known = self._sessions.get(session.decode("latin-1")) if session else None
        current = known or SessionScope()

        async def naming_send(message: Any) -> None:
            if message["type"] == "http.response.start":
                opened = dict(message.get("headers") or ()).get(_SESSION_HEADER)
                if opened:
                    self._sessions[opened.decode("latin-1")] = current
            await send(message)

        token = _scope.set(current)
        try:
            await self.app(scope, receive, send if session else naming_send)
        finally:
            _scope.reset(token)


class SessionEvents(EventStore):
    """The store the SDK sees: ``inner``, with each session's streams and event ids kept apart."""

    def __init__(self, inner: EventStore) -> None:
        self.inner = inner

    async def store_event(
        self, stream_id: StreamId, message: types.JSONRPCMessage | None
    ) -> EventId:
        scope = _scope.get()
        if scope is None:
            # No session to file it under: store nothing, hand out no id to resume from.
            logger.debug("an event of stream %s came from no session; not stored", stream_id)
            return ""
        event_id = await self.inner.store_event(f"{scope.key}/{stream_id}", message)
        return f"{scope.key}.{event_id}"

    async def replay_events_after(
        self, last_event_id: EventId, send_callback: EventCallback
    ) -> StreamId | None:
        scope = _scope.get()
        key, dot, inner_id = last_event_id.partition(".")
        if scope is None or not dot or key != scope.key:
            return None  # not an event of this session: nothing to replay

        async def send(event: EventMessage) -> None:
            named = f"{key}.{event.event_id}" if event.event_id else None
            await send_callback(EventMessage(event.message, named))

        stream = await self.inner.replay_events_after(inner_id, send)
        return None if stream is None else stream.partition("/")[2]


class _Stream:
    __slots__ = ("name", "token", "events", "next", "chars")

    def __init__(self, name: str) -> None:
        self.name = name
        self.token = secrets.token_urlsafe(12)
        #: (sequence number, message JSON or None for a priming event)
        self.events: deque[tuple[int, str | None]] = deque()
        self.next = 0
        self.chars = 0


class MemoryEventStore(EventStore):
    """Events in memory, bounded: streams, events per stream, characters in all.

    Messages are kept as their JSON (what they cost is what is counted) and
    read back on replay. A resume from an event already let go of replays the
    events still kept after it; one from an unknown id replays nothing.
    """

    def __init__(
        self,
        max_streams: int = MAX_STREAMS,
        max_events_per_stream: int = MAX_EVENTS_PER_STREAM,
        max_chars: int = MAX_CHARS,
    ) -> None:
        if min(max_streams, max_events_per_stream, max_chars) < 1:
            raise ValueError("MemoryEventStore bounds must be whole numbers >= 1")
        self.max_streams = max_streams
        self.max_events_per_stream = max_events_per_stream
        self.max_chars = max_chars
        #: By name, least recently written first.
        self._streams: OrderedDict[str, _Stream] = OrderedDict()
        self._by_token: dict[str, _Stream] = {}
        self.chars = 0

    def __len__(self) -> int:
        """Events kept, over all streams."""
        return sum(len(stream.events) for stream in self._streams.values())

    async def store_event(
        self, stream_id: StreamId, message: types.JSONRPCMessage | None
    ) -> EventId:
        stream = self._streams.get(stream_id)
        if stream is None:
            stream = self._streams[stream_id] = _Stream(stream_id)
            self._by_token[stream.token] = stream
        else:
            self._streams.move_to_end(stream_id)
        payload = (
            None if message is None else message.model_dump_json(by_alias=True, exclude_unset=True)
        )
        size = 0 if payload is None else len(payload)
        number = stream.next
        stream.next += 1
        stream.events.append((number, payload))
        stream.chars += size
        self.chars += size
        self._bound(stream)
        return f"{stream.token}-{number}"

    async def replay_events_after(
        self, last_event_id: EventId, send_callback: EventCallback
    ) -> StreamId | None:
        token, _, number = last_event_id.rpartition("-")
        stream = self._by_token.get(token)
        if stream is None or not number.isdigit():
            return None
        after = int(number)
        for event_number, payload in list(stream.events):
            if event_number > after and payload is not None:
                message = types.jsonrpc_message_adapter.validate_json(payload)
                await send_callback(EventMessage(message, f"{stream.token}-{event_number}"))
        return stream.name

    def _bound(self, current: _Stream) -> None:
        while len(current.events) > self.max_events_per_stream:
            self._drop_oldest_event(current)
        while len(self._streams) > self.max_streams:
            self._drop_stream(next(iter(self._streams.values())))
        while self.chars > self.max_chars:
            oldest = next(iter(self._streams.values()))
            if oldest is current:  # alone over the bound: it loses its own oldest events
                self._drop_oldest_event(current)
            else:
                self._drop_stream(oldest)

    def _drop_oldest_event(self, stream: _Stream) -> None:
        _, payload = stream.events.popleft()
        size = 0 if payload is None else len(payload)
        stream.chars -= size
        self.chars -= size

    def _drop_stream(self, stream: _Stream) -> None:
        del self._streams[stream.name]
        del self._by_token[stream.token]
        self.chars -= stream.chars
