"""The MCP client lists an upstream server page by page (``nextCursor``), and stops a bad one.

The server is a real subprocess on the SDK's low-level API
(``tests/_mcp/servers/paged_server.py``): 2,000 tools, 300 to a page; or a
cursor that comes round again; or cursors that never end.
"""

from __future__ import annotations

import json
import logging
import sys
from pathlib import Path

import pytest

pytest.importorskip("mcp")

from toolreg import ToolRegistry, parse_config, start_mcp, stop_mcp  # noqa: E402
from toolreg._mcp import link  # noqa: E402
from toolreg._mcp.link import ReconnectPolicy  # noqa: E402

SERVER = Path(__file__).parent / "servers" / "paged_server.py"
FAST = ReconnectPolicy(initial_delay=0.05, max_delay=0.2, max_failures=1000, coalesce=0.02)


def config_for(*args: str) -> str:
    argv = ", ".join(json.dumps(a) for a in (str(SERVER), *args))
    return (
        f"[mcp.servers.paged]\ncommand = {json.dumps(sys.executable)}\nargs = [{argv}]\n"
        "connect_timeout = 30\n"
    )


def listed(registry: ToolRegistry) -> list[str]:
    return sorted(registry.get_tool_names_for_toolset("mcp-paged"))


def test_the_client_follows_next_cursor_through_2000_tools() -> None:
    registry = ToolRegistry()
    start_mcp(parse_config(config_for()), registry, policy=FAST)
    try:
        names = listed(registry)
        assert names == [f"mcp__paged__tool_{i:04d}" for i in range(2000)]
        assert registry.dispatch("mcp__paged__tool_1999", {}) == "tool_1999"
    finally:
        stop_mcp(registry)


def test_a_cursor_that_comes_round_again_is_stopped_with_a_warning(
    caplog: pytest.LogCaptureFixture,
) -> None:
    registry = ToolRegistry()
    with caplog.at_level(logging.WARNING, logger="toolreg.mcp"):
        start_mcp(parse_config(config_for("--loop")), registry, policy=FAST)
    try:
        # The first page, once: the repeated page added no duplicates.
        assert listed(registry) == [f"mcp__paged__tool_{i:04d}" for i in range(300)]
        assert (
            "MCP server paged: tools/list sent a cursor it had sent before, after 2 page(s); "
            "stopped there, with the 300 tool(s) listed so far"
        ) in caplog.messages
    finally:
        stop_mcp(registry)


def test_endless_cursors_are_stopped_after_max_pages(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(link, "MAX_PAGES", 40)
    registry = ToolRegistry()
    with caplog.at_level(logging.WARNING, logger="toolreg.mcp"):
        start_mcp(parse_config(config_for("--endless")), registry, policy=FAST)
    try:
        assert len(listed(registry)) == 40
        assert (
            "MCP server paged: tools/list still had more after 40 pages; stopped there, "
            "with the 40 tool(s) listed so far"
        ) in caplog.messages
    finally:
        stop_mcp(registry)
