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
"""

from __future__ import annotations

import base64
from collections.abc import Iterable
from typing import Any

from ._registry_tools import (
    ToolSpec,
    available_tools,
    failure,
    missing_framework,
    result_parts,
)

try:
    from pydantic_ai import BinaryContent, ModelRetry, RunContext, Tool
    from pydantic_ai.tools import ToolDefinition
except ImportError as exc:
    raise missing_framework("pydantic_ai", "pydantic-ai-slim", "pydantic-ai") from exc

try:
    from pydantic_ai import ToolFailed
except ImportError:  # pydantic-ai before ToolFailed: the error is an ordinary result
    ToolFailed = None  # type: ignore[assignment,misc]

from toolreg import ToolRegistry

__all__ = ["tools"]


def tools(
    registry: ToolRegistry | None = None,
    *,
    names: Iterable[str] | None = None,
    toolsets: Iterable[str] | None = None,
) -> list[Tool[Any]]:
    """pydantic-ai ``Tool``s for the available tools among ``names`` and ``toolsets``
    (all when both are None) of ``registry`` (default ``toolreg.registry``)."""
    registry, specs = available_tools(registry, names, toolsets)
    return [_pydantic_ai_tool(registry, spec) for spec in specs]


def _pydantic_ai_tool(registry: ToolRegistry, spec: ToolSpec) -> Tool[Any]:
    async def call(**arguments: Any) -> str | list[str | BinaryContent]:
        return _output(spec.name, await registry.adispatch(spec.name, arguments))

    async def only_when_available(
        ctx: RunContext[Any], tool_def: ToolDefinition
    ) -> ToolDefinition | None:
        # Read at every step: a tool whose check_fn or environment changed since
        # tools() comes and goes without rebuilding the agent.
        return tool_def if registry.is_tool_available(spec.name) else None

    tool: Tool[Any] = Tool.from_schema(call, spec.name, spec.description, spec.parameters)
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
