"""The compiled dispatch (toolreg-speedups) answers exactly what the Python dispatch answers.

Each case dispatches through ``registry.dispatch`` (the C ``HotDispatch``)
and through the Python dispatch it defers to, on the same registry, and
compares: results, errors, what was logged, and what propagates. The hostile
cases are the ones the C code must survive: handlers that raise anything,
odd results and limits, odd names and arguments, a handler that replaces or
removes its own tool, recursion, threads and garbage collection.
"""

from __future__ import annotations

import gc
import json
import logging
import os
import subprocess
import sys
import textwrap
import threading
import weakref
from collections.abc import Callable
from typing import Any

import pytest

from conftest import (
    BadName,
    EvilDict,
    EvilStr,
    compiled_module_or_skip,
    outputs_with_and_without_extensions,
)
from toolreg import ToolRegistry, _extension, is_tool_error

_hot = compiled_module_or_skip()

OPEN = {"type": "object"}
SIMPLE = {
    "type": "object",
    "properties": {"path": {"type": "string"}, "limit": {"type": "integer", "minimum": 1}},
    "required": ["path"],
    "additionalProperties": False,
}


def spec(parameters: dict[str, Any] = OPEN) -> dict[str, Any]:
    return {"description": "a tool", "parameters": parameters}


@pytest.fixture
def reg(monkeypatch: pytest.MonkeyPatch) -> ToolRegistry:
    monkeypatch.delenv(_extension.DISABLE_ENV, raising=False)
    return ToolRegistry()


def compiled_and_python(reg: ToolRegistry) -> tuple[Any, Any]:
    reg.dispatch("no such tool", {})  # the first dispatch makes the dispatcher
    fast = reg.dispatch
    assert type(fast) is _hot.HotDispatch
    return fast, fast.slow


class Boom(BaseException):
    pass


class Length(int):
    """A result limit whose comparison is the pack's own code."""

    def __ge__(self, other: object) -> bool:
        raise RuntimeError("limit exploded")


async def coroutine_handler(args: dict[str, Any]) -> str:
    return "awaited"


def raising(exc: BaseException) -> Callable[[dict[str, Any]], str]:
    def handler(args: dict[str, Any]) -> str:
        # A new exception each call: one raised again keeps every traceback it had.
        raise type(exc)(*exc.args)

    return handler


def returning(value: Any) -> Callable[..., Any]:
    return lambda args, **kwargs: value


class Sub(str):
    pass


HANDLERS: dict[str, tuple[Callable[..., Any], dict[str, Any]]] = {
    "plain": (returning("ok"), {}),
    "value_error": (raising(ValueError("boom")), {}),
    "system_exit": (raising(SystemExit(3)), {}),
    "generator_exit": (raising(GeneratorExit()), {}),
    "base_exception": (raising(Boom("deep")), {}),
    "recursion_error": (raising(RecursionError("deep")), {}),
    "int_result": (returning(42), {}),
    "none_result": (returning(None), {}),
    "bytes_result": (returning(b"raw"), {}),
    "str_subclass": (returning(Sub("sub")), {}),
    "multimodal": (
        returning({"_multimodal": True, "content": [{"type": "text", "text": "x"}]}),
        {},
    ),
    "over_limit": (returning("x" * 50), {"max_result_size_chars": 5}),
    "at_limit": (returning("x" * 5), {"max_result_size_chars": 5}),
    "zero_limit": (returning(""), {"max_result_size_chars": 0}),
    "huge_limit": (returning("x"), {"max_result_size_chars": 2**80}),
    "hostile_limit": (returning("x"), {"max_result_size_chars": Length(5)}),
    "coroutine": (coroutine_handler, {}),
    "validated": (returning("checked"), {"schema": spec(SIMPLE)}),
    "unvalidated": (returning("free"), {"schema": spec(SIMPLE), "validate": False}),
}

ARGUMENTS: list[Any] = [
    {},
    {"path": "a.txt"},
    {"path": "a.txt", "limit": 0},
    {"path": 7},
    {"path": "a.txt", "extra": 1},
    '{"path": "a.txt"}',
    "not json",
    ["path"],
    None,
    EvilDict(path="a.txt"),
]


def registered(reg: ToolRegistry) -> None:
    for name, (handler, options) in HANDLERS.items():
        options = dict(options)
        reg.register(name, "set", options.pop("schema", spec()), handler, **options)


