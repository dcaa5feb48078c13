"""The registry's tools as pydantic-ai ``Tool``s (extra ``pydantic-ai``, for pydantic-ai-slim).

>>> from pydantic_ai import Agent
>>> from toolreg.integrations import pydantic_ai
>>> agent = Agent("openai:gpt-4.1-mini", tools=pydantic_ai.tools(toolsets=["file"]))

Each tool is built with ``Tool.from_schema`` from the registered JSON Schema
and calls ``registry.adispatch``, so validation, hooks and policy apply. A
multimodal result becomes text and ``BinaryContent`` parts. A ``tool_error``
result is raised the way pydantic-ai expects: ``ModelRetry`` for
``invalid_arguments`` (the model is asked to fix the call, within the tool's
retry budget), ``ToolFailed`` for any other error (a failed tool result the
model adapts to; pydantic-ai releases without it get the error JSON as the
result). Each tool's ``prepare`` asks the registry at every step whether the
tool is available now, so availability changes show up without rebuilding.

The operator's ``ask`` rules take pydantic-ai's human-in-the-loop approval: a
call the ``[permissions]`` rules would ask about raises ``ApprovalRequired``
(its metadata ``{"toolreg": {"tool": ..., "rule": ...}}``), so an agent whose
``output_type`` includes ``DeferredToolRequests`` ends its run with the call in
``approvals``. Resumed with ``DeferredToolResults`` (``ToolApproved`` or
``True``), the call is dispatched with a per-call approver that allows it;
``ToolDenied`` (or ``False``) never reaches the registry, and the model reads
its message. A ``deny`` rule is never deferred and no approval makes it run.

``tools(defer=True, always_loaded=[...])`` marks every tool but the always-loaded
ones ``defer_loading=True``: pydantic-ai's own tool search (its ``ToolSearch``
capability, in every agent) hides them until a search reveals them, natively
on models that have one and through its ``search_tools`` function elsewhere.
:func:`tool_search` is a ``ToolSearch`` strategy that answers with toolreg's
search instead of pydantic-ai's keyword match.
"""

from __future__ import annotations

import base64
from collections.abc import Callable, Iterable, Sequence
from typing import Any, Literal

from ._registry_tools import (
    ToolSpec,
    allow_approved,
    asks,
    available_tools,
    deferred_tools,
    failure,
    missing_framework,
    result_parts,
)

try:
    from pydantic_ai import ApprovalRequired, BinaryContent, ModelRetry, RunContext, Tool
    from pydantic_ai.tools import ToolDefinition
except ImportError as exc:
    raise missing_framework("pydantic_ai", "pydantic-ai-slim", "pydantic-ai") from exc

try:
    from pydantic_ai import ToolFailed
except ImportError:  # pydantic-ai before ToolFailed: the error is an ordinary result
    ToolFailed = None  # type: ignore[assignment,misc]

import toolreg
from toolreg import ToolRegistry

__all__ = ["tool_search", "tools"]


def tools(
    registry: ToolRegistry | None = None,
    *,
    names: Iterable[str] | None = None,
    toolsets: Iterable[str] | None = None,
    defer: bool = False,
    always_loaded: Iterable[str] = (),
    approval: Literal["framework", "approver"] = "framework",
) -> list[Tool[Any]]:
    """pydantic-ai ``Tool``s for the available tools among ``names`` and ``toolsets``
    (all when both are None) of ``registry`` (default ``toolreg.registry``).

    ``defer=True``: the ``always_loaded`` tools (names, or ``toolset:NAME``) as
    they are, the others with ``defer_loading=True``, found through pydantic-ai's
    tool search; a ``searchable=False`` tool is offered only when it is always loaded.

    ``approval="framework"`` (the default) defers a call the operator's rules ask
    about (``ApprovalRequired``): the agent needs ``DeferredToolRequests`` among its
    output types, or a ``HandleDeferredToolCalls`` capability, or pydantic-ai
    fails the run with a ``UserError``. ``approval="approver"`` leaves the ask to
    the registry's approver (``registry.set_approver``), as a call outside any framework.
    """
    if approval not in ("framework", "approver"):
        raise ValueError(f'approval must be "framework" or "approver", got {approval!r}')
    deferral = approval == "framework"
    if not defer:
        registry, specs = available_tools(registry, names, toolsets)
        return [_pydantic_ai_tool(registry, spec, deferral) for spec in specs]
    registry, split = deferred_tools(registry, names, toolsets, always_loaded)
    offered = [_pydantic_ai_tool(registry, spec, deferral) for spec in split.loaded]
    for _, spec in split.deferred:
        tool = _pydantic_ai_tool(registry, spec, deferral)
        tool.defer_loading = True
        offered.append(tool)
    return offered


