"""Dispatch: run a tool call and hold the result to the contract.

``dispatch`` never raises. Unknown tools, handler exceptions and results of the
wrong type all come back as ``tool_error`` JSON, so one bad tool cannot take
down the agent loop. The fast path (a sync handler returning a short str) is a
dict read, a call and a length check.
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Callable, Iterable
from typing import Any, Protocol

from ._async_bridge import run_coroutine
from ._entry import DEFAULT_OPTIONS, ToolEntry, ToolOptions
from ._results import describe_exception, failure_message, is_multimodal, tool_error, truncate
from ._timeouts import DeadlineExceeded, await_with_deadline, call_with_deadline
from ._validation import Checker, compile_checker, parse_json_args

logger = logging.getLogger("toolreg.dispatch")


def _failed(name: str, exc: BaseException) -> str:
    logger.error(
        "Tool %s failed: %s",
        name,
        describe_exception(exc),
        exc_info=logger.isEnabledFor(logging.DEBUG),
    )
    return failure_message(exc)


def _off_contract(entry: ToolEntry, result: Any) -> str | dict[str, Any]:
    """Results other than a plain str: str subclasses, multimodal, or a contract error."""
    if inspect.iscoroutine(result):
        # An ``async def`` handler registered without is_async=True: run it
        # rather than hand the model a coroutine repr.
        try:
            result = run_coroutine(result)
        except (Exception, SystemExit) as exc:
            return _failed(entry.name, exc)
    if isinstance(result, str):
        return _cap(entry, str(result))
    if is_multimodal(result):
        return result
    result_type = type(result).__name__
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
        return parse_json_args(name, args)
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
    return args, None


def _timed_out(entry: ToolEntry, timeout: float | None) -> str:
    logger.error("Tool %s timed out after %gs", entry.name, timeout or 0)
    return tool_error(
        f"Tool {entry.name} timed out after {timeout:g} s and was abandoned",
        error_type="timeout",
        tool=entry.name,
    )


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

    __slots__ = ("entry", "check", "timeout", "direct")

    def __init__(self, entry: ToolEntry, check: Checker | None, timeout: float | None) -> None:
        self.entry = entry
        self.check = check
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
    except DeadlineExceeded:
        return _timed_out(entry, plan.timeout)
    except (Exception, SystemExit) as exc:
        return _failed(entry.name, exc)
    if result.__class__ is str:
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
        check = compile_checker(entry) if options.validate and self._validation else None
        plan = _Plan(entry, check, options.timeout)
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

    def dispatch(self, name: str, args: dict[str, Any], **kwargs: Any) -> str | dict[str, Any]:
        """Run tool ``name`` with ``args``; always returns a str or multimodal dict.

        Dispatch hooks, when a pack installed some, run around every call, however
        the method was obtained (a host may keep ``registry.dispatch`` from
        before plugins loaded).
        """
        if self._dispatch_hooks is not None:
            return self._hooked_dispatch(name, args, kwargs)
        plan = self._plans.get(name) or self._plan(name)
        if plan is None:
            return tool_error(f"Unknown tool: {name}")
        if not plan.direct or args.__class__ is not dict:
            return _dispatch_checked(plan, args, kwargs)
        entry = plan.entry
        try:
            result = entry.handler(args, **kwargs) if kwargs else entry.handler(args)
        except (Exception, SystemExit) as exc:
            return _failed(name, exc)
        if result.__class__ is str:
            limit = entry.max_result_size_chars
            if limit is None or len(result) <= limit:
                return result
            return truncate(result, limit)
        return _off_contract(entry, result)

    async def adispatch(
        self, name: str, args: dict[str, Any], **kwargs: Any
    ) -> str | dict[str, Any]:
        """The async twin of ``dispatch``: sync handlers run in a worker thread."""
        if self._dispatch_hooks is not None:
            return await self._hooked_adispatch(name, args, kwargs)
        return await self._adispatch(name, args, kwargs)

    async def _adispatch(
        self, name: str, args: dict[str, Any], kwargs: dict[str, Any]
    ) -> str | dict[str, Any]:
        plan = self._plans.get(name) or self._plan(name)
        if plan is None:
            return tool_error(f"Unknown tool: {name}")
        entry = plan.entry
        args, problem = _checked(plan, args)
        if problem is not None:
            return problem
        try:
            if plan.timeout is not None:
                result = await await_with_deadline(entry, args, kwargs, plan.timeout)
            elif entry.is_async:
                result = await entry.handler(args, **kwargs)
            else:
                import asyncio  # deferred: hosts that never go async never pay for it

                result = await asyncio.to_thread(entry.handler, args, **kwargs)
            if inspect.iscoroutine(result):
                result = await result
        except DeadlineExceeded:
            return _timed_out(entry, plan.timeout)
        except (Exception, SystemExit) as exc:
            return _failed(name, exc)
        if result.__class__ is str:
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
            return tool_error(f"Unknown tool: {name}")
        return _dispatch_checked(plan, args, kwargs)

    def _hooked_dispatch(
        self, name: str, args: dict[str, Any], kwargs: dict[str, Any]
    ) -> str | dict[str, Any]:
        hooks = self._dispatch_hooks
        if hooks is None:
            return self._dispatch(name, args, kwargs)
        # Hooks read the arguments as the handler will: never as a JSON string.
        args, problem = _parsed(name, args)
        if problem is not None:
            return problem
        blocked = hooks.before(name, args)
        if blocked is not None:
            return tool_error(blocked, error_type="blocked", tool=name)
        result = self._dispatch(name, args, kwargs)
        return hooks.after(name, args, result)

    async def _hooked_adispatch(
        self, name: str, args: dict[str, Any], kwargs: dict[str, Any]
    ) -> str | dict[str, Any]:
        hooks = self._dispatch_hooks
        if hooks is None:
            return await self._adispatch(name, args, kwargs)
        args, problem = _parsed(name, args)
        if problem is not None:
            return problem
        # Hooks are synchronous and may block: keep them off the event loop.
        import asyncio

        blocked = await asyncio.to_thread(hooks.before, name, args)
        if blocked is not None:
            return tool_error(blocked, error_type="blocked", tool=name)
        result = await self._adispatch(name, args, kwargs)
        return await asyncio.to_thread(hooks.after, name, args, result)
