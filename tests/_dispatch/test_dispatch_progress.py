"""``dispatch(..., progress=callback)`` and the ToolContext a tool reports through.

The callback must hear a tool's reports however the tool runs: in the
caller's thread, on a deadline's worker, as an async handler on the shared
loop or on a loop of its own, through ``adispatch``; a handler's own keyword
arguments must still arrive; and a call without a listener must hear nothing.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import pytest

from conftest import EvilStr
from toolreg import ToolContext, ToolRegistry, current_context, is_tool_error, tool

Report = tuple[float, "float | None", "str | None"]


def counting(reg: ToolRegistry, name: str, *, timeout: float | None = None) -> None:
    def count(steps: int, ctx: ToolContext) -> str:
        for n in range(1, steps + 1):
            ctx.report_progress(n, steps, f"step {n}")
        return f"counted {steps}"

    count.__name__ = name
    tool(count, registry=reg) if timeout is None else tool(timeout=timeout, registry=reg)(count)


@pytest.fixture
def counted() -> ToolRegistry:
    reg = ToolRegistry()
    counting(reg, "plain")
    counting(reg, "timed", timeout=10)

    @tool(registry=reg)
    async def awaited(steps: int, ctx: ToolContext) -> str:
        for n in range(1, steps + 1):
            await asyncio.sleep(0)
            ctx.report_progress(n, steps, f"step {n}")
        return f"counted {steps}"

    @tool(registry=reg, timeout=10)
    async def timed_awaited(steps: int, ctx: ToolContext | None = None) -> str:
        assert ctx is not None
        ctx.report_progress(steps, steps, f"step {steps}")
        return f"counted {steps}"

    def manual(args: dict[str, Any], **kwargs: Any) -> str:
        current_context().report_progress(1, 1, f"manual {current_context().tool}")
        return "manual " + repr(sorted(kwargs.items()))

    reg.register("manual", "t", {"parameters": {"type": "object"}}, manual)
    return reg


TOOLS = ["plain", "timed", "awaited", "timed_awaited"]


def expected(name: str, steps: int) -> list[Report]:
    first = steps if name == "timed_awaited" else 1
    return [(n, steps, f"step {n}") for n in range(first, steps + 1)]


@pytest.mark.parametrize("name", TOOLS)
def test_dispatch_hands_every_report_to_the_callback(counted: ToolRegistry, name: str) -> None:
    heard: list[Report] = []
    assert counted.dispatch(name, {"steps": 3}, progress=lambda *r: heard.append(r)) == (
        "counted 3"
    )
    assert heard == expected(name, 3)


@pytest.mark.parametrize("name", TOOLS)
def test_adispatch_hands_every_report_to_the_callback(counted: ToolRegistry, name: str) -> None:
    heard: list[Report] = []
    result = asyncio.run(counted.adispatch(name, {"steps": 3}, progress=lambda *r: heard.append(r)))
    assert result == "counted 3"
    assert heard == expected(name, 3)


def test_a_sync_dispatch_from_inside_a_running_loop_still_reaches_the_callback(
    counted: ToolRegistry,
) -> None:
    # The async handler then runs on a loop of its own thread: the context must go along.
    heard: list[Report] = []

    async def host() -> Any:
        return counted.dispatch("awaited", {"steps": 2}, progress=lambda *r: heard.append(r))

    assert asyncio.run(host()) == "counted 2"
    assert heard == expected("awaited", 2)


def test_a_handlers_own_keyword_arguments_still_arrive_beside_progress(
    counted: ToolRegistry,
) -> None:
    heard: list[Report] = []
    result = counted.dispatch("manual", {}, progress=lambda *r: heard.append(r), user="ana", turn=3)
    assert result == "manual [('turn', 3), ('user', 'ana')]"  # progress is dispatch's, not theirs
    assert heard == [(1, 1, "manual manual")]
    assert counted.dispatch("manual", {}, user="bo") == "manual [('user', 'bo')]"


def test_without_a_listener_reports_go_nowhere_and_the_call_succeeds(
    counted: ToolRegistry,
) -> None:
    for name in TOOLS:
        assert counted.dispatch(name, {"steps": 2}) == "counted 2"
    assert counted.dispatch("manual", {}) == "manual []"
    context = current_context()
    assert context.tool is None
    context.report_progress(1)  # outside any call: a no-op, not an error


def test_the_listener_is_per_call_not_leaked_to_the_next(counted: ToolRegistry) -> None:
    heard: list[Report] = []
    counted.dispatch("plain", {"steps": 1}, progress=lambda *r: heard.append(r))
    counted.dispatch("plain", {"steps": 2})
    assert heard == [(1, 1, "step 1")]
    assert current_context().tool is None


def test_a_failing_listener_never_fails_the_tool(
    counted: ToolRegistry, caplog: pytest.LogCaptureFixture
) -> None:
    def broken(*report: Any) -> None:
        raise RuntimeError("listener down")

    with caplog.at_level(logging.WARNING, logger="toolreg.dispatch"):
        assert counted.dispatch("plain", {"steps": 2}, progress=broken) == "counted 2"
    assert "the progress listener of tool plain failed" in caplog.text


def test_the_context_parameter_is_not_in_the_schema_and_cannot_be_passed(
    counted: ToolRegistry,
) -> None:
    definition = counted.get_definition("plain")
    assert definition is not None
    parameters = definition["function"]["parameters"]
    assert list(parameters["properties"]) == ["steps"]
    assert parameters["required"] == ["steps"]
    counted.set_validation(False)  # even unvalidated, the model cannot stand in for the context
    result = counted.dispatch("plain", {"steps": 1, "ctx": "forged"})
    assert is_tool_error(result) and "unknown argument(s) 'ctx'" in result


def test_bad_reports_and_levels_are_errors_naming_what_was_wrong() -> None:
    context = ToolContext("t")
    with pytest.raises(TypeError, match="progress must be a number, not str"):
        context.report_progress("half")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="total must be a number, not bool"):
        context.report_progress(1, True)
    with pytest.raises(TypeError, match="message must be a str, not int"):
        context.report_progress(1, 2, 3)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="unknown log level 'loud'"):
        context.log("loud", "x")


def test_log_goes_to_the_tools_logger_with_its_mcp_level(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.DEBUG, logger="toolreg.tools"):
        ToolContext("fetch").log("notice", "halfway")
        current_context().log("error", "no call")
    assert [(r.name, r.levelno, r.getMessage(), r.mcp_level) for r in caplog.records] == [
        ("toolreg.tools.fetch", logging.INFO + 5, "halfway", "notice"),
        ("toolreg.tools", logging.ERROR, "no call", "error"),
    ]


def test_a_context_parameter_must_be_one_and_passable_by_name() -> None:
    reg = ToolRegistry()

    def two(a: ToolContext, b: ToolContext) -> str:
        return ""

    def positional(ctx: ToolContext, /) -> str:
        return ""

    with pytest.raises(TypeError, match="Tool 'two': parameter 'b' cannot take the ToolContext"):
        tool(two, registry=reg)
    with pytest.raises(TypeError, match="'ctx' cannot take the ToolContext: it is positional"):
        tool(positional, registry=reg)


def test_a_hostile_tool_name_gets_an_empty_scope_and_runs_none_of_its_methods() -> None:
    """A model's name may be a str subclass (or no str): the scope keeps only a real str."""
    reg = ToolRegistry()
    seen: list[str] = []
    reg.register("t", "ts", {}, lambda args: seen.append(current_context().tool) or "ok")
    heard: list[tuple] = []
    # Equal to "t", so it finds the tool; the scope names no tool rather than keep it.
    assert reg.dispatch(EvilStr("t"), {}, progress=lambda *a: heard.append(a)) == "ok"
    for name in (42, None):
        assert is_tool_error(reg.dispatch(name, {}, progress=lambda *a: heard.append(a)))
    assert reg.dispatch("t", {}, progress=lambda *a: heard.append(a)) == "ok"
    assert seen == ["", "t"]