def tool_search(
    registry: ToolRegistry | None = None, *, min_score: float | None = None
) -> Callable[[RunContext[Any], Sequence[str], Sequence[ToolDefinition]], list[str]]:
    """A ``ToolSearch(strategy=...)`` function that ranks the deferred tools with
    ``registry.search`` (default ``toolreg.registry``; ``min_score`` is its threshold):

    >>> from pydantic_ai.capabilities import ToolSearch
    >>> search = ToolSearch(strategy=pydantic_ai.tool_search())  # doctest: +SKIP

    Only the deferred tools pydantic-ai hands it can be found, best first; a
    tool of another agent or toolset with a matching name is not.
    """
    chosen = toolreg.registry if registry is None else registry

    def search(
        ctx: RunContext[Any], queries: Sequence[str], tools: Sequence[ToolDefinition]
    ) -> list[str]:
        deferred = {tool.name for tool in tools}
        found: dict[str, None] = {}
        for query in queries:
            hits = chosen.search(query, limit=_SEARCH_LIMIT, min_score=min_score)
            found.update(dict.fromkeys(hit.name for hit in hits if hit.name in deferred))
        return list(found)

    return search


#: The most tools one query of pydantic-ai's search reveals (its own keyword search's cap).
_SEARCH_LIMIT = 10


def _pydantic_ai_tool(registry: ToolRegistry, spec: ToolSpec, deferral: bool) -> Tool[Any]:
    async def call(ctx: RunContext[Any], /, **arguments: Any) -> str | list[str | BinaryContent]:
        if ctx.tool_call_approved:
            # The host approved this call (DeferredToolResults): that answers the
            # operator's ask for it; a deny rule still denies in dispatch.
            approve = allow_approved(spec.name)
            return _output(
                spec.name, await registry.adispatch(spec.name, arguments, approve=approve)
            )
        rule = asks(registry, spec.name, arguments) if deferral else None
        if rule is not None:
            raise ApprovalRequired(metadata={"toolreg": {"tool": spec.name, "rule": rule}})
        return _output(spec.name, await registry.adispatch(spec.name, arguments))

    async def only_when_available(
        ctx: RunContext[Any], tool_def: ToolDefinition
    ) -> ToolDefinition | None:
        # Read at every step: a tool whose check_fn or environment changed since
        # tools() comes and goes without rebuilding the agent.
        return tool_def if registry.is_tool_available(spec.name) else None

    tool: Tool[Any] = Tool.from_schema(
        call, spec.name, spec.description, spec.parameters, takes_ctx=True
    )
    tool.prepare = only_when_available
    return tool


def _output(name: str, result: str | dict[str, Any]) -> str | list[str | BinaryContent]:
    failed = failure(name, result)
    if failed is not None:
        if failed.error_type == "invalid_arguments":
            raise ModelRetry(failed.result) from failed
        if ToolFailed is not None:
            raise ToolFailed(failed.result) from failed
    if isinstance(result, str):
        return result
    return [
        part.text
        if part.kind == "text"
        else BinaryContent(data=base64.b64decode(part.data), media_type=part.mime)
        for part in result_parts(result)
    ]