@pytest.mark.parametrize("args", ARGUMENTS, ids=repr)
@pytest.mark.parametrize("name", sorted(HANDLERS))
def test_every_answer_is_the_python_dispatchs(reg: ToolRegistry, name: str, args: Any):
    registered(reg)
    fast, python = compiled_and_python(reg)
    for _ in range(2):  # the first call plans the tool; the second finds it hot
        assert fast(name, args) == python(name, args)
    assert name in reg._dispatcher.hot, "every tool here is hot: the C path answered"


@pytest.mark.parametrize(
    "name", ["no such tool", "", EvilStr("plain"), BadName(), 42, None, ("plain",)], ids=repr
)
def test_odd_names_get_the_python_answer(reg: ToolRegistry, name: Any):
    registered(reg)
    fast, python = compiled_and_python(reg)
    fast("plain", {})  # hot
    assert fast(name, {}) == python(name, {})


def test_keyword_arguments_and_progress_go_to_the_python_dispatch(reg: ToolRegistry):
    seen: list[Any] = []
    reg.register("kw", "set", spec(), lambda args, **kwargs: json.dumps(sorted(kwargs)))
    fast, python = compiled_and_python(reg)
    fast("kw", {})
    assert fast("kw", {}, extra=1) == python("kw", {}, extra=1) == '["extra"]'
    assert fast("kw", {}, progress=seen.append) == "[]"
    with pytest.raises(TypeError):
        fast("kw")  # the Python dispatch's own TypeError for a missing argument


@pytest.mark.parametrize("exc", [KeyboardInterrupt(), type("Sub", (KeyboardInterrupt,), {})()])
def test_ctrl_c_reaches_the_caller(reg: ToolRegistry, exc: BaseException):
    reg.register("t", "set", spec(), raising(exc))
    fast, _ = compiled_and_python(reg)
    for _ in range(2):
        with pytest.raises(KeyboardInterrupt):
            fast("t", {})


def test_a_hostile_limit_is_an_internal_error_on_both_paths(reg: ToolRegistry):
    registered(reg)
    fast, python = compiled_and_python(reg)
    fast("hostile_limit", {})
    answer = json.loads(fast("hostile_limit", {}))
    assert answer["error_type"] == "internal" and "limit exploded" in answer["error"]
    assert json.loads(python("hostile_limit", {})) == answer


def test_a_failure_is_logged_the_same_on_both_paths(
    reg: ToolRegistry, caplog: pytest.LogCaptureFixture
):
    seen: list[Any] = []

    def handler(args: dict[str, Any]) -> str:
        raise ValueError("boom")

    reg.register("t", "set", spec(), handler)
    fast, python = compiled_and_python(reg)
    fast("t", {})
    logger = logging.getLogger("toolreg.dispatch")
    # failed() runs with the handler's exception as the one being handled, as in an except block.
    probe = logging.Handler()
    probe.emit = lambda record: seen.append(sys.exc_info()[1])  # type: ignore[method-assign]
    logger.addHandler(probe)
    try:
        with caplog.at_level(logging.DEBUG, "toolreg.dispatch"):
            caplog.clear()
            fast("t", {})
            compiled_lines = [r.getMessage() for r in caplog.records]
            caplog.clear()
            python("t", {})
            python_lines = [r.getMessage() for r in caplog.records]
    finally:
        logger.removeHandler(probe)
    assert compiled_lines[0] == python_lines[0] == "Tool t failed: ValueError: boom"
    # The same traceback, but for the Python dispatch's own frame, which the C path has not.
    handler_frames = python_lines[1][python_lines[1].index('  File "' + __file__) :]
    assert compiled_lines[1].endswith(handler_frames) and len(compiled_lines) == 2
    assert [type(e) for e in seen] == [ValueError] * 4
    assert sys.exc_info() == (None, None, None), "nothing left as being handled"


def test_a_handler_that_replaces_or_removes_its_own_tool(reg: ToolRegistry):
    def first(args: dict[str, Any]) -> str:
        reg.register("t", "set", spec(), returning("second"))
        return "first"

    reg.register("t", "set", spec(), first)
    reg.register("gone", "set", spec(), lambda args: str(reg.deregister("gone")))
    fast, _ = compiled_and_python(reg)
    assert fast("gone", {}) == "True"
    assert "Unknown tool" in fast("gone", {})
    reg.register("t", "set", spec(), first)
    fast("t", {})  # planned: hot from now on
    reg.register("t", "set", spec(), first)
    fast("t", {})
    assert fast("t", {}) == "second"


