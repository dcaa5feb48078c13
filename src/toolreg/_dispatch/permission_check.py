"""The operator's permissions at call time: judge a validated call, ask an approver, record it.

Dispatch runs :meth:`CallJudge.check` (or ``acheck``) for every call of a tool while
permissions are installed, after argument validation and before the dispatch hooks.
None lets the call through; a str is the tool_error the model reads instead.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from .._contract.results import clip, describe_exception, printable, tool_error
from .._core.permissions import DEFAULT_WHERE, read_only_rule
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
    """How a message names what decided: the rule as written, or the default."""
    if rule is None:
        return f'the operator\'s default ("{verdict}")'
    if rule.why:  # not written but derived: ask_unless_read_only, and why it asks
        return f"the operator's {rule.text} ({rule.why})"
    return f"the operator's rule {rule.text!r}"


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


#: The tally slots of a rule: calls it let through, calls it stopped, calls put to an approver.
ALLOWED, DENIED, ASKED = 0, 1, 2


class CallJudge:
    """Installed permissions, the tally per rule, and the decision log they write to.

    What a call records is worked out when the rules are installed (each rule's
    reasons, its tally), so a judged call costs a rule match and one log append.
    """

    def __init__(self, permissions: Permissions, log: DecisionLog, callers: Callers) -> None:
        self.permissions = permissions
        self._log = log
        self._callers = callers
        rules: list[Rule | None] = [*permissions.all_rules(), None]
        if permissions.ask_unless_read_only:  # its asks are tallied and named as one row
            rules.insert(-1, read_only_rule(""))
        #: where (``permissions.deny[0]``, ``permissions.default``) → [allowed, denied,
        #: asked]; every key made here, so a call only adds, under the log's lock.
        self._tally: dict[str, list[int]] = {_where(rule): [0, 0, 0] for rule in rules}
        #: where → (the rule's text, the reason an allowed call records, a denied
        #: one's, its tally); keyed by the rule's ``where``, a str whose hash is kept.
        self._records = {
            _where(rule): (
                None if rule is None else rule.text,
                f"by {_named(rule, 'allow')}",
                f"by {_named(rule, 'deny')}",
                self._tally[_where(rule)],
            )
            for rule in rules
        }
        self._rules = rules

    def permit_for(self, plan: Plan, owner: str | None) -> ToolPermit:
        return self.permissions.for_entry(plan.entry, owner)

    def _late_permit(self, plan: Plan) -> ToolPermit:
        """For a plan made before these rules were installed (a call racing
        ``set_permissions``): the permit worked out now, so the call is still judged."""
        return self.permit_for(plan, plan.pack)

    def _record(self, plan: Plan, action: Any, rule: Rule | None, reason: str, slot: int) -> None:
        entry = plan.entry
        text, _, _, tally = self._records[_where(rule)]
        self._log.record_call(
            action, entry.name, entry.toolset, plan.pack, reason, text, tally, slot
        )

    def counts(self) -> list[dict[str, Any]]:
        """Per rule, in precedence order, then the default: how many calls it decided."""
        rows = []
        for rule in self._rules:
            allowed, denied_, asked = self._tally[_where(rule)]
            rows.append(
                {
                    "rule": None if rule is None else rule.text,
                    "where": _where(rule),
                    "verdict": self.permissions.default if rule is None else rule.level,
                    "allowed": allowed,
                    "denied": denied_,
                    "asked": asked,
                }
            )
        return rows

    # -- judging ----------------------------------------------------------------

    def check(self, plan: Plan, args: Any, approve: Any, approver: Any) -> str | None:
        """None to let the call run, or the tool_error that replaces it (sync dispatch)."""
        permit = plan.permit if plan.judge is self else self._late_permit(plan)
        rule = permit.deciding_rule(args)  # type: ignore[union-attr]
        verdict = permit.default if rule is None else rule.level  # type: ignore[union-attr]
        if verdict != "ask":
            return self._settled(plan, rule, verdict)
        fn, refusal = self._approver_of(approve, approver)
        if fn is None:
            return self._unanswered(plan, rule, refusal)
        try:
            answer = fn(plan.entry.name, _arguments_for(args), None if rule is None else rule.text)
            if _awaitable(answer):
                answer = run_coroutine(_await(answer))
        except KeyboardInterrupt:
            raise
        except BaseException as exc:
            answer = self._failed(plan, exc)
        return self._answered(plan, rule, answer)

    async def acheck(self, plan: Plan, args: Any, approve: Any, approver: Any) -> str | None:
        """``check`` for async dispatch: an async approver is awaited, a sync one runs in a
        worker thread, off the event loop."""
        permit = plan.permit if plan.judge is self else self._late_permit(plan)
        rule = permit.deciding_rule(args)  # type: ignore[union-attr]
        verdict = permit.default if rule is None else rule.level  # type: ignore[union-attr]
        if verdict != "ask":
            return self._settled(plan, rule, verdict)
        fn, refusal = self._approver_of(approve, approver)
        if fn is None:
            return self._unanswered(plan, rule, refusal)
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
        return self._answered(plan, rule, answer)

    def _settled(self, plan: Plan, rule: Rule | None, verdict: str) -> str | None:
        """Record an allow or a deny (no approver asked); None lets the call run."""
        entry = plan.entry
        text, allowed, denied_, tally = self._records[DEFAULT_WHERE if rule is None else rule.where]
        if verdict == "allow":
            self._log.record_call(
                "allowed", entry.name, entry.toolset, plan.pack, allowed, text, tally, ALLOWED
            )
            return None
        self._log.record_call(
            "denied", entry.name, entry.toolset, plan.pack, denied_, text, tally, DENIED
        )
        return denied(entry.name, rule)

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

    def _unanswered(self, plan: Plan, rule: Rule | None, refusal: str) -> str:
        name = plan.entry.name
        if refusal:
            self._asked(plan, rule, f"denied: {refusal}", DENIED)
            return approver_denied(name, rule, refusal)
        self._asked(plan, rule, "denied: no approver (approval required)", DENIED)
        return approval_required(name, rule)

    def _answered(self, plan: Plan, rule: Rule | None, answer: Any) -> str | None:
        allowed, reason = read_answer(answer)
        if allowed:
            self._asked(plan, rule, "allowed by the approver", ALLOWED)
            return None
        self._asked(plan, rule, f"denied by the approver: {reason}", DENIED)
        return approver_denied(plan.entry.name, rule, reason)

    def _asked(self, plan: Plan, rule: Rule | None, reason: str, slot: int) -> None:
        if rule is not None and rule.why:
            reason = f"{reason} ({rule.text}: {rule.why})"
        self._record(plan, "asked", rule, reason, slot)
        self._log.add_to_tally(self._tally[_where(rule)], ASKED)


def _where(rule: Rule | None) -> str:
    return DEFAULT_WHERE if rule is None else rule.where


def _awaitable(value: Any) -> bool:
    import inspect

    return inspect.isawaitable(value)


async def _await(value: Awaitable[Any]) -> Any:
    return await value
