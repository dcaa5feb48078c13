"""The registry's tools as LangChain ``StructuredTool``s (extra ``langchain``).

>>> from toolreg.integrations import langchain
>>> model = chat_model.bind_tools(langchain.tools(toolsets=["file"]))

Each tool takes the registered JSON Schema as its ``args_schema`` and calls
``registry.dispatch`` (``ainvoke``: ``registry.adispatch``), so validation,
hooks and policy apply. A multimodal result becomes LangChain's standard
content blocks (``text``, ``image``, ``audio``). A ``tool_error`` result is
raised as a ``ToolException`` and handled by LangChain (``handle_tool_error``):
the model gets the error JSON in a ``ToolMessage`` with ``status="error"``.

The operator's ``ask`` rules go to the registry's approver
(``registry.set_approver``), and with none the model reads
``approval_required``: langchain-core has no approval step of its own
(LangGraph's ``interrupt`` and ``HumanInTheLoopMiddleware`` live in other
packages, which toolreg does not depend on).

LangChain has no deferred loading of its own: a model is bound to a fixed
list. ``tools(session=registry.session(always_loaded=[...]))`` gives the
session's tools now, the always-loaded ones, those its ``tool_search`` tool has
found, and ``tool_search``; a host re-reads it before each model call
(``model.bind_tools(langchain.tools(session=session))``), so a tool found in
one step can be called in the next.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ._registry_tools import (
    Dispatcher,
    ToolSpec,
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
) -> list[StructuredTool]:
    """``StructuredTool``s for the available tools among ``names`` and ``toolsets``
    (all when both are None) of ``registry`` (default ``toolreg.registry``).

    ``session``: the tools a :class:`~toolreg.ToolSession` offers now instead
    (its always-loaded and found tools, then ``tool_search``, answered by the
    session); read it again before each model call. ``registry`` is then unused.
    """
    if session is not None:
        return [_structured_tool(session, spec) for spec in session_tools(session, names, toolsets)]
    registry, specs = available_tools(registry, names, toolsets)
    return [_structured_tool(registry, spec) for spec in specs]


def _structured_tool(registry: Dispatcher, spec: ToolSpec) -> StructuredTool:
    def run(**arguments: Any) -> str | list[dict[str, Any]]:
        return _content(spec.name, registry.dispatch(spec.name, arguments))

    async def arun(**arguments: Any) -> str | list[dict[str, Any]]:
        return _content(spec.name, await registry.adispatch(spec.name, arguments))

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
