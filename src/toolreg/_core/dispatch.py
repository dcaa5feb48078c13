"""Dispatch: run a tool call and hold the result to the contract.

``dispatch`` never raises and never exits. Unknown tools, handler exceptions
(``SystemExit`` included), results of the wrong type, and anything else that
goes wrong come back as ``tool_error`` JSON, so one bad tool cannot take down
the agent loop. The one exception that passes is a ``KeyboardInterrupt`` on the
caller's own thread: that is how Ctrl-C reaches the host.

The hot path (a sync handler, no deadline, a short str back) reads one tuple
per tool, worked out on its first call: the handler, the length limit and
the acceptor. Without validation any dict goes straight to the handler; with
a simple schema, arguments the acceptor says yes to. Everything else (JSON
text, a refusal, a deadline, async) takes the checked path, where the full
validator gives the verdict and the message.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Mapping
from types import CoroutineType
from typing import Any, Protocol

from .._contract.entry import DEFAULT_OPTIONS, ToolEntry
from .._contract.results import type_name
from .._contract.simple_schemas import Acceptor
from .._contract.validation import (
    ArgumentCheck,
    compile_checker,
    invalid_arguments,
    parse_json_args,
)
from .async_bridge import run_coroutine
from .call_outcomes import (
    blocked,
    call_failed,
    cap,
    failed,
    hook_result,
    internal,
    off_contract,
    unknown,
)
from .callers import Callers
from .table import ToolTable
from .timeouts import await_with_deadline, call_with_deadline
from .workers import WorkerInterrupt, contained

logger = logging.getLogger("toolreg.dispatch")


def _parsed(name: str, args: Any) -> tuple[Any, str | None]:
    """Arguments as an object: JSON strings parsed, null as ``{}``, other mappings
    copied to a dict (what validation and handlers take); or a tool_error."""
    if isinstance(args, str):
        return parse_json_args(name, str.__str__(args))
    if args is None:
        args = {}  # "no arguments" arrives as null from some providers
    elif not isinstance(args, dict) and isinstance(args, Mapping):
        args = dict(args)
    return args, None


def _checked(plan: _Plan, args: Any) -> tuple[Any, str | None]:
    """Parse JSON-string arguments and validate them: (args, None) or (args, tool_error)."""
    name = plan.entry.name
    args, problem = _parsed(name, args)
    if problem is not None:
        return args, problem
    if plan.check is not None:
        if plan.accepts is not None and plan.accepts(args):
            return args, None
        problem = plan.check(args)
        if problem is not None:
            return args, problem
    elif plan.validates and not isinstance(args, dict):
        return args, invalid_arguments(
            name, f"the arguments must be a JSON object, not {type_name(args)}"
        )
    return args, None


class DispatchHooks(Protocol):
    """What the plugin layer plugs into dispatch (see ``toolreg.hookspecs``)."""

    def before(self, name: str, args: dict[str, Any]) -> str | None:
        """A block message, or None to let the call through."""

    def after(self, name: str, args: dict[str, Any], result: Any) -> str | dict[str, Any]:
        """The result to return, after observers and transforms have run."""


class _Plan:
    """What dispatch needs for one entry, worked out once: the checks, the deadline."""

    __slots__ = ("entry", "check", "accepts", "validates", "timeout")

    def __init__(
        self,
        entry: ToolEntry,
        checking: ArgumentCheck | None,
        validates: bool,
        timeout: float | None,
    ) -> None:
        self.entry = entry
        self.check = checking.check if checking is not None else None
        self.accepts = checking.accepts if checking is not None else None
        self.validates = validates
        self.timeout = timeout

    def hot(self) -> _Hot:
        """What ``dispatch`` unpacks on every call; see ``_Hot``."""
        entry = self.entry
        if self.timeout is not None or entry.is_async:
            accepts: Acceptor | None = _never
        elif self.check is None:
            accepts = None
        else:
            accepts = self.accepts or _never
        return (entry.handler, entry.max_result_size_chars, accepts, self)


#: (handler, max_result_size_chars, accepts, plan), a plain tuple because
#: unpacking one is the cheapest read. ``accepts`` None: any dict goes straight
#: to the handler; else only arguments it says True to, and everything else
#: takes the checked path with ``plan``.
_Hot = tuple[Callable[..., Any], "int | None", "Acceptor | None", _Plan]


def _never(args: Any) -> bool:
    """The acceptor of plans that always take the checked path (a deadline, async, no acceptor)."""
    return False


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
        return call_failed(plan.entry, plan.timeout, exc)
    return _finished(entry, result)


def _finished(entry: ToolEntry, result: Any) -> str | dict[str, Any]:
    """A result the fast path did not return as it is: cut to length, or held to the contract."""
    if type(result) is str:
        return cap(entry, result)
    return off_contract(entry, result)


class Dispatcher:
    """``dispatch`` and ``adispatch`` over a table, with a plan cached per tool."""

    def __init__(self, table: ToolTable, callers: Callers) -> None:
        self._table = table
        self._callers = callers
        self._dispatch_hooks: DispatchHooks | None = None
        self._plans: dict[str, _Hot] = {}
        self._validation = True
        #: ``dispatch(name, args, /, **kwargs)``: see ``_hot_dispatch``.
        self.dispatch = self._hot_dispatch()

    # -- plans ----------------------------------------------------------------

    def _plan(self, name: str) -> _Hot | None:
        entry = self._table.live.get(name)
        if entry is None:
            return None
        options = self._table.get_options(name) or DEFAULT_OPTIONS
        validates = options.validate and self._validation
        checking = compile_checker(entry) if validates else None
        hot = _Plan(entry, checking, validates, options.timeout).hot()
        self._plans[name] = hot
        # A write that swapped the entry while we compiled already dropped the
        # old plan; drop ours too if it is stale, so it is never served.
        if self._table.live.get(name) is not entry:
            self._plans.pop(name, None)
        return hot

    def _plan_of(self, name: str) -> _Plan | None:
        """The plan of tool ``name`` for the checked and async paths; None if unknown."""
        hot = self._plans.get(name) or self._plan(name)
        return None if hot is None else hot[3]

    def forget(self, names: Iterable[str]) -> None:
        """Drop the plans of tools a write changed (the table's change listener calls this)."""
        for name in names:
            self._plans.pop(name, None)

    def set_validation(self, enabled: bool) -> None:
        """Turn argument validation on or off for every tool (operator switch). Host only."""
        self._callers.require_host("turn argument validation " + ("on" if enabled else "off"))
        self._validation = bool(enabled)
        self._plans.clear()

    @property
    def validation_enabled(self) -> bool:
        return self._validation

    # -- dispatch -------------------------------------------------------------

    def _hot_dispatch(self) -> Callable[..., str | dict[str, Any]]:
        """``dispatch``, built as a plain function over this dispatcher's plans.

        A plain function stored on the instance (and on the registry) is called
        without making a bound method on every call, and reads the plans as a
        closure variable rather than an attribute; ``self._plans`` is only
        ever cleared, never rebound, so it stays the dict read here.
        """
        plans = self._plans

        def dispatch(
            name: str, args: Mapping[str, Any] | str, /, **kwargs: Any
        ) -> str | dict[str, Any]:
            """Run tool ``name`` with ``args``; always returns a str or multimodal dict.

            Dispatch hooks, when a pack installed some, run around every call,
            however the function was obtained (a host may keep
            ``registry.dispatch`` from before plugins loaded).
            """
            try:
                if self._dispatch_hooks is not None:
                    return self._hooked_dispatch(name, args, kwargs)
                # The hot path: every read is a local, every check a type or a None.
                try:
                    handler, limit, accepts, plan = plans[name]
                except KeyError:
                    return self._dispatch(name, args, kwargs)
                if (type(args) is not dict) if accepts is None else not accepts(args):
                    return _dispatch_checked(plan, args, kwargs)
                try:
                    result = handler(args, **kwargs) if kwargs else handler(args)
                except KeyboardInterrupt:
                    raise  # Ctrl-C, on the caller's own thread
                except BaseException as exc:
                    return failed(name, exc)
                if type(result) is str and (limit is None or len(result) <= limit):
                    return result
                return _finished(plan.entry, result)
            except KeyboardInterrupt:
                raise
            except BaseException as exc:
                return internal(name, exc)

        return dispatch

    async def adispatch(
        self, name: str, args: Mapping[str, Any] | str, /, **kwargs: Any
    ) -> str | dict[str, Any]:
        """The async twin of ``dispatch``: sync handlers run in a worker thread."""
        try:
            if self._dispatch_hooks is not None:
                return await self._hooked_adispatch(name, args, kwargs)
            return await self._adispatch(name, args, kwargs)
        except BaseException as exc:
            if _cancelled_from_outside(exc):
                raise
            return internal(name, exc)

    async def _adispatch(
        self, name: str, args: Any, kwargs: dict[str, Any]
    ) -> str | dict[str, Any]:
        plan = self._plan_of(name)
        if plan is None:
            return unknown(name)
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
            return call_failed(plan.entry, plan.timeout, exc)
        if type(result) is str:
            return cap(entry, result)
        return off_contract(entry, result)

    def set_dispatch_hooks(self, hooks: DispatchHooks | None) -> None:
        """Install (or with None, remove) the hooks around every dispatch. Host only."""
        self._callers.require_host("change the dispatch hooks")
        self._dispatch_hooks = hooks

    def _dispatch(
        self, name: str, args: dict[str, Any], kwargs: dict[str, Any]
    ) -> str | dict[str, Any]:
        """``dispatch`` without the hooks: the general path, which covers the fast one."""
        plan = self._plan_of(name)
        if plan is None:
            return unknown(name)
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
            refusal = hooks.before(name, args)
            if refusal is not None:
                return blocked(name, refusal)
            result = self._dispatch(name, args, kwargs)
            after = hooks.after(name, args, result)
            return after if type(after) is str else hook_result(name, after)
        except KeyboardInterrupt:
            raise
        except BaseException as exc:
            return internal(name, exc)

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

            refusal = await asyncio.to_thread(contained, hooks.before, name, args)
            if refusal is not None:
                return blocked(name, refusal)
            result = await self._adispatch(name, args, kwargs)
            after = await asyncio.to_thread(contained, hooks.after, name, args, result)
            return after if type(after) is str else hook_result(name, after)
        except BaseException as exc:
            if _cancelled_from_outside(exc):
                raise
            return internal(name, exc)


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
