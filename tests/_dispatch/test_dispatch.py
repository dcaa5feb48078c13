"""Tests for dispatch and adispatch: they never raise and they hold results to the contract."""

from __future__ import annotations

import asyncio
import json
import re
import subprocess
import sys
import textwrap
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from conftest import BadName, EvilDict, EvilStr, WeirdClass
from toolreg import ToolRegistry, is_tool_error, tool_error

PREFIX = "Tool execution failed: "
MAX_ERROR_CHARS = 2048


def schema() -> dict[str, Any]:
    return {"description": "test tool", "parameters": {"type": "object", "properties": {}}}


def error_of(result: object) -> dict[str, Any]:
    assert isinstance(result, str), result
    assert is_tool_error(result), result
    return json.loads(result)


def run_isolated(script: str, timeout: float = 5.0) -> str:
    """Run ``script`` in a fresh interpreter; fail (rather than hang) if it does not finish.

    Used where a bug would wedge the process-wide async bridge for every later test.
    """
    try:
        done = subprocess.run(
            [sys.executable, "-c", textwrap.dedent(script)],
            capture_output=True,
            text=True,
            timeout=timeout,
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"dispatch did not return within {timeout} s (hung)")
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


ISOLATED_HEADER = """
import sys
from toolreg import ToolRegistry
reg = ToolRegistry()
S = {"parameters": {"type": "object", "properties": {}}}
"""


class TestSyncDispatch:
    def test_returns_the_handler_result_and_passes_args(self, reg: ToolRegistry) -> None:
        reg.register("echo", "ts", schema(), lambda args: f"hello {args['who']}")
        assert reg.dispatch("echo", {"who": "world"}) == "hello world"

    def test_kwargs_reach_the_handler(self, reg: ToolRegistry) -> None:
        seen: dict[str, Any] = {}

        def handler(args: dict[str, Any], **kwargs: Any) -> str:
            seen.update(kwargs)
            return "ok"

        reg.register("kw", "ts", schema(), handler)
        assert reg.dispatch("kw", {}, task_id="t-1", user="ann") == "ok"
        assert seen == {"task_id": "t-1", "user": "ann"}

    def test_unknown_tool(self, reg: ToolRegistry) -> None:
        out = reg.dispatch("nope", {})
        assert out == tool_error("Unknown tool: nope")
        assert json.loads(out) == {"error": "Unknown tool: nope"}

    def test_handler_exception_becomes_tool_error(self, reg: ToolRegistry) -> None:
        def handler(args: dict[str, Any]) -> str:
            raise ValueError("bad input")

        reg.register("boom", "ts", schema(), handler)
        assert error_of(reg.dispatch("boom", {})) == {
            "error": "Tool execution failed: ValueError: bad input"
        }

    def test_sys_exit_in_handler_does_not_kill_the_host(self, reg: ToolRegistry) -> None:
        def handler(args: dict[str, Any]) -> str:
            sys.exit(3)

        reg.register("quit", "ts", schema(), handler)
        assert error_of(reg.dispatch("quit", {}))["error"] == f"{PREFIX}SystemExit: 3"
        # Still alive, and the registry still works.
        reg.register("after", "ts", schema(), lambda args: "still here")
        assert reg.dispatch("after", {}) == "still here"

    def test_exception_whose_str_raises_still_gives_tool_error(self, reg: ToolRegistry) -> None:
        class Unprintable(Exception):
            def __str__(self) -> str:
                raise RuntimeError("cannot render")

        def handler(args: dict[str, Any]) -> str:
            raise Unprintable()

        reg.register("unprintable", "ts", schema(), handler)
        assert "Unprintable" in error_of(reg.dispatch("unprintable", {}))["error"]


