"""``toolreg serve`` sends log messages (``notifications/message``) to the SDK's own client.

The ``chatter`` tools of ``serve_harness`` log on ``toolreg.demo`` at every
level; a client collects what reaches it with ``logging_callback``.
"""

from __future__ import annotations

import json
import os
import signal
import warnings
from collections.abc import Callable
from typing import Any

import pytest

from conftest import KeptClientLog
from serve_harness import EXTRA_TOOL, PLUGIN, HttpServer, ServeSetup, run, stdio_client_for, text_of

pytest.importorskip("mcp")

import anyio  # noqa: E402  (after the importorskip: anyio comes with mcp)
from mcp import Client  # noqa: E402

from toolreg._contract.client_log import (  # noqa: E402
    bound_client_log,
    level_of,
    log_to_client,
)
from toolreg._mcp_serve.server_log import MAX_PER_CALL  # noqa: E402

posix_only = pytest.mark.skipif(not hasattr(signal, "SIGHUP"), reason="SIGHUP is POSIX-only")
# logging/setLevel is deprecated as of 2026-07-28; handshake-era clients still send it.
pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


class Heard:
    """A ``logging_callback`` that keeps ``(level, logger, data)`` of each message."""

    def __init__(self) -> None:
        self.messages: list[tuple[str, str | None, Any]] = []

    async def __call__(self, params: Any) -> None:
        self.messages.append((params.level, params.logger, params.data))

    def take(self) -> list[tuple[str, str | None, Any]]:
        taken, self.messages = self.messages, []
        return taken


def chatter(tag: str, *levels: str) -> list[tuple[str, str, str]]:
    return [(level, "toolreg.demo", f"{tag} says {level}") for level in levels]


def legacy_stdio(setup: ServeSetup, heard: Heard) -> Client:
    """A handshake-era client of a ``toolreg serve`` it starts, collecting log messages."""
    return Client(stdio_client_for(setup), mode="legacy", logging_callback=heard)


async def set_level(client: Client, level: str) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        await client.set_logging_level(level)  # type: ignore[arg-type]


# -- the level a client sets ----------------------------------------------------------------


def test_handshake_client_gets_warnings_by_default_and_its_level_after_set_level(
    serve_setup: ServeSetup,
) -> None:
    heard = Heard()

    async def session() -> None:
        async with legacy_stdio(serve_setup, heard) as client:
            assert client.server_capabilities.logging is not None
            assert text_of(await client.call_tool("chatty", {"tag": "a"})) == "chatted"
            assert heard.take() == chatter("a", "warning", "error")

            await set_level(client, "debug")
            await client.call_tool("chatty", {"tag": "b"})
            assert heard.take() == chatter("b", "debug", "info", "warning", "error")

            await set_level(client, "error")
            await client.call_tool("chatty", {"tag": "c"})
            assert heard.take() == chatter("c", "error")

    run(session)


def test_modern_client_gets_log_messages_only_when_its_requests_ask(
    serve_setup: ServeSetup,
) -> None:
    quiet, asking = Heard(), Heard()

    async def session() -> None:
        async with Client(stdio_client_for(serve_setup), logging_callback=quiet) as client:
            assert client.protocol_version == "2026-07-28"
            await client.call_tool("chatty", {"tag": "a"})
        assert quiet.take() == []  # no logLevel in _meta: the server must not send any
        transport = stdio_client_for(serve_setup)
        async with Client(transport, log_level="info", logging_callback=asking) as client:
            await client.call_tool("chatty", {"tag": "b"})
        assert asking.take() == chatter("b", "info", "warning", "error")

    run(session)


def test_http_calls_log_to_their_own_client_only(
    serve_setup: ServeSetup, http_server: Callable[..., HttpServer]
) -> None:
    server = http_server()
    mine, other = Heard(), Heard()

    async def session() -> None:
        async with (
            Client(server.url, mode="legacy", logging_callback=mine) as legacy,
            Client(server.url, mode="legacy", logging_callback=other) as bystander,
            Client(server.url, log_level="warning", logging_callback=mine) as modern,
        ):
            await set_level(bystander, "debug")
            await legacy.call_tool("chatty", {"tag": "legacy"})
            await modern.call_tool("chatty", {"tag": "modern"})
            # A tool with a timeout runs on a worker of its own: its records find the call too.
            await legacy.call_tool("timed_chatty", {"tag": "timed"})
            assert text_of(await bystander.call_tool("greet", {"name": "b"})) == "hello b"
        assert mine.take() == [
            *chatter("legacy", "warning", "error"),
            *chatter("modern", "warning", "error"),
            *chatter("timed", "warning", "error"),
        ]
        assert other.take() == []

    run(session)


