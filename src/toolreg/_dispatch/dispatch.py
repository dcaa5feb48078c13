"""Dispatch: run a tool call and hold the result to the contract.

``dispatch`` never raises and never exits: unknown tools, handler exceptions
(``SystemExit`` included) and wrong results come back as ``tool_error`` JSON. Only a
``KeyboardInterrupt`` on the caller's own thread passes: that is how Ctrl-C reaches the host.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from types import CoroutineType
from typing import TYPE_CHECKING, Any

from .._contract.entry import DEFAULT_OPTIONS
from .._contract.tool_context import ProgressCallback, call_scope, stamp_call_records
from .._core.callers import Callers, made_by
from .._core.decisions import DecisionLog
from .._core.table import ToolTable
from .._schemas.validation import compile_checker
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
from .dispatch_plan import (
    DispatchHooks,
    Hot,
    Plan,
    awaited,
    cancelled_from_outside,
    checked,
    dispatch_checked,
    hot_path,
    quick_checker,
    run_checked,
)
from .timeouts import await_with_deadline
from .workers import contained

if TYPE_CHECKING:
    from .._core.permissions import Permissions
    from .permission_check import Approver, CallJudge
    from .tracing import Tracing

logger = logging.getLogger("toolreg.dispatch")


class Dispatcher:
    """``dispatch`` and ``adispatch`` over a table, with a plan cached per tool."""

    def __init__(self, table: ToolTable, callers: Callers, log: DecisionLog | None = None) -> None:
        stamp_call_records()
        self._table = table
        self._callers = callers
        self._log = log if log is not None else DecisionLog()
        self._dispatch_hooks: DispatchHooks | None = None
        self._tracing: Tracing | None = None
        #: The operator's permissions, with their tally; None: every call runs.
        self._judge: CallJudge | None = None
        #: What answers an ``ask`` when the call passes no ``approve=``.
        self._approver: Approver | None = None
        #: Hooks, tracing or permissions are on: then every call takes the guarded
        #: path (validation, permissions, hooks, handler).
        self._wrapped = False
        self._plans: dict[str, Plan] = {}
        #: The tools whose plain calls take the hot path (no keyword arguments, no
        #: deadline, a sync handler), filled unwrapped; under permissions alone,
        #: each entry is the tool's guarded call instead (``_guard_hot``). Every
        #: write that could change an answer drops the entries it touches before
        #: it returns.
        self.hot: dict[str, Hot] = {}
        self._validation = True

    # -- plans ----------------------------------------------------------------

    def _plan(self, name: str) -> Plan | None:
        entry = self._table.live.get(name)
        if entry is None:
            return None
        options = self._table.get_options(name) or DEFAULT_OPTIONS
        validates = options.validate and self._validation
        argument_check = compile_checker(entry) if validates else None
        handler = made_by(self._table.maker_of(name), entry.handler)
        plan = Plan(entry, handler, quick_checker(argument_check), validates, options.timeout)
        judge = self._judge
        plan.pack = self._table.get_owner(name) or ""
        if judge is not None:
            plan.permit = judge.permit_for(plan, plan.pack)
            plan.judge = judge
        self._plans[name] = plan
        if plan.timeout is None and not entry.is_async and not self._wrapped:
            hot = hot_path(plan, argument_check)
            if hot is not None:
                self.hot[name] = hot
        # A write that swapped the entry, or wrapped dispatch or changed the rules
        # while we compiled, already dropped what it made stale; drop ours too, so
        # it is never served.
        if self._table.live.get(name) is not entry or self._judge is not judge:
            self._plans.pop(name, None)
            self.hot.pop(name, None)
        if self._wrapped:
            self.hot.pop(name, None)
            if self._judge is not None and self._dispatch_hooks is None and self._tracing is None:
                self._guard_hot(name, judge, plan)
        return plan

    def _guard_hot(self, name: str, judge: CallJudge | None, plan: Plan) -> None:
        """Under permissions alone, a tool's hot entry is its guarded call: ``dispatch``
        finds it without a failed lookup, and it checks every call (as every route does)."""

        def guarded(args: Any) -> str | dict[str, Any]:
            if self._tracing is None:
                return self._guarded_dispatch(name, args, {}, None)
            return self._wrapped_dispatch(name, args, None, {})

        if self._plans.get(name) is not plan:
            return  # dropped as stale: not served
        self.hot[name] = (guarded, guarded, None, plan)
        # Hooks, tracing or other rules installed meanwhile dropped the hot entries
        # first; ours must go too. (``guarded`` reads them live, so it would still
        # run them; it is dropped so the hot table says what is hot.)
        if self._judge is not judge or self._dispatch_hooks is not None or self._tracing:
            self.hot.pop(name, None)

    def _drop_plans(self) -> None:
        self.hot.clear()
        self._plans.clear()

    def forget(self, names: Iterable[str]) -> None:
        """Drop the plans of tools a write changed (the table's change listener calls this)."""
        for name in names:
            self.hot.pop(name, None)
            self._plans.pop(name, None)

    def set_validation(self, enabled: bool) -> None:
        """Turn argument validation on or off for every tool (operator switch). Host only."""
        self._callers.require_host("turn argument validation " + ("on" if enabled else "off"))
        self._validation = bool(enabled)
        self._drop_plans()

    @property
    def validation_enabled(self) -> bool:
        return self._validation

    # -- dispatch -------------------------------------------------------------

    def dispatch(
        self, name: str, args: Mapping[str, Any] | str, /, **kwargs: Any
    ) -> str | dict[str, Any]:
        """Run tool ``name`` with ``args``; always returns a str or multimodal dict.

        ``progress=callback`` hears what the tool reports through its
        ``ToolContext``; other keyword arguments go to the handler. Dispatch hooks,
        when a pack installed some, run around every call, however the method was
        obtained (a host may keep ``registry.dispatch`` from before plugins loaded).
        """
        try:
            # ``progress`` is read from ``kwargs``, not a keyword-only parameter,
            # so a plain call pays no lookup for it.
            if kwargs:
                return self._dispatch_with(name, args, kwargs)
            try:  # a subscript, not .get(): no method call on the hot path
                fast, handler, limit, plan = self.hot[name]
            except KeyError:
                return self._dispatch_cold(name, args)
            if fast is not None:
                return fast(args)
            if type(args) is not dict:
                return dispatch_checked(plan, args, {})
            try:
                result = handler(args)
            except KeyboardInterrupt:
                raise  # Ctrl-C, on the caller's own thread
            except BaseException as exc:
                return failed(name, exc)
            if type(result) is str and (limit is None or len(result) <= limit):
                return result
            return off_contract(plan.entry, result)
        except KeyboardInterrupt:
            raise
        except BaseException as exc:
            return internal(name, exc)

    def _dispatch_cold(self, name: str, args: Any) -> str | dict[str, Any]:
        """A plain call of a tool that is not hot: wrapped, unknown, not planned yet, or slow."""
        if self._wrapped:
            if self._tracing is None:  # a frame less for the usual wrapped call
                return self._guarded_dispatch(name, args, {}, None)
            return self._wrapped_dispatch(name, args, None, {})
        plan = self._plans.get(name) or self._plan(name)
        if plan is None:
            return unknown(name, self._table.tools)
        if plan.fast is not None:
            return plan.fast(args)
        return dispatch_checked(plan, args, {})

    def _dispatch_with(self, name: str, args: Any, kwargs: dict[str, Any]) -> str | dict[str, Any]:
        """A call with keyword arguments: ``progress``, or the handler's own."""
        progress: ProgressCallback | None = kwargs.pop("progress", None)
        if progress is not None:
            return self._dispatch_listened(name, args, progress, kwargs)
        # Taken out here, like ``progress``: never a handler's keyword argument.
        approve = kwargs.pop("approve", None)
        if self._wrapped:
            return self._wrapped_dispatch(name, args, None, kwargs, approve)
        return self._dispatch(name, args, kwargs)

    def _dispatch_listened(
        self, name: str, args: Any, progress: ProgressCallback, kwargs: dict[str, Any]
    ) -> str | dict[str, Any]:
        # The scope is bound around the whole call (hooks too) and reaches the
        # handler's thread, a deadline's worker and an async handler's task.
        with call_scope(name, progress):
            return self.dispatch(name, args, **kwargs)

    def dispatch_call(
        self,
        name: str,
        args: Any,
        call_id: str | None,
        progress: ProgressCallback | None = None,
    ) -> str | dict[str, Any]:
        """``dispatch`` of one call of a batch; ``call_id`` names it in traces and logs."""
        if progress is not None:
            with call_scope(name, progress, call_id):
                return self.dispatch_call(name, args, call_id)
        if self._tracing is None:
            return self.dispatch(name, args)
        try:
            return self._wrapped_dispatch(name, args, call_id, {})
        except KeyboardInterrupt:
            raise
        except BaseException as exc:
            return internal(name, exc)

    async def adispatch_call(
        self,
        name: str,
        args: Any,
        call_id: str | None,
        progress: ProgressCallback | None = None,
    ) -> str | dict[str, Any]:
        """``adispatch`` of one call of a batch; ``call_id`` names it in traces and logs."""
        return await self._adispatch_bound(name, args, call_id, progress, {})

    def _wrapped_dispatch(
        self,
        name: Any,
        args: Any,
        call_id: str | None,
        kwargs: dict[str, Any],
        approve: Approver | None = None,
    ) -> str | dict[str, Any]:
        tracing = self._tracing
        if tracing is None:
            return self._guarded_dispatch(name, args, kwargs, approve)
        return tracing.run(
            name, call_id, lambda: self._guarded_dispatch(name, args, kwargs, approve)
        )

    async def _wrapped_adispatch(
        self,
        name: Any,
        args: Any,
        call_id: str | None,
        kwargs: dict[str, Any],
        approve: Approver | None,
    ) -> str | dict[str, Any]:
        tracing = self._tracing
        if tracing is None:
            return await self._guarded_adispatch(name, args, kwargs, approve)
        return await tracing.arun(
            name, call_id, lambda: self._guarded_adispatch(name, args, kwargs, approve)
        )

    @property
    def traced(self) -> bool:
        return self._tracing is not None

    def enable_tracing(self, *, tracer_provider: Any = None, meter_provider: Any = None) -> None:
        from .tracing import Tracing  # imported on use: it imports opentelemetry

        self.set_tracing(Tracing(tracer_provider, meter_provider))

    def disable_tracing(self) -> None:
        self.set_tracing(None)

    def set_tracing(self, tracing: Tracing | None) -> None:
        """Report every dispatch to ``tracing`` (None: stop). Host only.

        A ``tracing`` that is not live (no OpenTelemetry SDK configured) is not
        installed: dispatch stays as fast as without it.
        """
        self._callers.require_host("change tracing")
        if tracing is not None and not tracing.live:
            logger.warning(
                "enable_tracing: no OpenTelemetry SDK is configured, so tool calls are not "
                "traced; call it after setting the tracer and meter providers, or pass them"
            )
            tracing = None
        self._tracing = tracing
        self._rewrap()

    async def adispatch(
        self,
        name: str,
        args: Mapping[str, Any] | str,
        /,
        *,
        progress: ProgressCallback | None = None,
        approve: Approver | None = None,
        **kwargs: Any,
    ) -> str | dict[str, Any]:
        """The async twin of ``dispatch``: sync handlers run in a worker thread."""
        return await self._adispatch_bound(name, args, None, progress, kwargs, approve)

    async def _adispatch_bound(
        self,
        name: str,
        args: Any,
        call_id: str | None,
        progress: ProgressCallback | None,
        kwargs: dict[str, Any],
        approve: Approver | None = None,
    ) -> str | dict[str, Any]:
        # Every async call binds its scope: calls sharing one loop each run in a
        # task of their own, and the scope is what tells their contexts apart.
        try:
            with call_scope(name, progress, call_id):
                if self._wrapped:
                    return await self._wrapped_adispatch(name, args, call_id, kwargs, approve)
                return await self._adispatch(name, args, kwargs)
        except BaseException as exc:
            if cancelled_from_outside(exc):
                raise
            return internal(name, exc)

    async def _adispatch(
        self, name: str, args: Any, kwargs: dict[str, Any]
    ) -> str | dict[str, Any]:
        plan = self._plans.get(name) or self._plan(name)
        if plan is None:
            return unknown(name, self._table.tools)
        args, problem = checked(plan, args)
        if problem is not None:
            return problem
        return await self._arun(plan, args, kwargs)

    async def _arun(self, plan: Plan, args: Any, kwargs: dict[str, Any]) -> str | dict[str, Any]:
        """Run the handler on checked arguments, off the loop if it is sync."""
        entry = plan.entry
        try:
            if plan.timeout is not None:
                result = await await_with_deadline(
                    plan.handler, entry.is_async, args, kwargs, plan.timeout
                )
            elif entry.is_async:
                result = await awaited(plan.handler(args, **kwargs))
            else:
                import asyncio  # deferred: hosts that never go async never pay for it

                result = await asyncio.to_thread(contained, plan.handler, args, **kwargs)
            if type(result) is CoroutineType:
                result = await awaited(result)
        except BaseException as exc:
            if cancelled_from_outside(exc):
                raise
            return call_failed(plan.entry, plan.timeout, exc)
        if type(result) is str:
            return cap(entry, result)
        return off_contract(entry, result)

    def set_dispatch_hooks(self, hooks: DispatchHooks | None) -> None:
        """Install (or with None, remove) the hooks around every dispatch. Host only."""
        self._callers.require_host("change the dispatch hooks")
        self._dispatch_hooks = hooks
        self._rewrap()

    def _rewrap(self) -> None:
        self._wrapped = (
            self._dispatch_hooks is not None or self._tracing is not None or self._judge is not None
        )
        self._drop_plans()  # after _wrapped is set: a plan built meanwhile sees it

    # -- permissions ------------------------------------------------------------

    def set_permissions(self, permissions: Permissions | None) -> None:
        """Install the operator's rules (None: none, every call runs). Host only.

        The tally per rule starts again.
        """
        self._callers.require_host("change the operator's permissions")
        if permissions is None:
            self._judge = None
        else:
            from .permission_check import CallJudge

            self._judge = CallJudge(permissions, self._log, self._callers)
        self._rewrap()

    @property
    def permissions(self) -> Permissions | None:
        judge = self._judge
        return judge.permissions if judge is not None else None

    def set_approver(self, approver: Approver | None) -> None:
        """What answers an ``ask`` (None: nothing, so asks are denied). Host only."""
        self._callers.require_host("set the approver")
        if approver is not None and not callable(approver):
            raise TypeError(f"the approver must be callable, got {type(approver).__name__}")
        self._approver = approver

    def permission_counts(self) -> list[dict[str, Any]]:
        """Per rule, then the default: the calls it allowed, denied and asked about."""
        judge = self._judge
        return judge.counts() if judge is not None else []

    # -- the guarded path ---------------------------------------------------------

    def _dispatch(
        self, name: str, args: dict[str, Any], kwargs: dict[str, Any]
    ) -> str | dict[str, Any]:
        """``dispatch`` without the hooks: the general path, which covers the fast one."""
        plan = self._plans.get(name) or self._plan(name)
        if plan is None:
            return unknown(name, self._table.tools)
        return dispatch_checked(plan, args, kwargs)

    def _guarded_dispatch(
        self, name: str, args: Any, kwargs: dict[str, Any], approve: Approver | None
    ) -> str | dict[str, Any]:
        """Validate, then the operator's permissions, then the hooks, then the handler."""
        try:
            if type(name) is not str:
                return self._dispatch(name, args, kwargs)
            plan = self._plans.get(name) or self._plan(name)
            if plan is None:
                return unknown(name, self._table.tools)
            # Permissions and hooks read the arguments as the handler will: parsed
            # from JSON, and valid.
            if type(args) is dict:  # ``checked``'s answer for a dict, without its call
                problem = plan.check(args) if plan.check is not None else None
            else:
                args, problem = checked(plan, args)
            if problem is not None:
                return problem
            judge = self._judge
            if judge is not None:
                refusal = judge.check(plan, args, approve, self._approver)
                if refusal is not None:
                    return refusal
            hooks = self._dispatch_hooks
            if hooks is None:
                return run_checked(plan, args, kwargs)
            refusal = hooks.before(name, args)
            if refusal is not None:
                return blocked(name, refusal)
            result = run_checked(plan, args, kwargs)
            after = hooks.after(name, args, result)
            return after if type(after) is str else hook_result(name, after)
        except KeyboardInterrupt:
            raise
        except BaseException as exc:
            return internal(name, exc)

    async def _guarded_adispatch(
        self, name: str, args: Any, kwargs: dict[str, Any], approve: Approver | None
    ) -> str | dict[str, Any]:
        if type(name) is not str:
            return await self._adispatch(name, args, kwargs)
        try:
            plan = self._plans.get(name) or self._plan(name)
            if plan is None:
                return unknown(name, self._table.tools)
            args, problem = checked(plan, args)
            if problem is not None:
                return problem
            judge = self._judge
            if judge is not None:
                refusal = await judge.acheck(plan, args, approve, self._approver)
                if refusal is not None:
                    return refusal
            hooks = self._dispatch_hooks
            if hooks is None:
                return await self._arun(plan, args, kwargs)
            # Hooks are synchronous and may block: keep them off the event loop.
            import asyncio

            refusal = await asyncio.to_thread(contained, hooks.before, name, args)
            if refusal is not None:
                return blocked(name, refusal)
            result = await self._arun(plan, args, kwargs)
            after = await asyncio.to_thread(contained, hooks.after, name, args, result)
            return after if type(after) is str else hook_result(name, after)
        except BaseException as exc:
            if cancelled_from_outside(exc):
                raise
            return internal(name, exc)
