"""What every integration reads from the registry: the selected available tools.

Only toolreg's public API is used here and in the integrations, so they do
not depend on how the registry is built inside.
"""

from __future__ import annotations

import copy
import difflib
import json
import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, Protocol

import toolreg
from toolreg import (
    DefinitionFormat,
    ToolRegistry,
    ToolSession,
    is_tool_error,
    tool_result_message,
)

logger = logging.getLogger("toolreg.integrations")


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
    provider cannot take is logged and left out by ``get_definitions``. A name
    or toolset that is not in the registry is left out and logged too, never
    raised: what is there is the operator's choice (a pack turned off, or one
    that replaced a built-in), and a host must keep running. Only a selection
    that is not a list of strings raises (TypeError).
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
    if selected:
        offered = {spec.name for spec in specs}
        for name in dict.fromkeys(selected):
            if name not in offered:
                available, reason = registry.availability(name)
                why = "its definition could not be made" if available else reason
                logger.info("Tool %s is left out: %s", name, why or "it is not available now")
    return registry, specs


@dataclass(frozen=True)
class DeferredSpecs:
    """The selected tools split for deferred loading: ``loaded`` in full from the
    start, ``deferred`` found by a search, each with the namespace it goes in."""

    loaded: list[ToolSpec]
    deferred: list[tuple[str, ToolSpec]]


def deferred_tools(
    registry: ToolRegistry | None,
    names: Iterable[str] | None,
    toolsets: Iterable[str] | None,
    always_loaded: Iterable[str],
    format: DefinitionFormat = "mcp",
) -> tuple[ToolRegistry, DeferredSpecs]:
    """:func:`available_tools`, split as ``get_definitions(defer=True)`` splits them.

    The registry decides: the ``always_loaded`` tools (names or ``toolset:NAME``)
    are loaded, the others deferred in a namespace per toolset (the Responses
    API's form), and a ``searchable=False`` tool that is not always loaded is
    left out, so no search can surface it.
    """
    registry, specs = available_tools(registry, names, toolsets, format)
    layout = registry.get_definitions(
        [spec.name for spec in specs],
        format="openai-responses",
        defer=True,
        always_loaded=always_loaded,
        search="server",
    )
    loaded: set[str] = set()
    namespace_of: dict[str, str] = {}
    for definition in layout:
        if definition.get("type") == "function":
            loaded.add(definition["name"])
        elif definition.get("type") == "namespace":
            for function in definition["tools"]:
                namespace_of[function["name"]] = definition["name"]
    split = DeferredSpecs(
        loaded=[spec for spec in specs if spec.name in loaded],
        deferred=[(namespace_of[s.name], s) for s in specs if s.name in namespace_of],
    )
    return registry, split


class Dispatcher(Protocol):
    """What a framework tool calls: a ``ToolRegistry``, or a ``ToolSession`` (which
    answers ``tool_search`` itself and hands every other call to its registry)."""

    def dispatch(
        self, name: str, arguments: Any, /, *, approve: Any = None
    ) -> str | dict[str, Any]: ...

    async def adispatch(
        self, name: str, arguments: Any, /, *, approve: Any = None
    ) -> str | dict[str, Any]: ...


def session_tools(
    session: ToolSession,
    names: Iterable[str] | None,
    toolsets: Iterable[str] | None,
    format: DefinitionFormat = "mcp",
) -> list[ToolSpec]:
    """The tools ``session`` offers now: its always-loaded tools and the tools its
    ``tool_search`` has found, while available, then ``tool_search`` itself.

    The session holds the selection (``always_loaded``, ``toolsets``); passing
    ``names`` or ``toolsets`` too is a TypeError.
    """
    if not isinstance(session, ToolSession):
        raise TypeError(f"session must be a ToolSession, got {type(session).__name__}")
    if names is not None or toolsets is not None:
        raise TypeError(
            "names and toolsets do not apply with session=: "
            "give registry.session(always_loaded=..., toolsets=...) instead"
        )
    parameters_key = "inputSchema" if format == "mcp" else "parameters"
    return [
        ToolSpec(d["name"], d.get("description") or "", copy.deepcopy(d[parameters_key]))
        for d in session.definitions(format)
    ]


