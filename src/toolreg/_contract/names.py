"""Every naming rule in one place: tools, toolsets, providers, MCP servers' tools.

A registry tool name is 1-128 of letters, digits, ``_ . -`` (MCP's own rule). Each
provider's narrower rule, and the names of MCP servers' toolsets and tools, are below.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Sequence
from typing import Any, Literal

TOOL_NAME_RE = re.compile(r"^[A-Za-z0-9_.-]{1,128}$")
#: The longest tool name every provider takes (OpenAI, Anthropic, Gemini).
MAX_PROVIDER_TOOL_NAME = 64
#: Toolsets starting with it belong to MCP servers: ``mcp-<server>``.
MCP_PREFIX = "mcp-"
#: The built-in tools are the modules under it, in a checkout as in the wheel.
BUILTIN_NAMESPACE = "toolreg.builtin_tools"

#: The ``format`` names of ``get_definitions``, ``get_definition`` and ``tool_result_message``.
DefinitionFormat = Literal[
    "openai", "openai-responses", "anthropic", "gemini", "gemini-json-schema", "mcp"
]


_TOOL_NAME_CHARS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-"


def is_tool_name(name: str) -> bool:
    """Whether ``name`` (a str) matches ``TOOL_NAME_RE``, without the regex's cost.

    Stripping the allowed characters off both ends leaves nothing exactly when
    every character is one of them.
    """
    return 0 < len(name) <= 128 and not name.strip(_TOOL_NAME_CHARS)


def check_tool_name(name: Any) -> None:
    """ValueError unless ``name`` is a valid registry tool name."""
    if not isinstance(name, str) or not is_tool_name(name):
        raise ValueError(
            f"Invalid tool name {name!r}: expected 1-128 characters "
            "of letters, digits, '_', '.', '-'"
        )


# (pattern, the rule as the error message states it). fullmatch, never "$":
# "$" also matches before a trailing newline.
NameRule = tuple[re.Pattern[str], str]

# OpenAI and Anthropic state the same rule. OpenAI's Chat Completions and Responses
# share one function-calling backend: "a-z, A-Z, 0-9, or contain underscores and
# dashes, with a maximum length of 64"; Anthropic's tool-use guide: "Must match the
# regex ^[a-zA-Z0-9_-]{1,64}$".
OPENAI_NAME: NameRule = (
    re.compile(r"[A-Za-z0-9_-]{1,64}"),
    "1-64 characters of letters, digits, '_' and '-'",
)
ANTHROPIC_NAME = OPENAI_NAME
# Gemini: "Must start with a letter or an underscore. Must be a-z, A-Z, 0-9, or
# contain underscores, dots and dashes, with a maximum length of 64." (Newer pages
# also allow ':', which registry names never contain.)
GEMINI_NAME: NameRule = (
    re.compile(r"[A-Za-z_][A-Za-z0-9_.-]{0,63}"),
    "1-64 characters of letters, digits, '_', '.' and '-', starting with a letter or '_'",
)
# MCP 2025-11-25, "Tool names": 1-128 of A-Z a-z 0-9 _ - ., the registry's own rule,
# so its own pattern (whose "^...$" fullmatch makes harmless).
MCP_NAME: NameRule = (
    TOOL_NAME_RE,
    "1-128 characters of letters, digits, '_', '.' and '-'",
)


def is_mcp(toolset: str) -> bool:
    """Whether ``toolset`` is an MCP server's (``mcp-<server>``)."""
    return toolset.startswith(MCP_PREFIX)


def toolset_name(server: str) -> str:
    """The toolset a server's tools live in; the server's own name is its alias."""
    return f"{MCP_PREFIX}{server}"


_UNSAFE = re.compile(r"[^A-Za-z0-9_]")


def sanitise(part: str) -> str:
    """``part`` with every character outside ``[A-Za-z0-9_]`` made ``_``."""
    return _UNSAFE.sub("_", part)


def registry_name(server: str, tool: str) -> str:
    """``mcp__<server>__<tool>``, both parts sanitised: a name every provider accepts."""
    return f"mcp__{sanitise(server)}__{sanitise(tool)}"


def wanted(tool: str, include: Sequence[str] | None, exclude: Sequence[str]) -> bool:
    """Whether ``[tools]`` keeps the server's tool ``tool`` (its MCP name, not ours).

    Patterns are exact names or globs (``read_*``), case-sensitive. With
    ``include`` set it alone decides, so a name it matches is kept whatever
    ``exclude`` says; otherwise ``exclude`` drops what it matches.
    """
    if include is not None:
        return _matches(tool, include)
    return not _matches(tool, exclude)


def _matches(tool: str, patterns: Sequence[str]) -> bool:
    return any(tool == p or fnmatch.fnmatchcase(tool, p) for p in patterns)
