"""Per-tool timeouts: dispatch stops waiting and says so; nothing else changes."""

from __future__ import annotations

import asyncio
import json
import threading

import pytest

from toolreg import ToolRegistry


def slow(args: dict) -> str:
    args["release"].wait(5)
    return "finished"


async def aslow(args: dict) -> str:
    await asyncio.sleep(args["seconds"])
    return "finished"


def timed_out(result: str, tool: str) -> None:
    data = json.loads(result)
    assert data["error_type"] == "timeout" and data["tool"] == tool
    assert "timed out after 0.2 s" in data["error"]


def test_sync_handler_past_its_deadline(reg: ToolRegistry):
    reg.register("slow", "t", {}, slow, timeout=0.2, validate=False)
    release = threading.Event()
    # The handler runs until released, which happens only after dispatch
    # returned: that dispatch returned at all is the proof it stopped waiting.
    timed_out(reg.dispatch("slow", {"release": release}), "slow")
    assert not release.is_set()
    release.set()


def test_sync_handler_within_its_deadline(reg: ToolRegistry):
    reg.register("quick", "t", {}, lambda args: "fast", timeout=2)
    assert reg.dispatch("quick", {}) == "fast"


def test_async_handler_is_cancelled(reg: ToolRegistry):
    reg.register("aslow", "t", {}, aslow, is_async=True, timeout=0.2)
    # Had dispatch waited, the handler would have finished: the timeout result proves it did not.
    timed_out(reg.dispatch("aslow", {"seconds": 60}), "aslow")
    assert reg.dispatch("aslow", {"seconds": 0}) == "finished"


def test_adispatch_enforces_the_deadline_for_both_kinds(reg: ToolRegistry):
    reg.register("aslow", "t", {}, aslow, is_async=True, timeout=0.2)
    reg.register("slow", "t", {}, slow, timeout=0.2, validate=False)
    release = threading.Event()
    timed_out(asyncio.run(reg.adispatch("aslow", {"seconds": 60})), "aslow")
    timed_out(asyncio.run(reg.adispatch("slow", {"release": release})), "slow")
    release.set()


def test_async_handler_registered_without_is_async_keeps_its_deadline(reg: ToolRegistry):
    # Dispatch runs any handler that returns a coroutine; its timeout must hold too.
    reg.register("aslow", "t", {}, aslow, timeout=0.2, validate=False)
    timed_out(reg.dispatch("aslow", {"seconds": 60}), "aslow")
    timed_out(asyncio.run(reg.adispatch("aslow", {"seconds": 60})), "aslow")
    assert reg.dispatch("aslow", {"seconds": 0}) == "finished"
    assert asyncio.run(reg.adispatch("aslow", {"seconds": 0})) == "finished"


def test_a_handlers_own_timeout_error_is_a_failure_not_a_deadline(reg: ToolRegistry):
    def gives_up(args: dict) -> str:
        raise TimeoutError("upstream took too long")

    reg.register("gives_up", "t", {}, gives_up, timeout=5)
    data = json.loads(reg.dispatch("gives_up", {}))
    assert "error_type" not in data
    assert data["error"] == "Tool execution failed: TimeoutError: upstream took too long"


def test_no_timeout_runs_inline_on_the_callers_thread(reg: ToolRegistry):
    reg.register("where", "t", {}, lambda args: threading.current_thread().name)
    assert reg.dispatch("where", {}) == threading.current_thread().name


@pytest.mark.parametrize("bad", [0, -1, "5", True, float("nan")])
def test_bad_timeouts_are_refused_at_registration(reg: ToolRegistry, bad):
    with pytest.raises(ValueError, match="timeout must be a positive number"):
        reg.register("t", "t", {}, lambda args: "x", timeout=bad)
