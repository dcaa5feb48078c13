"""``dispatch_many(..., progress=callback)``: each call's reports, with its index, one at a time.

The callback is ``callback(index, progress, total, message)``. It must hear
every call however it runs (the caller's thread, a pool thread, a deadline's
worker, an async handler), on the thread that runs the call, and never twice
at once: calls that report at the same moment from different threads wait for
each other's turn.
"""

from __future__ import annotations

import asyncio
import threading
import time
from typing import Any

import pytest

from toolreg import ToolContext, ToolRegistry, current_context, tool

WAIT = 10.0  # a barrier's patience: only a deadlock ever waits this long


@pytest.fixture
def reporting() -> ToolRegistry:
    reg = ToolRegistry()

    @tool(registry=reg)
    def plain(steps: int, ctx: ToolContext) -> str:
        for n in range(1, steps + 1):
            ctx.report_progress(n, steps, f"{ctx.call_id} {threading.get_ident()}")
        return "plain"

    @tool(registry=reg, timeout=10)
    def timed(steps: int, ctx: ToolContext) -> str:
        for n in range(1, steps + 1):
            ctx.report_progress(n, steps, f"{ctx.call_id} {threading.get_ident()}")
        return "timed"

    @tool(registry=reg)
    async def awaited(steps: int, ctx: ToolContext) -> str:
        for n in range(1, steps + 1):
            await asyncio.sleep(0)
            ctx.report_progress(n, steps, f"{ctx.call_id} {threading.get_ident()}")
        return "awaited"

    def manual(args: dict[str, Any]) -> str:
        context = current_context()
        context.report_progress(1, 1, f"{context.call_id} {threading.get_ident()}")
        return "manual"

    reg.register("manual", "t", {"parameters": {"type": "object"}}, manual)
    return reg


class Heard:
    """The batch callback: every report, and the most callbacks ever seen running at once."""

    def __init__(self, hold: float = 0.0) -> None:
        self.reports: list[tuple[int, float, float | None, str | None, int]] = []
        self.hold = hold
        self.inside = 0
        self.most_inside = 0
        self._count = threading.Lock()

    def __call__(self, index: int, progress: float, total: float | None, message: Any) -> None:
        with self._count:
            self.inside += 1
            self.most_inside = max(self.most_inside, self.inside)
        time.sleep(self.hold)  # wide open to another thread's report, were there no lock
        self.reports.append((index, progress, total, message, threading.get_ident()))
        with self._count:
            self.inside -= 1

    def of(self, index: int) -> list[tuple[float, float | None]]:
        return [(p, t) for i, p, t, _, _ in self.reports if i == index]


CALLS = [
    ("plain", {"steps": 3}, "p"),
    ("timed", {"steps": 2}, "t"),
    ("awaited", {"steps": 2}, "a"),
    ("manual", {}, "m"),
    ("plain", {"steps": 1}),
]
RESULTS = ["plain", "timed", "awaited", "manual", "plain"]


def assert_heard_each_call(heard: Heard) -> None:
    assert heard.of(0) == [(1, 3), (2, 3), (3, 3)]
    assert heard.of(1) == [(1, 2), (2, 2)]
    assert heard.of(2) == [(1, 2), (2, 2)]
    assert heard.of(3) == [(1, 1)]
    assert heard.of(4) == [(1, 1)]
    for index, _, _, message, thread in heard.reports:
        call_id, reported_from = message.split()
        expected = CALLS[index][2] if len(CALLS[index]) == 3 else "None"
        assert call_id == expected, "a call saw another call's id"
        if CALLS[index][0] != "awaited":  # an async handler's loop is not the caller's thread
            assert int(reported_from) == thread, "the callback ran on another thread"


def test_dispatch_many_hands_each_calls_reports_with_its_index(reporting) -> None:
    heard = Heard()
    assert reporting.dispatch_many(CALLS, progress=heard) == RESULTS
    assert_heard_each_call(heard)


def test_adispatch_many_hands_each_calls_reports_with_its_index(reporting) -> None:
    heard = Heard()
    assert asyncio.run(reporting.adispatch_many(CALLS, progress=heard)) == RESULTS
    assert_heard_each_call(heard)


def test_quick_tools_report_too(reporting) -> None:
    batch = [("manual", {})] * 4
    for _ in range(3):
        reporting.dispatch_many(batch)  # learn that manual is quick: it would run inline
    heard = Heard()
    assert reporting.dispatch_many(batch, progress=heard) == ["manual"] * 4
    assert sorted(i for i, *_ in heard.reports) == [0, 1, 2, 3]


@pytest.mark.parametrize("run", ["sync", "async"])
def test_reports_from_many_threads_never_run_the_callback_at_once(run: str) -> None:
    reg = ToolRegistry()
    barrier = threading.Barrier(6)

    def burst(args: dict[str, Any]) -> str:
        barrier.wait(WAIT)  # all six report from their own threads at the same moment
        context = current_context()
        for n in range(1, 21):
            context.report_progress(n, 20)
        return "burst"

    reg.register("burst", "t", {"parameters": {"type": "object"}}, burst)
    heard = Heard(hold=0.0005)
    calls = [("burst", {})] * 6
    if run == "sync":
        results = reg.dispatch_many(calls, max_concurrency=6, progress=heard)
    else:
        results = asyncio.run(reg.adispatch_many(calls, max_concurrency=6, progress=heard))
    assert results == ["burst"] * 6
    assert len(heard.reports) == 120
    assert heard.most_inside == 1, "two reports ran the callback at once"
    for index in range(6):
        assert heard.of(index) == [(n, 20) for n in range(1, 21)]


def test_a_failing_callback_is_logged_and_every_call_answers(reporting, caplog) -> None:
    def broken(*_: Any) -> None:
        raise RuntimeError("host bug")

    assert reporting.dispatch_many(CALLS, progress=broken) == RESULTS
    assert "progress listener of tool plain failed" in caplog.text


def test_a_callback_that_is_not_callable_is_a_type_error(reporting) -> None:
    with pytest.raises(TypeError, match="progress must be callable, got int"):
        reporting.dispatch_many(CALLS, progress=3)  # type: ignore[arg-type]