def test_a_write_during_dispatch_in_other_threads_never_serves_a_stale_tool(reg: ToolRegistry):
    reg.register("t", "set", spec(), returning("v0"))
    fast, _ = compiled_and_python(reg)
    stop, wrong = threading.Event(), []
    version = [0]

    def read() -> None:
        while not stop.is_set():
            before = version[0]
            answer = fast("t", {})
            after = version[0] + 1  # the writer registers a version, then publishes its number
            if is_tool_error(answer) and "Unknown tool" in answer:
                continue  # between a removal and the next registration
            if not before <= int(answer.removeprefix("v")) <= after:
                wrong.append((before, answer, after))

    readers = [threading.Thread(target=read) for _ in range(4)]
    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-5)
    try:
        for thread in readers:
            thread.start()
        for v in range(1, 300):
            if v % 50 == 0:
                reg.deregister("t")
            reg.register("t", "set", spec(), returning(f"v{v}"))
            version[0] = v
    finally:
        stop.set()
        for thread in readers:
            thread.join()
        sys.setswitchinterval(old)
    assert wrong == []
    assert fast("t", {}) == "v299"


class Hooks:
    def __init__(self) -> None:
        self.calls: list[str] = []

    def before(self, name: str, args: dict[str, Any]) -> str | None:
        self.calls.append(name)
        return None

    def after(self, name: str, args: dict[str, Any], result: Any) -> Any:
        return f"{result}, seen"


def test_hooks_installed_later_run_around_every_call(reg: ToolRegistry):
    hooks = Hooks()
    reg.register("t", "set", spec(), returning("ok"))
    fast, _ = compiled_and_python(reg)
    assert fast("t", {}) == fast("t", {}) == "ok"
    reg.set_dispatch_hooks(hooks)
    assert fast("t", {}) == "ok, seen" and hooks.calls == ["t"]
    reg.set_dispatch_hooks(None)
    assert fast("t", {}) == fast("t", {}) == "ok" and hooks.calls == ["t"]


def test_a_registry_with_a_compiled_dispatch_is_collected(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.delenv(_extension.DISABLE_ENV, raising=False)
    reg = ToolRegistry()
    reg.register("t", "set", spec(), returning("ok"))
    assert reg.dispatch("t", {}) == reg.dispatch("t", {}) == "ok"
    assert type(reg.dispatch) is _hot.HotDispatch
    ref = weakref.ref(reg)
    del reg
    gc.collect()
    assert ref() is None


@pytest.mark.parametrize(
    ("parameters", "checks"),
    [
        ({"type": "object"}, "NoneType"),  # any dict: the handler called right away
        # checked in C first (test_compiled_checks.py), the handler called right away too
        (
            {
                "type": "object",
                "properties": {"a": {"type": "array", "items": {"type": "integer"}}},
            },
            "Checks",
        ),
    ],
)
def test_recursion_through_dispatch_ends_as_in_python_not_in_a_crash(
    parameters: dict[str, Any], checks: str
):
    script = textwrap.dedent(
        f"""
        import json, sys
        from toolreg import ToolRegistry
        reg = ToolRegistry()
        depth = [0]
        def handler(args):
            depth[0] += 1
            return reg.dispatch("r", args)
        reg.register("r", "set", {{"parameters": {parameters!r}}}, handler)
        reg.dispatch("r", {{"a": "not a list"}})
        checks = type(reg._dispatcher.hot["r"][4]).__name__
        depth[0] = 0
        answer = reg.dispatch("r", {{"a": [1]}})
        print(type(reg.dispatch).__name__, checks, depth[0] > 100, json.loads(answer)["error"])
        """
    )
    outputs = outputs_with_and_without_extensions(script, parts=4)
    assert [out[:2] for out in outputs] == [["HotDispatch", checks], ["method", "NoneType"]]
    assert [deep for _, _, deep, _ in outputs] == ["True", "True"]
    assert outputs[0][3] == outputs[1][3]


def test_recursion_with_a_raised_limit_fails_the_call_not_the_process():
    """Before 3.12 C and Python frames share one limit: the nesting cap keeps the C stack."""
    script = textwrap.dedent(
        """
        import json, sys
        sys.setrecursionlimit(50_000)
        from toolreg import ToolRegistry, is_tool_error
        reg = ToolRegistry()
        def handler(args):
            return reg.dispatch("r", args)
        reg.register("r", "set", {"parameters": {"type": "object"}}, handler)
        reg.register("v", "set", {"parameters": {"type": "object", "properties": {
            "a": {"type": "string"}}}}, lambda args: reg.dispatch("v", args))
        reg.dispatch("r", {}), reg.dispatch("v", {})
        print(type(reg.dispatch).__name__, is_tool_error(reg.dispatch("r", {})),
              is_tool_error(reg.dispatch("v", {"a": "x"})))
        """
    )
    env = {k: v for k, v in os.environ.items() if k != _extension.DISABLE_ENV}
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120, env=env
    )
    assert done.returncode == 0, f"the process died: {done.returncode} {done.stderr[-2000:]}"
    assert done.stdout.split() == ["HotDispatch", "True", "True"]


