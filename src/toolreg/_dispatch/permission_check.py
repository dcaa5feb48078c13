"""The operator's permissions at call time: judge a validated call, ask an approver, record it.

Dispatch runs :meth:`CallJudge.check` (or ``acheck``) for every call of a tool while
permissions are installed, after argument validation and before the dispatch hooks.
None lets the call through; a str is the tool_error the model reads instead.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from .._contract.results import clip, describe_exception, printable, tool_error
from .async_bridge import run_coroutine

if TYPE_CHECKING:
    from .._core.callers import Callers
    from .._core.decisions import DecisionLog
    from .._core.permissions import Permissions, Rule, ToolPermit
    from .dispatch_plan import Plan

logger = logging.getLogger("toolreg.permissions")

#: What an approver returns: ``"allow"``, ``"deny"`` or ``("deny", reason)``.
Answer = str | tuple[str, str]
#: ``approver(name, arguments, rule)``, sync or async; ``rule`` is the rule as the
#: operator wrote it, or None when the default asked.
Approver = Callable[[str, dict[str, Any], str | None], Answer | Awaitable[Answer]]

HOW_TO_APPROVE = (
    "the host answers asks with registry.set_approver(fn), or per call with "
    "dispatch(..., approve=fn)"
)


def _named(rule: Rule | None, verdict: str) -> str:
    return (
        f"the operator's rule {rule.text!r}"
        if rule is not None
        else (f'the operator\'s default ("{verdict}")')
    )


def denied(name: str, rule: Rule | None) -> str:
    return tool_error(
        f"denied by {_named(rule, 'deny')}",
        error_type="denied",
        code="denied",
        tool=name,
        rule=None if rule is None else rule.text,
    )


def approver_denied(name: str, rule: Rule | None, reason: str) -> str:
    return tool_error(
        clip(f"denied by the approver ({_named(rule, 'ask')} asks for approval): {reason}"),
        error_type="denied",
        code="denied",
        tool=name,
        rule=None if rule is None else rule.text,
    )


def approval_required(name: str, rule: Rule | None) -> str:
    return tool_error(
        f"tool {name} needs approval ({_named(rule, 'ask')} asks) and no approver is set: "
        + HOW_TO_APPROVE,
        error_type="approval_required",
        code="approval_required",
        tool=name,
        rule=None if rule is None else rule.text,
    )


def read_answer(answer: Any) -> tuple[bool, str]:
    """(allowed, reason) from an approver's answer: only ``"allow"`` allows."""
    if type(answer) is str and answer in ("allow", "deny"):
        return answer == "allow", "" if answer == "allow" else "the approver said deny"
    if (
        type(answer) is tuple
        and len(answer) == 2
        and answer[0] == "deny"
        and type(answer[1]) is str
    ):
        return False, answer[1] or "the approver said deny"
    return False, f"the approver's answer {printable(answer)} is not 'allow' (counted as deny)"


def _arguments_for(args: Any) -> Any:
    """A copy for the approver: what it changes is not what the handler gets."""
    import copy

    try:
        return copy.deepcopy(args)
    except Exception:
        return dict(args) if isinstance(args, dict) else args


