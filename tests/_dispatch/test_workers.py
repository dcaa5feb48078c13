"""Worker pools: separate and bounded, late calls never start, stuck calls are counted."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator

import pytest

from toolreg import ToolRegistry, worker_stats
from toolreg._dispatch.workers import TOOL_POOL, DeadlineExceeded, NoCapacity, WorkerPool
from toolreg._loaders.hook_runner import HookImpl, HookRunner


@pytest.fixture
def release() -> Iterator[threading.Event]:
    """Stuck calls wait on this; the test ends by letting them all go."""
    event = threading.Event()
    yield event
    event.set()


def drained(pool: WorkerPool) -> None:
    """Wait until every stuck call of ``pool`` has returned (they were released)."""
    for _ in range(500):
        if pool.stats()["stuck"] == 0:
            return
        threading.Event().wait(0.01)
    raise AssertionError(f"{pool.name} pool still has stuck calls: {pool.stats()}")


def test_a_call_whose_deadline_passed_while_queued_never_starts(release):
    pool = WorkerPool("solo", 1)
    started = threading.Event()
    pool.submit(30, lambda: (started.set(), release.wait(30)))
    started.wait(5)
    ran: list[str] = []
    with pytest.raises(DeadlineExceeded) as info:
        pool.run(0.05, ran.append, "late")
    assert info.value.started is False
    release.set()
    assert pool.run(30, lambda: "next") == "next"  # the one worker took the late call first
    assert ran == [], "a call past its deadline never starts"
    assert pool.stats()["abandoned"] == 0, "it never ran, so it never got stuck"


def test_stuck_calls_are_counted_until_they_return(release):
    pool = WorkerPool("counted", 2)
    with pytest.raises(DeadlineExceeded) as info:
        pool.run(0.05, release.wait, 30)
    assert info.value.started is True
    assert pool.stats() == {"workers": 1, "size": 2, "stuck": 1, "abandoned": 1}
    release.set()
    drained(pool)
    assert pool.stats()["abandoned"] == 1


def test_a_pool_full_of_stuck_calls_refuses_at_once(release):
    pool = WorkerPool("full", 2)
    for _ in range(2):
        with pytest.raises(DeadlineExceeded):
            pool.run(0.05, release.wait, 30)
    with pytest.raises(NoCapacity, match="all 2 full workers"):
        pool.run(30, lambda: "never")
    release.set()
    drained(pool)
    assert pool.run(30, lambda: "again") == "again"


def test_stuck_tool_calls_never_starve_the_hooks(release):
    """Fail-closed must not become fail-everything: hooks have workers of their own."""
    reg = ToolRegistry()
    reg.register("stuck", "t", {}, lambda args: release.wait(60) and "late", timeout=0.05)
    reg.register("fine", "t", {}, lambda args: "fine", timeout=30)
    # On a loaded machine a call's 50 ms can pass before a worker takes it; such a
    # call never starts and holds no worker, so top up until every worker is held.
    for _ in range(TOOL_POOL.size * 20):
        if worker_stats()["tool"]["stuck"] == TOOL_POOL.size:
            break
        assert json.loads(reg.dispatch("stuck", {}))["error_type"] in {"timeout", "no_capacity"}
    assert worker_stats()["tool"]["stuck"] == TOOL_POOL.size
    refused = json.loads(reg.dispatch("fine", {}))
    assert refused["error_type"] == "no_capacity" and "tool workers" in refused["error"]
    # A hooked call still gets its hook run and its verdict.
    hooks = HookRunner(
        [HookImpl("guard", lambda name, args: "blocked by guard", ("name", "args"))], [], []
    )
    assert hooks.before("fine", {}) == "blocked by guard"
    release.set()
    drained(TOOL_POOL)
    assert reg.dispatch("fine", {}) == "fine"


def test_a_worker_runs_the_call_in_the_callers_context() -> None:
    """What the caller bound (the client a tool logs to) holds in the worker, and only there."""
    import contextvars

    bound: contextvars.ContextVar[str] = contextvars.ContextVar("bound", default="unbound")
    pool = WorkerPool("context", 1)
    token = bound.set("the caller's")
    try:
        assert pool.run(5, bound.get) == "the caller's"
    finally:
        bound.reset(token)
    assert pool.run(5, bound.get) == "unbound"  # the same worker thread, the new caller's context
