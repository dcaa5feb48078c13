"""``toolreg serve --page-size N``: ``tools/list`` in pages, the cursor hostile input.

A real ``toolreg serve`` (subprocess, stdio and HTTP) with a local plugin that
registers 2,000 tools, paged through by the MCP SDK's own client; the cursor's
semantics across a registry change on an in-process ``ToolServer``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from serve_harness import PLUGIN, HttpServer, ServeSetup, run, stdio_client_for

pytest.importorskip("mcp")

from mcp import Client  # noqa: E402
from mcp.shared.exceptions import MCPError  # noqa: E402
from mcp_types import INVALID_PARAMS  # noqa: E402

from toolreg import ToolRegistry  # noqa: E402
from toolreg._mcp_serve.paging import MAX_CURSOR_CHARS, BadCursor, Cursors, Pages  # noqa: E402
from toolreg.serve import ToolServer  # noqa: E402

#: 2,000 tools in ``bulk``; every hundredth has a ``secret`` neighbour that sorts right after it.
BULK = """
_bulk_schema = {"type": "object", "properties": {}}
for _i in range(2000):
    registry.register(
        f"bulk_{_i:04d}",
        "bulk",
        {"name": f"bulk_{_i:04d}", "description": "One of many.", "parameters": _bulk_schema},
        lambda args, _i=_i: f"bulk {_i}",
    )
    if _i % 100 == 0:
        registry.register(
            f"bulk_{_i:04d}_secret",
            "secret",
            {"name": f"bulk_{_i:04d}_secret", "description": "Hidden.", "parameters": _bulk_schema},
            lambda args: "secret",
        )
"""
ALL_BULK = [f"bulk_{i:04d}" for i in range(2000)]


@pytest.fixture
def bulk_setup(serve_setup: ServeSetup) -> ServeSetup:
    serve_setup.plugin.write_text(PLUGIN + BULK)
    return serve_setup


async def walk(client: Client) -> list[list[str]]:
    """Every page's tool names, following ``nextCursor`` to the end."""
    pages: list[list[str]] = []
    cursor: str | None = None
    while True:
        result = await client.list_tools(cursor=cursor, cache_mode="refresh")
        pages.append([tool.name for tool in result.tools])
        cursor = result.next_cursor
        if cursor is None:
            return pages
        assert len(pages) < 100, "the cursor never ended"


#: What a client may send that this server never issued.
HOSTILE = [
    "",
    "x",
    "1",
    "1..",
    "2.YnVsa18wMDAx.AAAAAAAAAAAA",  # another version
    "1.YnVsa18wMDAx.AAAAAAAAAAAA",  # a name with a made-up check
    "1.!!!!.AAAAAAAAAAAA",  # not base64
    "1.gICA.AAAAAAAAAAAA",  # not ASCII
    "é" * 40,
    "1." + "A" * 100_000,  # huge
]


async def assert_refused(client: Client, cursor: str) -> None:
    with pytest.raises(MCPError) as caught:
        await client.list_tools(cursor=cursor, cache_mode="refresh")
    assert caught.value.code == INVALID_PARAMS
    assert caught.value.message.startswith("Invalid cursor: ")
    assert len(caught.value.message) < 120  # never the cursor echoed back


async def assert_pages_2000(client: Client, size: int) -> None:
    pages = await walk(client)
    names = [name for page in pages for name in page]
    assert names == ALL_BULK  # each once, in name order, none of the secret ones
    assert [len(page) for page in pages] == [size] * (2000 // size) + (
        [2000 % size] if 2000 % size else []
    )
    assert await walk(client) == pages  # stable: the same pages again


# -- a real toolreg serve ----------------------------------------------------------------


def test_stdio_pages_2000_tools(bulk_setup: ServeSetup) -> None:
    async def session() -> None:
        transport = stdio_client_for(bulk_setup, "--toolset", "bulk", "--page-size", "150")
        async with Client(transport) as client:
            await assert_pages_2000(client, 150)
            for cursor in HOSTILE:
                await assert_refused(client, cursor)
            # A cursor of a server without the filter is not one of this server's.
            await assert_refused(client, Cursors().make("bulk_0099"))
            # One made for this offer (the key is no secret) still pages only the offer:
            # bulk_0100_secret sorts right after it and is not there.
            forged = await client.list_tools(cursor=Cursors(["bulk"]).make("bulk_0100"))
            assert [tool.name for tool in forged.tools] == ALL_BULK[101:251]

    run(session, timeout=60)


