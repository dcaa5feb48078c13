"""Log messages from inside a tool call to the client that made the call.

Whoever runs a call on behalf of a client (``toolreg serve``, or a host with
clients of its own) binds a :class:`ClientLog` for the length of the call with
:func:`bound_client_log`; the tool reaches it through
``ToolContext.log_to_client``, in its own thread or one that copied its context.

The levels are MCP's (RFC 5424 severities), lowest first.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterator
from contextvars import ContextVar
from typing import Protocol

#: The MCP log levels, lowest first.
LEVELS: tuple[str, ...] = (
    "debug",
    "info",
    "notice",
    "warning",
    "error",
    "critical",
    "alert",
    "emergency",
)
_RANK = {level: rank for rank, level in enumerate(LEVELS)}


class ClientLog(Protocol):
    """Where one call's log messages go (see ``bound_client_log``).

    ``log`` must never block or raise: it runs on the tool's thread.
    """

    def log(self, level: str, message: str, logger: str | None = None) -> bool:
        """Queue ``message`` for the client; False when it was not (filtered, over a limit)."""


_current: ContextVar[ClientLog | None] = ContextVar("toolreg_client_log", default=None)


def rank(level: str) -> int:
    """The position of an MCP level in :data:`LEVELS`; ValueError naming it if unknown."""
    try:
        return _RANK[level]
    except (KeyError, TypeError):
        expected = ", ".join(LEVELS)
        raise ValueError(f"unknown log level {level!r}; expected one of {expected}") from None


def level_of(levelno: int) -> str:
    """The MCP level of a Python logging level (``logging.WARNING`` is ``"warning"``)."""
    if levelno < logging.INFO:
        return "debug"
    if levelno < logging.WARNING:
        # Python has no NOTICE; a level between INFO and WARNING is one.
        return "info" if levelno == logging.INFO else "notice"
    if levelno < logging.ERROR:
        return "warning"
    if levelno < logging.CRITICAL:
        return "error"
    return "critical"


def current_client_log() -> ClientLog | None:
    """The client log bound to the call this code runs in, or None."""
    return _current.get()


def log_to_client(level: str, message: str, logger: str | None = None) -> bool:
    """Send ``message`` at MCP ``level`` to the client of the current tool call.

    Returns whether it was queued: False outside a call made by a client, below
    the level the client asked for, or past the call's limit. Never blocks.
    ValueError for a level that is not one of :data:`LEVELS`.
    """
    rank(level)
    sink = _current.get()
    return False if sink is None else sink.log(level, str(message), logger)


@contextlib.contextmanager
def bound_client_log(sink: ClientLog | None) -> Iterator[None]:
    """Make ``sink`` the client log of the tool calls run inside the block (None: no client).

    A host that runs calls for clients of its own wraps each ``dispatch`` in
    it; the tool's ``ctx.log_to_client`` then reaches ``sink``.
    """
    token = _current.set(sink)
    try:
        yield
    finally:
        _current.reset(token)
