"""Deferred loading: a few tools in full, the rest found through a search tool.

Each provider has its own form (docs/search.md, "Deferred loading"): Anthropic's
``defer_loading`` with its BM25 search tool, OpenAI Responses' ``tool_search`` with
namespaces, and elsewhere a ``tool_search`` function that the host answers with
toolreg's own search. The lists are assembled from the shared, read-only
definitions; a deferred one is a shallow copy with one key added.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Literal

from .._contract.frozen import thaw
from .._schemas.formats import get_formatter

#: Who runs the search: the provider (``server``), or the host with toolreg (``client``).
SearchMode = Literal["server", "client"]
#: ``function``, the session's plain form: toolreg's ``tool_search`` function in any format.
_MODES = ("server", "client", "function")

#: The name of toolreg's own search tool in the function form.
TOOL_SEARCH = "tool_search"
#: The most hits one ``tool_search`` call may ask for.
MAX_LIMIT = 20
#: The longest query ``tool_search`` takes; the index reads no further.
MAX_QUERY = 2000

TOOL_SEARCH_DESCRIPTION = (
    "Search this host's tools by what you want to do. Only some tools are loaded at "
    "first: when none of them fits, describe the task in a few words and the best "
    "matching tools are returned by name and loaded, so you can call them next."
)
TOOL_SEARCH_PARAMETERS: Mapping[str, Any] = {
    "type": "object",
    "properties": {
        "query": {
            "type": "string",
            "description": "What the tool should do, in keywords or a short question.",
            "maxLength": MAX_QUERY,
        },
        "limit": {
            "type": "integer",
            "description": "How many tools to return at most (default 5).",
            "minimum": 1,
            "maximum": MAX_LIMIT,
        },
    },
    "required": ["query"],
}

#: Anthropic's server-side search tool (anthropic ``ToolSearchToolBm25_20251119Param``).
ANTHROPIC_BM25_TOOL: Mapping[str, str] = {
    "type": "tool_search_tool_bm25_20251119",
    "name": "tool_search_tool_bm25",
}


def definition_name(definition: Mapping[str, Any]) -> str:
    """The tool name in a definition of any format (Chat Completions nests it)."""
    function = definition.get("function")
    if isinstance(function, Mapping):
        return str(function["name"])
    return str(definition["name"])


def tool_search_definition(format: str) -> dict[str, Any]:
    """``tool_search`` as a function tool of ``format``."""
    # A private copy per call: it is small, and a host may change what it is handed.
    formatter = get_formatter(format)
    definition: dict[str, Any] = thaw(
        formatter(TOOL_SEARCH, TOOL_SEARCH_DESCRIPTION, dict(TOOL_SEARCH_PARAMETERS))
    )
    return definition


def _deferred(definition: Mapping[str, Any]) -> dict[str, Any]:
    return {**definition, "defer_loading": True}


def _namespaces(
    rest: list[dict[str, Any]], toolset_of: Callable[[str], str | None]
) -> list[dict[str, Any]]:
    """OpenAI Responses namespaces (``NamespaceToolParam``), one per toolset, in order."""
    groups: dict[str, list[dict[str, Any]]] = {}
    for definition in rest:
        toolset = toolset_of(definition_name(definition)) or "tools"
        groups.setdefault(toolset, []).append(_deferred(definition))
    return [
        {
            "type": "namespace",
            "name": toolset,
            "description": f"Tools of the toolset {toolset}.",
            "tools": tools,
        }
        for toolset, tools in groups.items()
    ]


def needs_rest(format: str, search: str) -> bool:
    """Whether ``format``'s deferred list carries the deferred tools themselves."""
    if search == "function":
        return False
    return format == "anthropic" or (format == "openai-responses" and search == "server")


def offers_function(format: str, search: str) -> bool:
    """Whether the list holds toolreg's ``tool_search`` function (its name is then taken)."""
    if search == "function":
        return True
    if format == "anthropic":
        return search == "client"
    return format != "openai-responses"


def deferred_list(
    full: list[dict[str, Any]],
    rest: list[dict[str, Any]],
    *,
    format: str,
    search: str,
    toolset_of: Callable[[str], str | None],
) -> list[dict[str, Any]]:
    """``full`` as they are, ``rest`` deferred in ``format``'s own form, and its search tool.

    ``rest`` is read only where the form lists deferred tools (:func:`needs_rest`).
    """
    if search not in _MODES:
        raise ValueError(f"search must be 'server' or 'client', got {search!r}")
    if search == "function":
        return [*full, tool_search_definition(format)]
    if format == "anthropic":
        # Deferred tools stay in the request: Anthropic loads one when a search
        # (its own, or the host's tool_reference blocks) names it.
        tail: dict[str, Any] = (
            dict(ANTHROPIC_BM25_TOOL) if search == "server" else tool_search_definition(format)
        )
        return [*full, *map(_deferred, rest), tail]
    if format == "openai-responses":
        if search == "server":
            return [*full, *_namespaces(rest, toolset_of), {"type": "tool_search"}]
        # The host answers with a tool_search_output item that carries the tools found.
        return [
            *full,
            {
                "type": "tool_search",
                "execution": "client",
                "description": TOOL_SEARCH_DESCRIPTION,
                "parameters": tool_search_definition("openai-responses")["parameters"],
            },
        ]
    # Chat Completions, Gemini and MCP have no deferred form: toolreg's function.
    return [*full, tool_search_definition(format)]