def test_the_constructor_refuses_what_it_cannot_use():
    ok = (lambda *a: None,) * 4
    with pytest.raises(TypeError, match="dict"):
        _hot.HotDispatch(EvilDict(), *ok)
    with pytest.raises(TypeError, match="finish must be callable"):
        _hot.HotDispatch({}, ok[0], ok[0], 42, ok[0])


def test_a_malformed_hot_entry_is_left_to_the_python_dispatch():
    answers: list[Any] = []

    def slow(name: Any, args: Any) -> str:
        answers.append(name)
        return "python"

    fast = _hot.HotDispatch(
        {"short": (None,), "list": [None, None, None, None]}, slow, *(slow,) * 3
    )
    assert fast("short", {}) == fast("list", {}) == "python"
    assert answers == ["short", "list"]


@pytest.mark.parametrize("value", ["1", "yes", "0", ""])
def test_the_environment_switch_keeps_dispatch_in_python(
    monkeypatch: pytest.MonkeyPatch, value: str
):
    monkeypatch.setenv(_extension.DISABLE_ENV, value)
    reg = ToolRegistry()
    reg.register("t", "set", spec(), returning("ok"))
    assert reg.dispatch("t", {}) == "ok"
    # Like TOOLREG_DISABLE_PLUGIN_AUTOLOAD: empty or 0 is the switch left off.
    assert (type(reg.dispatch) is _hot.HotDispatch) is (value in ("", "0"))


def test_a_free_threaded_build_keeps_dispatch_in_python(monkeypatch: pytest.MonkeyPatch):
    # No free-threaded build here: the interpreter's own answer is what is stood in for.
    monkeypatch.delenv(_extension.DISABLE_ENV, raising=False)
    monkeypatch.setattr(sys, "_is_gil_enabled", lambda: False, raising=False)
    reg = ToolRegistry()
    reg.register("t", "set", spec(), returning("ok"))
    assert reg.dispatch("t", {}) == "ok"
    assert reg.dispatch.__self__ is reg._dispatcher


def test_a_build_for_another_toolreg_is_not_used(
    reg: ToolRegistry, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
):
    monkeypatch.setattr(_extension, "ABI", _extension.ABI + 1)
    reg.register("t", "set", spec(), returning("ok"))
    with caplog.at_level(logging.WARNING, "toolreg.speedups"):
        assert reg.dispatch("t", {}) == "ok"
    assert reg.dispatch.__self__ is reg._dispatcher
    assert "built for another toolreg" in caplog.text


@pytest.mark.parametrize("name", sorted(HANDLERS))
def test_a_thousand_calls_hold_no_reference_to_what_they_touched(reg: ToolRegistry, name: str):
    registered(reg)
    fast, python = compiled_and_python(reg)
    args = {"path": "a.txt"}
    key = "".join(name)  # an equal name that is not the table's own string
    for dispatch in (fast, python, fast):
        dispatch(key, args)
    hot = reg._dispatcher.hot[name]
    # None and small ints are everybody's: their counts move with the rest of the process.
    watched = [obj for obj in (key, args, hot, *hot) if obj is not None and type(obj) is not int]

    def refcounts() -> list[int]:
        gc.collect()  # cycles from earlier calls (a traceback's frames) hold references too
        return [sys.getrefcount(obj) for obj in watched]

    counts = [refcounts()]
    for dispatch in (fast, python):
        for _ in range(1000):
            dispatch(key, args)
        counts.append(refcounts())
    assert counts[1] == counts[0], "the compiled calls left references behind"
    assert counts[2] == counts[1], "the Python calls left references behind"
