"""A tool's fast call answers exactly as the general path would, and never outlives what it read.

The fast call is built with a tool's plan and taken by a plain call (no
``progress=`` or keyword arguments, no hooks or tracing). Each test here
tries to make it diverge from the general path: a hook or tracing switched
on after it was built, a tool replaced or given a deadline between calls,
results and arguments it must hand on, a schema it cannot check itself, and
writes that land while it is being built.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from toolreg import ToolRegistry, is_tool_error
from toolreg._dispatch import dispatch_plan
from toolreg._dispatch.dispatch_plan import dispatch_checked

SIMPLE = {
    "parameters": {
        "type": "object",
        "properties": {
            "who": {"type": "string"},
            "n": {"type": "integer", "minimum": 0},
            "mode": {"type": "string", "enum": ["a", "b"]},
        },
        "required": ["who"],
        "additionalProperties": False,
    }
}
PATTERNED = {
    "parameters": {
        "type": "object",
        "properties": {"who": {"type": "string", "pattern": "^[a-z]+$"}},
        "required": ["who"],
    }
}
BLOCK = {"_multimodal": True, "content": [{"type": "text", "text": "hi"}]}


class Recorder:
    """Dispatch hooks that see every call and refuse the name 'stop'."""

    def __init__(self) -> None:
        self.seen: list[str] = []

    def before(self, name: str, args: dict[str, Any]) -> str | None:
        self.seen.append(name)
        return "stopped" if args.get("who") == "stop" else None

    def after(self, name: str, args: dict[str, Any], result: Any) -> Any:
        return result


def fast_calls(reg: ToolRegistry) -> dict[str, Any]:
    return reg._dispatcher.hot


def general(reg: ToolRegistry, name: str, args: Any) -> Any:
    """What the general path answers for the same call."""
    return dispatch_checked(reg._dispatcher._plans[name], args, {})


def error_of(result: object) -> dict[str, Any]:
    assert isinstance(result, str) and is_tool_error(result), result
    return json.loads(result)


@pytest.mark.parametrize("validate", [True, False])
def test_plain_calls_of_a_plain_tool_take_the_fast_call(reg, validate):
    reg.register("t", "ts", SIMPLE, lambda args: "ok", validate=validate)
    assert reg.dispatch("t", {"who": "x"}) == "ok"
    assert "t" in fast_calls(reg)


def test_a_tool_the_fast_call_cannot_serve_has_none(reg):
    async def later(args: dict[str, Any]) -> str:
        return "later"

    reg.register("timed", "ts", SIMPLE, lambda args: "ok", timeout=30.0)
    reg.register("async", "ts", SIMPLE, later, is_async=True)
    reg.register("patterned", "ts", PATTERNED, lambda args: "ok")
    assert reg.dispatch("timed", {"who": "x"}) == "ok"
    assert reg.dispatch("async", {"who": "x"}) == "later"
    assert reg.dispatch("patterned", {"who": "x"}) == "ok"
    assert fast_calls(reg) == {}


# Results and arguments the fast call must hand on, and answer as the general path does.
RESULTS = [
    "short",
    "x" * 50,
    BLOCK,
    {"not": "multimodal"},
    None,
    7,
    ["a"],
    type("Text", (str,), {})("subclass"),
]
ARGS = [
    {"who": "x"},
    {"who": "x", "n": 3, "mode": "b"},
    {"who": "x", "n": -1},
    {"who": "x", "n": True},
    {"who": "x", "n": 1.0},
    {"who": "x", "extra": 1},
    {"n": 1},
    {},
    '{"who": "json"}',
    "not json",
    None,
    [1],
    type("Args", (dict,), {})(who="subclass"),
]


@pytest.mark.parametrize("result", RESULTS, ids=repr)
@pytest.mark.parametrize("validate", [True, False])
def test_every_result_comes_back_as_the_general_path_gives_it(reg, result, validate):
    reg.register(
        "t", "ts", SIMPLE, lambda args: result, validate=validate, max_result_size_chars=10
    )
    fast = reg.dispatch("t", {"who": "x"})
    assert "t" in fast_calls(reg)
    assert fast == general(reg, "t", {"who": "x"})
    if isinstance(result, str) and len(result) <= 10:
        assert fast == result and type(fast) is str


@pytest.mark.parametrize("args", ARGS, ids=repr)
@pytest.mark.parametrize("validate", [True, False])
def test_every_argument_gets_the_general_paths_answer(reg, args, validate):
    calls: list[Any] = []
    reg.register("t", "ts", SIMPLE, lambda a: calls.append(a) or f"ran {a}", validate=validate)
    reg.dispatch("t", {"who": "warm"})
    assert "t" in fast_calls(reg)
    calls.clear()
    fast = reg.dispatch("t", args)
    ran = list(calls)
    calls.clear()
    assert fast == general(reg, "t", args)
    assert ran == calls and len(ran) <= 1, "the handler runs once a call, with the same args"


def test_a_handler_failure_and_ctrl_c_on_the_fast_call(reg):
    def handler(args: dict[str, Any]) -> str:
        if args["who"] == "ctrl-c":
            raise KeyboardInterrupt
        raise SystemExit("bye")

    reg.register("t", "ts", SIMPLE, handler)
    assert (
        error_of(reg.dispatch("t", {"who": "x"}))["error"]
        == "Tool execution failed: SystemExit: bye"
    )
    assert "t" in fast_calls(reg)
    with pytest.raises(KeyboardInterrupt):
        reg.dispatch("t", {"who": "ctrl-c"})


def test_hooks_installed_after_the_fast_call_was_built_see_every_call(reg):
    dispatch = reg.dispatch  # a host may keep it from before plugins loaded
    reg.register("t", "ts", SIMPLE, lambda args: "ok")
    assert dispatch("t", {"who": "x"}) == "ok"
    hooks = Recorder()
    reg.set_dispatch_hooks(hooks)
    assert dispatch("t", {"who": "x"}) == "ok"
    assert error_of(dispatch("t", {"who": "stop"}))["error_type"] == "blocked"
    assert hooks.seen == ["t", "t"]
    assert fast_calls(reg) == {}
    reg.set_dispatch_hooks(None)
    assert dispatch("t", {"who": "stop"}) == "ok"
    assert hooks.seen == ["t", "t"] and "t" in fast_calls(reg)


def test_tracing_switched_on_after_the_fast_call_was_built_traces_every_call(reg):
    sdk = pytest.importorskip("opentelemetry.sdk.trace")
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    reg.register("t", "ts", SIMPLE, lambda args: "ok")
    assert reg.dispatch("t", {"who": "x"}) == "ok"
    spans = InMemorySpanExporter()
    provider = sdk.TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(spans))
    reg.enable_tracing(tracer_provider=provider)
    assert reg.dispatch("t", {"who": "x"}) == "ok"
    assert [span.name for span in spans.get_finished_spans()] == ["execute_tool t"]
    reg.disable_tracing()
    assert reg.dispatch("t", {"who": "x"}) == "ok"
    assert len(spans.get_finished_spans()) == 1


def test_a_tool_replaced_between_calls_is_never_served_by_the_old_fast_call(reg):
    dispatch = reg.dispatch
    reg.register("t", "ts", SIMPLE, lambda args: "old")
    assert dispatch("t", {"who": "x", "n": 1}) == "old"
    other = {"parameters": {"type": "object", "properties": {"n": {"type": "string"}}}}
    reg.register("t", "ts", other, lambda args: "new")
    assert dispatch("t", {"n": "1"}) == "new"
    assert error_of(dispatch("t", {"n": 1}))["error_type"] == "invalid_arguments"
    # Given a deadline, or made async: no fast call, and the new behaviour at once.
    reg.register("t", "ts", other, lambda args: "timed", timeout=30.0)
    assert dispatch("t", {"n": "1"}) == "timed" and "t" not in fast_calls(reg)

    async def later(args: dict[str, Any]) -> str:
        return "async"

    reg.register("t", "ts", other, later, is_async=True)
    assert dispatch("t", {"n": "1"}) == "async" and "t" not in fast_calls(reg)
    reg.deregister("t")
    assert "Unknown tool" in dispatch("t", {"n": "1"})


def test_validation_switched_off_and_on_reaches_the_fast_call(reg):
    calls: list[Any] = []
    reg.register("t", "ts", SIMPLE, lambda args: calls.append(args) or "ok")
    assert error_of(reg.dispatch("t", {"who": 1}))["error_type"] == "invalid_arguments"
    reg.set_validation(False)
    assert reg.dispatch("t", {"who": 1}) == "ok"
    reg.set_validation(True)
    assert error_of(reg.dispatch("t", {"who": 1}))["error_type"] == "invalid_arguments"
    assert calls == [{"who": 1}]


def test_a_schema_with_a_pattern_is_always_the_validators_to_judge(reg):
    calls: list[Any] = []
    reg.register("t", "ts", PATTERNED, lambda args: calls.append(args) or "ok")
    assert reg.dispatch("t", {"who": "abc"}) == "ok"
    for bad in [{"who": "ABC"}, {"who": "a b"}, {"who": ""}]:
        assert error_of(reg.dispatch("t", bad))["error_type"] == "invalid_arguments"
    assert calls == [{"who": "abc"}]


def test_a_tool_re_registered_with_a_pattern_loses_its_fast_call(reg):
    calls: list[Any] = []
    reg.register("t", "ts", SIMPLE, lambda args: calls.append(args) or "ok")
    assert reg.dispatch("t", {"who": "ABC"}) == "ok"
    reg.register("t", "ts", PATTERNED, lambda args: calls.append(args) or "ok")
    assert error_of(reg.dispatch("t", {"who": "ABC"}))["error_type"] == "invalid_arguments"
    assert len(calls) == 1


# -- writes that land while a fast call is being built ------------------------------
# A race no test can time for real: the build itself makes the write, at the
# worst moment (after the plan was read, before the fast call is stored).


def racing(monkeypatch: pytest.MonkeyPatch, write: Any) -> None:
    real = dispatch_plan.build_fast_call

    def build_and_write(*args: Any) -> Any:
        fast = real(*args)
        write()
        return fast

    monkeypatch.setattr(dispatch_plan, "build_fast_call", build_and_write)


def test_hooks_installed_while_a_fast_call_is_built_still_see_the_next_call(reg, monkeypatch):
    hooks = Recorder()
    reg.register("t", "ts", SIMPLE, lambda args: "ok")
    racing(monkeypatch, lambda: reg.set_dispatch_hooks(hooks))
    reg.dispatch("t", {"who": "x"})
    assert "t" not in fast_calls(reg)
    assert error_of(reg.dispatch("t", {"who": "stop"}))["error_type"] == "blocked"


def test_a_tool_replaced_while_its_fast_call_is_built_is_served_new(reg, monkeypatch):
    reg.register("t", "ts", SIMPLE, lambda args: "old")
    replace = lambda: reg.register("t", "ts", SIMPLE, lambda args: "new")  # noqa: E731
    racing(monkeypatch, replace)
    reg.dispatch("t", {"who": "x"})
    monkeypatch.undo()
    assert reg.dispatch("t", {"who": "x"}) == "new"


def test_a_failure_past_the_checks_is_an_internal_error_and_the_handler_runs_once(reg, monkeypatch):
    # The general path failing is a toolreg bug: no way to cause it for real.
    calls: list[Any] = []
    reg.register("t", "ts", SIMPLE, lambda args: calls.append(args) or "ok")

    def broken(*args: Any) -> Any:
        raise RuntimeError("bug")

    monkeypatch.setattr(dispatch_plan, "dispatch_checked", broken)
    assert reg.dispatch("t", {"who": "x"}) == "ok"
    assert "t" in fast_calls(reg)
    assert error_of(reg.dispatch("t", {"who": 1}))["error_type"] == "internal"
    assert len(calls) == 1
