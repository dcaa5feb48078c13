"""toolreg: the tool registry for LLM agents.

``toolreg.registry`` is the process-wide :class:`ToolRegistry`; built-in tools,
tool packs and MCP servers all write into it, and agent hosts read from it.
"""

from __future__ import annotations

from ._decisions import Decision
from ._discovery import discover_builtin_tools, get_discovery_failures
from ._entry import ToolEntry
from ._ownership import PluginPolicy
from ._registry import ToolRegistry, registry
from ._results import is_tool_error, tool_error, tool_result

__version__ = "0.1.0"

__all__ = [
    "Decision",
    "PluginPolicy",
    "ToolEntry",
    "ToolRegistry",
    "__version__",
    "discover_builtin_tools",
    "get_discovery_failures",
    "is_tool_error",
    "registry",
    "tool_error",
    "tool_result",
]
