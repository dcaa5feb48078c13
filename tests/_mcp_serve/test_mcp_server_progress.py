"""``toolreg serve`` forwards a tool's progress (``notifications/progress``) and its context's log.

The ``progress`` tools of ``serve_harness`` report ``1..steps`` of ``steps``
and then log a notice through their ``ToolContext``; a real SDK client
collects the reports with ``progress_callback``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from serve_harness import HttpServer, ServeSetup, run, stdio_client_for, text_of

pytest.importorskip("mcp")

from mcp import Client  # noqa: E402

from toolreg._mcp_serve.server_progress import ProgressRelay  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


class Reports:
    """A ``progress_callback`` keeping ``(progress, total, message)`` of each notification."""

    def __init__(self) -> None:
        self.seen: list[tuple[float, float | None, str | None]] = []

    async def __call__(self, progress: float, total: float | None, message: str | None) -> None:
        self.seen.append((progress, total, message))


def assert_counted(seen: list[tuple[float, float | None, str | None]], steps: int) -> None:
    """Reports of 1..steps: strictly increasing, each true to its step, the last one sent."""
    assert seen, "no progress notification reached the client"
    values = [progress for progress, _, _ in seen]
    assert values == sorted(set(values))
    for progress, total, message in seen:
        assert total == steps
        assert message == f"step {progress:g} of {steps}"
    assert seen[-1][0] == steps


def target_for(transport: str, setup: ServeSetup, http_server: Callable[..., HttpServer]) -> Any:
    return stdio_client_for(setup) if transport == "stdio" else http_server().url


@pytest.mark.parametrize("transport", ["stdio", "http"])
@pytest.mark.parametrize("mode", ["legacy", "modern"])
def test_progress_reaches_the_client_that_asked_before_the_answer(
    transport: str,
    mode: str,
    serve_setup: ServeSetup,
    http_server: Callable[..., HttpServer],
) -> None:
    target = target_for(transport, serve_setup, http_server)

    async def session() -> None:
        kwargs: dict[str, Any] = {"mode": "legacy"} if mode == "legacy" else {}
        async with Client(target, **kwargs) as client:
            for tool in ("count_up", "timed_count_up", "manual_count_up"):
                reports = Reports()
                result = await client.call_tool(tool, {"steps": 5}, progress_callback=reports)
                assert text_of(result) == "counted 5"
                # Every report was sent before the answer: none may arrive after it.
                assert_counted(reports.seen, 5)

    run(session)


@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_a_tools_context_log_reaches_its_client_with_its_mcp_level(
    transport: str, serve_setup: ServeSetup, http_server: Callable[..., HttpServer]
) -> None:
    heard: list[tuple[str, str | None, Any]] = []

    async def logged(params: Any) -> None:
        heard.append((params.level, params.logger, params.data))

    target = target_for(transport, serve_setup, http_server)

    async def session() -> None:
        async with Client(target, log_level="notice", logging_callback=logged) as client:
            await client.call_tool("count_up", {"steps": 2})
            await client.call_tool("timed_count_up", {"steps": 3})
        # "notice" stays notice (Python has no such level), under the tool's own logger.
        assert heard == [
            ("notice", "toolreg.tools.count_up", "counted to 2"),
            ("notice", "toolreg.tools.timed_count_up", "counted to 3"),
        ]

    run(session)


def test_the_relay_keeps_only_the_latest_unsent_report_and_drops_what_does_not_increase() -> None:
    import anyio

    sent: list[tuple[Any, ...]] = []

    async def main() -> None:
        gate = anyio.Event()

        async def send(*report: Any) -> None:
            await gate.wait()  # a slow client: reports pile up behind the first
            sent.append(report)

        relay = ProgressRelay(send)
        async with anyio.create_task_group() as tg:
            tg.start_soon(relay.pump)
            relay.report(1, 10, "one")
            await anyio.sleep(0.01)  # the pump takes "one" and waits on the client
            for n in range(2, 8):
                relay.report(n, 10, f"#{n}")
            relay.report(5, 10, "backwards")  # not an increase: dropped
            relay.close()
            relay.report(9, 10, "after close")  # the call has answered: dropped
            gate.set()
        assert sent == [(1, 10, "one"), (7, 10, "#7")]

    anyio.run(main)