class TestErrorBound:
    def register_raising(self, reg: ToolRegistry, message: str) -> None:
        def handler(args: dict[str, Any]) -> str:
            raise RuntimeError(message)

        reg.register("loud", "ts", schema(), handler)

    def test_message_exactly_at_the_bound_is_kept_whole(self, reg: ToolRegistry) -> None:
        head = f"{PREFIX}RuntimeError: "
        message = "x" * (MAX_ERROR_CHARS - len(head))
        self.register_raising(reg, message)
        text = error_of(reg.dispatch("loud", {}))["error"]
        assert text == head + message
        assert len(text) == MAX_ERROR_CHARS

    @pytest.mark.parametrize("extra", [1, 10, 100_000])
    def test_longer_message_is_cut_with_a_marker(self, reg: ToolRegistry, extra: int) -> None:
        head = f"{PREFIX}RuntimeError: "
        message = "x" * (MAX_ERROR_CHARS - len(head) + extra)
        full = head + message
        self.register_raising(reg, message)

        text = error_of(reg.dispatch("loud", {}))["error"]

        assert len(text) <= MAX_ERROR_CHARS
        assert text.startswith(head + "xxx")
        match = re.search(r"truncated (\d+) characters\]$", text)
        assert match, text
        kept = text[: text.rindex("…[truncated")]
        assert full.startswith(kept)
        assert int(match.group(1)) == len(full) - len(kept)


class TestResultContract:
    @pytest.mark.parametrize(
        "bad",
        [
            42,
            None,
            {"answer": 42},
            ["a", "b"],
            b"bytes",
            {"_multimodal": True, "content": "not a list"},
            {"_multimodal": "yes", "content": []},
        ],
        ids=["int", "None", "plain-dict", "list", "bytes", "content-not-list", "flag-not-True"],
    )
    def test_off_contract_results_become_tool_errors(self, reg: ToolRegistry, bad: Any) -> None:
        reg.register("odd", "ts", schema(), lambda args: bad)
        err = error_of(reg.dispatch("odd", {}))
        assert err["error_type"] == "tool_result_contract"
        assert "odd" in err["error"]

    def test_multimodal_result_passes_through(self, reg: ToolRegistry) -> None:
        result = {"_multimodal": True, "content": [{"type": "text", "text": "x" * 50}]}
        reg.register("mm", "ts", schema(), lambda args: result, max_result_size_chars=5)
        assert reg.dispatch("mm", {}) == result

    def test_str_subclass_is_accepted(self, reg: ToolRegistry) -> None:
        class Markup(str):
            pass

        reg.register("markup", "ts", schema(), lambda args: Markup("<b>hi</b>"))
        out = reg.dispatch("markup", {})
        assert out == "<b>hi</b>"
        assert isinstance(out, str)


class TestResultSizeCap:
    def test_long_result_is_cut_to_its_first_chars_with_a_marker(self, reg: ToolRegistry) -> None:
        reg.register("big", "ts", schema(), lambda a: "a" * 10 + "b" * 37, max_result_size_chars=10)
        out = reg.dispatch("big", {})
        assert out[:10] == "a" * 10
        assert "b" not in out
        assert re.search(r"\btruncated 37\b", out[10:]), out

    def test_result_at_the_limit_is_untouched(self, reg: ToolRegistry) -> None:
        reg.register("fits", "ts", schema(), lambda args: "x" * 10, max_result_size_chars=10)
        assert reg.dispatch("fits", {}) == "x" * 10

    def test_no_limit_means_no_cut(self, reg: ToolRegistry) -> None:
        reg.register("huge", "ts", schema(), lambda args: "y" * 200_000)
        assert reg.dispatch("huge", {}) == "y" * 200_000

    def test_async_result_is_capped_too(self, reg: ToolRegistry) -> None:
        async def handler(args: dict[str, Any]) -> str:
            return "z" * 30

        reg.register("abig", "ts", schema(), handler, is_async=True, max_result_size_chars=8)
        out = reg.dispatch("abig", {})
        assert out[:8] == "z" * 8
        assert re.search(r"\btruncated 22\b", out[8:]), out


