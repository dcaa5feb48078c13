"""toolreg: the tool registry for LLM agents.

``toolreg.registry`` is the process-wide :class:`ToolRegistry`; built-in tools,
tool packs and MCP servers all write into it, and agent hosts read from it.
"""

from __future__ import annotations

from ._authoring.decorator import tool
from ._contract.entry import ToolEntry
from ._contract.result_messages import tool_result_message
from ._contract.results import is_tool_error, tool_error, tool_result
from ._contract.version import __version__
from ._core.decisions import Decision
from ._core.ownership import PluginPolicy
from ._core.registry import ToolRegistry, registry
from ._core.workers import worker_stats
from ._discovery.builtins import discover_builtin_tools, get_discovery_failures
from ._discovery.cache_files import get_cache_problems
from ._loaders.plugins import get_plugin_host, load_plugins, reload_plugins, unload_plugin
from ._loaders.report import PluginOutcome, PluginReport
from ._mcp.api import get_mcp_manager, start_mcp, stop_mcp
from ._policy.config import Config, ConfigError, load_config, parse_config
from ._policy.toolsets import apply_config, apply_toolset_config
from .hookspecs import hookimpl

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
