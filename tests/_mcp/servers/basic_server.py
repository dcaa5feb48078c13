"""A test MCP server: text, errors, images, structured content, odd names, its own pid.

``echo`` has annotations; like every tool of the SDK's server whose function
returns a str, it has an output schema (``{"result": str}``), and its results
carry that object as structuredContent beside the text.

Run as ``basic_server.py`` (stdio) or ``basic_server.py http PORT`` (streamable
HTTP on 127.0.0.1). While the file named by $BLOCK_FILE exists it refuses to
start, so a test can hold it down after killing it.
"""

from __future__ import annotations

import base64
import os
import sys
import time

block = os.environ.get("BLOCK_FILE")
if block and os.path.exists(block):  # checked before the slow imports
    sys.exit(3)

from mcp.server.mcpserver import MCPServer  # noqa: E402
from mcp.server.mcpserver.exceptions import ToolError  # noqa: E402
from mcp_types import CallToolResult, ImageContent, TextContent, ToolAnnotations  # noqa: E402

server = MCPServer("basic", log_level="WARNING")

#: A 1x1 PNG.
PIXEL = base64.b64encode(
    bytes.fromhex(
        "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
        "1f15c4890000000d49444154789c6360000002000154a24f5d0000000049454e44ae426082"
    )
).decode()


@server.tool(annotations=ToolAnnotations(title="Echo", read_only_hint=True, idempotent_hint=True))
def echo(text: str) -> str:
    """Say it back."""
    return text


@server.tool()
def two_lines() -> CallToolResult:
    """Two text parts."""
    parts = [TextContent(type="text", text="first"), TextContent(type="text", text="second")]
    return CallToolResult(content=parts)


@server.tool()
def fail(message: str) -> str:
    """Always fails with ``message``."""
    raise ToolError(message)


@server.tool()
def picture() -> CallToolResult:
    """A caption and a one-pixel image."""
    return CallToolResult(
        content=[
            TextContent(type="text", text="a pixel"),
            ImageContent(type="image", data=PIXEL, mime_type="image/png"),
        ]
    )


@server.tool()
def numbers() -> CallToolResult:
    """Structured content only, no text."""
    return CallToolResult(content=[], structured_content={"total": 3, "items": [1, 2]})


@server.tool()
def pid() -> str:
    """The server's process id."""
    return str(os.getpid())


@server.tool()
def env(name: str) -> str:
    """An environment variable of the server process."""
    return os.environ.get(name, "")


@server.tool()
def nap(seconds: float) -> str:
    """Sleep, then answer."""
    time.sleep(seconds)
    return "awake"


@server.tool()
def big(chars: int) -> str:
    """A text result of ``chars`` characters."""
    return "x" * chars


@server.tool(name="read.file")
def read_dot_file() -> str:
    """Collides with read-file once sanitised."""
    return "dot"


@server.tool(name="read-file")
def read_dash_file() -> str:
    """Collides with read.file once sanitised."""
    return "dash"


@server.tool()
def owned() -> str:
    """Its registry name is taken by a host tool in the collision test."""
    return "mcp"


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[1] == "http":
        server.run("streamable-http", host="127.0.0.1", port=int(sys.argv[2]))
    else:
        server.run()
