"""How ``toolreg serve`` runs tool calls: fair shares, and nothing for a client that left.

Calls run on their own bounded thread pool, at most ``max_calls_per_session``
per session; a call whose client went away is cancelled if it has not started.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
from collections.abc import Callable
from typing import Any, TypeVar

import anyio
import anyio.to_thread

from . import DEFAULT_MAX_CALLS, DEFAULT_MAX_CALLS_PER_SESSION

logger = logging.getLogger("toolreg.serve")

T = TypeVar("T")

#: The scope key under which ``DisconnectWatch`` keeps a request's "client gone" event.
GONE = "toolreg.client_gone"
_SESSION_HEADER = "mcp-session-id"


class ClientGone(Exception):
    """The client of a call disconnected before the call could start."""


class Departure:
    """Whether a request's client went away; cancels the scopes of its calls when it does.

    A set of scopes rather than an event a task waits on: a watcher task per
    call would be cancelled after every call, and a cancelled task leaves a
    reference cycle (its CancelledError's traceback holds its frames) for the
    garbage collector.
    """

    __slots__ = ("gone", "scopes")

    def __init__(self) -> None:
        self.gone = False
        self.scopes: set[anyio.CancelScope] = set()

    def set(self) -> None:
        self.gone = True
        for scope in list(self.scopes):  # a cancelled call leaves the set as it ends
            scope.cancel()


class DisconnectWatch:
    """ASGI middleware: a ``Departure`` in each request's scope, set when its client disconnects.

    The SDK's handshake-era HTTP transport keeps a session's calls going after
    the POST that carried one is gone. A client that cannot resume the stream
    will never read their answers, so ``CallLimits.run`` cancels them then;
    one that can resume is not given the ``Departure`` (see ``event_store``).
    """

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        departure = scope[GONE] = Departure()

        async def watched() -> Any:
            message = await receive()
            if message["type"] == "http.disconnect" and not departure.gone:
                logger.debug("the client of a %s request dropped its connection", scope["method"])
                departure.set()
            return message

        await self.app(scope, watched, send)


def session_key(request: Any) -> str | None:
    """Which session a call belongs to: ``stdio``, an HTTP session id, or None (none)."""
    if request is None:
        return "stdio"  # the one connection of a stdio server
    return request.headers.get(_SESSION_HEADER)


def departure_of(request: Any) -> Departure | None:
    """What ``DisconnectWatch`` sets when this request's client goes away."""
    return getattr(request, "scope", {}).get(GONE)


class _Call:
    """One call: its session and slots, and who gives the slots back.

    The request's task gives them back, unless it is cancelled while the
    call's thread runs (``orphaned``): the thread then hands them back when
    it returns, so a call holds its slots exactly as long as it runs, with no
    task per call to wait for the thread. ``lock`` orders the two.
    """

    __slots__ = ("session", "slots", "lock", "started", "finished", "abandoned", "orphaned")

    def __init__(self, session: str | None, slots: anyio.CapacityLimiter | None) -> None:
        self.session = session
        self.slots = slots
        self.lock = threading.Lock()
        self.started = False
        self.finished = False
        self.abandoned = False
        self.orphaned = False


class CallLimits:
    """The thread pool of tool calls and each session's share of it."""

    def __init__(
        self,
        max_calls: int = DEFAULT_MAX_CALLS,
        max_calls_per_session: int = DEFAULT_MAX_CALLS_PER_SESSION,
    ) -> None:
        self.max_calls = max_calls
        self.max_calls_per_session = max_calls_per_session
        self._pool: anyio.CapacityLimiter | None = None
        self._threads: anyio.CapacityLimiter | None = None
        #: Only sessions with calls running or waiting have an entry.
        self._sessions: dict[str, anyio.CapacityLimiter] = {}

    def _limiters(self) -> tuple[anyio.CapacityLimiter, anyio.CapacityLimiter]:
        if self._pool is None or self._threads is None:  # made on the event loop
            # Calls get their own threads, never anyio's default pool, so tools/list, ping,
            # /healthz and the stdio reader never queue behind slow tools.
            self._pool = anyio.CapacityLimiter(self.max_calls)
            self._threads = anyio.CapacityLimiter(self.max_calls)
        return self._pool, self._threads

    async def run(
        self,
        what: str,
        session: str | None,
        gone: Departure | None,
        fn: Callable[..., T],
        *args: Any,
    ) -> T:
        """``fn(*args)`` in a pool thread once ``session`` has a free slot and the pool one.

        Raises ClientGone when ``gone`` is set before the call started (it then
        never starts); cancelling the caller cancels a call that has not started.
        ``what`` names the call in the log.
        """
        if gone is None:
            return await self._run(what, session, fn, args)
        if gone.gone:
            raise ClientGone
        with anyio.CancelScope() as scope:
            gone.scopes.add(scope)
            try:
                return await self._run(what, session, fn, args)
            finally:
                gone.scopes.discard(scope)
        raise ClientGone  # the scope was cancelled: the client went away

    async def _run(
        self, what: str, session: str | None, fn: Callable[..., T], args: tuple[Any, ...]
    ) -> T:
        pool, threads = self._limiters()
        call = _Call(session, self._session_slots(session))
        loop = asyncio.get_running_loop()

        def work() -> T:
            with call.lock:
                if call.abandoned:  # its client gave up between admission and this thread
                    raise ClientGone
                call.started = True
            try:
                return fn(*args)
            finally:
                with call.lock:
                    call.finished = True
                    orphaned = call.orphaned
                if orphaned:
                    with contextlib.suppress(RuntimeError):  # the loop has closed
                        loop.call_soon_threadsafe(self._release, call, pool)

        try:
            await self._admit(call, pool)
        except BaseException:
            logger.info("%s was cancelled before it started: its client went away", what)
            raise
        try:
            result = await anyio.to_thread.run_sync(work, abandon_on_cancel=True, limiter=threads)
        except BaseException:
            with call.lock:
                running = call.started and not call.finished
                call.orphaned = running
                call.abandoned = not call.started
            if call.abandoned:
                logger.info("%s was cancelled before it started: its client went away", what)
            if not running:
                self._release(call, pool)
            raise
        self._release(call, pool)
        return result

    async def _admit(self, call: _Call, pool: anyio.CapacityLimiter) -> None:
        """A slot of the session, then one of the pool; each queue is first come, first served."""
        try:
            for limiter in (call.slots, pool):
                if limiter is None:
                    continue
                # A free slot is taken at once: an await would cost a turn of the loop.
                # The nowait form never passes a waiting call, so the queue stays fair.
                try:
                    limiter.acquire_on_behalf_of_nowait(call)
                except anyio.WouldBlock:
                    await limiter.acquire_on_behalf_of(call)
        except BaseException:
            self._release(call, pool)
            raise

    def _session_slots(self, session: str | None) -> anyio.CapacityLimiter | None:
        if session is None:
            return None
        slots = self._sessions.get(session)
        if slots is None:
            slots = self._sessions[session] = anyio.CapacityLimiter(self.max_calls_per_session)
        return slots

    def _release(self, call: _Call, pool: anyio.CapacityLimiter) -> None:
        """Give back what ``call`` holds (on the event loop); forget an idle session."""
        for slots in (pool, call.slots):
            if slots is not None:
                with contextlib.suppress(RuntimeError):  # not held: admission stopped short
                    slots.release_on_behalf_of(call)
        slots = call.slots
        if slots is None or call.session is None or slots.borrowed_tokens:
            return
        if not slots.statistics().tasks_waiting:
            self._sessions.pop(call.session, None)  # an idle session keeps nothing here
