"""What an upstream MCP server says about a call while it runs: progress and log messages.

The session queues them on the manager's loop; the caller's thread delivers them
in the call's own context, so the loop never runs host code. The server is not
trusted: what it sends is bounded.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import json
import logging
import math
import threading
import time
from collections import deque
from collections.abc import Iterator
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any

from .._contract.results import clip
from .._contract.tool_context import (
    MCP_LEVEL,
    PYTHON_LEVEL,
    ToolContext,
    current_scope,
    log_for_tool,
    lowest_level_wanted,
)
from .rate_limit import TokenBucket

if TYPE_CHECKING:
    from .link import ServerLink

logger = logging.getLogger("toolreg.mcp")

#: Characters of a progress message or a log message; longer ones are cut with a marker.
MAX_CHARS = 2000
#: Characters of the server's logger name.
MAX_LOGGER_CHARS = 200
#: Log messages relayed per call; the rest are counted and said in one warning.
MAX_LOGS_PER_CALL = 100
#: Progress reports the host hears a second, and the burst allowed at once.
PROGRESS_RATE = 10.0
PROGRESS_BURST = 10
#: Log messages tied to no call: a second, and the burst allowed at once.
LOOSE_RATE = 10.0
LOOSE_BURST = 50
#: The record attribute holding the server's own logger name.
SERVER_LOGGER = "mcp_logger"

#: The relay of the call whose task is running, on the manager's loop.
_running: ContextVar[CallRelay | None] = ContextVar("toolreg_mcp_call_relay", default=None)


def _finite(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _as_text(data: Any) -> str:
    if isinstance(data, str):
        return clip(data, MAX_CHARS)
    try:
        text = json.dumps(data, ensure_ascii=False, default=repr)
    except (ValueError, RecursionError, TypeError):
        text = f"<{type(data).__name__} that is not JSON>"
    return clip(text, MAX_CHARS)


class CallRelay:
    """One proxied call's progress and log messages: queued on the loop, delivered by the caller.

    Made on the caller's thread, inside the call: it takes the call's
    progress listener and call id from the call's scope.
    """

    def __init__(self, tool: str, listen: bool = True) -> None:
        scope = current_scope() if listen else None
        self.tool = tool
        self._listener = None if scope is None else scope.progress
        self._call_id = None if scope is None else scope.call_id
        #: The lowest MCP level the call asks the server for (None: no log messages).
        self.log_floor = lowest_level_wanted(tool) if listen else None
        self._lock = threading.Lock()
        self._ready = threading.Event()
        self._bucket = TokenBucket(PROGRESS_RATE, PROGRESS_BURST)
        self._pending: deque[tuple[float, float | None, str | None]] = deque()
        self._last: float | None = None
        self._logs: list[tuple[str, str, str | None]] = []
        self._taken = 0
        self._closed = False
        #: Log messages past the call's bound: counted, never relayed.
        self.dropped = 0

    @property
    def listening(self) -> bool:
        """Whether anyone hears this call's progress (only then is a token sent)."""
        return self._listener is not None

    # -- the loop's side --------------------------------------------------------

    async def on_progress(self, progress: float, total: float | None, message: str | None) -> None:
        """The SDK's ``progress_callback`` for the call."""
        self.offer_progress(progress, total, message)

    def offer_progress(self, progress: Any, total: Any, message: Any) -> None:
        if not _finite(progress):
            return
        if total is not None and not (_finite(total) and total >= 0):
            total = None
        text = clip(message, MAX_CHARS) if isinstance(message, str) else None
        with self._lock:
            if self._closed or (self._last is not None and progress <= self._last):
                return  # MCP requires progress to increase
            self._last = progress
            if len(self._pending) < PROGRESS_BURST:
                self._pending.append((progress, total, text))
            else:  # a flood: the newest takes the last place
                self._pending[-1] = (progress, total, text)
        self._ready.set()

    def offer_log(self, level: str, data: Any, name: Any) -> bool:
        """Queue a log message; False once the call has ended (the caller logs it loose)."""
        if self._closed:
            return False
        if self._taken >= MAX_LOGS_PER_CALL:  # only the loop writes _taken
            with self._lock:
                self.dropped += 1
            return True
        self._taken += 1
        entry = (level, _as_text(data), clip(name, MAX_LOGGER_CHARS) if type(name) is str else None)
        with self._lock:
            if self._closed:
                return False
            self._logs.append(entry)
        self._ready.set()
        return True

    # -- the caller's side --------------------------------------------------------

    def wait(self, future: concurrent.futures.Future[Any], timeout: float) -> Any:
        """``future.result(timeout)``, delivering what arrives meanwhile on this thread.

        ``concurrent.futures.TimeoutError`` when ``timeout`` passes first.
        Whatever happens, what is queued is delivered before this returns.
        """
        deadline = time.monotonic() + timeout
        future.add_done_callback(lambda _: self._ready.set())
        try:
            while not future.done():
                left = deadline - time.monotonic()
                if left <= 0:
                    raise concurrent.futures.TimeoutError()
                self._ready.wait(min(left, self._due()))
                self._deliver(final=False)
            return future.result(0)
        finally:
            with self._lock:
                self._closed = True
            self._deliver(final=True)
            if self.dropped:
                logger.warning(
                    "%d more log message(s) of %s were dropped: at most %d are relayed per call",
                    self.dropped,
                    self.tool,
                    MAX_LOGS_PER_CALL,
                )

    def _due(self) -> float:
        """Seconds to sleep before a waiting report may go (an hour when none waits)."""
        with self._lock:
            return max(self._bucket.wait_time(), 0.001) if self._pending else 3600.0

    def _deliver(self, final: bool) -> None:
        with self._lock:
            self._ready.clear()
            logs, self._logs = self._logs, []
            reports = []
            while self._pending and (final or self._bucket.take()):
                reports.append(self._pending.popleft())
        for level, text, name in logs:
            log_for_tool(self.tool, self._call_id, level, text, {SERVER_LOGGER: name})
        if reports and self._listener is not None:
            # ToolContext holds a failing listener to its rules: logged, never the call's failure.
            context = ToolContext(self.tool, self._listener, self._call_id)
            for report in reports:
                context.report_progress(*report)


