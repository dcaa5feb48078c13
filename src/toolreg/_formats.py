"""Provider shapes for a tool definition.

Each formatter takes the tool's name, description and JSON-Schema parameters
(already private copies) and returns the provider's definition.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

Formatter = Callable[[str, str, dict[str, Any]], dict[str, Any]]


def _openai(name: str, description: str, parameters: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "function",
        "function": {"name": name, "description": description, "parameters": parameters},
    }


def _anthropic(name: str, description: str, parameters: dict[str, Any]) -> dict[str, Any]:
    return {"name": name, "description": description, "input_schema": parameters}


def _mcp(name: str, description: str, parameters: dict[str, Any]) -> dict[str, Any]:
    return {"name": name, "description": description, "inputSchema": parameters}


FORMATS: dict[str, Formatter] = {
    "openai": _openai,
    "anthropic": _anthropic,
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
