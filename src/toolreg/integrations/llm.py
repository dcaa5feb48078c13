"""The registry's tools as ``llm.Tool``s for simonw's ``llm`` (extra ``llm``).

>>> import llm
>>> from toolreg.integrations import llm as toolreg_llm
>>> chain = llm.get_model("gpt-4.1-mini").chain("...", tools=toolreg_llm.tools())
>>> chain = llm.get_async_model("gpt-4.1-mini").chain("...", tools=toolreg_llm.async_tools())

Each tool calls ``registry.dispatch``, so validation, hooks and policy
apply. ``async_tools()`` gives the same tools with ``async def``
implementations that call ``registry.adispatch``: llm's async chain runs
them as tasks, side by side, without blocking the event loop. A multimodal
result becomes an ``llm.ToolOutput`` whose images and audio are attachments.
A ``tool_error`` result is raised as :class:`ToolCallFailed`, so llm records
the exception on the ``ToolResult`` and tells the model ``Error: <the error
JSON>``.

The operator's ``ask`` rules take llm's own approval hook, ``before_call``:
pass ``before_call=toolreg_llm.before_call(confirm)`` to ``chain`` (or
``execute_tool_calls``), and ``confirm`` (llm's ``before_call`` shape: return
to approve, raise ``llm.CancelToolCall`` to refuse) is called for the calls the
rules ask about. Without it, an ask goes to the registry's approver, and with
none the model reads ``approval_required``.

llm has no deferred loading of its own, and a chain keeps the tools it started
with. ``tools(session=registry.session(always_loaded=[...]))`` gives the
session's tools now: the always-loaded ones, those its ``tool_search`` tool has
found, and ``tool_search``. A host that wants a tool found to be called in the
same conversation runs the loop itself, reading them again for each prompt
(``conversation.prompt("", tools=toolreg_llm.tools(session=session),
tool_results=response.execute_tool_calls())``); a new chain per user turn
sees what earlier turns found.
"""

from __future__ import annotations

import base64
import inspect
from collections.abc import Callable, Iterable
from contextvars import ContextVar
from typing import Any

from ._registry_tools import (
    Dispatcher,
    ToolCallFailed,
    ToolSpec,
    allow_approved,
    asks,
    available_tools,
    failure,
    missing_framework,
    result_parts,
    session_tools,
)

try:
    import llm
except ImportError as exc:
    raise missing_framework("llm", "llm", "llm") from exc

import toolreg
from toolreg import ToolRegistry, ToolSession

__all__ = ["ToolCallFailed", "async_tools", "before_call", "tools"]

#: The tool whose call ``before_call``'s ``confirm`` has just approved, in a one-item
#: list that call's implementation (llm runs it next) empties. Emptied, not reset: a sync
#: chain runs an async implementation with ``asyncio.run``, in a copy of this context,
#: and the approval must end there too, not wait for a later call of the tool.
_approved: ContextVar[list[str] | None] = ContextVar("toolreg_llm_approved", default=None)


def before_call(
    confirm: Callable[[llm.Tool | None, llm.ToolCall], Any],
    registry: ToolRegistry | None = None,
) -> Callable[[llm.Tool | None, llm.ToolCall], Any]:
    """llm's ``before_call`` hook for the operator's ``ask`` rules (``registry``, default
    ``toolreg.registry``; with a session, its registry).

    ``confirm(tool, tool_call)`` is an ordinary llm ``before_call`` (sync, or async for
    async chains): return to approve, raise ``llm.CancelToolCall`` to refuse, and llm
    tells the model ``Cancelled: <reason>``. It is called only for the calls the rules
    would ask about; an approved call is dispatched with a per-call approver that
    allows it. A ``deny`` rule is never put to it, and dispatch still denies.

    >>> chain = model.chain("...", tools=toolreg_llm.tools(),  # doctest: +SKIP
    ...                     before_call=toolreg_llm.before_call(confirm))
    """
    chosen = toolreg.registry if registry is None else registry

    def check(tool: llm.Tool | None, tool_call: llm.ToolCall) -> Any:
        _approved.set(None)
        if tool is None or asks(chosen, tool_call.name, tool_call.arguments) is None:
            return None
        answer = confirm(tool, tool_call)
        if inspect.isawaitable(answer):
            return _approve_after(answer, tool_call.name)
        _approved.set([tool_call.name])
        return None

    return check


async def _approve_after(answer: Any, name: str) -> None:
    await answer  # CancelToolCall propagates: llm cancels the call
    _approved.set([name])  # awaited in the task that runs the call next


def _approval(name: str) -> Any:
    """The per-call approver for this call if ``before_call`` approved it, else None."""
    approved = _approved.get()
    if approved != [name]:
        return None
    approved.clear()
    return allow_approved(name)


def tools(
    registry: ToolRegistry | None = None,
    *,
    names: Iterable[str] | None = None,
    toolsets: Iterable[str] | None = None,
    session: ToolSession | None = None,
) -> list[llm.Tool]:
    """``llm.Tool``s for the available tools among ``names`` and ``toolsets``
    (all when both are None) of ``registry`` (default ``toolreg.registry``),
    for llm's synchronous models and chains.

    ``session``: the tools a :class:`~toolreg.ToolSession` offers now instead
    (its always-loaded and found tools, then ``tool_search``, answered by the
    session); read it again for each prompt. ``registry`` is then unused.
    """
    return _tools(registry, names, toolsets, session, asynchronous=False)


def async_tools(
    registry: ToolRegistry | None = None,
    *,
    names: Iterable[str] | None = None,
    toolsets: Iterable[str] | None = None,
    session: ToolSession | None = None,
) -> list[llm.Tool]:
    """Like :func:`tools`, with ``async def`` implementations for llm's async models
    (``llm.get_async_model``): parallel calls run concurrently on the event loop."""
    return _tools(registry, names, toolsets, session, asynchronous=True)


def _tools(
    registry: ToolRegistry | None,
    names: Iterable[str] | None,
    toolsets: Iterable[str] | None,
    session: ToolSession | None,
    *,
    asynchronous: bool,
) -> list[llm.Tool]:
    if session is not None:
        specs = session_tools(session, names, toolsets)
        return [_llm_tool(session, spec, asynchronous=asynchronous) for spec in specs]
    registry, specs = available_tools(registry, names, toolsets)
    return [_llm_tool(registry, spec, asynchronous=asynchronous) for spec in specs]


def _llm_tool(registry: Dispatcher, spec: ToolSpec, *, asynchronous: bool) -> llm.Tool:
    name = spec.name

    def implementation(**arguments: Any) -> str | llm.ToolOutput:
        return _output(name, registry.dispatch(name, arguments, approve=_approval(name)))

    async def async_implementation(**arguments: Any) -> str | llm.ToolOutput:
        return _output(name, await registry.adispatch(name, arguments, approve=_approval(name)))

    return llm.Tool(
        name=name,
        description=spec.description,
        input_schema=spec.parameters,
        implementation=async_implementation if asynchronous else implementation,
        plugin="toolreg",
    )


def _output(name: str, result: str | dict[str, Any]) -> str | llm.ToolOutput:
    failed = failure(name, result)
    if failed is not None:
        raise failed
    if isinstance(result, str):
        return result
    parts = result_parts(result)
    return llm.ToolOutput(
        output="\n".join(part.text for part in parts if part.kind == "text"),
        attachments=[
            llm.Attachment(type=part.mime, content=base64.b64decode(part.data))
            for part in parts
            if part.kind != "text"
        ],
    )
