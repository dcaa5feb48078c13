"""The registry's tools as ``llm.Tool``s for simonw's ``llm`` (extra ``llm``).

>>> import llm
>>> from toolreg.integrations import llm as toolreg_llm
>>> chain = llm.get_model("gpt-4.1-mini").chain("...", tools=toolreg_llm.tools())

Each tool calls ``registry.dispatch``, so validation, hooks and policy
apply. A multimodal result becomes an ``llm.ToolOutput`` whose images and
audio are attachments.
"""

from __future__ import annotations

import base64
from collections.abc import Iterable
from typing import Any

from ._registry_tools import ToolSpec, available_tools, missing_framework, result_parts

try:
    import llm
except ImportError as exc:
    raise missing_framework("llm", "llm", "llm") from exc

from toolreg import ToolRegistry

__all__ = ["tools"]


def tools(
    registry: ToolRegistry | None = None,
    *,
    names: Iterable[str] | None = None,
    toolsets: Iterable[str] | None = None,
) -> list[llm.Tool]:
    """``llm.Tool``s for the available tools among ``names`` and ``toolsets``
    (all when both are None) of ``registry`` (default ``toolreg.registry``)."""
    registry, specs = available_tools(registry, names, toolsets)
    return [_llm_tool(registry, spec) for spec in specs]


def _llm_tool(registry: ToolRegistry, spec: ToolSpec) -> llm.Tool:
    def implementation(**arguments: Any) -> str | llm.ToolOutput:
        return _output(registry.dispatch(spec.name, arguments))

    return llm.Tool(
        name=spec.name,
        description=spec.description,
        input_schema=spec.parameters,
        implementation=implementation,
        plugin="toolreg",
    )


def _output(result: str | dict[str, Any]) -> str | llm.ToolOutput:
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
