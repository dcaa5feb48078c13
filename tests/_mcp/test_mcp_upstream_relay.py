"""A proxied MCP tool's progress and log messages reach the host, bounded against its server.

The server is ``tests/_mcp/servers/chatty_server.py``, a real subprocess, over
stdio in both protocol eras and over streamable HTTP; its hostile tools send
floods, ten megabytes, progress that is no number and tokens nobody gave them.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest

pytest.importorskip("mcp")

from mcp import Client  # noqa: E402
from test_mcp_client import FAST, free_port, launch_http, stdio_server, wait_for  # noqa: E402

from conftest import KeptClientLog  # noqa: E402
from serve_harness import ServeSetup, run, stdio_client_for, text_of  # noqa: E402
from toolreg import ToolRegistry, is_tool_error, parse_config, start_mcp, stop_mcp  # noqa: E402
from toolreg._contract.client_log import bound_client_log  # noqa: E402
from toolreg._mcp.upstream_relay import (  # noqa: E402
    LOOSE_BURST,
    LOOSE_RATE,
    MAX_CHARS,
    MAX_LOGGER_CHARS,
    MAX_LOGS_PER_CALL,
    PROGRESS_BURST,
    PROGRESS_RATE,
)

SERVERS = ("chatty", "legacy", "web")
Report = tuple[float, "float | None", "str | None"]


@pytest.fixture(scope="module")
def chatty() -> Iterator[ToolRegistry]:
    """The chatty server three times: stdio (2026-07-28), stdio (handshake era), HTTP."""
    port = free_port()
    web = launch_http(port, "chatty_server.py")
    registry = ToolRegistry()
    config = parse_config(
        stdio_server("chatty", "chatty_server.py")
        + stdio_server("legacy", "chatty_server.py", "--legacy")
        + f'[mcp.servers.web]\nurl = "http://127.0.0.1:{port}/mcp"\nconnect_timeout = 20\n'
    )
    start_mcp(config, registry, policy=FAST)
    wait_for(lambda: registry.availability("mcp__web__steps")[0], 20, "the HTTP server")
    yield registry
    stop_mcp(registry)
    web.terminate()
    web.wait(10)


class Heard:
    """A ``progress=`` callback keeping each report and the thread it ran on."""

    def __init__(self) -> None:
        self.reports: list[Report] = []
        self.threads: set[int] = set()

    def __call__(self, progress: float, total: float | None, message: str | None) -> None:
        self.reports.append((progress, total, message))
        self.threads.add(threading.get_ident())


def tool_records(caplog: pytest.LogCaptureFixture, tool: str) -> list[logging.LogRecord]:
    return [r for r in caplog.records if r.name == f"toolreg.tools.{tool}"]


@pytest.fixture
def debug_logs(caplog: pytest.LogCaptureFixture) -> pytest.LogCaptureFixture:
    caplog.set_level(logging.DEBUG, logger="toolreg")
    return caplog


# -- what a well-behaved server reports ------------------------------------------------------


@pytest.mark.parametrize("server", SERVERS)
def test_progress_reaches_the_callback_on_the_dispatching_thread(chatty, server) -> None:
    heard = Heard()
    result = chatty.dispatch(f"mcp__{server}__steps", {"count": 3}, progress=heard)
    assert result == "done"
    assert heard.reports == [(float(n), 3.0, f"step {n} of 3") for n in (1, 2, 3)]
    assert heard.threads == {threading.get_ident()}, "the host's callback runs on its own thread"


@pytest.mark.parametrize("server", SERVERS)
def test_a_token_goes_upstream_only_when_someone_listens(chatty, server) -> None:
    tool = f"mcp__{server}__echo_meta"
    assert chatty.dispatch(tool, {}).startswith("token=False")
    assert chatty.dispatch(tool, {}, progress=Heard()).startswith("token=True")


@pytest.mark.parametrize("server", SERVERS)
def test_log_messages_reach_the_tools_logger_like_ctx_log(chatty, server, debug_logs) -> None:
    tool = f"mcp__{server}__steps"
    assert chatty.dispatch(tool, {"count": 2, "level": "notice"}) == "done"
    records = tool_records(debug_logs, tool)
    assert [r.getMessage() for r in records] == ["did step 1", "did step 2"]
    for record in records:
        assert record.mcp_level == "notice"  # MCP's level kept; Python's is INFO + 5
        assert record.levelno == logging.INFO + 5
        assert (record.mcp_logger, record.tool_name) == ("chatty.steps", tool)
    warned = chatty.dispatch(f"mcp__{server}__structured_log", {})
    assert warned == "logged"
    (record,) = tool_records(debug_logs, f"mcp__{server}__structured_log")
    assert json.loads(record.getMessage()) == {"disk": "full", "free": 0}


def test_a_2026_server_is_asked_for_the_level_the_tools_logger_lets_through(chatty) -> None:
    tool = "mcp__chatty__echo_meta"
    logger = logging.getLogger(f"toolreg.tools.{tool}")
    try:
        for level, asked in ((logging.DEBUG, "debug"), (logging.ERROR, "error")):
            logger.setLevel(level)
            assert chatty.dispatch(tool, {}) == f"token=False level={asked}"
        logger.setLevel(logging.CRITICAL + 1)  # nobody hears: nothing is asked for
        assert chatty.dispatch(tool, {}) == "token=False level=None"
        # A serve client bound to the call filters for itself: it may want anything.
        with bound_client_log(KeptClientLog()):
            assert chatty.dispatch(tool, {}) == "token=False level=debug"
    finally:
        logger.setLevel(logging.NOTSET)


@pytest.mark.parametrize("server", ["chatty", "web"])
def test_a_calls_log_reaches_the_client_bound_to_it(chatty, server) -> None:
    sink = KeptClientLog()
    logging.getLogger(f"toolreg.tools.mcp__{server}__steps").setLevel(logging.CRITICAL + 1)
    try:
        with bound_client_log(sink):
            assert chatty.dispatch(f"mcp__{server}__steps", {"count": 2}) == "done"
    finally:
        logging.getLogger(f"toolreg.tools.mcp__{server}__steps").setLevel(logging.NOTSET)
    logger = f"toolreg.tools.mcp__{server}__steps"
    assert sink.sent == [("info", "did step 1", logger), ("info", "did step 2", logger)]


def test_dispatch_many_hears_a_proxied_calls_progress_by_index(chatty) -> None:
    heard: list[tuple[int, float]] = []
    calls = [("mcp__chatty__echo_meta", {}), ("mcp__web__steps", {"count": 2}, "c1")]
    results = chatty.dispatch_many(calls, progress=lambda i, p, t, m: heard.append((i, p)))
    assert results[0].startswith("token=True") and results[1] == "done"
    assert sorted(heard) == [(1, 1.0), (1, 2.0)]


# -- which call a message belongs to ----------------------------------------------------------


def test_over_http_concurrent_calls_each_get_their_own_messages(chatty, debug_logs) -> None:
    calls = [
        ("mcp__web__steps", {"count": 3, "pause": 0.05, "tag": "a"}, "A"),
        ("mcp__web__steps", {"count": 3, "pause": 0.05, "tag": "b"}, "B"),
    ]
    heard: list[tuple[int, str | None]] = []
    results = chatty.dispatch_many(calls, progress=lambda i, p, t, m: heard.append((i, m)))
    assert results == ["done", "done"]
    assert sorted(heard) == sorted((i, f"step {n} of 3") for i in (0, 1) for n in (1, 2, 3))
    records = tool_records(debug_logs, "mcp__web__steps")
    assert len(records) == 6
    for record in records:
        tag = record.getMessage()[0]
        assert record.tool_call_id == tag.upper(), "a message reached the other call"


def test_over_stdio_a_message_no_single_call_can_own_is_logged_loose(chatty, debug_logs) -> None:
    calls = [("mcp__chatty__steps", {"count": 3, "pause": 0.1, "tag": t}) for t in "ab"]
    assert chatty.dispatch_many(calls) == ["done", "done"]
    owned = tool_records(debug_logs, "mcp__chatty__steps")
    loose = [r for r in debug_logs.records if r.name == "toolreg.mcp" and "says:" in r.getMessage()]
    # Two calls ran at once on one stdio connection: nothing says whose a message is.
    assert len(owned) + len(loose) == 6
    assert loose, "messages while two calls ran were given to one of them"
    for record in loose:
        assert record.getMessage().startswith("MCP server chatty says: ")
        assert record.tool_name is None


# -- a hostile server -------------------------------------------------------------------------


@pytest.mark.parametrize("server", SERVERS)
def test_a_progress_flood_reaches_the_host_at_a_bounded_rate(chatty, server) -> None:
    heard = Heard()
    started = time.monotonic()
    result = chatty.dispatch(f"mcp__{server}__flood_progress", {"count": 5000}, progress=heard)
    took = time.monotonic() - started
    assert result == "flooded"
    # A burst, then the rate; the final delivery may add a whole burst's worth.
    assert len(heard.reports) <= 2 * PROGRESS_BURST + PROGRESS_RATE * took
    assert heard.reports[-1] == (5000.0, 5000.0, None), "the latest report is always delivered"
    values = [p for p, _, _ in heard.reports]
    assert values == sorted(set(values))


@pytest.mark.parametrize("server", SERVERS)
def test_a_log_flood_is_cut_at_the_calls_bound_and_counted(chatty, server, debug_logs) -> None:
    tool = f"mcp__{server}__flood_logs"
    assert chatty.dispatch(tool, {"count": 1000}) == "flooded"
    assert len(tool_records(debug_logs, tool)) == MAX_LOGS_PER_CALL
    (said,) = [r for r in debug_logs.records if "were dropped" in r.getMessage()]
    assert said.getMessage().startswith(f"{1000 - MAX_LOGS_PER_CALL} more log message(s) of {tool}")


@pytest.mark.parametrize("server", ["chatty", "legacy"])
def test_ten_megabytes_are_cut_to_the_bound(chatty, server, debug_logs) -> None:
    heard = Heard()
    tool = f"mcp__{server}__huge"
    assert chatty.dispatch(tool, {"chars": 10_000_000}, progress=heard) == "huge"
    ((_, _, message),) = heard.reports
    assert len(message) <= MAX_CHARS and message.endswith("[truncated 9998032 characters]")
    (record,) = tool_records(debug_logs, tool)
    assert MAX_CHARS - 50 < len(record.getMessage()) <= MAX_CHARS
    assert MAX_LOGGER_CHARS - 50 < len(record.mcp_logger) <= MAX_LOGGER_CHARS


def test_over_http_ten_megabytes_fail_the_call_and_the_link_reconnects(chatty) -> None:
    # The SDK refuses server-sent events over 1 MB: the call fails, clearly, and the
    # stream it broke is reconnected like any lost connection.
    result = chatty.dispatch("mcp__web__huge", {"chars": 10_000_000}, progress=Heard())
    assert is_tool_error(result)
    wait_for(lambda: chatty.dispatch("mcp__web__steps", {"count": 1}) == "done", 20, "reconnect")


@pytest.mark.parametrize("server", SERVERS)
def test_progress_that_is_no_increasing_number_is_dropped(chatty, server, debug_logs) -> None:
    heard = Heard()
    assert chatty.dispatch(f"mcp__{server}__odd_progress", {}, progress=heard) == "odd"
    # "half", true, null, [1], a "ten" total: the SDK drops them; 0.5 goes backwards,
    # 1e400 is no finite number, a total of -3 is left out.
    assert heard.reports == [(1.0, None, None), (2.0, None, None), (3.0, 4.0, "three")]
    assert not [r for r in debug_logs.records if "not a level" in r.getMessage()]


@pytest.mark.parametrize("server", SERVERS)
def test_progress_under_a_token_the_call_was_not_given_is_dropped(chatty, server) -> None:
    heard = Heard()
    assert chatty.dispatch(f"mcp__{server}__foreign_token", {}, progress=heard) == "foreign"
    assert heard.reports == [(1.0, None, None)]


def test_a_flood_of_loose_messages_is_rate_limited(chatty, debug_logs) -> None:
    calls = [("mcp__chatty__flood_logs", {"count": 400})] * 2
    started = time.monotonic()
    assert chatty.dispatch_many(calls) == ["flooded", "flooded"]
    took = time.monotonic() - started
    loose = [r for r in debug_logs.records if r.name == "toolreg.mcp" and "says:" in r.getMessage()]
    owned = tool_records(debug_logs, "mcp__chatty__flood_logs")
    assert len(owned) <= 2 * MAX_LOGS_PER_CALL
    assert len(loose) <= LOOSE_BURST + LOOSE_RATE * took + 1


def test_a_failing_progress_callback_is_logged_and_the_call_answers(chatty, debug_logs) -> None:
    def broken(*_: Any) -> None:
        raise RuntimeError("host bug")

    assert chatty.dispatch("mcp__chatty__steps", {"count": 2}, progress=broken) == "done"
    failures = [r for r in debug_logs.records if "progress listener" in r.getMessage()]
    assert len(failures) == 2


# -- on through toolreg serve -------------------------------------------------------------------


@pytest.mark.parametrize("mode", ["legacy", "modern"])
def test_serve_forwards_a_proxied_tools_progress_and_log_to_its_client(
    mode: str, serve_setup: ServeSetup
) -> None:
    with serve_setup.config.open("a") as config:
        config.write(stdio_server("chatty", "chatty_server.py"))
    reports: list[Report] = []
    heard: list[tuple[str, str | None, Any]] = []

    async def progressed(progress: float, total: float | None, message: str | None) -> None:
        reports.append((progress, total, message))

    async def logged(params: Any) -> None:
        heard.append((params.level, params.logger, params.data))

    async def session() -> None:
        kwargs: dict[str, Any] = {"mode": "legacy"} if mode == "legacy" else {"log_level": "info"}
        target = stdio_client_for(serve_setup)
        async with Client(target, logging_callback=logged, **kwargs) as client:
            if mode == "legacy":
                await client.set_logging_level("info")
            result = await client.call_tool(
                "mcp__chatty__steps", {"count": 2}, progress_callback=progressed
            )
            assert text_of(result) == "done"

    run(session, timeout=60)
    # serve sends the latest report waiting; the last one always arrives.
    assert reports[-1] == (2.0, 2.0, "step 2 of 2")
    assert set(reports) <= {(1.0, 2.0, "step 1 of 2"), (2.0, 2.0, "step 2 of 2")}
    logger = "toolreg.tools.mcp__chatty__steps"
    assert [h for h in heard if h[1] == logger] == [
        ("info", logger, "did step 1"),
        ("info", logger, "did step 2"),
    ]
