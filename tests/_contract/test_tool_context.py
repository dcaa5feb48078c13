"""A call's context in async handlers: each call sees its own, however the calls interleave.

Two async calls on one event loop run as two tasks; each binds its scope in
its own task's context, so ``current_context()``, ``ctx.log`` and the
``toolreg`` loggers' records name that call (tool name, call id) and never
the other, at every step of the interleaving.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import pytest

from conftest import KeptClientLog
from toolreg import ToolContext, ToolRegistry, bound_client_log, current_context, tool
from toolreg._contract.tool_context import TOOL_CALL_ID, TOOL_NAME


@pytest.fixture
def lockstep() -> tuple[ToolRegistry, dict[str, list[Any]]]:
    """Tools ``alpha`` and ``beta`` that take turns: each step waits for the other's."""
    reg = ToolRegistry()
    seen: dict[str, list[Any]] = {"alpha": [], "beta": []}
    turns: dict[str, asyncio.Event] = {}

    def turn(name: str) -> asyncio.Event:
        return turns.setdefault(name, asyncio.Event())

    async def take_turns(me: str, other: str, rounds: int) -> None:
        for step in range(rounds):
            if me == "beta" or step:
                await asyncio.wait_for(turn(f"{me}{step}").wait(), 10)  # the other just ran
            context = current_context()
            seen[me].append((context.tool, context.call_id))
            context.log("info", f"{me} step {step}")
            logging.getLogger("toolreg.dispatch").info("%s dispatch-side %d", me, step)
            turn(f"{other}{step + (me == 'beta')}").set()
            await asyncio.sleep(0)

    @tool(registry=reg)
    async def alpha(rounds: int, ctx: ToolContext) -> str:
        await take_turns("alpha", "beta", rounds)
        return f"alpha {ctx.tool} {ctx.call_id}"

    @tool(registry=reg)
    async def beta(rounds: int, ctx: ToolContext) -> str:
        await take_turns("beta", "alpha", rounds)
        return f"beta {ctx.tool} {ctx.call_id}"

    return reg, seen


def check_records(caplog: pytest.LogCaptureFixture, call_ids: dict[str, Any]) -> None:
    records = [r for r in caplog.records if " step " in r.getMessage() or "side" in r.getMessage()]
    assert len(records) == 2 * 2 * 4
    for record in records:
        me = record.getMessage().split()[0]
        assert getattr(record, TOOL_NAME) == me, "a record named the other call's tool"
        assert getattr(record, TOOL_CALL_ID) == call_ids[me]


def test_two_interleaved_adispatch_calls_each_see_their_own_context(lockstep, caplog) -> None:
    reg, seen = lockstep
    caplog.set_level(logging.INFO, logger="toolreg")

    async def both() -> list[Any]:
        return await asyncio.gather(
            reg.adispatch("alpha", {"rounds": 4}), reg.adispatch("beta", {"rounds": 4})
        )

    assert asyncio.run(both()) == ["alpha alpha None", "beta beta None"]
    assert seen == {"alpha": [("alpha", None)] * 4, "beta": [("beta", None)] * 4}
    check_records(caplog, {"alpha": None, "beta": None})


def test_two_interleaved_adispatch_many_calls_each_see_their_own_call_id(lockstep, caplog) -> None:
    reg, seen = lockstep
    caplog.set_level(logging.INFO, logger="toolreg")
    calls = [("alpha", {"rounds": 4}, "call-a"), ("beta", {"rounds": 4}, "call-b")]
    results = asyncio.run(reg.adispatch_many(calls))
    assert results == ["alpha alpha call-a", "beta beta call-b"]
    assert seen == {"alpha": [("alpha", "call-a")] * 4, "beta": [("beta", "call-b")] * 4}
    check_records(caplog, {"alpha": "call-a", "beta": "call-b"})


