"""The dispatcher is made on first use: what was written and set before it still holds.

A registry that is only listed (``toolreg list``) never imports the dispatch
layer, so ``dispatch`` and its kin make the dispatcher on their first call.
These tests try to see a registry where that shows: a write or a
setting made before the dispatcher existed and lost, two dispatchers, or a
plan that outlives a write.
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
import threading
from typing import Any

import pytest

from conftest import schema
from toolreg import ToolRegistry

COUNT = {"parameters": {"type": "object", "properties": {"n": {"type": "integer"}}}}
WAIT = 10.0  # a barrier's patience: only a deadlock ever waits this long


def returns(text: str):
    return lambda args: text


def test_a_fresh_registry_imports_no_dispatch_module():
    code = (
        "import sys\n"
        "from toolreg import ToolRegistry\n"
        "reg = ToolRegistry()\n"
        "reg.register('t', 's', {}, lambda args: 'ok')\n"
        "reg.set_validation(True); reg.set_dispatch_hooks(None)\n"  # what loading a config does
        "reg.get_definitions(); reg.availability('t')\n"
        "print(sorted(m for m in sys.modules if m.startswith('toolreg._dispatch')))\n"
        "print(reg.dispatch('t', {}))\n"
        "print('toolreg._dispatch.dispatch' in sys.modules)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    )
    assert out.stdout.split("\n")[:3] == ["[]", "ok", "True"]


def test_the_first_dispatch_sees_every_write_made_before_it(reg: ToolRegistry):
    assert reg._dispatch.made is None
    reg.register("t", "s", schema("t"), returns("old"))
    reg.register("t", "s", schema("t"), returns("new"))
    reg.register("gone", "s", schema("gone"), returns("gone"))
    assert reg.deregister("gone")
    reg.replace_toolset("mcp-x", [])
    assert reg._dispatch.made is None, "writes alone make no dispatcher"
    assert reg.dispatch("t", {}) == "new"
    assert "Unknown tool" in reg.dispatch("gone", {})
    made = reg._dispatch.made
    assert made is not None and reg._dispatcher is made[0]
    reg.register("t", "s", schema("t"), returns("newer"))
    assert reg.dispatch("t", {}) == "newer", "a plan made after the build is forgotten too"


def test_a_dispatch_kept_from_before_the_first_follows_every_write(reg: ToolRegistry):
    dispatch, dispatch_many = reg.dispatch, reg.dispatch_many  # bound before the first call
    reg.register("t", "s", schema("t"), returns("old"))
    assert dispatch("t", {}) == "old"
    assert dispatch_many([("t", {})]) == ["old"]
    reg.register("t", "s", schema("t"), returns("new"))
    assert dispatch("t", {}) == reg.dispatch("t", {}) == "new"
    assert dispatch_many([("t", {})]) == ["new"]


@pytest.mark.parametrize("first", ["dispatch_many", "adispatch", "adispatch_many"])
def test_each_dispatch_method_can_be_the_first(reg: ToolRegistry, first: str):
    reg.register("t", "s", schema("t"), returns("ok"))
    calls: dict[str, Any] = {
        "dispatch_many": lambda: reg.dispatch_many([("t", {}), ("nope", {})]),
        "adispatch": lambda: [asyncio.run(reg.adispatch("t", {}))],
        "adispatch_many": lambda: asyncio.run(reg.adispatch_many([("t", {})])),
    }
    assert calls[first]()[0] == "ok"
    reg.register("t", "s", schema("t"), returns("new"))
    assert reg.dispatch_many([("t", {})]) == ["new"]
    assert asyncio.run(reg.adispatch("t", {})) == "new"


def test_settings_made_before_the_first_dispatch_hold(reg: ToolRegistry):
    seen: list[str] = []

    class Hooks:
        def before(self, name: str, args: dict[str, Any]) -> str | None:
            seen.append(name)
            return None

        def after(self, name: str, args: dict[str, Any], result: Any) -> Any:
            return result

    reg.register("count", "s", COUNT, lambda args: "counted")
    reg.set_validation(False)
    reg.set_dispatch_hooks(Hooks())
    assert not reg.validation_enabled
    assert reg.dispatch("count", {"n": "not a number"}) == "counted"  # not validated
    assert seen == ["count"]
    reg.set_validation(True)
    reg.set_dispatch_hooks(None)
    assert "invalid_arguments" in reg.dispatch("count", {"n": "not a number"})
    assert seen == ["count"]


def test_validation_reads_on_until_a_dispatcher_turns_it_off(reg: ToolRegistry):
    assert reg.validation_enabled
    reg.set_validation(True)
    assert reg.validation_enabled and reg._dispatch.made is None
    reg.register("count", "s", COUNT, lambda args: "counted")
    assert "invalid_arguments" in reg.dispatch("count", {"n": "x"})


def run_together(*targets: Any) -> None:
    """Run each target on a thread of its own, all let go at the same moment."""
    start = threading.Barrier(len(targets), timeout=WAIT)

    def released(target: Any) -> None:
        start.wait()
        target()

    threads = [threading.Thread(target=released, args=(target,)) for target in targets]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()


def first_dispatches_at_once(threads: int) -> ToolRegistry:
    reg = ToolRegistry()
    reg.register("t", "s", schema("t"), returns("old"))
    results: list[Any] = []
    run_together(*[lambda: results.append(reg.dispatch("t", {}))] * threads)
    assert results == ["old"] * threads
    return reg


def test_two_threads_making_the_first_dispatch_at_once_make_one_dispatcher():
    """Two dispatchers would leave one that the writes never reach."""
    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # switch threads as often as the interpreter can
    try:
        for _ in range(200):
            reg = first_dispatches_at_once(4)
            made = reg._dispatch.made
            assert made is not None and (reg._dispatcher, reg._batches) == made
            reg.register("t", "s", schema("t"), returns("new"))
            assert reg.dispatch("t", {}) == "new"
            assert reg.dispatch_many([("t", {})]) == ["new"]
    finally:
        sys.setswitchinterval(old)


def write_while_first_dispatching(writes: int) -> ToolRegistry:
    reg = ToolRegistry()
    reg.register("t", "s", schema("t"), returns("0"))

    def write() -> None:
        for n in range(1, writes + 1):
            reg.register("t", "s", schema("t"), returns(str(n)))

    def read() -> None:
        for _ in range(writes):
            reg.dispatch("t", {})

    run_together(write, read)
    return reg


def test_a_write_racing_the_first_dispatch_is_never_served_stale():
    """Writers and first dispatches at once: each dispatch after the last write sees it."""
    for _ in range(100):
        assert write_while_first_dispatching(20).dispatch("t", {}) == "20"
