"""The transports a server link connects over, watched so a lost server is noticed.

The SDK reports a dead stdio server (or a closed HTTP stream) to whoever waits
on a request, but says nothing to a session that is merely idle. Wrapping the
transport's read stream tells the link the moment the stream ends.
"""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Any, TextIO

import anyio
import httpx2
import mcp_types
from mcp import StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

from .._contract.results import describe_exception
from .._policy.config import McpServerConfig

if sys.version_info < (3, 11):  # pragma: no cover - 3.10 only
    from exceptiongroup import BaseExceptionGroup


def open_transport(
    config: McpServerConfig, on_close: Callable[[], None]
) -> AbstractAsyncContextManager[Any]:
    """The server's transport (stdio or streamable HTTP); ``on_close`` runs when it ends."""
    if config.command is not None:
        params = StdioServerParameters(
            command=config.command,
            args=list(config.args),
            env=dict(config.env) or None,
            cwd=config.cwd,
        )
        return _watched(stdio_client(params, errlog=_errlog()), on_close)
    assert config.url is not None
    return _watched(_http(config.url, dict(config.headers)), on_close)


def connection_lost(exc: BaseException) -> bool:
    """Whether ``exc`` means the server is gone (rather than that one request failed)."""
    if isinstance(exc, MCPError):
        return exc.code == mcp_types.CONNECTION_CLOSED
    return isinstance(exc, (OSError, httpx2.TransportError, anyio.BrokenResourceError))


def describe(exc: BaseException) -> str:
    """One line for a failure; an exception group is described by its first leaf."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    if isinstance(exc, MCPError):
        return f"MCP error {exc.code}: {exc.message}"
    return describe_exception(exc)


class _WatchedReadStream:
    """A transport's read stream that reports its end: the server is gone."""

    def __init__(self, inner: Any, on_close: Callable[[], None]) -> None:
        self._inner = inner
        self._on_close = on_close

    @property
    def last_context(self) -> Any:  # the SDK reads it duck-typed
        return getattr(self._inner, "last_context", None)

    async def receive(self) -> Any:
        try:
            return await self._inner.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError):
            self._on_close()
            raise

    def close(self) -> None:
        self._inner.close()

    async def aclose(self) -> None:
        await self._inner.aclose()

    def __aiter__(self) -> _WatchedReadStream:
        return self

    async def __anext__(self) -> Any:
        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None

    async def __aenter__(self) -> _WatchedReadStream:
        return self

    async def __aexit__(self, *exc_info: Any) -> None:
        self._on_close()
        await self._inner.aclose()


@asynccontextmanager
async def _watched(transport: Any, on_close: Callable[[], None]) -> AsyncIterator[Any]:
    async with transport as (read_stream, write_stream):
        yield _WatchedReadStream(read_stream, on_close), write_stream


@asynccontextmanager
async def _http(url: str, headers: dict[str, str]) -> AsyncIterator[Any]:
    # The SDK's own defaults: 30 s to connect or write, 300 s of quiet on a stream.
    timeout = httpx2.Timeout(30.0, read=300.0)
    async with (
        httpx2.AsyncClient(headers=headers, timeout=timeout) as http,
        streamable_http_client(url, http_client=http) as streams,
    ):
        yield streams


def _errlog() -> TextIO:
    """Where a stdio server's stderr goes: ours, when it is a real file."""
    try:
        sys.stderr.fileno()
        return sys.stderr
    except (AttributeError, OSError, ValueError):
        return sys.__stderr__ or sys.stderr
