"""Provider shapes for a tool definition.

Each formatter takes the tool's name, description and JSON-Schema parameters
(and optionally its entry, for what only some shapes carry: MCP's
``annotations`` and ``outputSchema``) and returns the provider's definition,
frozen (:mod:`.frozen`): read-only JSON types that share no dict or list with
its input, which it never mutates. The registry hands that one object to every
caller, so building it is the only copy.

A provider whose name rules are narrower than the registry's (1-128 of
letters, digits, ``_ . -``) gets a ValueError naming the tool and the rule;
``get_definitions`` logs it and leaves that tool out. The shapes, rules and
the pages they come from are in docs/formats.md.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

from .frozen import FrozenDict, freeze
from .names import ANTHROPIC_NAME, GEMINI_NAME, MCP_NAME, OPENAI_NAME, NameRule

if TYPE_CHECKING:
    from .entry import ToolEntry


class Formatter(Protocol):
    """``(name, description, parameters, entry=None)`` -> the provider's definition."""

    def __call__(
        self,
        name: str,
        description: str,
        parameters: dict[str, Any],
        entry: ToolEntry | None = None,
    ) -> dict[str, Any]: ...


def _check(name: str, parameters: dict[str, Any], rule: NameRule, provider: str) -> None:
    """Raise ValueError, naming the tool, unless ``provider`` takes the name and
    ``parameters`` is an object schema (every provider wants one)."""
    pattern, text = rule
    if not isinstance(name, str) or not pattern.fullmatch(name):
        raise ValueError(f"Tool {name!r} cannot be defined for {provider}: names must be {text}")
    if not isinstance(parameters, dict) or parameters.get("type") != "object":
        raise ValueError(f'Tool {name!r}: parameters must be a JSON-Schema with "type": "object"')


def _object_schema(parameters: dict[str, Any]) -> dict[str, Any]:
    """The checked ``parameters``, with ``properties`` always present (not yet copied)."""
    if "properties" in parameters:
        return parameters
    return {**parameters, "properties": {}}


def _frozen(name: str, definition: dict[str, Any]) -> FrozenDict:
    """``definition`` frozen, which copies it; ValueError naming the tool if it is not JSON."""
    try:
        return freeze(definition)
    except TypeError as exc:
        raise ValueError(f"Tool {name!r}: its definition is not JSON: {exc}") from None


def _openai(
    name: str, description: str, parameters: dict[str, Any], entry: ToolEntry | None = None
) -> dict[str, Any]:
    _check(name, parameters, OPENAI_NAME, "OpenAI")
    return _frozen(
        name,
        {
            "type": "function",
            "function": {
                "name": name,
                "description": description,
                "parameters": _object_schema(parameters),
            },
        },
    )


def _openai_responses(
    name: str, description: str, parameters: dict[str, Any], entry: ToolEntry | None = None
) -> dict[str, Any]:
    _check(name, parameters, OPENAI_NAME, "OpenAI")
    return _frozen(
        name,
        {
            "type": "function",
            "name": name,
            "description": description,
            "parameters": _object_schema(parameters),
            # The Responses API defaults strict to true, and strict mode rejects any
            # schema without additionalProperties: false and every property required,
            # which ordinary tool schemas are not. Opting out keeps them accepted.
            "strict": False,
        },
    )


def _anthropic(
    name: str, description: str, parameters: dict[str, Any], entry: ToolEntry | None = None
) -> dict[str, Any]:
    _check(name, parameters, ANTHROPIC_NAME, "Anthropic")
    return _frozen(
        name, {"name": name, "description": description, "input_schema": _object_schema(parameters)}
    )


def _gemini(
    name: str, description: str, parameters: dict[str, Any], entry: ToolEntry | None = None
) -> dict[str, Any]:
    from .gemini_schema import to_gemini_schema  # loaded only by hosts that ask for Gemini

    _check(name, parameters, GEMINI_NAME, "Gemini")
    schema = to_gemini_schema(parameters)  # builds new dicts and lists throughout
    declaration: dict[str, Any] = {"name": name, "description": description}
    # A function without parameters leaves them unset: an object schema with no
    # properties is answered with 400 "properties: should be non-empty for OBJECT type".
    if schema.get("properties"):
        declaration["parameters"] = schema
    return _frozen(name, declaration)


def _mcp(
    name: str, description: str, parameters: dict[str, Any], entry: ToolEntry | None = None
) -> dict[str, Any]:
    _check(name, parameters, MCP_NAME, "MCP")
    definition = {
        "name": name,
        "description": description,
        "inputSchema": _object_schema(parameters),
    }
    if entry is not None:
        if entry.annotations:
            definition["annotations"] = dict(entry.annotations)
        if entry.output_schema is not None:
            definition["outputSchema"] = entry.output_schema  # frozen below, which copies it
    return _frozen(name, definition)


FORMATS: dict[str, Formatter] = {
    "openai": _openai,
    "openai-responses": _openai_responses,
    "anthropic": _anthropic,
    "gemini": _gemini,
    "mcp": _mcp,
}


def get_formatter(format: str) -> Formatter:
    try:
        return FORMATS[format]
    except (KeyError, TypeError):
        known = ", ".join(sorted(FORMATS))
        raise ValueError(
            f"Unknown definition format {format!r}; expected one of: {known}"
        ) from None
