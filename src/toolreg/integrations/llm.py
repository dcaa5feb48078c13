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
from collections.abc import Iterable
from typing import Any

from ._registry_tools import (
    Dispatcher,
    ToolCallFailed,
    ToolSpec,
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

from toolreg import ToolRegistry, ToolSession

__all__ = ["ToolCallFailed", "async_tools", "tools"]


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
