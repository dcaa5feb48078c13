"""Dispatch: run a tool call and hold the result to the contract.

``dispatch`` never raises and never exits. Unknown tools, handler exceptions
(``SystemExit`` included), results of the wrong type, and anything else that
goes wrong come back as ``tool_error`` JSON, so one bad tool cannot take down
the agent loop. The one exception that passes is a ``KeyboardInterrupt`` on the
caller's own thread: that is how Ctrl-C reaches the host. The fast path (a
sync handler returning a short str) is a dict read, a call and a length check.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from types import CoroutineType
from typing import Any, Protocol

from .._contract.entry import DEFAULT_OPTIONS, ToolEntry, ToolOptions
from .._contract.results import (
    clip,
    describe_exception,
    log_failure,
    plain_result,
    printable,
    tool_error,
    truncate,
    type_name,
)
from .._contract.validation import Checker, compile_checker, invalid_arguments, parse_json_args
from .async_bridge import run_coroutine
from .timeouts import DeadlineExceeded, await_with_deadline, call_with_deadline
from .workers import NoCapacity, WorkerInterrupt, contained

logger = logging.getLogger("toolreg.dispatch")

#: What dispatch answers when even building an error failed.
_LAST_RESORT = tool_error("Internal error in toolreg while dispatching", error_type="internal")


def _failed(name: str, exc: BaseException) -> str:
    described = describe_exception(exc)
    log_failure(logger, f"Tool {name} failed: {described}", exc)
    return tool_error(clip(f"Tool execution failed: {described}"))


def _unknown(name: Any) -> str:
    text = name if type(name) is str else printable(name)
    return tool_error(clip(f"Unknown tool: {text}"))


def _internal(name: Any, exc: BaseException) -> str:
    """What escaped every other guard: a name too odd to look up, or a toolreg bug."""
    try:
        if type(name) is not str:
            return _unknown(name)  # an unhashable or misbehaving name names no tool
        described = describe_exception(exc)
        log_failure(logger, f"Dispatch of tool {clip(name, 200)} failed: {described}", exc)
        return tool_error(
            clip(f"Internal error in toolreg while dispatching {name}: {described}"),
            error_type="internal",
            tool=clip(name, 200),
        )
    except KeyboardInterrupt:
        raise
    except BaseException:
        return _LAST_RESORT


def _off_contract(entry: ToolEntry, result: Any) -> str | dict[str, Any]:
    """Results other than a plain str: coroutines, subclasses, multimodal, or a contract error."""
    try:
        if type(result) is CoroutineType:
            # An ``async def`` handler registered without is_async=True: run it
            # rather than hand the model a coroutine repr.
            try:
                result = run_coroutine(result)
            except KeyboardInterrupt:
                raise
            except BaseException as exc:
                return _failed(entry.name, exc)
        plain = plain_result(result)
    except KeyboardInterrupt:
        raise
    except BaseException:  # an object whose very type checks raise
        plain = None
    if type(plain) is str:
        return _cap(entry, plain)
    if plain is not None:
        return plain
    result_type = type_name(result)
    logger.error("Tool %s returned unsupported result type %s", entry.name, result_type)
    return tool_error(
        f"Tool {entry.name} returned {result_type}; a tool must return a str "
        'or a multimodal dict {"_multimodal": true, "content": [...]}',
        error_type="tool_result_contract",
        tool=entry.name,
        result_type=result_type,
    )


def _parsed(name: str, args: Any) -> tuple[Any, str | None]:
    """Arguments as an object: JSON strings parsed, null as ``{}``; or a tool_error."""
    if isinstance(args, str):
        return parse_json_args(name, str.__str__(args))
    if args is None:
        args = {}  # "no arguments" arrives as null from some providers
    return args, None


def _checked(plan: _Plan, args: Any) -> tuple[Any, str | None]:
    """Parse JSON-string arguments and validate them: (args, None) or (args, tool_error)."""
    name = plan.entry.name
    args, problem = _parsed(name, args)
    if problem is not None:
        return args, problem
    if plan.check is not None:
        problem = plan.check(args)
        if problem is not None:
            return args, problem
    elif plan.validates and not isinstance(args, dict):
        return args, invalid_arguments(
            name, f"the arguments must be a JSON object, not {type_name(args)}"
        )
    return args, None


def _call_failed(plan: _Plan, exc: BaseException) -> str:
    """The tool_error for a call that raised: past its deadline, no worker, or the handler's own."""
    if isinstance(exc, DeadlineExceeded):
        return _timed_out(plan.entry, plan.timeout, exc)
    if isinstance(exc, NoCapacity):
        return _no_capacity(plan.entry, exc)
    return _failed(plan.entry.name, exc)


def _timed_out(entry: ToolEntry, timeout: float | None, exc: DeadlineExceeded) -> str:
    logger.error("Tool %s timed out after %gs", entry.name, timeout or 0)
    if not exc.started:
        return tool_error(
            f"Tool {entry.name} did not start within its {timeout:g} s timeout: "
            "every tool worker was busy",
            error_type="timeout",
            tool=entry.name,
        )
    return tool_error(
        f"Tool {entry.name} timed out after {timeout:g} s and was abandoned",
        error_type="timeout",
        tool=entry.name,
    )


