"""A test MCP server whose tools come and go, listed two to a page.

Flags: ``--legacy`` serves only the handshake era, so clients fall back to the
2025 protocol and hear of changes through ``notifications/tools/list_changed``;
otherwise changes go out on ``subscriptions/listen`` (2026-07-28). ``--silent``
sends no change signal at all (clients must poll).
"""

from __future__ import annotations

import sys
from typing import Any

import anyio
from legacy_stdio import serve_legacy
from mcp.server.mcpserver import Context, MCPServer
from mcp_types import ListToolsResult
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

LEGACY = "--legacy" in sys.argv
SILENT = "--silent" in sys.argv
PAGE = 2


class PagedServer(MCPServer):
    """Lists its tools ``PAGE`` at a time, so clients must follow ``nextCursor``."""

    async def _handle_list_tools(self, ctx: Any, params: Any) -> ListToolsResult:
        tools = await self.list_tools()
        start = int(params.cursor) if params is not None and params.cursor else 0
        end = start + PAGE
        return ListToolsResult(
            tools=tools[start:end], next_cursor=str(end) if end < len(tools) else None
        )


server = PagedServer("dynamic", log_level="WARNING")


async def changed(ctx: Context) -> None:
    if SILENT:
        return
    if ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:
        await ctx.notify_tools_changed()
    else:
        await ctx.session.send_tool_list_changed()


@server.tool()
def stable_a(x: int) -> str:
    """Always here."""
    return f"a{x}"


@server.tool()
def stable_b() -> str:
    """Always here too."""
    return "b"


@server.tool()
def version(ctx: Context) -> str:
    """The protocol version of this session."""
    return ctx.protocol_version or ""


@server.tool()
async def grow(name: str, ctx: Context) -> str:
    """Add a tool called ``name``."""
    server.add_tool(lambda: f"I am {name}", name=name, description=f"Grown {name}.")
    await changed(ctx)
    return "grown"


@server.tool()
async def shrink(name: str, ctx: Context) -> str:
    """Remove the tool called ``name``."""
    server.remove_tool(name)
    await changed(ctx)
    return "shrunk"


@server.tool()
async def churn(rounds: int, ctx: Context, pause: float = 0.0) -> str:
    """Add and remove a tool ``rounds`` times, signalling each change."""
    for index in range(rounds):
        name = f"temp_{index}"
        server.add_tool(lambda: "temp", name=name, description="Short-lived.")
        await changed(ctx)
        await anyio.sleep(pause)
        server.remove_tool(name)
        await changed(ctx)
        await anyio.sleep(pause)
    return "churned"


if __name__ == "__main__":
    if LEGACY:
        anyio.run(serve_legacy, server)
    else:
        server.run()