def test_a_failure_record_names_the_call_that_failed(caplog) -> None:
    reg = ToolRegistry()

    async def broken(args: dict[str, Any]) -> str:
        raise RuntimeError("no")

    reg.register("broken", "t", {"parameters": {"type": "object"}}, broken, is_async=True)
    calls = [("broken", {}, "first"), ("broken", {}, "second")]
    asyncio.run(reg.adispatch_many(calls))
    failed = [r for r in caplog.records if r.getMessage().startswith("Tool broken failed")]
    assert sorted(getattr(r, TOOL_CALL_ID) for r in failed) == ["first", "second"]
    assert {getattr(r, TOOL_NAME) for r in failed} == {"broken"}


def test_outside_a_call_records_name_no_call(caplog) -> None:
    caplog.set_level(logging.INFO, logger="toolreg")
    logging.getLogger("toolreg.dispatch").info("between calls")
    (record,) = [r for r in caplog.records if r.getMessage() == "between calls"]
    assert (getattr(record, TOOL_NAME), getattr(record, TOOL_CALL_ID)) == (None, None)
    assert current_context().tool is None


def test_a_sync_dispatch_without_a_listener_binds_nothing() -> None:
    reg = ToolRegistry()
    reg.register("who", "t", {"parameters": {"type": "object"}}, lambda a: repr(current_context()))
    assert reg.dispatch("who", {}) == "ToolContext(tool=None, call_id=None, listening=False)"
    assert reg.dispatch("who", {}, progress=lambda *a: None).startswith("ToolContext(tool='who'")


def test_an_async_handlers_log_reaches_the_client_bound_to_its_call() -> None:
    reg = ToolRegistry()

    @tool(registry=reg)
    async def note(text: str, ctx: ToolContext) -> str:
        await asyncio.sleep(0)
        ctx.log("notice", text)
        return "noted"

    logging.getLogger("toolreg.tools.note").setLevel(logging.CRITICAL + 1)  # the client only
    try:
        sink = KeptClientLog()
        with bound_client_log(sink):
            assert reg.dispatch("note", {"text": "on the shared loop"}) == "noted"
            assert asyncio.run(reg.adispatch("note", {"text": "awaited"})) == "noted"
    finally:
        logging.getLogger("toolreg.tools.note").setLevel(logging.NOTSET)
    assert sink.sent == [
        ("notice", "on the shared loop", "toolreg.tools.note"),
        ("notice", "awaited", "toolreg.tools.note"),
    ]


class RefusingClientLog:
    """A client whose level or bound leaves every message out."""

    def log(self, level: str, message: str, logger: str | None = None) -> bool:
        return False


def test_log_to_client_reaches_the_bound_client_alone_and_says_whether_it_was_queued(
    caplog: pytest.LogCaptureFixture,
) -> None:
    reg = ToolRegistry()
    answers: list[bool] = []

    @tool(registry=reg)
    def shout(text: str, ctx: ToolContext) -> str:
        answers.append(ctx.log_to_client("warning", text))
        return "shouted"

    reg.register("plain", "ts", {}, lambda args: str(current_context().log_to_client("info", "x")))
    caplog.set_level(logging.DEBUG, logger="toolreg")
    sink = KeptClientLog()
    with bound_client_log(sink):
        assert reg.dispatch("shout", {"text": "hello"}) == "shouted"
        assert reg.dispatch("plain", {}) == "True"
    with bound_client_log(RefusingClientLog()):
        reg.dispatch("shout", {"text": "unheard"})
    reg.dispatch("shout", {"text": "nobody bound"})
    # Outside a bound call current_context() knows no tool: the shared logger's name.
    assert sink.sent == [
        ("warning", "hello", "toolreg.tools.shout"),
        ("info", "x", "toolreg.tools"),
    ]
    assert answers == [True, False, False]
    assert not caplog.records  # the client's, not Python logging's

    with pytest.raises(ValueError, match="unknown log level 'loud'"):
        ToolContext("t").log_to_client("loud", "x")
