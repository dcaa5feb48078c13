"""Tools of two MCP servers that map to one registry name: neither gets it, in any order.

Server ``x``'s tool ``y__z`` and server ``x__y``'s tool ``z`` are both
``mcp__x__y__z``. The live test grows and shrinks those tools on two real
``dynamic_server.py`` subprocesses.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

pytest.importorskip("mcp")

from test_mcp_client import FAST, stdio_server, wait_for  # noqa: E402

from toolreg import ToolRegistry, parse_config, start_mcp, stop_mcp  # noqa: E402
from toolreg._mcp.claims import NameClaims  # noqa: E402

NAME = "mcp__x__y__z"


@pytest.mark.parametrize("order", [("x", "x__y"), ("x__y", "x")])
def test_contested_names_do_not_depend_on_who_staked_first(order: tuple[str, str]) -> None:
    claims = NameClaims()
    republished: list[str] = []
    for server in order:
        claims.join(server, lambda server=server: republished.append(server))
    tools = {"x": {NAME: "y__z", "mcp__x__solo": "solo"}, "x__y": {NAME: "z"}}
    first, second = order
    assert claims.stake(first, tools[first]) == {}
    assert claims.stake(second, tools[second]) == {NAME: [(first, tools[first][NAME])]}
    assert republished == [first]  # it must drop the name it published alone
    assert claims.contested("x") == {NAME: [("x__y", "z")]}
    assert claims.contested("x__y") == {NAME: [("x", "y__z")]}
    claims.stake("x__y", {})
    assert claims.contested("x") == {}
    assert republished == [first, "x"]  # x gets the name back


@pytest.fixture
def rivals() -> Iterator[ToolRegistry]:
    registry = ToolRegistry()
    config = parse_config(
        stdio_server("x", "dynamic_server.py") + stdio_server("x__y", "dynamic_server.py")
    )
    start_mcp(config, registry, policy=FAST)
    yield registry
    stop_mcp(registry)


def test_a_name_tools_of_two_servers_map_to_goes_to_neither(rivals: ToolRegistry) -> None:
    registry = rivals

    def owner() -> str | None:
        return registry.get_toolset_for_tool(NAME)

    # Alone, x__y's tool z has the name.
    assert registry.dispatch("mcp__x__y__grow", {"name": "z"}) == "grown"
    wait_for(lambda: owner() == "mcp-x__y", 10, "x__y's z")
    assert registry.dispatch(NAME, {}) == "I am z"

    # x's y__z maps to it too: the server that had it first loses it as well.
    assert registry.dispatch("mcp__x__grow", {"name": "y__z"}) == "grown"
    wait_for(lambda: NAME not in registry, 10, "the contested name to go")
    rejected = [d for d in registry.decisions() if d.action == "rejected" and d.tool == NAME]
    assert sorted(d.toolset for d in rejected) == ["mcp-x", "mcp-x__y"]
    for decision in rejected:  # each names both sources
        assert "tool 'y__z' of server 'x'" in decision.reason
        assert "tool 'z' of server 'x__y'" in decision.reason
    assert registry.dispatch("mcp__x__stable_b", {}) == "b"  # the rest is untouched
    assert registry.dispatch("mcp__x__y__stable_b", {}) == "b"

    # Once x__y drops z, the name is x's alone.
    assert registry.dispatch("mcp__x__y__shrink", {"name": "z"}) == "shrunk"
    wait_for(lambda: owner() == "mcp-x", 10, "x's y__z")
    assert registry.dispatch(NAME, {}) == "I am y__z"
