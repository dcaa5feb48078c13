"""``toolreg serve``'s log messages to clients: MCP ``notifications/message``.

Per-session or per-request levels, each call's records to that call's client
only, and bounds per call and per connection. Producers on any thread never block.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import logging
import threading
from collections import OrderedDict, deque
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from typing import Any

import anyio
import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel.server import Server
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from .._contract.client_log import LEVELS, bound_client_log, current_client_log, level_of, rank
from .._contract.results import clip
from .._contract.tool_context import MCP_LEVEL
from .._mcp.rate_limit import TokenBucket
from .server_calls import session_key

logger = logging.getLogger("toolreg.serve")

#: The level of a handshake-era client that has not sent ``logging/setLevel``.
DEFAULT_LEVEL = "warning"
#: The level of a handshake-era request without a session (``--stateless``): it may
#: have asked for any level, and nothing kept it, so none is filtered out, as the
#: SDKs do for a client whose level they do not know. The loggers' own levels and
#: the per-call bound still apply.
SESSIONLESS_LEVEL = "debug"
#: Messages one tool call may send its client; the rest are counted, not sent.
MAX_PER_CALL = 100
#: Characters of one message; a longer one is cut with a marker.
MAX_CHARS = 2000
#: Records outside calls: messages a second, and the burst allowed at once.
CONNECTION_RATE = 10.0
CONNECTION_BURST = 50
#: Sessions whose level is remembered; the oldest is forgotten past this.
MAX_SESSIONS = 10_000

Send = Callable[[str, str, "str | None"], Awaitable[None]]


class Outbox:
    """Log messages for one client, queued from any thread and sent by :meth:`pump`.

    ``wants(level)`` filters; ``admit()`` applies the bound (a count or a rate).
    Made on the event loop it sends from. A ``lazy`` outbox starts its pump
    as a task of its own (``task``) at the first message, so a call that logs
    nothing costs no task and no wake-up of the loop; otherwise the owner runs
    :meth:`pump`.
    """

    def __init__(
        self,
        send: Send,
        wants: Callable[[str], bool],
        admit: Callable[[], bool],
        *,
        lazy: bool = False,
    ) -> None:
        self._send = send
        self._wants = wants
        self._admit = admit
        self._loop = asyncio.get_running_loop()
        # The pump sends in the context of the request that made the outbox.
        self._context = contextvars.copy_context() if lazy else None
        #: A lazy outbox's pump, once started.
        self.task: asyncio.Task[None] | None = None
        self._lock = threading.Lock()
        self._queue: deque[tuple[str, str, str | None]] = deque()
        self._wake = anyio.Event()
        self._closed = False
        #: Messages past the bound: counted, never sent.
        self.dropped = 0

    def log(self, level: str, message: str, logger: str | None = None) -> bool:
        if not self._wants(level):
            return False
        with self._lock:
            if self._closed:
                return False
            if not self._admit():
                self.dropped += 1
                return False
            self._queue.append((level, clip(message, MAX_CHARS), logger))
        try:
            self._loop.call_soon_threadsafe(self._wake_up)
        except RuntimeError:  # the loop has closed: the server is gone
            return False
        return True

    def _wake_up(self) -> None:
        """On the loop: start the pump if none runs yet, and wake it."""
        if self._context is not None and self.task is None:
            self.task = self._context.run(self._loop.create_task, self.pump())
        self._wake.set()

    def close(self, last: Callable[[int], str] | None = None) -> None:
        """No more messages; :meth:`pump` sends what is queued, then returns.

        ``last(dropped)`` words a closing warning, sent after the rest when the
        bound dropped anything. Called on the loop, it starts a pump not started
        yet, if anything is queued, before it returns.
        """
        with self._lock:
            if last is not None and self.dropped and self._wants("warning"):
                self._queue.append(("warning", last(self.dropped), "toolreg.serve"))
            self._closed = True
            queued = bool(self._queue)
        if self._context is not None and self.task is None and not queued:
            return  # nothing was sent, nothing will be: no pump to stop
        try:
            on_loop = asyncio.get_running_loop() is self._loop
        except RuntimeError:
            on_loop = False
        if on_loop:
            self._wake_up()  # now: the pump (started here if need be) is awaited next
            return
        with contextlib.suppress(RuntimeError):  # the loop has closed
            self._loop.call_soon_threadsafe(self._wake_up)

    async def pump(self) -> None:
        """Send queued messages in order until closed and empty. Runs on the loop."""
        while True:
            await self._wake.wait()
            self._wake = anyio.Event()
            while True:
                with self._lock:
                    if not self._queue:
                        closed = self._closed
                        break
                    level, message, name = self._queue.popleft()
                await send_quietly("a log message", self._send, level, message, name)
            if closed:
                return


async def send_quietly(what: str, send: Callable[..., Awaitable[None]], *args: Any) -> None:
    """``await send(*args)``; a client that is gone or a failed send is no error of the call."""
    try:
        await send(*args)
    except (anyio.BrokenResourceError, anyio.ClosedResourceError):
        pass  # the client's stream is gone; the call's answer goes the same way
    except Exception:
        # Never log under toolreg here: the relay would send that record too.
        logging.getLogger("mcp").debug("could not send %s", what, exc_info=True)


def _sender(ctx: ServerRequestContext[Any], related: types.RequestId | None) -> Send:
    session = ctx.session

    async def send(level: str, message: str, name: str | None) -> None:
        params = types.LoggingMessageNotificationParams(level=level, data=message, logger=name)  # type: ignore[arg-type]
        await session.send_notification(types.LoggingMessageNotification(params=params), related)

    return send


class ClientLevels:
    """The level each handshake-era session set with ``logging/setLevel``."""

    def __init__(self) -> None:
        self._levels: OrderedDict[str, str] = OrderedDict()

    def set(self, session: str | None, level: str) -> None:
        """Remember ``level`` for ``session``; stateless requests (None) have nowhere to keep it."""
        if session is None:
            return
        self._levels[session] = level
        self._levels.move_to_end(session)
        while len(self._levels) > MAX_SESSIONS:
            self._levels.popitem(last=False)

    def get(self, session: str | None) -> str:
        if session is None:
            return SESSIONLESS_LEVEL
        return self._levels.get(session, DEFAULT_LEVEL)

    def forget(self, session: str | None) -> None:
        if session is not None:
            self._levels.pop(session, None)


def at_least(threshold: str | None) -> Callable[[str], bool]:
    """A filter passing levels at or above ``threshold`` (None: nothing passes)."""
    if threshold is None:
        return lambda level: False
    floor = rank(threshold)
    return lambda level: rank(level) >= floor


def call_outbox(ctx: ServerRequestContext[Any], session_level: str) -> Outbox | None:
    """The outbox of one ``tools/call``, or None when its client gets no log messages.

    ``session_level`` is the handshake-era session's level; a 2026-07-28
    request carries its own in ``_meta`` (absent: no messages).
    """
    if ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:
        requested = (ctx.meta or {}).get(types.LOG_LEVEL_META_KEY)
        threshold = requested if requested in LEVELS else None
    else:
        threshold = session_level
    if threshold is None:
        return None
    sent = [0]

    def admit() -> bool:  # called under the outbox's lock
        sent[0] += 1
        return sent[0] <= MAX_PER_CALL

    return Outbox(_sender(ctx, ctx.request_id), at_least(threshold), admit, lazy=True)


def finish_call(outbox: Outbox) -> None:
    """Close a call's outbox; a last warning says how many messages the bound dropped."""
    outbox.close(
        lambda dropped: (
            f"{dropped} more log message(s) of this call were dropped: "
            f"at most {MAX_PER_CALL} are sent per call"
        )
    )


