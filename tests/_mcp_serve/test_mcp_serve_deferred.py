"""``toolreg serve --deferred``: always-loaded tools and ``tool_search``, then what it found.

A real ``toolreg serve`` (subprocess, stdio and HTTP) with a local plugin of
2,000 ``bulk`` tools and a ``forecast`` tool to find, walked by the MCP SDK's
own client: list, search, hear ``notifications/tools/list_changed`` (that
session only), list again, call what was found. Hostile searches, a second
session that never sees the first's finds, the ``--toolset`` filter and the
cursor; the flags on the command line.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import anyio
import pytest

from serve_harness import PLUGIN, HttpServer, ServeSetup, run, stdio_client_for, text_of

pytest.importorskip("mcp")

from mcp import Client  # noqa: E402
from mcp.shared.exceptions import MCPError  # noqa: E402
from mcp_types import INVALID_PARAMS  # noqa: E402

from toolreg import ToolRegistry  # noqa: E402
from toolreg._mcp_serve.paging import Cursors  # noqa: E402
from toolreg.cli import main  # noqa: E402
from toolreg.serve import ToolServer  # noqa: E402

TOOLS = """
_schema = {"type": "object", "properties": {}}
for _i in range(2000):
    registry.register(
        f"bulk_{_i:04d}",
        "bulk",
        {"name": f"bulk_{_i:04d}", "description": "One of many.", "parameters": _schema},
        lambda args, _i=_i: f"bulk {_i}",
    )