def test_stdio_without_page_size_sends_one_page(bulk_setup: ServeSetup) -> None:
    async def session() -> None:
        async with Client(stdio_client_for(bulk_setup, "--toolset", "bulk")) as client:
            result = await client.list_tools()
            assert result.next_cursor is None
            assert sorted(tool.name for tool in result.tools) == ALL_BULK

    run(session, timeout=60)


@pytest.mark.parametrize("stateless", [False, True], ids=["stateful", "stateless"])
def test_http_pages_2000_tools(
    bulk_setup: ServeSetup, http_server: Callable[..., HttpServer], stateless: bool
) -> None:
    extra = ["--stateless"] if stateless else []
    server = http_server("--toolset", "bulk", "--page-size", "700", *extra)

    async def session() -> None:
        async with Client(server.url) as client:
            await assert_pages_2000(client, 700)
            await assert_refused(client, "1.YnVsa18wMDAx.AAAAAAAAAAAA")
            await assert_refused(client, "1." + "A" * 100_000)

    run(session, timeout=60)


# -- the cursor across a registry change (in process) -------------------------------------


def register(registry: ToolRegistry, name: str) -> None:
    schema = {"name": name, "description": name, "parameters": {"type": "object"}}
    registry.register(name, "letters", schema, lambda args: name)


def test_a_cursor_continues_after_the_list_changed() -> None:
    registry = ToolRegistry()
    for name in "abcdefghij":
        register(registry, name)
    server = ToolServer(registry, page_size=3)

    async def session() -> None:
        async with Client(server.server) as client:
            first = await client.list_tools()
            assert [tool.name for tool in first.tools] == ["a", "b", "c"]
            register(registry, "aa")  # before the cursor: not in the rest (list_changed says so)
            register(registry, "ca")  # after it: in the rest, in its place
            registry.deregister("e")
            names = [tool.name for tool in first.tools]
            cursor = first.next_cursor
            while cursor is not None:
                page = await client.list_tools(cursor=cursor, cache_mode="refresh")
                names += [tool.name for tool in page.tools]
                cursor = page.next_cursor
            assert names == ["a", "b", "c", "ca", "d", "f", "g", "h", "i", "j"]
            registry.deregister("c")  # the cursor's own tool gone: it still says where
            again = await client.list_tools(cursor=first.next_cursor, cache_mode="refresh")
            assert [tool.name for tool in again.tools] == ["ca", "d", "f"]

    run(session)


def test_a_cursor_on_a_server_that_does_not_page_gets_the_rest() -> None:
    registry = ToolRegistry()
    for name in "cab":
        register(registry, name)
    server = ToolServer(registry)

    async def session() -> None:
        async with Client(server.server) as client:
            whole = await client.list_tools()
            assert ([tool.name for tool in whole.tools], whole.next_cursor) == (
                ["a", "b", "c"],
                None,
            )
            rest = await client.list_tools(cursor=server.cursors.make("a"), cache_mode="refresh")
            assert ([tool.name for tool in rest.tools], rest.next_cursor) == (["b", "c"], None)
            await assert_refused(client, "nope")

    run(session)


# -- the parts --------------------------------------------------------------------------------


@pytest.mark.parametrize("size", [0, -1, True, 2.5])
def test_page_size_must_be_a_whole_number(size: Any) -> None:
    with pytest.raises(ValueError, match="page_size must be a whole number >= 1"):
        ToolServer(ToolRegistry(), page_size=size)


def test_cursors_round_trip_and_refuse_what_they_did_not_make() -> None:
    cursors = Cursors(["bulk"])
    longest = "n" * 128
    assert cursors.read(cursors.make("bulk_0001")) == "bulk_0001"
    assert len(cursors.make(longest)) == 186 <= MAX_CURSOR_CHARS  # as docs/mcp.md says
    assert cursors.read(cursors.make(longest)) == longest
    made = cursors.make("bulk_0001")
    for bad in [*HOSTILE, made[:-1], made[:-3], made + "A", None, 5, Cursors().make("bulk_0001")]:
        with pytest.raises(BadCursor):
            cursors.read(bad)
    # The filter's order does not matter; its content does.
    assert Cursors(["b", "a"]).read(Cursors(["a", "b"]).make("x")) == "x"


def test_pages_slice_in_name_order_and_resort_only_a_new_list() -> None:
    pages: Pages[str] = Pages(lambda item: item)
    listed = ["d", "b", "a", "c"]
    assert pages.page(listed, None, 3) == (["a", "b", "c"], "c")
    assert pages.page(listed, "c", 3) == (["d"], None)
    assert pages.page(listed, "zz", 3) == ([], None)
    assert pages.page(listed, None, None) == (["a", "b", "c", "d"], None)
    assert pages.page(["b", "a"], None, 1) == (["a"], "a")  # another list: sorted anew