def stdio_outbox(ctx: ServerRequestContext[Any], levels: ClientLevels) -> Outbox | None:
    """For a handshake-era stdio connection, the outbox of records outside calls; else None.

    Over HTTP, records outside calls stay in the server's log: they may be
    about another client's requests. A 2026-07-28 connection has no stream
    that may carry a message no request asked for.
    """
    if ctx.request is not None or ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:
        return None
    bucket = TokenBucket(CONNECTION_RATE, CONNECTION_BURST)
    session = session_key(None)
    return Outbox(
        _sender(ctx, None), lambda level: rank(level) >= rank(levels.get(session)), bucket.take
    )


@contextlib.contextmanager
def relaying(relay: logging.Handler) -> Iterator[None]:
    """``relay`` on the ``toolreg`` logger for the length of the block."""
    root = logging.getLogger("toolreg")
    root.addHandler(relay)
    try:
        yield
    finally:
        root.removeHandler(relay)


class RecordRelay(logging.Handler):
    """A handler on the ``toolreg`` logger: records to the current call's client, or the stdio one.

    A call's outbox is found through the context (``client_log``), so a
    record logged by a tool's thread goes to the client of that tool's call.
    """

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        #: The handshake-era stdio client's outbox, for records outside calls.
        self.connection: Outbox | None = None
        self._busy = threading.local()

    def emit(self, record: logging.LogRecord) -> None:
        sink = current_client_log() or self.connection
        if sink is None or getattr(self._busy, "active", False):
            return
        self._busy.active = True  # whatever relaying logs must not be relayed again
        try:
            message = record.getMessage()
            if record.exc_info and record.exc_info[1] is not None:
                # The exception's type and message, never a traceback: paths stay here.
                exc = record.exc_info[1]
                message = f"{message}: {type(exc).__name__}: {exc}"
            # A ToolContext.log record carries its MCP level; Python's has fewer.
            level = getattr(record, MCP_LEVEL, None) or level_of(record.levelno)
            sink.log(level, message, record.name)
        except Exception:
            self.handleError(record)
        finally:
            self._busy.active = False


