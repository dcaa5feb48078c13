"""A test MCP server that lists the tools a JSON file defines, exactly as written there.

Run as ``file_tools_server.py TOOLS.json [--legacy]``. The file holds a list of
tools in ``tools/list``'s own shape (camelCase: ``inputSchema``,
``outputSchema``, ``annotations``), so a test can change any field of any
tool, rename one, or add one. Its own tool ``reload`` reads the file again
and signals the change: ``subscriptions/listen`` (2026-07-28), or with
``--legacy`` ``notifications/tools/list_changed``. Calling a file's tool
answers ``called NAME`` (as text, and as ``{"text": ...}`` structured content).
"""

from __future__ import annotations

import json
import sys
from typing import Any

import anyio
from legacy_stdio import serve_legacy
from mcp.server.mcpserver import Context, MCPServer
from mcp_types import CallToolResult, TextContent
from mcp_types import Tool as MCPTool
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

PATH = sys.argv[1]
LEGACY = "--legacy" in sys.argv[2:]


def read_tools() -> list[MCPTool]:
    with open(PATH, encoding="utf-8") as f:
        return [MCPTool.model_validate(tool) for tool in json.load(f)]


class FileToolsServer(MCPServer):
    """Its own tools, then the file's, as the file says them."""

    listed: list[MCPTool] = []

    async def list_tools(self) -> list[MCPTool]:
        return [*await super().list_tools(), *self.listed]

    async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None) -> Any:
        if any(tool.name == name for tool in self.listed):
            text = f"called {name}"
            return CallToolResult(
                content=[TextContent(type="text", text=text)], structured_content={"text": text}
            )
        return await super().call_tool(name, arguments, context)


server = FileToolsServer("file-tools", log_level="WARNING")
server.listed = read_tools()


@server.tool()
async def reload(ctx: Context) -> str:
    """Read the tools file again and say the tools changed."""
    server.listed = read_tools()
    if ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:
        await ctx.notify_tools_changed()
    else:
        await ctx.session.send_tool_list_changed()
    return "reloaded"


if __name__ == "__main__":
    if LEGACY:
        anyio.run(serve_legacy, server)
    else:
        server.run()