def test_a_stateless_handshake_client_gets_every_level_since_none_can_be_kept(
    serve_setup: ServeSetup, http_server: Callable[..., HttpServer]
) -> None:
    # The conformance suite's tools-call-with-logging asks for debug, then expects info
    # messages; without a session the level it set is gone by the next request.
    server = http_server("--stateless")
    heard = Heard()

    async def session() -> None:
        async with Client(server.url, mode="legacy", logging_callback=heard) as client:
            await set_level(client, "debug")
            await client.call_tool("chatty", {"tag": "s"})
            assert heard.take() == chatter("s", "debug", "info", "warning", "error")
            # A tool's own messages too, with their MCP level.
            assert text_of(await client.call_tool("count_up", {"steps": 2})) == "counted 2"
            assert heard.take() == [("notice", "toolreg.tools.count_up", "counted to 2")]

    run(session)


# -- the bound ------------------------------------------------------------------------------


@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_a_flooding_tool_sends_at_most_its_share_then_one_notice(
    transport: str, serve_setup: ServeSetup, http_server: Callable[..., HttpServer]
) -> None:
    heard = Heard()
    target = stdio_client_for(serve_setup) if transport == "stdio" else http_server().url

    async def session() -> None:
        async with Client(target, mode="legacy", logging_callback=heard) as client:
            assert text_of(await client.call_tool("flood", {"count": 1000})) == "flooded"
            messages = heard.take()
            assert messages[:MAX_PER_CALL] == [
                ("warning", "toolreg.demo", f"flood {n}") for n in range(MAX_PER_CALL)
            ]
            assert len(messages) == MAX_PER_CALL + 1
            level, name, data = messages[-1]
            assert (level, name) == ("warning", "toolreg.serve")
            assert f"{1000 - MAX_PER_CALL} more log message(s) of this call were dropped" in data
            # The bound is per call: the next call has its own.
            await client.call_tool("chatty", {"tag": "next"})
            assert heard.take() == chatter("next", "warning", "error")

    run(session)


# -- the hook a tool context will use -------------------------------------------------------


def test_log_to_client_reaches_the_client_of_the_call_at_its_level(
    serve_setup: ServeSetup,
) -> None:
    heard = Heard()

    async def session() -> None:
        async with legacy_stdio(serve_setup, heard) as client:
            # notice and debug are below the default level (warning): filtered, and said so.
            assert json.loads(text_of(await client.call_tool("notice", {}))) == [False, False]
            assert heard.take() == []
            await set_level(client, "debug")
            assert json.loads(text_of(await client.call_tool("notice", {}))) == [True, True]
            assert heard.take() == [("notice", None, "a notice"), ("debug", None, "a debug line")]

    run(session)


def test_log_to_client_outside_a_call_sends_nothing() -> None:
    assert log_to_client("info", "nobody listens") is False
    with pytest.raises(ValueError, match="unknown log level 'loud'"):
        log_to_client("loud", "x")

    sink = KeptClientLog()
    with bound_client_log(sink):
        assert log_to_client("alert", "bound", "me") is True
    assert log_to_client("alert", "unbound") is False
    assert sink.sent == [("alert", "bound", "me")]


@pytest.mark.parametrize(
    ("levelno", "level"),
    [(5, "debug"), (10, "debug"), (20, "info"), (25, "notice"), (30, "warning"), (45, "error")]
    + [(50, "critical"), (70, "critical")],
)
def test_python_levels_map_to_mcp_levels(levelno: int, level: str) -> None:
    assert level_of(levelno) == level


# -- records outside calls ------------------------------------------------------------------


@posix_only
def test_server_records_reach_a_stdio_client_but_not_http_clients(
    serve_setup: ServeSetup, http_server: Callable[..., HttpServer]
) -> None:
    """A reload's log lines come from no call: the stdio client hears them, HTTP clients do not."""
    server = http_server()
    stdio_heard, http_heard = Heard(), Heard()
    http_changed = anyio.Event()

    async def on_message(message: Any) -> None:
        if getattr(message, "method", None) == "notifications/tools/list_changed":
            http_changed.set()

    def reload(pid: int) -> None:
        serve_setup.plugin.write_text(PLUGIN + EXTRA_TOOL)
        os.kill(pid, signal.SIGHUP)

    async def session() -> None:
        async with (
            legacy_stdio(serve_setup, stdio_heard) as stdio,
            Client(
                server.url, mode="legacy", logging_callback=http_heard, message_handler=on_message
            ) as http,
        ):
            for client in (stdio, http):
                await set_level(client, "info")
            reload(int(text_of(await stdio.call_tool("whoami", {}))))
            reload(server.proc.pid)
            while not any("reloaded:" in str(data) for _, _, data in stdio_heard.messages):
                await anyio.sleep(0.02)
            # Announced after the reload's log lines, on the stream they would take.
            await http_changed.wait()
        assert ("info", "toolreg.serve", "reloading tool packs and config") in stdio_heard.take()
        assert http_heard.take() == []
        server.wait_for_line("reloaded:")  # the HTTP server logged it, on its stderr

    run(session)
