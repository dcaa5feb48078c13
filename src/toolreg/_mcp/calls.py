"""Calling a server's tool from any thread: the path every MCP handler takes.

The call runs on the manager's event loop while the calling thread waits (at
most the server's ``timeout``) and delivers the call's progress and log messages.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading
from typing import TYPE_CHECKING, Any

import mcp_types
from mcp.shared.exceptions import MCPError
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from .._contract.results import tool_error
from .convert import to_result
from .transport import connection_lost, describe
from .upstream_relay import CallRelay

if TYPE_CHECKING:
    from .link import ServerLink


def call_sync(
    link: ServerLink,
    tool: str,
    name: str,
    args: dict[str, Any],
    *,
    keep_structured: bool = False,
    listen: bool = True,
) -> str | dict[str, Any]:
    """Call ``tool`` on ``link``'s server; ``name`` is its registry name. Never raises.

    ``keep_structured``: see :func:`~toolreg._mcp.convert.to_result`. With
    ``listen``, the call's progress and log messages reach the caller as a
    local tool's would; a call that is no tool's (a forwarded hook) has none.
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
    relay = CallRelay(name, listen)
    try:
        future = asyncio.run_coroutine_threadsafe(_call(link, tool, args, relay), link.loop)
    except RuntimeError:  # the loop has closed: stopped under us
        return tool_error(f"{server} has been stopped", tool=name)
    try:
        payload = relay.wait(future, timeout)
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


async def _call(
    link: ServerLink, tool: str, args: dict[str, Any], relay: CallRelay
) -> dict[str, Any]:
    client = link.client
    if client is None:
        raise MCPError(mcp_types.CONNECTION_CLOSED, "disconnected")
    meta: dict[str, Any] | None = None
    if relay.log_floor is not None and client.protocol_version in MODERN_PROTOCOL_VERSIONS:
        # 2026-07-28 servers log only for requests that ask (handshake-era ones log anyway).
        meta = {mcp_types.LOG_LEVEL_META_KEY: relay.log_floor}
    try:
        # A little over our own deadline, so the caller's clean timeout fires first.
        read_timeout = link.config.timeout + 1.0
        with link.relays.running_call(relay):
            result = await client.call_tool(
                tool,
                args,
                read_timeout_seconds=read_timeout,
                # A token goes to the server only when someone hears its reports.
                progress_callback=relay.on_progress if relay.listening else None,
                meta=meta,  # type: ignore[arg-type]
            )
    except Exception as exc:
        if connection_lost(exc):
            link.mark_lost()
        raise
    return result.model_dump(by_alias=True, mode="json", exclude_none=True)
