"""What ``toolreg serve`` sends for annotations and structured results, to the MCP SDK's client.

The client is the SDK's own: it caches each tool's ``outputSchema`` from
``tools/list`` and raises when a non-error result has no ``structuredContent``
or one that breaks the schema, so every structured call here is checked by a
real consumer, not only by our assertions.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from serve_harness import PLUGIN, ServeSetup, run, serve_args, text_of

pytest.importorskip("mcp")

from mcp import Client  # noqa: E402
from mcp.client.stdio import StdioServerParameters, stdio_client  # noqa: E402

SERVERS = Path(__file__).parents[1] / "_mcp" / "servers"

TYPED_TOOLS = """
import dataclasses

from toolreg import tool, tool_result


@dataclasses.dataclass
class Stats:
    \"\"\"Word statistics.\"\"\"

    words: int
    longest: str


@tool(toolset="demo", annotations={"read_only_hint": True, "title": "Word stats"})
def word_stats(text: str) -> Stats:
    \"\"\"Count the words of a text.\"\"\"
    words = text.split()
    return Stats(len(words), max(words, key=len) if words else "")


COUNT = {"type": "object", "properties": {"words": {"type": "integer"}}, "required": ["words"]}
# Hand-written tools that promise an object and break the promise.
registry.register(
    "liar", "demo", _schema("liar"), lambda args: tool_result(words="many"), output_schema=COUNT
)
registry.register(
    "rambler", "demo", _schema("rambler"), lambda args: "just text", output_schema=COUNT
)
registry.register(
    "cut", "demo", _schema("cut"), lambda args: tool_result(words=123456789),
    output_schema=COUNT, max_result_size_chars=8,
)
"""


def client_for(setup: ServeSetup) -> Any:
    params = StdioServerParameters(
        command=sys.executable, args=serve_args(setup), env=setup.env, cwd=setup.tmp
    )
    return Client(stdio_client(params, errlog=setup.open_log()))


def test_tools_list_carries_annotations_and_output_schemas(serve_setup: ServeSetup) -> None:
    serve_setup.plugin.write_text(PLUGIN + TYPED_TOOLS)

    async def session() -> None:
        async with client_for(serve_setup) as client:
            tools = {tool.name: tool for tool in (await client.list_tools()).tools}
            stats = tools["word_stats"]
            assert stats.annotations.title == "Word stats"
            assert stats.annotations.read_only_hint is True
            assert stats.annotations.destructive_hint is None  # not declared, not invented
            assert stats.output_schema["required"] == ["words", "longest"]
            assert stats.output_schema["properties"]["words"] == {"type": "integer"}
            # The built-ins' hints reach the client as declared.
            assert tools["read_file"].annotations.read_only_hint is True
            assert tools["terminal"].annotations.destructive_hint is True
            assert tools["http_request"].annotations.open_world_hint is True
            assert tools["greet"].annotations is None and tools["greet"].output_schema is None

    run(session)


def test_structured_results_come_with_their_text(serve_setup: ServeSetup) -> None:
    serve_setup.plugin.write_text(PLUGIN + TYPED_TOOLS)

    async def session() -> None:
        async with client_for(serve_setup) as client:
            result = await client.call_tool("word_stats", {"text": "alpha beta gamma"})
            assert not result.is_error
            assert result.structured_content == {"words": 3, "longest": "alpha"}
            assert json.loads(text_of(result)) == result.structured_content
            # A tool without an output schema answers as before.
            result = await client.call_tool("greet", {"name": "Ada"})
            assert (text_of(result), result.structured_content) == ("hello Ada", None)
            # A validation error is an error, not a structured result.
            result = await client.call_tool("word_stats", {"text": 5})
            assert result.is_error and result.structured_content is None

    run(session)


@pytest.mark.parametrize(
    ("tool", "why"),
    [
        ("liar", "field 'words' must be integer (JSON Schema rule 'type')"),
        ("rambler", "its text is not JSON"),
        ("cut", "its text was cut at its max_result_size_chars (8)"),
    ],
)
def test_a_result_that_breaks_its_schema_is_an_error_saying_why(
    serve_setup: ServeSetup, tool: str, why: str
) -> None:
    serve_setup.plugin.write_text(PLUGIN + TYPED_TOOLS)

    async def session() -> None:
        async with client_for(serve_setup) as client:
            await client.list_tools()
            result = await client.call_tool(tool, {})
            assert result.is_error and result.structured_content is None
            error = json.loads(text_of(result))
            assert error["tool"] == tool
            assert error["error"] == (
                f"Tool {tool!r} returned a result that does not match its output schema: {why}"
            )

    run(session)


def test_an_upstream_servers_hints_and_structured_results_pass_through(
    serve_setup: ServeSetup,
) -> None:
    upstream = json.dumps(str(SERVERS / "basic_server.py"))
    with serve_setup.config.open("a") as config:
        config.write(
            f"\n[mcp.servers.basic]\ncommand = {json.dumps(sys.executable)}\n"
            f"args = [{upstream}]\nconnect_timeout = 20\n"
        )

    async def session() -> None:
        async with client_for(serve_setup) as client:
            tools = {tool.name: tool for tool in (await client.list_tools()).tools}
            echo = tools["mcp__basic__echo"]
            assert echo.annotations.title == "Echo"
            assert echo.annotations.read_only_hint is True
            assert echo.annotations.idempotent_hint is True
            assert echo.output_schema["properties"]["result"]["type"] == "string"
            # The server's text and its object, both as the server sent them.
            result = await client.call_tool("mcp__basic__echo", {"text": "hi"})
            assert not result.is_error
            assert (text_of(result), result.structured_content) == ("hi", {"result": "hi"})
            result = await client.call_tool("mcp__basic__two_lines", {})
            assert text_of(result) == "first\nsecond" and result.structured_content is None

    run(session, timeout=60)