def _selected_names(
    registry: ToolRegistry, names: Iterable[str] | None, toolsets: Iterable[str] | None
) -> list[str] | None:
    if names is None and toolsets is None:
        return None
    selected: list[str] = []
    if names is not None:
        for name in _listed(names, "names"):
            if name in registry:
                selected.append(name)
            else:
                logger.warning("Tool %r is left out: %s", name, _why_missing(registry, name))
    if toolsets is not None:
        known = registry.get_toolsets()
        for toolset in _listed(toolsets, "toolsets"):
            if registry.resolve_toolset(toolset) in known:
                selected.extend(registry.get_tool_names_for_toolset(toolset))
            else:
                logger.warning(
                    "Toolset %r is left out: %s", toolset, _why_missing(registry, toolset, True)
                )
    return selected


def _why_missing(registry: ToolRegistry, name: str, toolset: bool = False) -> str:
    """Why ``name`` is not there: the registry's last decision about it, or the close names."""
    for decision in reversed(registry.decisions()):
        if toolset and decision.previous_toolset == name and decision.toolset != name:
            return (
                f"its tool {decision.tool} is now in toolset {decision.toolset!r} "
                f"({decision.action} by {decision.owner})"
            )
        if (decision.toolset if toolset else decision.tool) != name:
            continue
        if decision.action == "deregistered":
            return f"{'its tools were' if toolset else 'it was'} removed by {decision.owner}"
        if decision.action == "rejected":
            return f"refused: {decision.reason or 'by the registry'}"
    if toolset:
        known = registry.get_toolsets() + list(registry.get_toolset_aliases())
    else:
        known = registry.get_all_tool_names()
    close = difflib.get_close_matches(name, known, n=3)
    hint = f"; did you mean {', '.join(map(repr, close))}?" if close else ""
    what = "toolset" if toolset else "tool"
    return f"no {what} has that name (a pack not installed, or turned off by the operator?){hint}"


def _listed(values: Iterable[str], what: str) -> list[str]:
    # A bare string would be read one character at a time.
    if isinstance(values, str):
        raise TypeError(f"{what} must be a list of strings, not the string {values!r}")
    listed = list(values)
    for value in listed:
        if not isinstance(value, str):
            raise TypeError(f"{what} must be a list of strings; got {value!r}")
    return listed


def asks(registry: ToolRegistry, name: str, arguments: Any) -> str | None:
    """Whether the operator's rules would put a call of ``name`` with ``arguments`` to an
    approver: the rule that would ask (``"(default)"`` for the default), or None when the
    call would run or be denied without asking. Read-only: it records and counts nothing.

    Dispatch judges the call again when it runs, so this only chooses whether a
    framework's own approval is sought first; a deny is never asked about.
    """
    permissions = registry.permissions
    if permissions is None:  # no rules: nothing asks, and no entry need be read
        return None
    entry = registry.get_entry(name)
    if entry is None:
        return None
    ruling = permissions.for_entry(entry, registry.get_owner(name)).decide(arguments)
    if ruling.verdict != "ask":
        return None
    return "(default)" if ruling.rule is None else ruling.rule.text


def allow_approved(name: str) -> Callable[[str, dict[str, Any], str | None], Any]:
    """A per-call approver for a call the framework's approval flow approved: it allows
    that one tool's ask. Passed as ``approve=``, it only ever answers an ask, so a deny
    rule still denies."""

    def approve(tool: str, arguments: dict[str, Any], rule: str | None) -> Any:
        return "allow" if tool == name else ("deny", f"approved for {name}, not {tool}")

    return approve


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

    def __reduce__(self) -> tuple[type[ToolCallFailed], tuple[str, str]]:
        # Frameworks that keep or ship exceptions (a durable run's journal) can pickle it.
        return (type(self), (self.tool, self.result))


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
