"""What a running tool may tell its caller while it works: progress and log messages.

A ``@tool`` function asks for a :class:`ToolContext` by annotating a parameter
with it; a hand-written handler calls :func:`current_context`. Whoever runs a
call with a listener (``dispatch(..., progress=callback)``, ``toolreg serve``
for a client that sent a ``progressToken``) binds a :class:`CallScope` for the
length of the call, in a ``ContextVar``: the handler's own thread, a worker
that copied the caller's context (calls with a timeout) and an async handler's
task all see it. Plain calls bind nothing and pay nothing.
"""

from __future__ import annotations

import contextlib
import logging
import numbers
from collections.abc import Callable, Iterator
from contextvars import ContextVar

from .client_log import log_to_client, rank

#: ``progress(progress, total, message)``: what dispatch's ``progress=`` is called with.
ProgressCallback = Callable[[float, "float | None", "str | None"], None]

#: Python logging levels of the MCP levels (Python has no notice, alert or emergency).
_PYTHON_LEVEL = {
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

_listener_log = logging.getLogger("toolreg.dispatch")


class CallScope:
    """One call with a listener: the tool's name and where its progress goes."""

    __slots__ = ("tool", "progress")

    def __init__(self, tool: str, progress: ProgressCallback | None) -> None:
        self.tool = tool
        self.progress = progress


_scope: ContextVar[CallScope | None] = ContextVar("toolreg_call_scope", default=None)


@contextlib.contextmanager
def call_scope(tool: str, progress: ProgressCallback | None) -> Iterator[None]:
    """Bind a call's scope for the code run inside the block."""
    token = _scope.set(CallScope(tool, progress))
    try:
        yield
    finally:
        _scope.reset(token)


class ToolContext:
    """A tool call's line back to its caller; both methods are no-ops when nobody listens.

    ``report_progress`` reaches the ``progress=`` callback of ``dispatch`` (and
    a ``toolreg serve`` client's progress handler). ``log`` writes to the
    ``toolreg.tools.<name>`` logger, which ``toolreg serve`` forwards to the
    client of the call.
    """

    __slots__ = ("tool", "_progress")

    def __init__(self, tool: str | None, progress: ProgressCallback | None = None) -> None:
        #: The tool's name; None for ``current_context()`` outside a call that has a listener.
        self.tool = tool
        self._progress = progress

    def __repr__(self) -> str:
        return f"ToolContext(tool={self.tool!r}, listening={self._progress is not None})"

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
        name = TOOL_LOGGERS if self.tool is None else f"{TOOL_LOGGERS}.{self.tool}"
        logger = logging.getLogger(name)
        python_level = _PYTHON_LEVEL[level]
        if logger.isEnabledFor(python_level):
            # serve's relay forwards the record, with its MCP level, to the call's client.
            logger.log(python_level, "%s", message, extra={MCP_LEVEL: level})
        else:
            log_to_client(level, str(message), name)


def _require_number(what: str, value: object) -> None:
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"report_progress: {what} must be a number, not {type(value).__name__}")


def context_for(tool: str) -> ToolContext:
    """The context ``@tool`` hands tool ``tool``: the current call's listener, if any."""
    scope = _scope.get()
    return ToolContext(tool, None if scope is None else scope.progress)


def current_context() -> ToolContext:
    """The context of the call this code runs in, for hand-written handlers.

    Inside a call that has a listener, it knows the tool's name and reports
    progress; elsewhere ``report_progress`` does nothing and ``log`` writes to
    the ``toolreg.tools`` logger.
    """
    scope = _scope.get()
    if scope is None:
        return ToolContext(None)
    return ToolContext(scope.tool, scope.progress)
