"""``toolreg serve`` as a subprocess, driven by the MCP SDK's own client over stdio and HTTP."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Callable
from typing import Any

import pytest

from conftest import SHAPED_PLUGIN
from serve_harness import EXTRA_TOOL, PLUGIN, HttpServer, ServeSetup, run, stdio_client_for, text_of

pytest.importorskip("mcp")

import anyio  # noqa: E402  (after the importorskip: anyio comes with mcp)
from mcp import Client  # noqa: E402
from mcp.shared.exceptions import MCPError  # noqa: E402
from mcp_types import INVALID_PARAMS  # noqa: E402

from toolreg.cli import main  # noqa: E402

posix_only = pytest.mark.skipif(not hasattr(signal, "SIGHUP"), reason="SIGHUP is POSIX-only")


async def assert_unknown_tool(client: Client, name: str) -> None:
    """A call to a tool the server does not offer is a JSON-RPC error, not a tool result."""
    with pytest.raises(MCPError) as caught:
        await client.call_tool(name, {})
    assert caught.value.code == INVALID_PARAMS
    assert caught.value.message == f"Unknown tool: {name}"


async def assert_tool_errors_stay_results(client: Client) -> None:
    """Bad arguments and failing tools are ``isError`` results the model can act on."""
    result = await client.call_tool("greet", {"name": 5})
    assert result.is_error
    assert json.loads(text_of(result))["error_type"] == "invalid_arguments"
    result = await client.call_tool("boom", {})
    assert result.is_error
    assert "RuntimeError: kaboom" in json.loads(text_of(result))["error"]


def add_tool_and_hup(setup: ServeSetup, pid: int) -> None:
    setup.plugin.write_text(PLUGIN + EXTRA_TOOL)
    os.kill(pid, signal.SIGHUP)


# -- stdio -------------------------------------------------------------------------------


def test_stdio_lists_and_calls_builtins_and_pack_tools(serve_setup: ServeSetup) -> None:
    expected = json.loads(
        subprocess.run(
            [sys.executable, "-m", "toolreg", "show", "current_time", "--json", "--format", "mcp"],
            env=serve_setup.env,
            capture_output=True,
            text=True,
            check=True,
        ).stdout
    )

    async def session() -> None:
        async with Client(stdio_client_for(serve_setup)) as client:
            tools = {tool.name: tool for tool in (await client.list_tools()).tools}
            assert {"current_time", "read_file", "greet", "boom", "whoami"} <= set(tools)
            assert tools["current_time"].input_schema == expected["inputSchema"]
            assert tools["current_time"].description == expected["description"]

            result = await client.call_tool("current_time", {"timezone": "UTC"})
            assert not result.is_error
            assert json.loads(text_of(result))["timezone"] == "UTC"

            # A pack's tool; its prints went to stderr, or the session would have broken.
            result = await client.call_tool("greet", {"name": "Ada"})
            assert (result.is_error, text_of(result)) == (False, "hello Ada")

            result = await client.call_tool("boom", {})
            assert result.is_error
            assert "RuntimeError: kaboom" in json.loads(text_of(result))["error"]

            result = await client.call_tool("current_time", {"timezone": 5})
            assert result.is_error
            assert json.loads(text_of(result))["error_type"] == "invalid_arguments"

            await assert_unknown_tool(client, "no_such_tool")

    run(session)


def test_stdio_toolset_narrows_the_offer(serve_setup: ServeSetup) -> None:
    async def session() -> None:
        async with Client(stdio_client_for(serve_setup, "--toolset", "demo")) as client:
            names = sorted(tool.name for tool in (await client.list_tools()).tools)
            assert names == ["boom", "greet", "whoami"]
            await assert_unknown_tool(client, "current_time")  # hidden by --toolset
            assert text_of(await client.call_tool("greet", {"name": "x"})) == "hello x"

    run(session)


#: Tools whose results read exactly like the registry's unknown-tool error.
IMPOSTORS = """
from toolreg import tool_error

