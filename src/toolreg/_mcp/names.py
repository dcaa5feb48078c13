"""How MCP servers' tools are named in the registry, and which of them are kept.

A tool ``read.file`` of server ``docs`` is ``mcp__docs__read_file`` in toolset
``mcp-docs``: each part is cut down to ``[A-Za-z0-9_]``, which every model
provider accepts in a function name.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Sequence

_UNSAFE = re.compile(r"[^A-Za-z0-9_]")


def sanitise(part: str) -> str:
    """``part`` with every character outside ``[A-Za-z0-9_]`` made ``_``."""
    return _UNSAFE.sub("_", part)


def registry_name(server: str, tool: str) -> str:
    """``mcp__<server>__<tool>``, both parts sanitised."""
    return f"mcp__{sanitise(server)}__{sanitise(tool)}"


def toolset_name(server: str) -> str:
    """The toolset a server's tools live in; the server's own name is its alias."""
    return f"mcp-{server}"


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
