"""A test MCP server on the SDK's low-level API that lists 2,000 tools a page at a time.

Flags: ``--loop`` makes every page after the first send the first page's cursor
again (a cursor that goes round); ``--endless`` sends a new cursor with every
page, for ever, each page one more tool. Otherwise the 2,000 tools ``tool_0000``
... ``tool_1999`` come ``PAGE`` to a page, and the last page has no cursor. Each
tool returns its own name. Served over stdio.
"""

from __future__ import annotations

import sys
from typing import Any

import anyio
import mcp_types as types
from mcp.server.lowlevel.server import Server
from mcp.server.stdio import stdio_server

TOOLS = 2000
PAGE = 300
LOOP = "--loop" in sys.argv
ENDLESS = "--endless" in sys.argv


def _tool(name: str) -> types.Tool:
    return types.Tool(
        name=name,
        description=f"The tool called {name}.",
        input_schema={"type": "object", "properties": {}},
    )


async def list_tools(
    ctx: Any, params: types.PaginatedRequestParams | None
) -> types.ListToolsResult:
    cursor = params.cursor if params is not None else None
    if ENDLESS:
        page = int(cursor or 0)
        return types.ListToolsResult(tools=[_tool(f"endless_{page}")], next_cursor=str(page + 1))
    if LOOP:  # the first page and its cursor, whatever the client asks for
        return types.ListToolsResult(
            tools=[_tool(f"tool_{i:04d}") for i in range(PAGE)], next_cursor=str(PAGE)
        )
    start = int(cursor) if cursor else 0
    end = min(start + PAGE, TOOLS)
    return types.ListToolsResult(
        tools=[_tool(f"tool_{i:04d}") for i in range(start, end)],
        next_cursor=str(end) if end < TOOLS else None,
    )


async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(type="text", text=params.name)])


server = Server("paged", on_list_tools=list_tools, on_call_tool=call_tool)


async def main() -> None:
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


if __name__ == "__main__":
    anyio.run(main)
