"""``toolreg serve`` fairness: slow calls of one client against another's list, ping and calls.

Each server is a real ``toolreg serve --transport http`` subprocess. The slow
tool is the harness's ``hold``: it notes ``start TAG`` in a file, waits for
the test to release it, then notes ``end TAG``. Assertions are about order and
completion, never about how long anything took.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import pytest

from serve_harness import HttpServer, RawSession, ServeSetup, run, text_of

pytest.importorskip("mcp")

import anyio  # noqa: E402  (after the importorskip: anyio comes with mcp)
from mcp import Client  # noqa: E402


def wait_for_starts(setup: ServeSetup, count: int) -> list[str]:
    """The hold log once ``count`` calls have started (the test's own timeout bounds it)."""
    while True:
        starts = [line for line in setup.holds() if line.startswith("start ")]
        if len(starts) >= count:
            return starts
        time.sleep(0.02)


async def hold_all(client: Client, tags: list[str], results: dict[str, str]) -> None:
    async def one(tag: str) -> None:
        results[tag] = text_of(await client.call_tool("hold", {"tag": tag}))

    async with anyio.create_task_group() as tg:
        for tag in tags:
            tg.start_soon(one, tag)


@pytest.mark.filterwarnings("ignore:ping is removed")
def test_slow_calls_of_other_sessions_never_delay_list_or_ping(
    serve_setup: ServeSetup, http_server: Callable[..., HttpServer]
) -> None:
    """Five sessions fill every tool-call thread (defaults: 8 each, 40 in all)."""
    server = http_server()
    tags = {f"s{session}": [f"s{session}-{n}" for n in range(8)] for session in range(5)}
    results: dict[str, str] = {}

    async def session() -> None:
        async with anyio.create_task_group() as tg:
            for session_tags in tags.values():

                async def busy(session_tags: list[str] = session_tags) -> None:
                    async with Client(server.url, mode="legacy") as client:
                        await hold_all(client, session_tags, results)

                tg.start_soon(busy)
            await anyio.to_thread.run_sync(wait_for_starts, serve_setup, 40)
            # Every call thread is taken, and none can end before the release below.
            async with (
                Client(server.url, mode="legacy") as legacy,
                Client(server.url, cache=None) as modern,
            ):
                for client in (legacy, modern):
                    assert "greet" in {tool.name for tool in (await client.list_tools()).tools}
                await legacy.send_ping()  # 2026-07-28 has no ping
            assert server.health()["status"] == "ok"
            assert not [line for line in serve_setup.holds() if line.startswith("end ")]
            serve_setup.release_holds()
        assert results == {tag: f"released {tag}" for all_tags in tags.values() for tag in all_tags}

    run(session, timeout=60)


def test_one_session_cannot_take_more_than_its_share(
    serve_setup: ServeSetup, http_server: Callable[..., HttpServer]
) -> None:
    server = http_server("--max-calls", "3", "--max-calls-per-session", "2")
    results: dict[str, str] = {}

    async def session() -> None:
        async with (
            Client(server.url, mode="legacy") as greedy,
            Client(server.url, mode="legacy") as other,
            anyio.create_task_group() as tg,
        ):
            tg.start_soon(hold_all, greedy, ["a1", "a2", "a3"], results)
            await anyio.to_thread.run_sync(wait_for_starts, serve_setup, 2)
            # The pool has a free thread, but a3 waits for one of its own session's.
            assert text_of(await other.call_tool("greet", {"name": "B"})) == "hello B"
            tg.start_soon(hold_all, other, ["b1"], results)
            starts = await anyio.to_thread.run_sync(wait_for_starts, serve_setup, 3)
            assert "start b1" in starts and "start a3" not in starts
            serve_setup.release_holds()
        assert results == {tag: f"released {tag}" for tag in ("a1", "a2", "a3", "b1")}

    run(session)


def test_a_disconnected_clients_queued_call_never_runs(
    serve_setup: ServeSetup, http_server: Callable[..., HttpServer]
) -> None:
    server = http_server("--max-calls-per-session", "1")
    # A client before 2025-11-25 cannot resume a broken stream: a drop is goodbye.
    raw = RawSession(server.url, protocol="2025-06-18")
    raw.start_call(1, "hold", {"tag": "running"})
    wait_for_starts(serve_setup, 1)
    raw.start_call(2, "hold", {"tag": "queued"})  # waits for the session's one slot
    raw.drop()
    server.wait_for_line(r"tools/call hold was cancelled before it started")
    serve_setup.release_holds()

    async def session() -> None:
        async with Client(server.url, mode="legacy") as client:
            result = await client.call_tool("hold", {"tag": "after"})
            assert text_of(result) == "released after"

    run(session)
    lines = serve_setup.holds()
    assert "start running" in lines and "start after" in lines
    assert "start queued" not in lines


def test_a_call_whose_request_is_cancelled_keeps_its_slot_until_its_thread_returns() -> None:
    """No task waits for the thread: the thread itself hands the slot back, then B may start."""
    import threading

    from toolreg._mcp_serve.server_calls import CallLimits

    limits = CallLimits(max_calls=1, max_calls_per_session=1)
    release_a = threading.Event()
    started: list[str] = []

    def work(tag: str) -> str:
        started.append(tag)
        if tag == "a":
            release_a.wait(10)
        return tag

    async def session() -> None:
        async with anyio.create_task_group() as tg:
            a_scope = anyio.CancelScope()

            async def call_a() -> None:
                with a_scope:
                    await limits.run("a", "s1", None, work, "a")

            tg.start_soon(call_a)
            while started != ["a"]:
                await anyio.sleep(0.01)
            a_scope.cancel()  # the request goes; its thread runs on
            await anyio.sleep(0.05)
            results: list[str] = []

            async def call_b() -> None:
                results.append(await limits.run("b", "s1", None, work, "b"))

            tg.start_soon(call_b)
            await anyio.sleep(0.2)
            assert started == ["a"], "b must wait for the slot a's thread still holds"
            release_a.set()
            with anyio.fail_after(5):
                while results != ["b"]:
                    await anyio.sleep(0.01)
        assert started == ["a", "b"]
        assert limits._sessions == {}  # both calls done: the session keeps nothing

    run(session)