class ServerRelays:
    """A link's calls in flight, and where the server's log messages go."""

    def __init__(self, link: ServerLink) -> None:
        self._link = link
        #: The relays of the calls running on the loop now.
        self.running: set[CallRelay] = set()
        self._bucket = TokenBucket(LOOSE_RATE, LOOSE_BURST)
        self._dropped = 0

    @contextlib.contextmanager
    def running_call(self, relay: CallRelay) -> Iterator[None]:
        """The block runs ``relay``'s call on the loop: its messages are tied to it."""
        token = _running.set(relay)
        self.running.add(relay)
        try:
            yield
        finally:
            self.running.discard(relay)
            _running.reset(token)

    async def on_log(self, params: Any) -> None:
        """The SDK's ``logging_callback`` (on the loop): to its call, else logged loose."""
        relay = _running.get()
        if relay is None and self._link.config.transport == "stdio" and len(self.running) == 1:
            (relay,) = self.running  # the server's one call running is the only one it can be
        if relay is not None and relay.offer_log(params.level, params.data, params.logger):
            return
        self._loose(params.level, params.data, params.logger)

    def _loose(self, level: str, data: Any, name: Any) -> None:
        if not self._bucket.take():
            self._dropped += 1
            return
        dropped, self._dropped = self._dropped, 0
        note = f" ({dropped} earlier message(s) dropped: too many)" if dropped else ""
        logger.log(
            PYTHON_LEVEL[level],
            "%s says: %s%s",
            self._link.label,
            _as_text(data),
            note,
            extra={MCP_LEVEL: level, SERVER_LOGGER: name if type(name) is str else None},
        )