class CallJudge:
    """Installed permissions, the tally per rule, and the decision log they write to."""

    def __init__(self, permissions: Permissions, log: DecisionLog, callers: Callers) -> None:
        self.permissions = permissions
        self._log = log
        self._callers = callers
        self._lock = threading.Lock()
        #: rule (None: the default) → [allowed, denied, asked]
        self._tally: dict[Rule | None, list[int]] = {}

    def permit_for(self, plan: Plan, owner: str | None) -> ToolPermit:
        entry = plan.entry
        return self.permissions.for_tool(entry.name, entry.toolset, owner)

    # -- records ---------------------------------------------------------------

    def _record(
        self, plan: Plan, owner: str, action: Any, rule: Rule | None, reason: str, allowed: bool
    ) -> None:
        with self._lock:
            counts = self._tally.get(rule)
            if counts is None:
                counts = self._tally[rule] = [0, 0, 0]
            counts[0 if allowed else 1] += 1
            if action == "asked":
                counts[2] += 1
        entry = plan.entry
        text = None if rule is None else rule.text
        self._log.record_call(action, entry.name, entry.toolset, owner, reason, text)

    def counts(self) -> list[dict[str, Any]]:
        """Per rule, in precedence order, then the default: how many calls it decided."""
        with self._lock:
            tally = {rule: list(counts) for rule, counts in self._tally.items()}
        rows = []
        for rule in [*self.permissions.all_rules(), None]:
            allowed, denied_, asked = tally.get(rule, (0, 0, 0))
            rows.append(
                {
                    "rule": None if rule is None else rule.text,
                    "where": "permissions.default" if rule is None else rule.where,
                    "verdict": self.permissions.default if rule is None else rule.level,
                    "allowed": allowed,
                    "denied": denied_,
                    "asked": asked,
                }
            )
        return rows

    # -- judging ----------------------------------------------------------------

    def check(self, plan: Plan, owner: str, args: Any, approve: Any, approver: Any) -> str | None:
        """None to let the call run, or the tool_error that replaces it (sync dispatch)."""
        verdict, rule = plan.permit.decide(args)  # type: ignore[union-attr]
        if verdict != "ask":
            return self._settled(plan, owner, verdict, rule)
        fn, refusal = self._approver_of(approve, approver)
        if fn is None:
            return self._unanswered(plan, owner, rule, refusal)
        try:
            answer = fn(plan.entry.name, _arguments_for(args), None if rule is None else rule.text)
            if _awaitable(answer):
                answer = run_coroutine(_await(answer))
        except KeyboardInterrupt:
            raise
        except BaseException as exc:
            answer = self._failed(plan, exc)
        return self._answered(plan, owner, rule, answer)

    async def acheck(
        self, plan: Plan, owner: str, args: Any, approve: Any, approver: Any
    ) -> str | None:
        """``check`` for async dispatch: an async approver is awaited, a sync one runs in a
        worker thread, off the event loop."""
        verdict, rule = plan.permit.decide(args)  # type: ignore[union-attr]
        if verdict != "ask":
            return self._settled(plan, owner, verdict, rule)
        fn, refusal = self._approver_of(approve, approver)
        if fn is None:
            return self._unanswered(plan, owner, rule, refusal)
        import asyncio
        import inspect

        arguments = _arguments_for(args)
        text = None if rule is None else rule.text
        try:
            if inspect.iscoroutinefunction(fn):
                answer = await fn(plan.entry.name, arguments, text)
            else:
                answer = await asyncio.to_thread(fn, plan.entry.name, arguments, text)
                if _awaitable(answer):
                    answer = await answer
        except BaseException as exc:
            if isinstance(exc, (KeyboardInterrupt, asyncio.CancelledError)):
                raise
            answer = self._failed(plan, exc)
        return self._answered(plan, owner, rule, answer)

    def _settled(self, plan: Plan, owner: str, verdict: str, rule: Rule | None) -> str | None:
        """A call a rule (or the default) allows or denies outright."""
        if verdict == "allow":
            self._record(plan, owner, "allowed", rule, f"by {_named(rule, 'allow')}", True)
            return None
        self._record(plan, owner, "denied", rule, f"by {_named(rule, 'deny')}", False)
        return denied(plan.entry.name, rule)

    def _approver_of(self, approve: Any, approver: Any) -> tuple[Any, str]:
        """The approver that answers this call (a per-call one first), or (None, why not)."""
        if approve is not None:
            if self._callers.current():
                # Pack code is on the stack: a pack must not answer the operator's asks.
                return None, "a per-call approver passed from a pack's code is not honoured"
            return approve, ""
        if approver is not None:
            return approver, ""
        return None, ""

    def _failed(self, plan: Plan, exc: BaseException) -> Answer:
        described = describe_exception(exc)
        logger.error("The approver failed on a call of %s: %s", plan.entry.name, described)
        return ("deny", f"the approver failed ({described})")

    def _unanswered(self, plan: Plan, owner: str, rule: Rule | None, refusal: str) -> str:
        name = plan.entry.name
        if refusal:
            self._record(plan, owner, "asked", rule, f"denied: {refusal}", False)
            return approver_denied(name, rule, refusal)
        self._record(plan, owner, "asked", rule, "denied: no approver (approval required)", False)
        return approval_required(name, rule)

    def _answered(self, plan: Plan, owner: str, rule: Rule | None, answer: Any) -> str | None:
        allowed, reason = read_answer(answer)
        if allowed:
            self._record(plan, owner, "asked", rule, "allowed by the approver", True)
            return None
        self._record(plan, owner, "asked", rule, f"denied by the approver: {reason}", False)
        return approver_denied(plan.entry.name, rule, reason)


def _awaitable(value: Any) -> bool:
    import inspect

    return inspect.isawaitable(value)


async def _await(value: Awaitable[Any]) -> Any:
    return await value