class TestAsyncHandlersFromSyncDispatch:
    def test_runs_to_completion_from_several_threads_at_once(self, reg: ToolRegistry) -> None:
        async def handler(args: dict[str, Any], **kwargs: Any) -> str:
            await asyncio.sleep(0.01)
            return f"done {args['i']} for {kwargs['caller']}"

        reg.register("slow", "ts", schema(), handler, is_async=True)

        def call(i: int) -> object:
            return reg.dispatch("slow", {"i": i}, caller=f"thread-{i}")

        with ThreadPoolExecutor(max_workers=8) as pool:
            results = list(pool.map(call, range(16)))
        assert results == [f"done {i} for thread-{i}" for i in range(16)]

    def test_runs_from_inside_a_running_event_loop(self, reg: ToolRegistry) -> None:
        async def handler(args: dict[str, Any]) -> str:
            await asyncio.sleep(0)
            return f"echo {args['x']}"

        reg.register("aecho", "ts", schema(), handler, is_async=True)

        async def host() -> object:
            return reg.dispatch("aecho", {"x": 1})

        assert asyncio.run(host()) == "echo 1"

    def test_nested_async_dispatch_does_not_deadlock(self, reg: ToolRegistry) -> None:
        async def inner(args: dict[str, Any]) -> str:
            await asyncio.sleep(0)
            return "inner"

        async def outer(args: dict[str, Any]) -> str:
            return f"outer({reg.dispatch('inner', {})})"

        reg.register("inner", "ts", schema(), inner, is_async=True)
        reg.register("outer", "ts", schema(), outer, is_async=True)
        assert reg.dispatch("outer", {}) == "outer(inner)"

    def test_doubly_nested_async_dispatch_does_not_deadlock(self) -> None:
        out = run_isolated(
            ISOLATED_HEADER
            + """
async def c(args): return "c"
async def b(args): return "b(" + reg.dispatch("c", {}) + ")"
async def a(args): return "a(" + reg.dispatch("b", {}) + ")"
for name, fn in [("a", a), ("b", b), ("c", c)]:
    reg.register(name, "ts", S, fn, is_async=True)
print(reg.dispatch("a", {}))
"""
        )
        assert out == "a(b(c))"

    def test_async_exception_becomes_tool_error(self, reg: ToolRegistry) -> None:
        async def handler(args: dict[str, Any]) -> str:
            raise KeyError("missing")

        reg.register("abad", "ts", schema(), handler, is_async=True)
        assert error_of(reg.dispatch("abad", {}))["error"] == f"{PREFIX}KeyError: 'missing'"

    def test_async_def_registered_without_is_async_is_awaited(self, reg: ToolRegistry) -> None:
        async def handler(args: dict[str, Any]) -> str:
            await asyncio.sleep(0)
            return "awaited anyway"

        reg.register("forgot", "ts", schema(), handler)  # no is_async=True
        assert reg.dispatch("forgot", {}) == "awaited anyway"

    def test_async_off_contract_result_becomes_tool_error(self, reg: ToolRegistry) -> None:
        async def handler(args: dict[str, Any]) -> object:
            return {"not": "multimodal"}

        reg.register("aodd", "ts", schema(), handler, is_async=True)
        assert error_of(reg.dispatch("aodd", {}))["error_type"] == "tool_result_contract"

    def test_sys_exit_in_async_handler_does_not_hang_the_host(self) -> None:
        out = run_isolated(
            ISOLATED_HEADER
            + """
async def quit(args): sys.exit(3)
reg.register("quit", "ts", S, quit, is_async=True)
print(reg.dispatch("quit", {}))
"""
        )
        assert json.loads(out) == {"error": f"{PREFIX}SystemExit: 3"}


