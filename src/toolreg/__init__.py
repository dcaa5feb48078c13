"""toolreg: the tool registry for LLM agents.

``toolreg.registry`` is the process-wide :class:`ToolRegistry`; built-in tools,
tool packs and MCP servers all write into it, and agent hosts read from it.
"""

import typing as _typing

from ._authoring.decorator import tool
from ._contract.entry import ToolEntry, ToolOptions
from ._contract.result_messages import tool_result_message
from ._contract.results import is_tool_error, tool_error, tool_result
from ._contract.version import __version__
from ._core.decisions import Decision
from ._core.dispatch import DispatchHooks
from ._core.ownership import PluginPolicy
from ._core.registry import ToolRegistry, registry
from ._core.workers import worker_stats
from ._discovery.builtins import discover_builtin_tools, get_discovery_failures
from ._discovery.cache_files import get_cache_problems
from ._loaders.api import get_plugin_host, load_plugins, reload_plugins, unload_plugin
from ._loaders.hook_runner import HookFailure
from ._loaders.plugins import PluginHost
from ._loaders.report import PluginOutcome, PluginReport
from ._mcp.api import MCP_MISSING as _MCP_MISSING
from ._mcp.api import get_mcp_manager, start_mcp, stop_mcp
from ._policy.apply_config import apply_config, apply_toolset_config
from ._policy.config import Config, ConfigError, load_config, parse_config
from .hookspecs import hookimpl

if _typing.TYPE_CHECKING:
    from ._mcp.link import ReconnectPolicy
    from ._mcp.manager import McpManager

#: Public names whose modules need the optional MCP SDK: imported on first use.
_LAZY = {"McpManager": "toolreg._mcp.manager", "ReconnectPolicy": "toolreg._mcp.link"}

__all__ = [
    "Config",
    "ConfigError",
    "Decision",
    "DispatchHooks",
    "HookFailure",
    "McpManager",
    "PluginHost",
    "PluginOutcome",
    "PluginPolicy",
    "PluginReport",
    "ReconnectPolicy",
    "ToolEntry",
    "ToolOptions",
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


def __getattr__(name: str) -> object:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'toolreg' has no attribute {name!r}")
    import importlib

    value: _typing.Any
    try:
        value = getattr(importlib.import_module(module), name)
    except ImportError as exc:
        raise ImportError(f"toolreg.{name} needs the MCP SDK: {_MCP_MISSING}") from exc
    value.__module__ = __name__
    globals()[name] = value
    return value


def _present_as_toolreg() -> None:
    # Reprs, tracebacks and docs show "toolreg.ToolRegistry", the name users
    # import, instead of the private module that happens to define it.
    for name in __all__:
        value = globals().get(name)
        is_definition = isinstance(value, type) or hasattr(value, "__code__")
        if is_definition and str(getattr(value, "__module__", "")).startswith(__name__ + "."):
            value.__module__ = __name__


_present_as_toolreg()
