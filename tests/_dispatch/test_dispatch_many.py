"""dispatch_many and adispatch_many: concurrent, bounded, in call order, never raising.

Concurrency is proven by calls that wait for each other (a barrier, events):
run one at a time, they could never finish. The bound is an upper limit on
what is seen running at once, which no scheduling can push over.
"""

from __future__ import annotations

import asyncio
import contextvars
import json
import threading
import time
from typing import Any

import pytest

from toolreg import ToolRegistry, is_tool_error

OBJECT = {"parameters": {"type": "object"}}
WAIT = 10.0  # a barrier's patience: only a deadlock ever waits this long


def error_of(result: Any) -> dict[str, Any]:
    assert isinstance(result, str) and is_tool_error(result), result
    return json.loads(result)


@pytest.fixture
def many() -> ToolRegistry:
    reg = ToolRegistry()
    reg.register("echo", "t", OBJECT, lambda args: f"echo {args.get('n')}")
    reg.register("boom", "t", OBJECT, lambda args: 1 / 0)
    return reg


def test_calls_run_together_and_results_keep_call_order(many: ToolRegistry) -> None:
    barrier = threading.Barrier(4, timeout=WAIT)

    def meet(args: dict[str, Any]) -> str:
        barrier.wait()  # returns only once four calls run at the same time
        return f"met {args['n']}"

    many.register("meet", "t", OBJECT, meet)
    calls = [("meet", {"n": n}) for n in range(4)]
    assert many.dispatch_many(calls, max_concurrency=4) == [f"met {n}" for n in range(4)]


def test_no_more_than_max_concurrency_calls_run_at_once(many: ToolRegistry) -> None:
    lock = threading.Lock()
    running = [0]
    peak = [0]
    pair = threading.Barrier(2, timeout=WAIT)

    def counted(args: dict[str, Any]) -> str:
        with lock:
            running[0] += 1
            peak[0] = max(peak[0], running[0])
        try:
            pair.wait()  # two at a time must be possible
            time.sleep(0.005)
        finally:
            with lock:
                running[0] -= 1
        return "ok"

    many.register("counted", "t", OBJECT, counted)
    assert many.dispatch_many([("counted", {})] * 8, max_concurrency=2) == ["ok"] * 8
    assert peak[0] == 2


def test_each_call_has_its_own_errors_and_timeout(many: ToolRegistry) -> None:
    release = threading.Event()
    many.register(
        "stuck", "t", OBJECT, lambda args: "late" if release.wait(WAIT) else "never", timeout=0.05
    )
    try:
        results = many.dispatch_many(
            [
                ("echo", {"n": 1}),
                ("boom", {}),
                ("stuck", {}),
                ("missing", {}),
                ("echo", '{"n": 2}'),
                "not a call",
                ("echo", {}, 7),
            ]
        )
    finally:
        release.set()
    assert results[0] == "echo 1"
    assert "ZeroDivisionError" in error_of(results[1])["error"]
    assert error_of(results[2])["error_type"] == "timeout"
    assert error_of(results[3])["error"] == "Unknown tool: missing"
    assert results[4] == "echo 2"
    for bad, index in ((results[5], 5), (results[6], 6)):
        problem = error_of(bad)
        assert problem["error_type"] == "invalid_call"
        assert f"Call {index} of the batch is not (name, args)" in problem["error"]


def test_hooks_apply_to_each_call(many: ToolRegistry) -> None:
    class NoTwo:
        def before(self, name: str, args: dict[str, Any]) -> str | None:
            return "two is refused" if args.get("n") == 2 else None

        def after(self, name: str, args: dict[str, Any], result: Any) -> Any:
            return f"{result}!"

    many.set_dispatch_hooks(NoTwo())
    results = many.dispatch_many([("echo", {"n": n}) for n in (1, 2, 3)])
    assert results[0] == "echo 1!" and results[2] == "echo 3!"
    assert error_of(results[1])["error"] == "two is refused"
    assert asyncio.run(many.adispatch_many([("echo", {"n": 2})])) == results[1:2]


def test_the_callers_context_reaches_every_call(many: ToolRegistry) -> None:
    who: contextvars.ContextVar[str] = contextvars.ContextVar("who", default="nobody")
    barrier = threading.Barrier(3, timeout=WAIT)

    def whoami(args: dict[str, Any]) -> str:
        barrier.wait()
        return who.get()

    many.register("whoami", "t", OBJECT, whoami)
    who.set("host")
    assert many.dispatch_many([("whoami", {})] * 3, max_concurrency=3) == ["host"] * 3


def test_a_bad_max_concurrency_is_refused_naming_it(many: ToolRegistry) -> None:
    for bad in (0, -1, 1.5, "4"):
        with pytest.raises(ValueError, match="max_concurrency must be an int of at least 1"):
            many.dispatch_many([("echo", {})], max_concurrency=bad)  # type: ignore[arg-type]
        with pytest.raises(ValueError, match="max_concurrency"):
            asyncio.run(many.adispatch_many([], max_concurrency=bad))  # type: ignore[arg-type]
    assert many.dispatch_many([]) == []


def test_a_slow_tool_is_never_judged_quick_and_a_rewrite_forgets_speed(
    many: ToolRegistry,
) -> None:
    def slow(args: dict[str, Any]) -> str:
        time.sleep(0.002)  # always past the inline limit
        return "slow"

    many.register("slow", "t", OBJECT, slow)
    for _ in range(4):
        assert many.dispatch_many([("slow", {})] * 2, max_concurrency=1) == ["slow"] * 2
    assert not many._batches.is_quick("slow")
    for _ in range(3):
        many.dispatch_many([("echo", {})] * 3)
    many._batches._durations["echo"] = [1e-6] * 3  # known quick, however noisy the machine
    assert many._batches.is_quick("echo")
    many.register("echo", "t", OBJECT, slow)  # the same name, another handler
    assert not many._batches.is_quick("echo")


def test_adispatch_many_runs_async_tools_together_on_the_loop(many: ToolRegistry) -> None:
    async def main() -> list[Any]:
        loop = asyncio.get_running_loop()
        first, second = asyncio.Event(), asyncio.Event()

        async def ping(args: dict[str, Any]) -> str:
            assert asyncio.get_running_loop() is loop  # on the caller's loop, not a thread
            second.set()
            await asyncio.wait_for(first.wait(), WAIT)
            return "ping"

        async def pong(args: dict[str, Any]) -> str:
            await asyncio.wait_for(second.wait(), WAIT)
            first.set()
            return "pong"

        many.register("ping", "t", OBJECT, ping, is_async=True)
        many.register("pong", "t", OBJECT, pong, is_async=True)
        calls = [("ping", {}), ("echo", {"n": 1}), ("pong", {}, "call-3"), ("boom", {})]
        return await many.adispatch_many(calls)

    results = asyncio.run(main())
    assert results[:3] == ["ping", "echo 1", "pong"]
    assert "ZeroDivisionError" in error_of(results[3])["error"]


def test_adispatch_many_keeps_its_bound(many: ToolRegistry) -> None:
    running = [0]
    peak = [0]

    async def counted(args: dict[str, Any]) -> str:
        running[0] += 1
        peak[0] = max(peak[0], running[0])
        await asyncio.sleep(0.001)
        running[0] -= 1
        return "ok"

    many.register("counted", "t", OBJECT, counted, is_async=True)
    results = asyncio.run(many.adispatch_many([("counted", {})] * 9, max_concurrency=3))
    assert results == ["ok"] * 9
    assert peak[0] == 3
