"""What a running tool may tell its caller while it works: progress and log messages.

A tool gets its :class:`ToolContext` from ``@tool`` (an annotated parameter) or
:func:`current_context`. Whoever runs a call with a listener, and every async
call, binds a :class:`CallScope` for the call in a ``ContextVar``: the handler's
thread, a worker that copied its context and an async handler's task all see
it. Plain synchronous calls bind nothing and pay nothing.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable, Iterator
from contextvars import ContextVar

from .client_log import current_client_log, level_of, log_to_client, rank

#: ``progress(progress, total, message)``: what dispatch's ``progress=`` is called with.
ProgressCallback = Callable[[float, "float | None", "str | None"], None]

#: Python logging levels of the MCP levels (Python has no notice, alert or emergency).
PYTHON_LEVEL = {
    "debug": logging.DEBUG,
    "info": logging.INFO,
    "notice": logging.INFO + 5,
    "warning": logging.WARNING,
    "error": logging.ERROR,
    "critical": logging.CRITICAL,
    "alert": logging.CRITICAL,
    "emergency": logging.CRITICAL,
}
#: The attribute a tool's log record carries its MCP level in (serve sends that one).
MCP_LEVEL = "mcp_level"
TOOL_LOGGERS = "toolreg.tools"
#: The record attributes naming the call a record was logged in.
TOOL_NAME = "tool_name"
TOOL_CALL_ID = "tool_call_id"

_listener_log = logging.getLogger("toolreg.dispatch")


class CallScope:
    """One bound call: the tool's name, its call id (from a batch) and where its progress goes."""

    __slots__ = ("tool", "progress", "call_id")

    def __init__(
        self, tool: str, progress: ProgressCallback | None, call_id: str | None = None
    ) -> None:
        self.tool = tool
        self.progress = progress
        self.call_id = call_id


_scope: ContextVar[CallScope | None] = ContextVar("toolreg_call_scope", default=None)


@contextlib.contextmanager
def call_scope(
    tool: object, progress: ProgressCallback | None, call_id: str | None = None
) -> Iterator[None]:
    """Bind a call's scope for the code run inside the block.

    ``tool`` is the name the caller asked for, which a model may have sent as any
    JSON value: only a real ``str`` is kept (no subclass's methods run), else "".
    """
    name = tool if type(tool) is str else ""
    token = _scope.set(CallScope(name, progress, call_id))
    try:
        yield
    finally:
        _scope.reset(token)


def current_scope() -> CallScope | None:
    """The scope bound to the call this code runs in, or None."""
    return _scope.get()


class CallRecordFilter(logging.Filter):
    """Stamps each record with the call it was logged in (``tool_name``, ``tool_call_id``)."""

    def filter(self, record: logging.LogRecord) -> bool:
        if not hasattr(record, TOOL_NAME):
            scope = _scope.get()
            setattr(record, TOOL_NAME, None if scope is None else scope.tool)
            setattr(record, TOOL_CALL_ID, None if scope is None else scope.call_id)
        return True


_stamping = False


def stamp_call_records() -> None:
    """Give the loggers that write on a call's behalf (``toolreg.dispatch``,
    ``toolreg.mcp``) the call stamp; once. Called by what runs calls (the
    dispatcher, the MCP manager), not on import: importing changes nothing."""
    global _stamping
    if _stamping:
        return
    _stamping = True
    # A logger's filter sees only its own records, so each gets one (a tool's
    # own records carry the call as extras).
    for name in ("toolreg.dispatch", "toolreg.mcp"):
        logging.getLogger(name).addFilter(CallRecordFilter())


