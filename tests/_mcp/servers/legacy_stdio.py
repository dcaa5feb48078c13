"""Serve a test server over stdio in the handshake era only (``server.run`` serves both eras)."""

from __future__ import annotations

from mcp import stdio_server
from mcp.server.mcpserver import MCPServer
from mcp.server.runner import serve_loop


async def serve_legacy(server: MCPServer) -> None:
    lowlevel = server._lowlevel_server
    async with stdio_server() as (read, write), lowlevel.lifespan(lowlevel) as state:
        options = lowlevel.create_initialization_options()
        await serve_loop(lowlevel, read, write, lifespan_state=state, init_options=options)