def _blocked(name: str, message: Any) -> str:
    text = message if type(message) is str else printable(message)
    return tool_error(clip(text), error_type="blocked", tool=name)


def _hook_result(name: str, result: Any) -> str | dict[str, Any]:
    """What the hooks' ``after`` returned, held to the same contract as a handler's result."""
    plain = plain_result(result)
    if plain is not None:
        return plain
    return tool_error(
        f"The dispatch hooks returned {type_name(result)} for tool {name}, "
        "not a str or a multimodal dict",
        error_type="blocked",
        tool=name,
    )


def _no_capacity(entry: ToolEntry, exc: NoCapacity) -> str:
    message = f"Tool {entry.name} was not started: {exc}"
    logger.error("%s", message)
    return tool_error(message, error_type="no_capacity", tool=entry.name)


def _cap(entry: ToolEntry, result: str) -> str:
    limit = entry.max_result_size_chars
    if limit is None or len(result) <= limit:
        return result
    return truncate(result, limit)


class DispatchHooks(Protocol):
    """What the plugin layer plugs into dispatch (see ``toolreg.hookspecs``)."""

    def before(self, name: str, args: dict[str, Any]) -> str | None:
        """A block message, or None to let the call through."""

    def after(self, name: str, args: dict[str, Any], result: Any) -> str | dict[str, Any]:
        """The result to return, after observers and transforms have run."""


class _Plan:
    """What dispatch needs for one entry, worked out once: the checker, the deadline."""

    __slots__ = ("entry", "check", "validates", "timeout", "direct")

    def __init__(
        self, entry: ToolEntry, check: Checker | None, validates: bool, timeout: float | None
    ) -> None:
        self.entry = entry
        self.check = check
        self.validates = validates
        self.timeout = timeout
        #: Nothing to do but call the handler: the hot path.
        self.direct = check is None and timeout is None and not entry.is_async


def _dispatch_checked(plan: _Plan, args: Any, kwargs: dict[str, Any]) -> str | dict[str, Any]:
    """Dispatch with whatever the fast path skips: parsing, validation, deadline, async."""
    entry = plan.entry
    args, problem = _checked(plan, args)
    if problem is not None:
        return problem
    try:
        if plan.timeout is not None:
            result = call_with_deadline(entry, args, kwargs, plan.timeout)
        else:
            result = entry.handler(args, **kwargs)
            if entry.is_async:
                result = run_coroutine(result)
    except KeyboardInterrupt:
        raise
    except BaseException as exc:
        return _call_failed(plan, exc)
    if type(result) is str:
        return _cap(entry, result)
    return _off_contract(entry, result)


