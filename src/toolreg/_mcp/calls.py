"""Calling a server's tool from any thread: the path every MCP handler takes.

The call runs on the manager's event loop (where the session lives) and the
calling thread waits, for at most the server's ``timeout``; a call still
running then is cancelled, which the SDK passes on to the server.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading
from typing import TYPE_CHECKING, Any

import mcp_types
from mcp.shared.exceptions import MCPError

from .._contract.results import tool_error
from .convert import to_result
from .transport import connection_lost, describe

if TYPE_CHECKING:
    from .link import ServerLink


def call_sync(
    link: ServerLink,
    tool: str,
    name: str,
    args: dict[str, Any],
    *,
    keep_structured: bool = False,
) -> str | dict[str, Any]:
    """Call ``tool`` on ``link``'s server; ``name`` is its registry name. Never raises.

    ``keep_structured``: see :func:`~toolreg._mcp.convert.to_result`.
    """
    server = link.label
    if link.client is None or link.state != "connected":
        return tool_error(
            f"{server} is disconnected; {name} cannot run now",
            error_type="unavailable",
            tool=name,
        )
    if threading.current_thread() is link.thread:  # waiting would block the loop we wait on
        return tool_error(f"{name} cannot be called from the MCP event loop", tool=name)
    timeout = link.config.timeout
    try:
        future = asyncio.run_coroutine_threadsafe(_call(link, tool, args), link.loop)
    except RuntimeError:  # the loop has closed: stopped under us
        return tool_error(f"{server} has been stopped", tool=name)
    try:
        payload = future.result(timeout)
    except (concurrent.futures.TimeoutError, TimeoutError):
        # Ours (the future is still running) or the session's own read timeout:
        # both are the server not answering in time. (Before 3.11 the two
        # exception types differ.)
        if not future.done():
            future.cancel()
        return tool_error(
            f"{server} did not answer {name} within {timeout:g} s; the call was cancelled",
            error_type="timeout",
            tool=name,
        )
    except concurrent.futures.CancelledError:
        return tool_error(f"{server} closed while {name} ran", tool=name)
    except MCPError as exc:
        if connection_lost(exc):
            return tool_error(f"{server} closed while {name} ran", tool=name)
        return tool_error(f"{server} refused {name}: {exc.message}", tool=name)
    except Exception as exc:
        return tool_error(f"MCP call {name} failed: {describe(exc)}", tool=name)
    return to_result(payload, link.config.max_result_size_chars, keep_structured=keep_structured)


async def _call(link: ServerLink, tool: str, args: dict[str, Any]) -> dict[str, Any]:
    client = link.client
    if client is None:
        raise MCPError(mcp_types.CONNECTION_CLOSED, "disconnected")
    try:
        # A little over our own deadline, so the caller's clean timeout fires first.
        read_timeout = link.config.timeout + 1.0
        result = await client.call_tool(tool, args, read_timeout_seconds=read_timeout)
    except Exception as exc:
        if connection_lost(exc):
            link.mark_lost()
        raise
    return result.model_dump(by_alias=True, mode="json", exclude_none=True)
