"""``toolreg serve``'s progress notifications: a tool's ``report_progress`` to its client.

Sent only when the call carried a ``progressToken``; a newer report replaces
one still waiting, and the latest is always sent before the call's answer.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import anyio
from mcp.server.context import ServerRequestContext

from .._contract.results import clip
from .._contract.tool_context import ProgressCallback
from .server_log import send_quietly

#: Characters of a progress message; a longer one is cut with a marker.
MAX_MESSAGE_CHARS = 2000

Send = Callable[[float, "float | None", "str | None"], Awaitable[None]]


class ProgressRelay:
    """One call's progress reports, taken from any thread and sent by :meth:`pump`."""

    def __init__(self, send: Send) -> None:
        self._send = send
        self._loop = asyncio.get_running_loop()
        self._lock = threading.Lock()
        self._pending: tuple[float, float | None, str | None] | None = None
        self._last: float | None = None
        self._wake = anyio.Event()
        self._closed = False

    def report(self, progress: float, total: float | None, message: str | None) -> None:
        """The dispatch ``progress`` callback; never blocks."""
        with self._lock:
            if self._closed or (self._last is not None and progress <= self._last):
                return
            self._last = progress
            text = None if message is None else clip(message, MAX_MESSAGE_CHARS)
            self._pending = (progress, total, text)
        with contextlib.suppress(RuntimeError):  # the loop has closed: the server is gone
            self._loop.call_soon_threadsafe(self._wake.set)

    def close(self) -> None:
        """No more reports; :meth:`pump` sends the one waiting, then returns."""
        with self._lock:
            self._closed = True
        with contextlib.suppress(RuntimeError):
            self._loop.call_soon_threadsafe(self._wake.set)

    async def pump(self) -> None:
        while True:
            await self._wake.wait()
            self._wake = anyio.Event()
            with self._lock:
                pending, self._pending = self._pending, None
                closed = self._closed
            if pending is not None:
                await send_quietly("a progress notification", self._send, *pending)
            if closed:
                return


def progress_token(ctx: ServerRequestContext[Any]) -> str | int | None:
    """The ``progressToken`` of the request's ``_meta``, or None."""
    meta: Any = ctx.meta or {}
    token = meta.get("progress_token", meta.get("progressToken"))
    return token if isinstance(token, (str, int)) and not isinstance(token, bool) else None


@contextlib.asynccontextmanager
async def progress_for_call(
    ctx: ServerRequestContext[Any],
) -> AsyncIterator[ProgressCallback | None]:
    """The block runs one ``tools/call``; yields its dispatch ``progress`` callback, or None.

    Every report is sent before the block ends, so before the call's answer.
    """
    token = progress_token(ctx)
    if token is None:
        yield None
        return
    session, related = ctx.session, ctx.request_id

    async def send(progress: float, total: float | None, message: str | None) -> None:
        await session.send_progress_notification(
            token, progress, total, message, related_request_id=related
        )

    relay = ProgressRelay(send)
    async with anyio.create_task_group() as tg:
        tg.start_soon(relay.pump)
        try:
            yield relay.report
        finally:
            relay.close()