registry.register(
    "impostor", "demo", _schema("impostor"), lambda args: tool_error("Unknown tool: impostor")
)
registry.register(
    "ghost", "demo", _schema("ghost"), lambda args: tool_error("Unknown tool: no_such_tool")
)
"""


def test_a_result_worded_like_the_unknown_tool_error_stays_a_tool_result(tmp_path) -> None:
    """Serve asks the registry whether a tool is offered; it never reads that off the result."""
    from toolreg import ToolRegistry

    setup = ServeSetup.create(tmp_path)
    setup.plugin.write_text(PLUGIN + IMPOSTORS)

    async def session() -> None:
        async with Client(stdio_client_for(setup, "--toolset", "demo")) as client:
            for name, named in (("impostor", "impostor"), ("ghost", "no_such_tool")):
                result = await client.call_tool(name, {})
                # Word for word what the registry answers for a tool it lacks.
                assert text_of(result) == ToolRegistry().dispatch(named, {})
                assert result.is_error
            await assert_unknown_tool(client, "no_such_tool")
            await assert_unknown_tool(client, "current_time")  # hidden by --toolset

    try:
        run(session)
    finally:
        setup.close()


@posix_only
def test_stdio_sighup_reload_sends_listen_event(serve_setup: ServeSetup) -> None:
    """A 2026-07-28 client (the SDK's default) hears of the change on its listen stream."""

    async def session() -> None:
        async with Client(stdio_client_for(serve_setup)) as client:
            assert client.protocol_version == "2026-07-28"
            assert client.server_capabilities.tools.list_changed
            pid = int(text_of(await client.call_tool("whoami", {})))
            async with client.listen(tools_list_changed=True) as subscription:
                add_tool_and_hup(serve_setup, pid)
                async for event in subscription:
                    assert type(event).__name__ == "ToolsListChanged"
                    break
            names = {tool.name for tool in (await client.list_tools()).tools}
            assert "late_tool" in names
            assert text_of(await client.call_tool("late_tool", {})) == "late"

    run(session)


@posix_only
def test_stdio_sighup_reload_notifies_handshake_clients(serve_setup: ServeSetup) -> None:
    """A handshake-era client gets notifications/tools/list_changed on its connection."""

    async def session() -> None:
        changed = anyio.Event()

        async def on_message(message: Any) -> None:
            if getattr(message, "method", None) == "notifications/tools/list_changed":
                changed.set()

        transport = stdio_client_for(serve_setup)
        async with Client(transport, mode="legacy", message_handler=on_message) as client:
            assert client.server_capabilities.tools.list_changed
            await assert_unknown_tool(client, "no_such_tool")
            await assert_tool_errors_stay_results(client)
            pid = int(text_of(await client.call_tool("whoami", {})))
            add_tool_and_hup(serve_setup, pid)
            await changed.wait()
            assert "late_tool" in {tool.name for tool in (await client.list_tools()).tools}

    run(session)


# -- streamable HTTP ---------------------------------------------------------------------


@posix_only
def test_http_serves_and_notifies_both_protocol_eras(
    serve_setup: ServeSetup, http_server: Callable[..., HttpServer]
) -> None:
    server = http_server()
    assert server.url.startswith("http://127.0.0.1:")
    health = server.health()
    assert health["status"] == "ok" and health["tools"] >= 5

    async def session() -> None:
        legacy_changed = anyio.Event()

        async def on_message(message: Any) -> None:
            if getattr(message, "method", None) == "notifications/tools/list_changed":
                legacy_changed.set()

        async with (
            Client(server.url) as modern,
            Client(server.url, mode="legacy", message_handler=on_message) as legacy,
        ):
            assert modern.protocol_version == "2026-07-28"
            assert legacy.protocol_version != "2026-07-28"
            for client in (modern, legacy):
                names = {tool.name for tool in (await client.list_tools()).tools}
                assert {"current_time", "greet"} <= names
                result = await client.call_tool("current_time", {"timezone": "UTC"})
                assert json.loads(text_of(result))["timezone"] == "UTC"
                assert text_of(await client.call_tool("greet", {"name": "B"})) == "hello B"
                await assert_tool_errors_stay_results(client)
                await assert_unknown_tool(client, "no_such_tool")

            async with modern.listen(tools_list_changed=True) as subscription:
                add_tool_and_hup(serve_setup, server.proc.pid)
                async for _event in subscription:
                    break
            await legacy_changed.wait()
            for client in (modern, legacy):
                assert "late_tool" in {tool.name for tool in (await client.list_tools()).tools}

    run(session)


def test_http_stateless(serve_setup: ServeSetup, http_server: Callable[..., HttpServer]) -> None:
    server = http_server("--stateless", "--toolset", "demo")
    assert server.health()["tools"] == 3

    async def session() -> None:
        async with Client(server.url, mode="legacy") as client:
            # No standing connection to notify on: clients re-list instead.
            assert not client.server_capabilities.tools.list_changed
            names = sorted(tool.name for tool in (await client.list_tools()).tools)
            assert names == ["boom", "greet", "whoami"]
            assert text_of(await client.call_tool("greet", {"name": "S"})) == "hello S"
            await assert_unknown_tool(client, "current_time")
        async with Client(server.url) as client:
            assert text_of(await client.call_tool("greet", {"name": "M"})) == "hello M"

    run(session)


# -- the command line ----------------------------------------------------------------------


def test_serve_help_shows_client_config(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["serve", "--help"]) == 0
    out = capsys.readouterr().out
    assert '{"mcpServers": {"toolreg": {"command": "toolreg", "args": ["serve"]}}}' in out
    assert '{"mcpServers": {"toolreg": {"url": "http://127.0.0.1:8765/mcp"}}}' in out


@pytest.mark.parametrize(
    "argv",
    [
        ["serve", "--stateless"],
        ["serve", "--port", "9000"],
        ["serve", "--transport", "http", "--port", "70000"],
        ["serve", "--auth-token-file", "token"],
        ["serve", "--insecure-no-auth"],
        ["serve", "--max-calls", "0"],
        ["serve", "--max-calls-per-session", "many"],
        ["serve", "--page-size", "0"],
    ],
)
def test_serve_usage_errors(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(argv) == 2
    assert ": error:" in capsys.readouterr().err


def test_multimodal_blocks_become_mcp_content() -> None:
    from toolreg._mcp_serve.server_results import call_result

    png = "iVBORw0KGgo="
    anthropic = {"type": "base64", "media_type": "image/png", "data": png}
    blocks = [
        {"type": "text", "text": "a chart"},
        {"type": "image", "data": png, "mimeType": "image/png"},
        {"type": "image", "source": anthropic},
        {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{png}"}},
        {"type": "audio", "data": "UklGRg==", "mime_type": "audio/wav"},
        {"type": "video", "url": "x"},
    ]
    result = call_result({"_multimodal": True, "content": blocks})
    kinds = [block.type for block in result.content]
    assert kinds == ["text", "image", "image", "image", "audio", "text"]
    assert all(block.data == png for block in result.content[1:4])
    assert json.loads(result.content[-1].text) == {"type": "video", "url": "x"}
    assert not result.is_error
    assert call_result('{"error": "no"}').is_error


@pytest.mark.parametrize("flags", [(), ("--inline-refs", "--optional-as-absent")])
def test_stdio_shapes_schemas_for_clients_that_need_it(serve_setup: ServeSetup, flags) -> None:
    """The flags change what tools/list says, not what a call may send."""
    serve_setup.plugin.write_text(serve_setup.plugin.read_text() + SHAPED_PLUGIN)

    async def session() -> None:
        async with Client(stdio_client_for(serve_setup, "--toolset", "shapes", *flags)) as client:
            (tool,) = (await client.list_tools()).tools
            schema = tool.input_schema
            text = json.dumps(schema)
            if flags:
                assert "$ref" not in text and "$defs" not in text
                assert schema["properties"]["where"]["properties"]["x"] == {"type": "integer"}
                assert schema["properties"]["note"] == {"type": "string"}
            else:
                assert schema["properties"]["where"] == {"$ref": "#/$defs/Point"}
                assert "null" in text
            # The registered schema still judges calls: an explicit null stays allowed.
            result = await client.call_tool("plot", {"where": {"x": 3}, "note": None})
            assert text_of(result) == "ok"

    run(session)


#: A tool whose $ref points at itself: it has no inlined form.
RECURSIVE_TOOL = """
registry.register(
    "tree",
    "shapes",
    {
        "description": "A tree of nodes.",
        "parameters": {
            "type": "object",
            "properties": {"root": {"$ref": "#/$defs/Node"}},
            "$defs": {
                "Node": {
                    "type": "object",
                    "properties": {"kids": {"type": "array", "items": {"$ref": "#/$defs/Node"}}},
                }
            },
        },
    },
    lambda args: "grown",
)
"""


def test_stdio_inline_refs_leaves_out_a_tool_it_cannot_inline(serve_setup: ServeSetup) -> None:
    """A recursive $ref is not sent half-inlined: the tool is left out, the others stay."""
    plugin = serve_setup.plugin
    plugin.write_text(plugin.read_text() + SHAPED_PLUGIN + RECURSIVE_TOOL)

    async def session() -> None:
        args = ("--toolset", "shapes", "--inline-refs")
        async with Client(stdio_client_for(serve_setup, *args)) as client:
            names = [tool.name for tool in (await client.list_tools()).tools]
            assert names == ["plot"]

    run(session)
    assert "tree" in serve_setup.log_path.read_text()  # the warning names the tool