class DispatchMixin:
    """``dispatch`` and ``adispatch`` over a table's published ``_tools`` dict."""

    _tools: dict[str, ToolEntry]
    get_options: Callable[[str], ToolOptions | None]
    _require_host: Callable[[str], None]

    def _init_dispatch(self) -> None:
        self._dispatch_hooks: DispatchHooks | None = None
        self._plans: dict[str, _Plan] = {}
        self._validation = True

    # -- plans ----------------------------------------------------------------

    def _plan(self, name: str) -> _Plan | None:
        entry = self._tools.get(name)
        if entry is None:
            return None
        options = self.get_options(name) or DEFAULT_OPTIONS
        validates = options.validate and self._validation
        check = compile_checker(entry) if validates else None
        plan = _Plan(entry, check, validates, options.timeout)
        self._plans[name] = plan
        # A write that swapped the entry while we compiled already dropped the
        # old plan; drop ours too if it is stale, so it is never served.
        if self._tools.get(name) is not entry:
            self._plans.pop(name, None)
        return plan

    def _after_publish(self, names: Iterable[str]) -> None:
        for name in names:
            self._plans.pop(name, None)

    def set_validation(self, enabled: bool) -> None:
        """Turn argument validation on or off for every tool (operator switch). Host only."""
        self._require_host("turn argument validation " + ("on" if enabled else "off"))
        self._validation = bool(enabled)
        self._plans.clear()

    @property
    def validation_enabled(self) -> bool:
        return self._validation

    # -- dispatch -------------------------------------------------------------

    def dispatch(self, name: str, args: dict[str, Any], /, **kwargs: Any) -> str | dict[str, Any]:
        """Run tool ``name`` with ``args``; always returns a str or multimodal dict.

        Dispatch hooks, when a pack installed some, run around every call, however
        the method was obtained (a host may keep ``registry.dispatch`` from
        before plugins loaded).
        """
        try:
            if self._dispatch_hooks is not None:
                return self._hooked_dispatch(name, args, kwargs)
            plan = self._plans.get(name) or self._plan(name)
            if plan is None:
                return _unknown(name)
            if not plan.direct or type(args) is not dict:
                return _dispatch_checked(plan, args, kwargs)
            entry = plan.entry
            try:
                result = entry.handler(args, **kwargs) if kwargs else entry.handler(args)
            except KeyboardInterrupt:
                raise  # Ctrl-C, on the caller's own thread
            except BaseException as exc:
                return _failed(name, exc)
            if type(result) is str:
                limit = entry.max_result_size_chars
                if limit is None or len(result) <= limit:
                    return result
                return truncate(result, limit)
            return _off_contract(entry, result)
        except KeyboardInterrupt:
            raise
        except BaseException as exc:
            return _internal(name, exc)

    async def adispatch(
        self, name: str, args: dict[str, Any], /, **kwargs: Any
    ) -> str | dict[str, Any]:
        """The async twin of ``dispatch``: sync handlers run in a worker thread."""
        try:
            if self._dispatch_hooks is not None:
                return await self._hooked_adispatch(name, args, kwargs)
            return await self._adispatch(name, args, kwargs)
        except BaseException as exc:
            if _cancelled_from_outside(exc):
                raise
            return _internal(name, exc)

    async def _adispatch(
        self, name: str, args: Any, kwargs: dict[str, Any]
    ) -> str | dict[str, Any]:
        plan = self._plans.get(name) or self._plan(name)
        if plan is None:
            return _unknown(name)
        entry = plan.entry
        args, problem = _checked(plan, args)
        if problem is not None:
            return problem
        try:
            if plan.timeout is not None:
                result = await await_with_deadline(entry, args, kwargs, plan.timeout)
            elif entry.is_async:
                result = await _awaited(entry.handler(args, **kwargs))
            else:
                import asyncio  # deferred: hosts that never go async never pay for it

                result = await asyncio.to_thread(contained, entry.handler, args, **kwargs)
            if type(result) is CoroutineType:
                result = await _awaited(result)
        except BaseException as exc:
            if _cancelled_from_outside(exc):
                raise
            return _call_failed(plan, exc)
        if type(result) is str:
            return _cap(entry, result)
        return _off_contract(entry, result)

    def set_dispatch_hooks(self, hooks: DispatchHooks | None) -> None:
        """Install (or with None, remove) the hooks around every dispatch. Host only."""
        self._require_host("change the dispatch hooks")
        self._dispatch_hooks = hooks

    def _dispatch(
        self, name: str, args: dict[str, Any], kwargs: dict[str, Any]
    ) -> str | dict[str, Any]:
        """``dispatch`` without the hooks: the general path, which covers the fast one."""
        plan = self._plans.get(name) or self._plan(name)
        if plan is None:
            return _unknown(name)
        return _dispatch_checked(plan, args, kwargs)

    def _hooked_dispatch(
        self, name: str, args: dict[str, Any], kwargs: dict[str, Any]
    ) -> str | dict[str, Any]:
        hooks = self._dispatch_hooks
        try:
            if hooks is None or type(name) is not str:
                return self._dispatch(name, args, kwargs)
            # Hooks read the arguments as the handler will: never as a JSON string.
            args, problem = _parsed(name, args)
            if problem is not None:
                return problem
            blocked = hooks.before(name, args)
            if blocked is not None:
                return _blocked(name, blocked)
            result = self._dispatch(name, args, kwargs)
            after = hooks.after(name, args, result)
            return after if type(after) is str else _hook_result(name, after)
        except KeyboardInterrupt:
            raise
        except BaseException as exc:
            return _internal(name, exc)

    async def _hooked_adispatch(
        self, name: str, args: dict[str, Any], kwargs: dict[str, Any]
    ) -> str | dict[str, Any]:
        hooks = self._dispatch_hooks
        if hooks is None or type(name) is not str:
            return await self._adispatch(name, args, kwargs)
        try:
            args, problem = _parsed(name, args)
            if problem is not None:
                return problem
            # Hooks are synchronous and may block: keep them off the event loop.
            import asyncio

            blocked = await asyncio.to_thread(contained, hooks.before, name, args)
            if blocked is not None:
                return _blocked(name, blocked)
            result = await self._adispatch(name, args, kwargs)
            after = await asyncio.to_thread(contained, hooks.after, name, args, result)
            return after if type(after) is str else _hook_result(name, after)
        except BaseException as exc:
            if _cancelled_from_outside(exc):
                raise
            return _internal(name, exc)


async def _awaited(coro: Any) -> Any:
    """Await a handler's coroutine; its SystemExit or KeyboardInterrupt is its own failure."""
    try:
        return await coro
    except (SystemExit, KeyboardInterrupt) as exc:
        raise WorkerInterrupt(exc) from None


def _cancelled_from_outside(exc: BaseException) -> bool:
    """A CancelledError because the host cancelled our task, which must go through."""
    import asyncio

    if not isinstance(exc, asyncio.CancelledError):
        return False
    task = asyncio.current_task()
    # Python 3.10 cannot tell the two apart: any cancellation then goes through.
    cancelling = getattr(task, "cancelling", None)
    return cancelling is None or cancelling() > 0