class TestAdispatch:
    def test_sync_handler_runs_in_a_worker_thread(self, reg: ToolRegistry) -> None:
        handler_threads: list[int] = []

        def handler(args: dict[str, Any]) -> str:
            handler_threads.append(threading.get_ident())
            return "sync ok"

        reg.register("sync", "ts", schema(), handler)

        async def host() -> tuple[object, int]:
            return await reg.adispatch("sync", {}), threading.get_ident()

        out, loop_thread = asyncio.run(host())
        assert out == "sync ok"
        assert handler_threads and handler_threads[0] != loop_thread

    def test_async_handler_is_awaited_on_the_callers_loop(self, reg: ToolRegistry) -> None:
        loops: list[asyncio.AbstractEventLoop] = []

        async def handler(args: dict[str, Any]) -> str:
            loops.append(asyncio.get_running_loop())
            await asyncio.sleep(0)
            return f"async {args['n']}"

        reg.register("anum", "ts", schema(), handler, is_async=True)

        async def host() -> tuple[object, asyncio.AbstractEventLoop]:
            return await reg.adispatch("anum", {"n": 7}), asyncio.get_running_loop()

        out, caller_loop = asyncio.run(host())
        assert out == "async 7"
        assert loops == [caller_loop]

    def test_async_def_registered_without_is_async_is_awaited(self, reg: ToolRegistry) -> None:
        async def handler(args: dict[str, Any]) -> str:
            return "awaited anyway"

        reg.register("forgot", "ts", schema(), handler)
        assert asyncio.run(reg.adispatch("forgot", {})) == "awaited anyway"

    @pytest.mark.parametrize("is_async", [False, True])
    def test_kwargs_reach_the_handler(self, reg: ToolRegistry, is_async: bool) -> None:
        def sync_handler(args: dict[str, Any], **kwargs: Any) -> str:
            return json.dumps(kwargs, sort_keys=True)

        async def async_handler(args: dict[str, Any], **kwargs: Any) -> str:
            return json.dumps(kwargs, sort_keys=True)

        handler = async_handler if is_async else sync_handler
        reg.register("kw", "ts", schema(), handler, is_async=is_async)
        out = asyncio.run(reg.adispatch("kw", {}, task_id="t-9"))
        assert json.loads(out) == {"task_id": "t-9"}

    def test_unknown_tool(self, reg: ToolRegistry) -> None:
        assert asyncio.run(reg.adispatch("nope", {})) == tool_error("Unknown tool: nope")

    @pytest.mark.parametrize("is_async", [False, True])
    def test_exceptions_and_sys_exit_become_tool_errors(
        self, reg: ToolRegistry, is_async: bool
    ) -> None:
        def raise_(args: dict[str, Any]) -> str:
            raise ValueError(args["msg"])

        def exit_(args: dict[str, Any]) -> str:
            sys.exit(4)

        async def araise(args: dict[str, Any]) -> str:
            return raise_(args)

        async def aexit(args: dict[str, Any]) -> str:
            return exit_(args)

        reg.register("raise", "ts", schema(), araise if is_async else raise_, is_async=is_async)
        reg.register("exit", "ts", schema(), aexit if is_async else exit_, is_async=is_async)

        raised = asyncio.run(reg.adispatch("raise", {"msg": "nope"}))
        exited = asyncio.run(reg.adispatch("exit", {}))
        assert error_of(raised) == {"error": f"{PREFIX}ValueError: nope"}
        assert error_of(exited) == {"error": f"{PREFIX}SystemExit: 4"}

    @pytest.mark.parametrize("is_async", [False, True])
    def test_off_contract_result_becomes_tool_error(
        self, reg: ToolRegistry, is_async: bool
    ) -> None:
        async def ahandler(args: dict[str, Any]) -> object:
            return 42

        handler = ahandler if is_async else (lambda args: 42)
        reg.register("odd", "ts", schema(), handler, is_async=is_async)
        err = error_of(asyncio.run(reg.adispatch("odd", {})))
        assert err["error_type"] == "tool_result_contract"

    @pytest.mark.parametrize("is_async", [False, True])
    def test_long_result_is_capped(self, reg: ToolRegistry, is_async: bool) -> None:
        async def ahandler(args: dict[str, Any]) -> str:
            return "q" * 25

        handler = ahandler if is_async else (lambda args: "q" * 25)
        reg.register("big", "ts", schema(), handler, is_async=is_async, max_result_size_chars=5)
        out = asyncio.run(reg.adispatch("big", {}))
        assert out[:5] == "q" * 5
        assert re.search(r"\btruncated 20\b", out[5:]), out

    def test_multimodal_result_passes_through(self, reg: ToolRegistry) -> None:
        result = {"_multimodal": True, "content": [{"type": "image", "data": "..."}]}
        reg.register("mm", "ts", schema(), lambda args: result)
        assert asyncio.run(reg.adispatch("mm", {})) == result