_city = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
registry.register(
    "forecast",
    "bulk",
    {"name": "forecast", "description": "Weather forecast for a city: rain, sun, temperature.",
     "parameters": _city},
    lambda args: f"forecast for {args['city']}",
)
registry.register(
    "secret_forecast",
    "secret",
    {"name": "secret_forecast", "description": "Weather forecast for a city, rain and sun.",
     "parameters": _city},
    lambda args: "secret",
)
"""
#: Offers bulk and demo; ``secret_forecast`` is outside the filter.
FLAGS = ("--toolset", "bulk", "--toolset", "demo", "--deferred", "--always-loaded", "greet")
QUERY = {"query": "weather forecast for a city"}


@pytest.fixture
def deferred_setup(serve_setup: ServeSetup) -> ServeSetup:
    serve_setup.plugin.write_text(PLUGIN + TOOLS)
    return serve_setup


async def names(client: Client) -> list[str]:
    """Every offered name, following ``nextCursor`` to the end."""
    listed: list[str] = []
    cursor: str | None = None
    for _ in range(100):
        result = await client.list_tools(cursor=cursor, cache_mode="refresh")
        listed += [tool.name for tool in result.tools]
        cursor = result.next_cursor
        if cursor is None:
            return listed
    raise AssertionError("the cursor never ended")


class Changes:
    """Counts the ``notifications/tools/list_changed`` a handshake-era client hears."""

    def __init__(self) -> None:
        self.count = 0
        self.event = anyio.Event()

    async def __call__(self, message: Any) -> None:
        if getattr(message, "method", None) == "notifications/tools/list_changed":
            self.count += 1
            self.event.set()


async def search(client: Client, arguments: Any) -> dict[str, Any]:
    result = await client.call_tool("tool_search", arguments)
    assert not result.is_error, text_of(result)
    answer: dict[str, Any] = json.loads(text_of(result))
    return answer


async def assert_unknown_tool(client: Client, name: str) -> None:
    with pytest.raises(MCPError) as caught:
        await client.call_tool(name, {"city": "x"})
    assert caught.value.code == INVALID_PARAMS
    assert caught.value.message == f"Unknown tool: {name}"


async def walk_deferred(client: Client, changes: Changes) -> None:
    """list -> tool_search -> list_changed -> list again -> call the tool found."""
    assert await names(client) == ["greet", "tool_search"]
    answer = await search(client, QUERY)
    found = [tool["name"] for tool in answer["tools"]]
    assert found[0] == "forecast" and "secret_forecast" not in found
    with anyio.fail_after(10):
        await changes.event.wait()
    assert changes.count == 1
    listed = await names(client)
    assert listed == sorted(["greet", "tool_search", *found])
    result = await client.call_tool("forecast", {"city": "Oslo"})
    assert text_of(result) == "forecast for Oslo" and not result.is_error
    # The same search again finds nothing new: nothing to announce.
    await search(client, QUERY)
    await client.list_tools(cache_mode="refresh")
    assert changes.count == 1


async def assert_hostile_searches_are_tool_errors(client: Client) -> None:
    for arguments in (
        {"query": "x" * 100_000},
        {"query": 5},
        {"query": "  "},
        {"query": "weather", "limit": 0},
        {"query": "weather", "limit": 10**9},
        {"query": "weather", "bogus": "y" * 10_000},
        {},
    ):
        result = await client.call_tool("tool_search", arguments)
        assert result.is_error
        text = text_of(result)
        assert len(text) < 600 and "xxxxxxxxxx" not in text and "yyyyyyyy" not in text
        assert json.loads(text)["error_type"] == "invalid_arguments"


# -- a real toolreg serve ----------------------------------------------------------------


def test_stdio_deferred_walk(deferred_setup: ServeSetup) -> None:
    async def session() -> None:
        changes = Changes()
        transport = stdio_client_for(deferred_setup, *FLAGS, "--page-size", "1")
        async with Client(transport, mode="legacy", message_handler=changes) as client:
            assert client.server_capabilities.tools.list_changed
            await assert_hostile_searches_are_tool_errors(client)
            assert changes.count == 0
            # Deferred but not found yet: called by name, as a ToolSession does.
            assert text_of(await client.call_tool("bulk_0007", {})) == "bulk 7"
            await assert_unknown_tool(client, "secret_forecast")  # outside --toolset: never
            await walk_deferred(client, changes)
            # A cursor made for this filter (the key is no secret) pages only this offer.
            forged = await client.list_tools(cursor=Cursors(["bulk", "demo"]).make("a"))
            assert [tool.name for tool in forged.tools] == ["forecast"]
            await assert_unknown_tool(client, "secret_forecast")

    run(session, timeout=60)


def test_stdio_deferred_listen_stream(deferred_setup: ServeSetup) -> None:
    """A 2026-07-28 client hears of its finds on its subscriptions/listen stream."""

    async def session() -> None:
        async with Client(stdio_client_for(deferred_setup, *FLAGS)) as client:
            assert client.protocol_version == "2026-07-28"
            assert await names(client) == ["greet", "tool_search"]
            async with client.listen(tools_list_changed=True) as subscription:
                await search(client, QUERY)
                with anyio.fail_after(10):
                    async for event in subscription:
                        assert type(event).__name__ == "ToolsListChanged"
                        break
            assert "forecast" in await names(client)
            assert text_of(await client.call_tool("forecast", {"city": "Rome"})) == (
                "forecast for Rome"
            )

    run(session, timeout=60)


def test_http_deferred_sessions_are_apart(
    deferred_setup: ServeSetup, http_server: Callable[..., HttpServer]
) -> None:
    server = http_server(*FLAGS, "--page-size", "2")

    async def session() -> None:
        first, second = Changes(), Changes()
        async with (
            Client(server.url, mode="legacy", message_handler=first) as one,
            Client(server.url, mode="legacy", message_handler=second) as two,
        ):
            assert await names(two) == ["greet", "tool_search"]
            await walk_deferred(one, first)
            # The second session heard nothing and sees none of the first's finds.
            await anyio.sleep(0.5)
            assert second.count == 0
            assert await names(two) == ["greet", "tool_search"]
            await assert_hostile_searches_are_tool_errors(two)
            assert second.count == 0 and first.count == 1
            assert await names(two) == ["greet", "tool_search"]
            # Its own search is its own.
            await search(two, {"query": "weather forecast", "limit": 1})
            with anyio.fail_after(10):
                await second.event.wait()
            assert await names(two) == ["forecast", "greet", "tool_search"]
            assert first.count == 1

    run(session, timeout=60)


def test_http_stateless_deferred_forgets_between_requests(
    deferred_setup: ServeSetup, http_server: Callable[..., HttpServer]
) -> None:
    """No session, nothing to remember: every request sees the always-loaded tools and
    tool_search; what a search found is called by name."""
    server = http_server(*FLAGS, "--stateless")

    async def session() -> None:
        async with Client(server.url, mode="legacy") as client:
            assert await names(client) == ["greet", "tool_search"]
            answer = await search(client, QUERY)
            assert answer["tools"][0]["name"] == "forecast"
            assert await names(client) == ["greet", "tool_search"]
            assert text_of(await client.call_tool("forecast", {"city": "Lima"})) == (
                "forecast for Lima"
            )
            await assert_unknown_tool(client, "secret_forecast")

    run(session, timeout=60)


# -- in process ------------------------------------------------------------------------------


def _registry() -> ToolRegistry:
    registry = ToolRegistry()
    schema = {"type": "object", "properties": {}}
    for name, toolset, description in (
        ("clock", "time", "The time now."),
        ("forecast", "weather", "Weather forecast for a city."),
        ("hidden_forecast", "hidden", "Weather forecast for a city, hidden."),
    ):
        registry.register(
            name,
            toolset,
            {"name": name, "description": description, "parameters": schema},
            lambda args, name=name: name,
        )
    return registry


def test_always_loaded_outside_the_toolset_filter_stays_hidden() -> None:
    server = ToolServer(
        _registry(),
        ["time", "weather"],
        deferred=True,
        always_loaded=["toolset:time", "hidden_forecast"],
    )

    async def session() -> None:
        async with Client(server.server) as client:
            assert await names(client) == ["clock", "tool_search"]
            answer = await search(client, {"query": "weather forecast city"})
            assert [tool["name"] for tool in answer["tools"]] == ["forecast"]
            assert await names(client) == ["clock", "forecast", "tool_search"]
            await assert_unknown_tool(client, "hidden_forecast")

    run(session)
    assert server.deferred is not None and len(server.deferred) <= 1


def test_session_state_goes_with_the_session() -> None:
    import gc

    server = ToolServer(_registry(), deferred=True)

    async def sessions() -> None:
        for _ in range(3):
            async with Client(server.server, mode="legacy") as client:
                await search(client, {"query": "weather forecast", "limit": 1})
                assert await names(client) == ["forecast", "tool_search"]
                assert server.deferred is not None and len(server.deferred) >= 1
            async with Client(server.server, mode="legacy") as client:
                assert await names(client) == ["tool_search"]  # a new session: none found

    run(sessions)
    gc.collect()
    assert server.deferred is not None and len(server.deferred) == 0


def test_a_bad_always_loaded_item_fails_at_start() -> None:
    with pytest.raises(TypeError):
        ToolServer(_registry(), deferred=True, always_loaded=[3])  # type: ignore[list-item]


# -- the command line ----------------------------------------------------------------------


def test_always_loaded_needs_deferred(
    deferred_setup: ServeSetup, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["serve", "--config", str(deferred_setup.config), "--always-loaded", "greet"])
    assert code == 2
    assert "--always-loaded needs --deferred" in capsys.readouterr().err


def test_the_config_turns_it_on_and_the_flag_wins(deferred_setup: ServeSetup) -> None:
    config = deferred_setup.config
    config.write_text(
        config.read_text() + '\n[search]\ndefer = true\nalways_loaded = ["toolset:demo"]\n'
    )

    async def session() -> None:
        transport = stdio_client_for(deferred_setup, "--toolset", "bulk", "--toolset", "demo")
        async with Client(transport) as client:
            assert await names(client) == ["boom", "greet", "tool_search", "whoami"]
        transport = stdio_client_for(deferred_setup, *FLAGS[:4], "--always-loaded", "whoami")
        async with Client(transport) as client:
            assert await names(client) == ["tool_search", "whoami"]
        transport = stdio_client_for(deferred_setup, *FLAGS[:4], "--no-deferred")
        async with Client(transport) as client:
            assert len(await names(client)) == 2004

    run(session, timeout=60)


def test_a_found_tool_that_becomes_unavailable_is_neither_listed_nor_called() -> None:
    registry = _registry()
    up = [True]
    registry.register(
        "storm_forecast",
        "weather",
        {
            "name": "storm_forecast",
            "description": "Storm forecast for a city.",
            "parameters": {"type": "object", "properties": {}},
        },
        lambda args: "storm",
        check_fn=lambda: up[0],
    )
    server = ToolServer(registry, deferred=True, page_size=1)

    async def session() -> None:
        async with Client(server.server, mode="legacy") as client:
            answer = await search(client, {"query": "storm forecast city", "limit": 5})
            assert "storm_forecast" in [tool["name"] for tool in answer["tools"]]
            assert "storm_forecast" in await names(client)
            up[0] = False
            registry.invalidate_check_fn_cache()
            assert "storm_forecast" not in await names(client)
            # Nor on the page a cursor made up to land right before it.
            forged = await client.list_tools(
                cursor=server.cursors.make("storm_forecasa"), cache_mode="refresh"
            )
            assert [tool.name for tool in forged.tools] == ["tool_search"]
            await assert_unknown_tool(client, "storm_forecast")

    run(session)
