"""Every dispatch behaviour holds whichever way a call goes through dispatch.

A tool's plan decides the route: straight to the handler (no validation, or
a schema that takes any object), through a simple schema's fast call,
through the full validator (a schema with a pattern), or through a deadline;
a call with keyword arguments takes the general path on every route. Each
test here runs on every route, so a shortcut on one cannot drop a guarantee.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from toolreg import ToolRegistry, is_tool_error

FIELD = {"type": "string"}
ROUTES: dict[str, dict[str, Any]] = {
    "unvalidated": {"parameters": {"type": "object", "properties": {"who": FIELD}}},
    "any object": {"parameters": {"type": "object", "properties": {}}},
    "simple schema": {
        "parameters": {"type": "object", "properties": {"who": FIELD, "n": {"type": "integer"}}}
    },
    "full validator": {
        "parameters": {
            "type": "object",
            "properties": {
                "who": {"type": "string", "pattern": "^[a-z]*$"},
                "n": {"type": "integer"},
            },
        }
    },
    "deadline": {
        "parameters": {"type": "object", "properties": {"who": FIELD, "n": {"type": "integer"}}}
    },
}
VALIDATING = ["simple schema", "full validator", "deadline"]


@pytest.fixture(params=list(ROUTES))
def route(request: pytest.FixtureRequest) -> str:
    return request.param


def add(reg: ToolRegistry, route: str, handler: Any, **options: Any) -> str:
    if route == "unvalidated":
        options["validate"] = False
    if route == "deadline":
        options["timeout"] = 30.0
    reg.register("t", "ts", ROUTES[route], handler, **options)
    return "t"


def error_of(result: object) -> dict[str, Any]:
    assert isinstance(result, str) and is_tool_error(result), result
    return json.loads(result)


def test_the_handler_gets_the_callers_own_dict_and_kwargs(reg, route):
    seen: list[Any] = []

    def handler(args: dict[str, Any], **kwargs: Any) -> str:
        seen.append((args, kwargs))
        return "ok"

    name = add(reg, route, handler)
    args = {"who": "ann"}
    assert reg.dispatch(name, args) == "ok"
    assert reg.dispatch(name, args, user="u") == "ok"
    assert seen[0][0] is args and seen[0][1] == {}
    assert seen[1] == (args, {"user": "u"})
    assert args == {"who": "ann"}, "nothing written into the caller's dict"


def test_json_text_and_null_arguments_arrive_as_dicts(reg, route):
    seen: list[Any] = []
    name = add(reg, route, lambda args: seen.append(args) or "ok")
    assert reg.dispatch(name, '{"who": "bo"}') == "ok"
    assert reg.dispatch(name, None) == "ok"
    assert seen == [{"who": "bo"}, {}]
    assert "not valid JSON" in error_of(reg.dispatch(name, '{"who": '))["error"]


def test_a_handler_failure_is_a_tool_error(reg, route):
    def handler(args: dict[str, Any]) -> str:
        raise SystemExit("bye")

    name = add(reg, route, handler)
    assert error_of(reg.dispatch(name, {}))["error"] == "Tool execution failed: SystemExit: bye"


def test_a_long_result_is_cut_and_a_short_one_kept(reg, route):
    name = add(reg, route, lambda args: "x" * args.get("n", 3), max_result_size_chars=5)
    assert reg.dispatch(name, {"n": 5}) == "xxxxx"
    assert reg.dispatch(name, {"n": 8}).startswith("xxxxx\n…[truncated")


@pytest.mark.parametrize("bad", [None, 3, b"bytes", ["a"], {"no": "multimodal"}])
def test_results_off_the_contract_are_tool_errors(reg, route, bad):
    name = add(reg, route, lambda args: bad)
    assert error_of(reg.dispatch(name, {}))["error_type"] == "tool_result_contract"


def test_multimodal_and_str_subclass_results(reg, route):
    class Text(str):
        pass

    block = {"_multimodal": True, "content": [{"type": "text", "text": "hi"}]}
    name = add(reg, route, lambda args: block if args.get("who") == "m" else Text("sub"))
    assert reg.dispatch(name, {"who": "m"}) == block
    out = reg.dispatch(name, {})
    assert out == "sub" and type(out) is str


def test_an_async_handler_is_run(reg, route):
    async def handler(args: dict[str, Any]) -> str:
        return f"async {args.get('who')}"

    name = add(reg, route, handler, is_async=True)
    assert reg.dispatch(name, {"who": "cy"}) == "async cy"


def test_keyboard_interrupt_on_the_callers_thread_goes_through(reg, route):
    if route == "deadline":
        pytest.skip("a timed handler runs on a worker thread: there it is the pack's failure")

    def handler(args: dict[str, Any]) -> str:
        raise KeyboardInterrupt

    name = add(reg, route, handler)
    with pytest.raises(KeyboardInterrupt):
        reg.dispatch(name, {})


def test_arguments_that_break_the_schema_never_reach_the_handler(reg, route):
    if route not in VALIDATING:
        pytest.skip("this route does not validate")
    calls: list[Any] = []
    name = add(reg, route, lambda args: calls.append(args) or "ok")
    for bad in [{"n": True}, {"n": 1.5}, {"who": 3}, [1], "[1]", 7]:
        error = error_of(reg.dispatch(name, bad))
        assert error["error_type"] == "invalid_arguments", bad
    assert calls == []
    assert "argument 'n' must be integer" in error_of(reg.dispatch(name, {"n": "1"}))["error"]
    assert reg.dispatch(name, {"n": 1.0}) == "ok", "JSON Schema's integer takes 1.0"
    assert reg.dispatch(name, {"n": 2**80, "other": [1]}) == "ok"


def test_each_route_is_the_one_it_is_named_after(reg, route):
    name = add(reg, route, lambda args: "ok")
    assert reg.dispatch(name, {}) == "ok"
    plan = reg._dispatcher._plans[name]
    # A simple schema's checker asks its acceptor first (dispatch_plan.quick_checker).
    quick = plan.check is not None and "quick_checker" in plan.check.__qualname__
    taken = {
        "unvalidated": plan.check is None and not plan.validates,
        "any object": plan.validates and plan.check is None,
        "simple schema": quick,
        "full validator": plan.check is not None and not quick,
        "deadline": plan.timeout == 30.0 and quick,
    }
    assert taken[route]
    # Plain calls take the hot path where it can check them: the handler called in
    # dispatch itself, or a simple schema's fast call (_dispatch/fast_call.py).
    hot = reg._dispatcher.hot.get(name)
    assert (hot is not None) is (route in ("unvalidated", "any object", "simple schema"))
    assert (plan.fast is not None) is (route == "simple schema")
    assert hot is None or hot[0] is plan.fast