class ServeLogs:
    """Everything above, for one server: the levels clients set, the relay, each call's outbox."""

    def __init__(self) -> None:
        self.levels = ClientLevels()
        self.relay = RecordRelay()

    def install(self, server: Server[Any]) -> None:
        """Serve ``logging/setLevel`` (and so declare the ``logging`` capability).

        Added, not passed to the constructor, which warns that 2026-07-28 replaced
        it (by a level in each request's ``_meta``); handshake-era clients use it.
        """
        server.add_request_handler("logging/setLevel", types.SetLevelRequestParams, self.set_level)

    async def set_level(
        self, ctx: ServerRequestContext[Any], params: types.SetLevelRequestParams
    ) -> types.EmptyResult:
        self.levels.set(session_key(ctx.request), params.level)
        return types.EmptyResult()

    @contextlib.asynccontextmanager
    async def for_call(self, ctx: ServerRequestContext[Any]) -> AsyncIterator[None]:
        """The block runs one ``tools/call``; what it logs reaches that call's client.

        Messages go out as they come, on the request's stream, and all of them
        before the block ends, so before the call's answer.
        """
        outbox = call_outbox(ctx, self.levels.get(session_key(ctx.request)))
        if outbox is None:
            yield
            return
        try:
            with bound_client_log(outbox):
                yield
        finally:
            finish_call(outbox)
            if outbox.task is not None:
                # Cancelling this wait cancels the pump with it.
                await outbox.task

    @contextlib.asynccontextmanager
    async def for_connection(self, ctx: ServerRequestContext[Any]) -> AsyncIterator[None]:
        """The block lasts as long as one handshake-era connection; its level is forgotten after.

        A stdio connection also hears the records outside calls for that long.
        """
        outbox = stdio_outbox(ctx, self.levels)
        try:
            async with anyio.create_task_group() as tg:
                if outbox is not None:
                    self.relay.connection = outbox
                    tg.start_soon(outbox.pump)
                yield
                tg.cancel_scope.cancel()
        finally:
            self.levels.forget(session_key(ctx.request))
            if outbox is not None and self.relay.connection is outbox:
                self.relay.connection = None
