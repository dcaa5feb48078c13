"""A test MCP server whose tools report progress and log while they run, some of them hostilely.

The well-behaved tools use the SDK's ``Context``; the hostile ones write raw
notifications (a flood, ten megabytes, progress that is no number, a token
the client never gave) through the request's own channel, as a server that
ignores the SDK's types could.

Run as ``chatty_server.py`` (stdio), ``chatty_server.py --legacy`` (stdio,
handshake era only) or ``chatty_server.py http PORT`` (streamable HTTP).
"""

from __future__ import annotations

import sys
from typing import Any

import anyio
from legacy_stdio import serve_legacy
from mcp.server.mcpserver import Context, MCPServer

server = MCPServer("chatty", log_level="WARNING")


async def notify(ctx: Context, method: str, params: dict[str, Any]) -> None:
    """Send a notification about this request exactly as given: no type checks."""
    await ctx.session._request_outbound.notify(method, params)


def token(ctx: Context) -> Any:
    meta = ctx.request_context.meta or {}
    return meta.get("progress_token", meta.get("progressToken"))


@server.tool()
async def steps(
    count: int, ctx: Context, level: str = "info", pause: float = 0.0, tag: str = ""
) -> str:
    """Report progress ``count`` times and log ``{tag}did step N`` at ``level`` with each."""
    for step in range(1, count + 1):
        await ctx.report_progress(step, count, f"step {step} of {count}")
        await ctx.log(level, f"{tag}did step {step}", logger_name="chatty.steps")
        await anyio.sleep(pause)
    return "done"


@server.tool()
async def structured_log(ctx: Context) -> str:
    """Log a JSON object rather than a string."""
    await ctx.log("warning", {"disk": "full", "free": 0})
    return "logged"


@server.tool()
async def flood_progress(count: int, ctx: Context) -> str:
    """``count`` progress notifications, as fast as the transport takes them."""
    for step in range(1, count + 1):
        await ctx.report_progress(step, count)
    return "flooded"


@server.tool()
async def flood_logs(count: int, ctx: Context) -> str:
    """``count`` log messages, as fast as the transport takes them."""
    for step in range(count):
        await ctx.log("warning", f"line {step}")
    return "flooded"


@server.tool()
async def huge(chars: int, ctx: Context) -> str:
    """A progress message and a log message of ``chars`` characters each."""
    await ctx.report_progress(1, 2, "p" * chars)
    await ctx.log("error", "l" * chars, logger_name="n" * chars)
    return "huge"


@server.tool()
async def odd_progress(ctx: Context) -> str:
    """Progress values that are no numbers, a value going backwards, then good ones."""
    own = token(ctx)
    for params in (
        {"progressToken": own, "progress": "half"},
        {"progressToken": own, "progress": True},
        {"progressToken": own, "progress": None},
        {"progressToken": own, "progress": [1]},
        {"progressToken": own, "progress": 1, "total": "ten", "message": 42},
        {"progressToken": own, "progress": 0.5},
        {"progressToken": own, "progress": 1e400},
        {"progressToken": own, "progress": 2, "total": -3},
        {"progressToken": own, "progress": 3, "total": 4, "message": "three"},
    ):
        await notify(ctx, "notifications/progress", params)
    await ctx.log("shouting", "not a level")
    await notify(ctx, "notifications/message", {"level": "shouting", "data": "not a level"})
    await notify(ctx, "notifications/message", {"level": "info"})
    return "odd"


@server.tool()
async def foreign_token(ctx: Context) -> str:
    """Progress under tokens this call was not given, then one under its own."""
    own = token(ctx)
    others = ["not-yours", 10_000_000, own + 1 if isinstance(own, int) else f"{own}x"]
    for other in others:
        await notify(ctx, "notifications/progress", {"progressToken": other, "progress": 50})
    await notify(ctx, "notifications/progress", {"progressToken": own, "progress": 1})
    return "foreign"


@server.tool()
async def echo_meta(ctx: Context) -> str:
    """Whether the call carried a progress token, and the log level it asked for."""
    meta = ctx.request_context.meta or {}
    level = meta.get("io.modelcontextprotocol/logLevel")
    return f"token={token(ctx) is not None} level={level}"


if __name__ == "__main__":
    if "--legacy" in sys.argv:
        anyio.run(serve_legacy, server)
    elif len(sys.argv) > 2 and sys.argv[1] == "http":
        server.run("streamable-http", host="127.0.0.1", port=int(sys.argv[2]))
    else:
        server.run()
