"""toolreg: the tool registry for LLM agents.

``toolreg.registry`` is the process-wide :class:`ToolRegistry`; built-in tools,
tool packs and MCP servers all write into it, and agent hosts read from it.
"""

from __future__ import annotations

from ._cache_files import get_cache_problems
from ._config import Config, ConfigError, load_config, parse_config
from ._decisions import Decision
from ._decorator import tool
from ._discovery import discover_builtin_tools, get_discovery_failures
from ._entry import ToolEntry
from ._mcp_api import get_mcp_manager, start_mcp, stop_mcp
from ._ownership import PluginPolicy
from ._plugins import get_plugin_host, load_plugins, reload_plugins, unload_plugin
from ._registry import ToolRegistry, registry
from ._report import PluginOutcome, PluginReport
from ._result_messages import tool_result_message
from ._results import is_tool_error, tool_error, tool_result
from ._toolsets import apply_config, apply_toolset_config
from ._workers import worker_stats
from .hookspecs import hookimpl

__version__ = "0.1.0"

__all__ = [
    "Config",
    "ConfigError",
    "Decision",
    "PluginOutcome",
    "PluginPolicy",
    "PluginReport",
    "ToolEntry",
    "ToolRegistry",
    "__version__",
    "apply_config",
    "apply_toolset_config",
    "discover_builtin_tools",
    "get_cache_problems",
    "get_discovery_failures",
    "get_mcp_manager",
    "get_plugin_host",
    "hookimpl",
    "is_tool_error",
    "load_config",
    "load_plugins",
    "parse_config",
    "registry",
    "reload_plugins",
    "start_mcp",
    "stop_mcp",
    "tool",
    "tool_error",
    "tool_result",
    "tool_result_message",
    "unload_plugin",
    "worker_stats",
]