class RecordingHooks:
    """Dispatch hooks that read the arguments, as an audit pack's would."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, Any]] = []

    def before(self, name: str, args: dict[str, Any]) -> str | None:
        self.seen.append(("before", args))
        return "no rm" if args.get("cmd") == "rm" else None

    def after(self, name: str, args: dict[str, Any], result: Any) -> Any:
        self.seen.append(("after", args))
        return result


class TestHooksSeeParsedArguments:
    @pytest.fixture
    def hooked(self, reg: ToolRegistry) -> tuple[ToolRegistry, RecordingHooks]:
        params = {"type": "object", "properties": {"cmd": {"type": "string"}}}
        reg.register("echo", "ts", {"parameters": params}, lambda a: "ran " + a.get("cmd", "-"))
        hooks = RecordingHooks()
        reg.set_dispatch_hooks(hooks)
        return reg, hooks

    @pytest.mark.parametrize("is_async", [False, True])
    def test_json_string_and_null_arguments_reach_hooks_as_dicts(self, hooked, is_async) -> None:
        reg, hooks = hooked

        def call(args: Any) -> Any:
            return (
                asyncio.run(reg.adispatch("echo", args)) if is_async else reg.dispatch("echo", args)
            )

        assert call('{"cmd": "ls"}') == "ran ls"
        assert call(None) == "ran -"
        blocked = error_of(call('{"cmd": "rm"}'))
        assert (blocked["error"], blocked["error_type"]) == ("no rm", "blocked")
        assert hooks.seen == [
            ("before", {"cmd": "ls"}),
            ("after", {"cmd": "ls"}),
            ("before", {}),
            ("after", {}),
            ("before", {"cmd": "rm"}),
        ]

    def test_unparsable_json_is_invalid_arguments_before_any_hook(self, hooked) -> None:
        reg, hooks = hooked
        assert error_of(reg.dispatch("echo", '{"cmd": '))["error_type"] == "invalid_arguments"
        assert hooks.seen == []


class EvilList(list):
    def __iter__(self) -> Any:
        raise RuntimeError("iter exploded")


class Unhashable:
    __hash__ = None  # type: ignore[assignment]


def both(reg: ToolRegistry, name: Any, args: Any, **kwargs: Any) -> list[Any]:
    """The same call through dispatch and adispatch."""
    return [reg.dispatch(name, args, **kwargs), asyncio.run(reg.adispatch(name, args, **kwargs))]


class TestAttackerInput:
    """What an attacker controls (name, arguments, a pack's code) never makes dispatch raise."""

    def test_deeply_nested_json_string_arguments(self, reg: ToolRegistry) -> None:
        params = {"type": "object", "properties": {"a": {"type": "integer"}}}
        reg.register("t", "ts", {"parameters": params}, lambda args: "ran")
        reg.register("loose", "ts", schema(), lambda args: "ran")
        deep = "[" * 200_000 + "]" * 200_000
        for name in ("t", "loose"):
            for result in both(reg, name, deep):
                err = error_of(result)
                assert err["error_type"] == "invalid_arguments"
                assert "nested too deeply" in err["error"]

    @pytest.mark.parametrize("name", [["list"], {"a": 1}, Unhashable(), BadName(), None, 3.5])
    def test_names_that_are_no_tool_name(self, reg: ToolRegistry, name: Any) -> None:
        reg.register("t", "ts", schema(), lambda args: "ran")
        for result in both(reg, name, {}):
            assert error_of(result)["error"].startswith("Unknown tool: ")

    @pytest.mark.parametrize(
        "make",
        [lambda: EvilStr("evil"), lambda: EvilDict(_multimodal=True, content=[]), WeirdClass],
        ids=["str-subclass", "dict-subclass", "raising-__class__"],
    )
    def test_results_whose_methods_raise(self, reg: ToolRegistry, make: Any) -> None:
        result = make()
        reg.register("evil", "ts", schema(), lambda args: result)
        reg.register("aevil", "ts", schema(), lambda args: result, timeout=5)
        for out in both(reg, "evil", {}) + both(reg, "aevil", {}):
            # Whatever comes back is a plain str or a plain dict with a plain list.
            if isinstance(out, dict):
                assert type(out) is dict and type(out["content"]) is list
                assert out == {"_multimodal": True, "content": []}
                json.dumps(out)
            else:
                assert type(out) is str
                assert out == "evil" or error_of(out)["error_type"] == "tool_result_contract"

    def test_a_multimodal_list_subclass_is_copied_to_a_plain_list(self, reg: ToolRegistry) -> None:
        content = EvilList([{"type": "text", "text": "hi"}])
        reg.register("mm", "ts", schema(), lambda args: {"_multimodal": True, "content": content})
        out = reg.dispatch("mm", {})
        assert type(out["content"]) is list and out["content"] == [{"type": "text", "text": "hi"}]

    def test_a_str_subclass_longer_than_the_limit_is_cut_without_its_methods(
        self, reg: ToolRegistry
    ) -> None:
        reg.register(
            "long", "ts", schema(), lambda args: EvilStr("x" * 50), max_result_size_chars=10
        )
        out = reg.dispatch("long", {})
        assert type(out) is str and out.startswith("x" * 10 + "\n…[truncated 40 of 50")

    def test_keyword_arguments_named_like_the_parameters(self, reg: ToolRegistry) -> None:
        seen: dict[str, Any] = {}

        def handler(arguments: dict[str, Any], /, **kwargs: Any) -> str:
            seen.update(kwargs)
            return "ok"

        reg.register("kw", "ts", schema(), handler)
        assert reg.dispatch("kw", {}, args=1, name=2) == "ok"
        assert seen == {"args": 1, "name": 2}

    def test_non_object_arguments_never_reach_a_handler_that_validates(
        self, reg: ToolRegistry
    ) -> None:
        seen: list[Any] = []
        reg.register("any", "ts", schema(), lambda args: seen.append(args) or "ran")
        for args in ([1, 2], 5, "[1]", True):
            for out in both(reg, "any", args):
                assert error_of(out)["error_type"] == "invalid_arguments"
        assert seen == []

    def test_sys_exit_in_a_timed_async_dispatch_does_not_stop_the_loop(
        self, reg: ToolRegistry
    ) -> None:
        def quit_(args: dict[str, Any]) -> str:
            sys.exit(4)

        async def aquit(args: dict[str, Any]) -> str:
            sys.exit(5)

        reg.register("quit", "ts", schema(), quit_, timeout=5)
        reg.register("aquit", "ts", schema(), aquit, is_async=True, timeout=5)
        assert error_of(asyncio.run(reg.adispatch("quit", {})))["error"] == f"{PREFIX}SystemExit: 4"
        assert (
            error_of(asyncio.run(reg.adispatch("aquit", {})))["error"] == f"{PREFIX}SystemExit: 5"
        )

    def test_keyboard_interrupt_from_another_thread_is_the_packs_failure(
        self, reg: ToolRegistry
    ) -> None:
        """Only the caller's own thread gets Ctrl-C; a worker's KeyboardInterrupt is pack code."""

        def interrupt(args: dict[str, Any]) -> str:
            raise KeyboardInterrupt

        async def ainterrupt(args: dict[str, Any]) -> str:
            raise KeyboardInterrupt

        reg.register("ki", "ts", schema(), interrupt)
        reg.register("ki_timed", "ts", schema(), interrupt, timeout=5)
        reg.register("ki_async", "ts", schema(), ainterrupt, is_async=True)
        with pytest.raises(KeyboardInterrupt):
            reg.dispatch("ki", {})  # the caller's thread: Ctrl-C must still stop the host
        expected = f"{PREFIX}KeyboardInterrupt: "
        assert error_of(reg.dispatch("ki_timed", {}))["error"] == expected
        assert error_of(reg.dispatch("ki_async", {}))["error"] == expected
        for name in ("ki", "ki_timed", "ki_async"):
            assert error_of(asyncio.run(reg.adispatch(name, {})))["error"] == expected
        assert reg.dispatch("ki_async", {}) == reg.dispatch("ki_async", {}), "the loop survived"

    @pytest.mark.skipif(
        sys.version_info < (3, 11),
        reason="Python 3.10 has no Task.cancelling(): every CancelledError goes through",
    )
    def test_a_cancelled_error_from_the_handler_is_its_failure(self, reg: ToolRegistry) -> None:
        def cancel(args: dict[str, Any]) -> str:
            raise asyncio.CancelledError()

        reg.register("cancel", "ts", schema(), cancel)
        for out in both(reg, "cancel", {}):
            assert error_of(out)["error"] == f"{PREFIX}CancelledError: "

    def test_the_hosts_cancellation_of_adispatch_goes_through(self, reg: ToolRegistry) -> None:
        started = threading.Event()

        async def forever(args: dict[str, Any]) -> str:
            started.set()
            await asyncio.sleep(60)
            return "never"

        reg.register("forever", "ts", schema(), forever, is_async=True)

        async def main() -> None:
            task = asyncio.ensure_future(reg.adispatch("forever", {}))
            while not started.is_set():
                await asyncio.sleep(0.01)
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task

        asyncio.run(main())


class TestBoundedFailureLogs:
    def test_a_huge_exception_message_gives_a_bounded_log_line(
        self, reg: ToolRegistry, caplog: pytest.LogCaptureFixture
    ) -> None:
        def huge(args: dict[str, Any]) -> str:
            raise ValueError("x" * 200_000)

        reg.register("huge", "ts", schema(), huge)
        with caplog.at_level("DEBUG", logger="toolreg.dispatch"):
            assert len(error_of(reg.dispatch("huge", {}))["error"]) <= MAX_ERROR_CHARS
        lines = [record.getMessage() for record in caplog.records]
        assert any("Tool huge failed: ValueError: xxx" in line for line in lines)
        assert all(len(line) <= 8 * MAX_ERROR_CHARS + 20 for line in lines)
        failure = [line for line in lines if line.startswith("Tool huge failed")]
        assert len(failure[0]) <= MAX_ERROR_CHARS


@pytest.mark.parametrize("is_async", [False, True])
def test_a_handlers_generator_exit_is_its_own_failure_on_every_route(is_async):
    """GeneratorExit thrown across an await must not read as the host's coroutine closing."""
    reg = ToolRegistry()

    def handler(args, **kwargs):
        raise GeneratorExit()

    async def ahandler(args, **kwargs):
        raise GeneratorExit()

    reg.register("t", "ts", {}, ahandler if is_async else handler, is_async=is_async)
    outcomes = [
        reg.dispatch("t", {}),
        asyncio.run(reg.adispatch("t", {})),
        reg.dispatch_many([("t", {})])[0],
    ]
    for out in outcomes:
        assert json.loads(out)["error"] == "Tool execution failed: GeneratorExit: ", out


def test_unknown_tool_error_names_up_to_three_close_tools() -> None:
    reg = ToolRegistry()
    for name in ("read_file", "write_file", "edit_file", "read_files", "web_search"):
        reg.register(name, "ts", schema(), lambda args: "ok")
    found = error_of(reg.dispatch("reed_file", {}))
    assert found["error"].startswith("Unknown tool: reed_file. Did you mean: read_file")
    assert len(found["did_you_mean"]) == 3 and found["did_you_mean"][0] == "read_file"
    assert "error_type" not in found  # the unknown-tool error keeps its shape
    assert error_of(asyncio.run(reg.adispatch("web_serch", {})))["did_you_mean"] == ["web_search"]
    assert json.loads(reg.dispatch("zzzzzz", {})) == {"error": "Unknown tool: zzzzzz"}
    assert "did_you_mean" not in error_of(reg.dispatch("r" * 10_000, {}))
