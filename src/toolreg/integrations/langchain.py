"""The registry's tools as LangChain ``StructuredTool``s (extra ``langchain``).

>>> from toolreg.integrations import langchain
>>> model = chat_model.bind_tools(langchain.tools(toolsets=["file"]))

Each tool takes the registered JSON Schema as its ``args_schema`` and calls
``registry.dispatch`` (``ainvoke``: ``registry.adispatch``), so validation,
hooks and policy apply. A multimodal result becomes LangChain's standard
content blocks (``text``, ``image``, ``audio``). A ``tool_error`` result is
raised as a ``ToolException`` and handled by LangChain (``handle_tool_error``):
the model gets the error JSON in a ``ToolMessage`` with ``status="error"``.

The operator's ``ask`` rules: inside a LangGraph run with a checkpointer
(a ``ToolNode``, an agent built on it), a call the rules would ask about pauses
the graph with LangGraph's ``interrupt``, its payload shaped as LangChain's
``HumanInTheLoopMiddleware`` shapes its own (``action_requests``,
``review_configs``) plus ``{"toolreg": {"tool": ..., "rule": ..., "call": ...}}``.
The graph is resumed with ``Command(resume=answer)``; the answer reaches
dispatch as that call's approver, so a ``deny`` rule still denies and the
decision log records the ask. Elsewhere an ask goes to the registry's approver
(``registry.set_approver``), and with none the model reads ``approval_required``.

LangChain has no deferred loading of its own: a model is bound to a fixed
list. ``tools(session=registry.session(always_loaded=[...]))`` gives the
session's tools now, the always-loaded ones, those its ``tool_search`` tool has
found, and ``tool_search``; a host re-reads it before each model call
(``model.bind_tools(langchain.tools(session=session))``), so a tool found in
one step can be called in the next.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable
from typing import Any, Literal

from .._contract.results import clip, printable
from ._registry_tools import (
    Dispatcher,
    ToolSpec,
    asks,
    available_tools,
    failure,
    missing_framework,
    result_parts,
    session_tools,
)

try:
    from langchain_core.tools import StructuredTool, ToolException
except ImportError as exc:
    raise missing_framework("langchain", "langchain-core", "langchain") from exc

from toolreg import ToolRegistry, ToolSession

__all__ = ["tools"]


def tools(
    registry: ToolRegistry | None = None,
    *,
    names: Iterable[str] | None = None,
    toolsets: Iterable[str] | None = None,
    session: ToolSession | None = None,
    approval: Literal["auto", "interrupt", "approver"] = "auto",
) -> list[StructuredTool]:
    """``StructuredTool``s for the available tools among ``names`` and ``toolsets``
    (all when both are None) of ``registry`` (default ``toolreg.registry``).

    ``session``: the tools a :class:`~toolreg.ToolSession` offers now instead
    (its always-loaded and found tools, then ``tool_search``, answered by the
    session); read it again before each model call. ``registry`` is then unused.

    ``approval``: who answers a call the operator's rules ask about.
    ``"auto"`` (the default): a LangGraph ``interrupt`` when the call runs in a
    LangGraph run that has a checkpointer, else the registry's approver.
    ``"interrupt"``: always the interrupt; a call outside such a run raises
    ``RuntimeError`` and does not run. ``"approver"``: always the registry's approver.
    """
    if approval not in ("auto", "interrupt", "approver"):
        raise ValueError(f'approval must be "auto", "interrupt" or "approver", got {approval!r}')
    if approval == "interrupt" and _langgraph() is None:
        raise ImportError("approval='interrupt' needs langgraph, which is not installed")
    if session is not None:
        # The session answers tool_search itself; the rules live on its registry.
        rules = session.registry
        return [
            _structured_tool(session, rules, spec, approval)
            for spec in session_tools(session, names, toolsets)
        ]
    registry, specs = available_tools(registry, names, toolsets)
    return [_structured_tool(registry, registry, spec, approval) for spec in specs]


def _structured_tool(
    registry: Dispatcher, rules: ToolRegistry, spec: ToolSpec, approval: str
) -> StructuredTool:
    def run(**arguments: Any) -> str | list[dict[str, Any]]:
        approve = _interrupted(rules, spec.name, arguments, approval)
        return _content(spec.name, registry.dispatch(spec.name, arguments, approve=approve))

    async def arun(**arguments: Any) -> str | list[dict[str, Any]]:
        approve = _interrupted(rules, spec.name, arguments, approval)
        return _content(spec.name, await registry.adispatch(spec.name, arguments, approve=approve))

    return StructuredTool(
        name=spec.name,
        description=spec.description,
        args_schema=spec.parameters,
        func=run,
        coroutine=arun,
        handle_tool_error=True,  # the ToolException's text, with status="error"
    )


def _content(name: str, result: str | dict[str, Any]) -> str | list[dict[str, Any]]:
    failed = failure(name, result)
    if failed is not None:
        raise ToolException(failed.result) from failed
    if isinstance(result, str):
        return result
    return [
        {"type": "text", "text": part.text}
        if part.kind == "text"
        else {"type": part.kind, "base64": part.data, "mime_type": part.mime}
        for part in result_parts(result)
    ]


# -- LangGraph's interrupt ---------------------------------------------------------------------

_Approve = Callable[[str, dict[str, Any], str | None], Any]


def _langgraph() -> Any:
    """``langgraph.types.interrupt``'s module, or None: langgraph is the host's choice."""
    try:
        import langgraph.types
    except ImportError:
        return None
    return langgraph.types


def _in_resumable_run() -> bool:
    """Whether this call runs in a LangGraph task whose graph has a checkpointer: only
    there can an interrupt be answered. ``tool.invoke`` alone sets a config too, but
    no LangGraph runtime."""
    try:
        from langgraph.config import get_config
        from langgraph.constants import CONFIG_KEY_CHECKPOINTER
        from langgraph.runtime import get_runtime
    except ImportError:
        return False
    try:
        configurable = get_config().get("configurable") or {}
        return get_runtime() is not None and configurable.get(CONFIG_KEY_CHECKPOINTER) is not None
    except (RuntimeError, KeyError):  # outside any runnable context
        return False


def _interrupted(
    rules: ToolRegistry, name: str, arguments: dict[str, Any], approval: str
) -> _Approve | None:
    """The per-call approver carrying the human's answer, when this call is one the
    rules ask about and LangGraph answers it; None leaves it to the registry's approver.

    The first time, ``interrupt`` raises ``GraphInterrupt`` and pauses the graph before
    dispatch, so nothing runs; when the graph is resumed the node runs again and
    ``interrupt`` returns the answer, which dispatch then reads as this call's approval.
    """
    if approval == "approver":
        return None
    rule = asks(rules, name, arguments)
    if rule is None:  # allowed or denied without asking: dispatch alone decides
        return None
    if not _in_resumable_run():
        if approval == "auto":
            return None
        raise RuntimeError(
            f"tool {name} needs approval and approval='interrupt', but the call does not "
            "run in a LangGraph run with a checkpointer, where an interrupt can be answered"
        )
    token = _call_token(name, arguments)
    answer = _langgraph().interrupt(_payload(name, arguments, rule, token))
    decision = _read_resume(answer, token)

    def approve(tool: str, args: dict[str, Any], asked: str | None) -> Any:
        return decision if tool == name else ("deny", f"answered for {name}, not {tool}")

    return approve


def _call_token(name: str, arguments: Any) -> str:
    """A short digest of the tool and its arguments: an answer carrying it (``"call"``)
    holds only for that call."""
    text = json.dumps([name, arguments], sort_keys=True, separators=(",", ":"), default=repr)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _payload(name: str, arguments: dict[str, Any], rule: str, token: str) -> dict[str, Any]:
    asker = (
        'the operator\'s default ("ask")'
        if rule == "(default)"
        else f"the operator's rule {rule!r}"
    )
    return {
        "action_requests": [
            {
                "name": name,
                "args": dict(arguments),
                "description": f"{asker} asks for approval of this call of {name}",
            }
        ],
        "review_configs": [{"action_name": name, "allowed_decisions": ["approve", "reject"]}],
        "toolreg": {"tool": name, "rule": rule, "call": token},
    }


_ALLOW = ("allow", "approve")
_DENY = ("deny", "reject")


def _read_resume(answer: Any, token: str) -> str | tuple[str, str]:
    """An approver's answer (``"allow"`` or ``("deny", reason)``) from a resume value.

    Allows: ``"allow"``, ``"approve"``, ``True``, ``{"decision": "allow"}``,
    ``{"type": "approve"}`` and ``{"decisions": [{"type": "approve"}]}`` (the
    ``HumanInTheLoopMiddleware`` answer). Denies, with the reason the model reads:
    ``"deny"``, ``"reject"``, ``False``, ``("deny", reason)``, ``{"decision": "deny",
    "reason": ...}``, ``{"type": "reject", "message": ...}``. A dict whose ``"call"``
    is not this call's token, an ``edit``, and anything else deny.
    """
    if isinstance(answer, dict) and isinstance(answer.get("decisions"), list):
        decisions = answer["decisions"]
        if len(decisions) != 1:
            return ("deny", f"{len(decisions)} decisions for one call (counted as deny)")
        answer = decisions[0]
    if answer is True or (type(answer) is str and answer in _ALLOW):
        return "allow"
    if answer is False or (type(answer) is str and answer in _DENY):
        return ("deny", "the reviewer rejected the call")
    if isinstance(answer, (tuple, list)) and len(answer) == 2 and answer[0] in _DENY:
        return ("deny", str(answer[1]) or "the reviewer rejected the call")
    if isinstance(answer, dict):
        if "call" in answer and answer["call"] != token:
            return ("deny", "the answer was given for another call (its 'call' differs)")
        kind = answer.get("decision", answer.get("type"))
        if kind in _ALLOW:
            return "allow"
        if kind in _DENY:
            reason = answer.get("reason") or answer.get("message")
            return ("deny", str(reason) if reason else "the reviewer rejected the call")
        if kind == "edit":
            return ("deny", "edited arguments are not run: the model may call again with them")
    return ("deny", f"the answer {clip(printable(answer), 200)} is no approval (counted as deny)")
