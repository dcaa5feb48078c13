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
"""

from __future__ import annotations

import base64
from collections.abc import Iterable
from typing import Any

from ._registry_tools import (
    ToolCallFailed,
    ToolSpec,
    available_tools,
    failure,
    missing_framework,
    result_parts,
)

try:
    import llm
except ImportError as exc:
    raise missing_framework("llm", "llm", "llm") from exc

from toolreg import ToolRegistry

__all__ = ["ToolCallFailed", "async_tools", "tools"]


def tools(
    registry: ToolRegistry | None = None,
    *,
    names: Iterable[str] | None = None,
    toolsets: Iterable[str] | None = None,
) -> list[llm.Tool]:
    """``llm.Tool``s for the available tools among ``names`` and ``toolsets``
    (all when both are None) of ``registry`` (default ``toolreg.registry``),
    for llm's synchronous models and chains."""
    registry, specs = available_tools(registry, names, toolsets)
    return [_llm_tool(registry, spec, asynchronous=False) for spec in specs]


def async_tools(
    registry: ToolRegistry | None = None,
    *,
    names: Iterable[str] | None = None,
    toolsets: Iterable[str] | None = None,
) -> list[llm.Tool]:
    """Like :func:`tools`, with ``async def`` implementations for llm's async models
    (``llm.get_async_model``): parallel calls run concurrently on the event loop."""
    registry, specs = available_tools(registry, names, toolsets)
    return [_llm_tool(registry, spec, asynchronous=True) for spec in specs]


def _llm_tool(registry: ToolRegistry, spec: ToolSpec, *, asynchronous: bool) -> llm.Tool:
    name = spec.name

    def implementation(**arguments: Any) -> str | llm.ToolOutput:
        return _output(name, registry.dispatch(name, arguments))

    async def async_implementation(**arguments: Any) -> str | llm.ToolOutput:
        return _output(name, await registry.adispatch(name, arguments))

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
