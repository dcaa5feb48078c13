"""What every integration reads from the registry: the selected available tools.

Only toolreg's public API is used here and in the integrations, so they do
not depend on how the registry is built inside.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import toolreg
from toolreg import DefinitionFormat, ToolRegistry, is_tool_error, tool_result_message


@dataclass(frozen=True)
class ToolSpec:
    """One available tool as a framework needs it: name, description, JSON-Schema parameters."""

    name: str
    description: str
    parameters: dict[str, Any]


def missing_framework(integration: str, package: str, extra: str) -> ImportError:
    return ImportError(
        f"toolreg.integrations.{integration} needs {package}, which is not installed; "
        f"install it with: pip install 'toolreg-core[{extra}]'"
    )


def available_tools(
    registry: ToolRegistry | None,
    names: Iterable[str] | None,
    toolsets: Iterable[str] | None,
    format: DefinitionFormat = "mcp",
) -> tuple[ToolRegistry, list[ToolSpec]]:
    """The registry (``toolreg.registry`` by default) and its available tools among
    ``names`` plus the tools of ``toolsets`` (all tools when both are None).

    ``format`` is the definition format whose name rule applies: a tool the
    provider cannot take is logged and left out by ``get_definitions``.
    """
    registry = toolreg.registry if registry is None else registry
    selected = _selected_names(registry, names, toolsets)
    parameters_key = "inputSchema" if format == "mcp" else "parameters"
    # The definitions are shared and read-only; a framework gets a schema of its
    # own, which it may change (some add titles or strict-mode keys in place).
    specs = [
        ToolSpec(d["name"], d.get("description") or "", copy.deepcopy(d[parameters_key]))
        for d in registry.get_definitions(selected, format=format)
    ]
    return registry, specs


def _selected_names(
    registry: ToolRegistry, names: Iterable[str] | None, toolsets: Iterable[str] | None
) -> list[str] | None:
    if names is None and toolsets is None:
        return None
    selected: list[str] = []
    if names is not None:
        names = _listed(names, "names")
        unknown = [name for name in names if name not in registry]
        if unknown:
            raise ValueError(f"Unknown tool(s): {', '.join(unknown)}")
        selected.extend(names)
    if toolsets is not None:
        known = registry.get_toolsets()
        for toolset in _listed(toolsets, "toolsets"):
            if registry.resolve_toolset(toolset) not in known:
                raise ValueError(
                    f"Unknown toolset {toolset!r}; known toolsets: {', '.join(known) or 'none'}"
                )
            selected.extend(registry.get_tool_names_for_toolset(toolset))
    return selected


def _listed(values: Iterable[str], what: str) -> list[str]:
    # A bare string would be read one character at a time.
    if isinstance(values, str):
        raise TypeError(f"{what} must be a list of strings, not the string {values!r}")
    return list(values)


class ToolCallFailed(Exception):
    """A tool call that came back as a ``tool_error``, raised for a framework to report.

    ``str(exc)`` is the error JSON the model reads; ``error_type`` is its
    ``error_type`` (``invalid_arguments``, ``blocked``, ``timeout``...) or None.
    """

    def __init__(self, tool: str, result: str) -> None:
        super().__init__(result)
        self.tool = tool
        self.result = result
        try:
            kind = json.loads(result).get("error_type")
        except (ValueError, AttributeError):
            kind = None
        self.error_type: str | None = kind if isinstance(kind, str) else None


def failure(name: str, result: str | dict[str, Any]) -> ToolCallFailed | None:
    """The exception a framework should see for ``result``, or None for a success."""
    if isinstance(result, str) and is_tool_error(result):
        return ToolCallFailed(name, result)
    return None


@dataclass(frozen=True)
class ResultPart:
    """One part of a dispatch result: ``text``, or an ``image``/``audio`` with base64 data."""

    kind: str
    text: str = ""
    data: str = ""
    mime: str = ""


def result_parts(result: str | dict[str, Any]) -> list[ResultPart]:
    """A dispatch result's parts in order; resources and the like as their text."""
    parts = []
    for block in tool_result_message(result, "mcp")["content"]:
        if block["type"] in ("image", "audio"):
            parts.append(ResultPart(block["type"], data=block["data"], mime=block["mimeType"]))
        elif block["type"] == "text":
            parts.append(ResultPart("text", text=block["text"]))
        else:  # what a text-only provider shows for it
            alone = {"_multimodal": True, "content": [block]}
            text = tool_result_message(alone, "openai", call_id="-")["content"]
            parts.append(ResultPart("text", text=text))
    return parts