class ToolContext:
    """A tool call's line back to its caller; its methods do nothing when nobody listens.

    ``report_progress`` reaches the ``progress=`` callback of ``dispatch`` (and
    a ``toolreg serve`` client's progress handler). ``log`` writes to the
    ``toolreg.tools.<name>`` logger, which ``toolreg serve`` forwards to the
    client of the call; ``log_to_client`` writes to that client alone.
    """

    __slots__ = ("tool", "call_id", "_progress")

    def __init__(
        self,
        tool: str | None,
        progress: ProgressCallback | None = None,
        call_id: str | None = None,
    ) -> None:
        #: The tool's name; None for ``current_context()`` outside a bound call.
        self.tool = tool
        #: The call's id in a ``dispatch_many`` batch, else None.
        self.call_id = call_id
        self._progress = progress

    def __repr__(self) -> str:
        return (
            f"ToolContext(tool={self.tool!r}, call_id={self.call_id!r}, "
            f"listening={self._progress is not None})"
        )

    def report_progress(
        self, progress: float, total: float | None = None, message: str | None = None
    ) -> None:
        """Tell the caller how far the call got: ``progress`` of ``total`` (if known).

        TypeError when ``progress`` or ``total`` is not a number or ``message``
        not a str. A listener that fails is logged, never the tool's failure.
        """
        _require_number("progress", progress)
        if total is not None:
            _require_number("total", total)
        if message is not None and not isinstance(message, str):
            raise TypeError(f"report_progress: message must be a str, not {type(message).__name__}")
        listener = self._progress
        if listener is None:
            return
        try:
            listener(progress, total, message)
        except Exception:
            _listener_log.warning(
                "the progress listener of tool %s failed", self.tool, exc_info=True
            )

    def log(self, level: str, message: str) -> None:
        """Log ``message`` at MCP ``level`` ("debug", "info", "notice", "warning", "error"...).

        The record goes to the ``toolreg.tools.<name>`` logger; the client of a
        ``toolreg serve`` call gets it at the level it asked for, even one the
        logger is set to drop. ValueError for a level that is not an MCP level.
        """
        rank(level)
        log_for_tool(self.tool, self.call_id, level, message)

    def log_to_client(self, level: str, message: str) -> bool:
        """Send ``message`` at MCP ``level`` to the client of this call, and only there.

        Returns whether it was queued: False outside a call made for a client
        (``toolreg serve``'s, or one a host bound with ``bound_client_log``),
        below the level the client asked for, or past the call's bound. Never
        blocks. ValueError for a level that is not an MCP level.
        """
        logger = TOOL_LOGGERS if self.tool is None else f"{TOOL_LOGGERS}.{self.tool}"
        return log_to_client(level, message, logger)


def log_for_tool(
    tool: str | None,
    call_id: str | None,
    level: str,
    message: str,
    extra: dict[str, object] | None = None,
) -> None:
    """What ``ToolContext.log`` does, for a tool whose messages come from elsewhere (MCP).

    ``level`` must be an MCP level; ``extra`` adds attributes to the record.
    """
    name = TOOL_LOGGERS if tool is None else f"{TOOL_LOGGERS}.{tool}"
    logger = logging.getLogger(name)
    python_level = PYTHON_LEVEL[level]
    if logger.isEnabledFor(python_level):
        # serve's relay forwards the record, with its MCP level, to the call's client.
        fields = {MCP_LEVEL: level, TOOL_NAME: tool, TOOL_CALL_ID: call_id, **(extra or {})}
        logger.log(python_level, "%s", message, extra=fields)
    else:
        log_to_client(level, str(message), name)


def lowest_level_wanted(tool: str) -> str | None:
    """The lowest MCP level a message of ``tool`` would reach anyone at, or None.

    A client bound to the call (``toolreg serve``) filters for itself, so then
    everything is wanted; else what the tool's logger lets through.
    """
    if current_client_log() is not None:
        return "debug"
    levelno = logging.getLogger(f"{TOOL_LOGGERS}.{tool}").getEffectiveLevel()
    if levelno > logging.CRITICAL:
        return None
    return level_of(levelno)


def _require_number(what: str, value: object) -> None:
    import numbers  # its ABCs cost half a millisecond at start-up; only a report needs them

    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"report_progress: {what} must be a number, not {type(value).__name__}")


def context_for(tool: str) -> ToolContext:
    """The context ``@tool`` hands tool ``tool``: the current call's listener, if any."""
    scope = _scope.get()
    if scope is None:
        return ToolContext(tool)
    return ToolContext(tool, scope.progress, scope.call_id)


def current_context() -> ToolContext:
    """The context of the call this code runs in, for hand-written handlers.

    Inside a bound call (one with a listener, or any async call), it knows the
    tool's name and call id and reports progress; elsewhere ``report_progress``
    does nothing and ``log`` writes to the ``toolreg.tools`` logger.
    """
    scope = _scope.get()
    if scope is None:
        return ToolContext(None)
    return ToolContext(scope.tool, scope.progress, scope.call_id)
