"""Provider shapes for a tool definition.

Each formatter takes the tool's name, description and JSON-Schema parameters
and returns the provider's definition: plain JSON types only (the result is
frozen with ``marshal``), sharing no dict or list with its input, which it
never mutates.

A provider whose name rules are narrower than the registry's (1-128 of
letters, digits, ``_ . -``) gets a ValueError naming the tool and the rule;
``get_definitions`` logs it and leaves that tool out. The shapes, rules and
the pages they come from are in docs/formats.md.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Callable
from typing import Any

from .gemini_schema import to_gemini_schema
from .schemas import TOOL_NAME_RE

Formatter = Callable[[str, str, dict[str, Any]], dict[str, Any]]

# (pattern, the rule as the error message states it). fullmatch, never "$":
# "$" also matches before a trailing newline.
_NameRule = tuple[re.Pattern[str], str]

# OpenAI and Anthropic state the same rule. OpenAI's Chat Completions and Responses
# share one function-calling backend: "a-z, A-Z, 0-9, or contain underscores and
# dashes, with a maximum length of 64"; Anthropic's tool-use guide: "Must match the
# regex ^[a-zA-Z0-9_-]{1,64}$".
_OPENAI_NAME: _NameRule = (
    re.compile(r"[A-Za-z0-9_-]{1,64}"),
    "1-64 characters of letters, digits, '_' and '-'",
)
_ANTHROPIC_NAME = _OPENAI_NAME
# Gemini: "Must start with a letter or an underscore. Must be a-z, A-Z, 0-9, or
# contain underscores, dots and dashes, with a maximum length of 64." (Newer pages
# also allow ':', which registry names never contain.)
_GEMINI_NAME: _NameRule = (
    re.compile(r"[A-Za-z_][A-Za-z0-9_.-]{0,63}"),
    "1-64 characters of letters, digits, '_', '.' and '-', starting with a letter or '_'",
)
# MCP 2025-11-25, "Tool names": 1-128 of A-Z a-z 0-9 _ - ., the registry's own rule,
# so its own pattern (whose "^...$" fullmatch makes harmless).
_MCP_NAME: _NameRule = (
    TOOL_NAME_RE,
    "1-128 characters of letters, digits, '_', '.' and '-'",
)


def _check(name: str, parameters: dict[str, Any], rule: _NameRule, provider: str) -> None:
    """Raise ValueError, naming the tool, unless ``provider`` takes the name and
    ``parameters`` is an object schema (every provider wants one)."""
    pattern, text = rule
    if not isinstance(name, str) or not pattern.fullmatch(name):
        raise ValueError(f"Tool {name!r} cannot be defined for {provider}: names must be {text}")
    if not isinstance(parameters, dict) or parameters.get("type") != "object":
        raise ValueError(f'Tool {name!r}: parameters must be a JSON-Schema with "type": "object"')


def _object_schema(parameters: dict[str, Any]) -> dict[str, Any]:
    """A private copy of the checked ``parameters``, with ``properties`` always present."""
    schema = copy.deepcopy(parameters)
    schema.setdefault("properties", {})
    return schema


def _openai(name: str, description: str, parameters: dict[str, Any]) -> dict[str, Any]:
    _check(name, parameters, _OPENAI_NAME, "OpenAI")
    return {
        "type": "function",
        "function": {
            "name": name,
            "description": description,
            "parameters": _object_schema(parameters),
        },
    }


def _openai_responses(name: str, description: str, parameters: dict[str, Any]) -> dict[str, Any]:
    _check(name, parameters, _OPENAI_NAME, "OpenAI")
    return {
        "type": "function",
        "name": name,
        "description": description,
        "parameters": _object_schema(parameters),
        # The Responses API defaults strict to true, and strict mode rejects any
        # schema without additionalProperties: false and every property required,
        # which ordinary tool schemas are not. Opting out keeps them accepted.
        "strict": False,
    }


def _anthropic(name: str, description: str, parameters: dict[str, Any]) -> dict[str, Any]:
    _check(name, parameters, _ANTHROPIC_NAME, "Anthropic")
    return {
        "name": name,
        "description": description,
        "input_schema": _object_schema(parameters),
    }


def _gemini(name: str, description: str, parameters: dict[str, Any]) -> dict[str, Any]:
    _check(name, parameters, _GEMINI_NAME, "Gemini")
    schema = to_gemini_schema(parameters)  # builds new dicts and lists throughout
    declaration: dict[str, Any] = {"name": name, "description": description}
    # A function without parameters leaves them unset: an object schema with no
    # properties is answered with 400 "properties: should be non-empty for OBJECT type".
    if schema.get("properties"):
        declaration["parameters"] = schema
    return declaration


def _mcp(name: str, description: str, parameters: dict[str, Any]) -> dict[str, Any]:
    _check(name, parameters, _MCP_NAME, "MCP")
    return {
        "name": name,
        "description": description,
        "inputSchema": _object_schema(parameters),
    }


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
