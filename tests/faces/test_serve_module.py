"""``toolreg.serve``, the public module for embedding the MCP server, driven by a real MCP client.

A script builds its own registry and serves it over HTTP through the public
names only, as docs/mcp.md shows; the SDK's client lists and calls its tools.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from serve_harness import run, stop_process, text_of

pytest.importorskip("mcp")

from mcp import Client  # noqa: E402
from mcp.shared.exceptions import MCPError  # noqa: E402

EMBEDDER = """
import anyio

from toolreg import ToolContext, ToolRegistry, tool
from toolreg.serve import MemoryEventStore, ToolServer, bind, url_for

registry = ToolRegistry()


@tool(registry=registry)
def echo(text: str, ctx: ToolContext) -> str:
    "Say text back, and tell the client so."
    sent = ctx.log_to_client("notice", f"echoing {text}")
    return f"{text} (told the client: {sent})"


server = ToolServer(registry, event_store=MemoryEventStore(max_streams=10))
sock = bind("127.0.0.1", 0)
print(url_for(sock), flush=True)
anyio.run(lambda: server.serve_http(sock, "127.0.0.1"))
"""


def test_an_embedded_server_offers_its_registry_to_an_mcp_client(tmp_path: Path) -> None:
    script = tmp_path / "embed.py"
    script.write_text(EMBEDDER)
    log = (tmp_path / "stderr.log").open("w")
    proc = subprocess.Popen(
        [sys.executable, str(script)], stdout=subprocess.PIPE, stderr=log, text=True
    )
    try:
        assert proc.stdout is not None
        url = proc.stdout.readline().strip()
        assert url.startswith("http://127.0.0.1:") and url.endswith("/mcp"), url
        logged: list[tuple[str, str, str | None]] = []

        async def on_log(params) -> None:
            logged.append((params.level, params.data, params.logger))

        async def session() -> None:
            async with Client(url, log_level="debug", logging_callback=on_log) as client:
                assert [t.name for t in (await client.list_tools()).tools] == ["echo"]
                result = await client.call_tool("echo", {"text": "hi"})
                assert (result.is_error, text_of(result)) == (False, "hi (told the client: True)")
                with pytest.raises(MCPError, match="Unknown tool: current_time"):
                    await client.call_tool("current_time", {})  # not in this registry

        run(session)
        assert logged == [("notice", "echoing hi", "toolreg.tools.echo")]
    finally:
        stop_process(proc)
        log.close()
        print((tmp_path / "stderr.log").read_text())  # shown when the test fails
