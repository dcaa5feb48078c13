"""toolreg: the tool registry for LLM agents.

``toolreg.registry`` is the process-wide :class:`ToolRegistry`; built-in tools,
tool packs and MCP servers all write into it, and agent hosts read from it.

Every public name is imported on first use (PEP 562), so ``import toolreg``
costs next to nothing and each part loads only what it needs: the registry
does not load the config reader, pluggy, the validators or the MCP SDK.
``McpManager`` and ``ReconnectPolicy`` need the ``mcp`` extra, so they are
attributes outside ``__all__``: ``from toolreg import *`` works without it.
"""

from ._contract.version import __version__

# typing itself costs more than the rest of this module: the constant stands
# in for typing.TYPE_CHECKING, as type checkers understand.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from ._authoring.decorator import tool
    from ._contract.client_log import ClientLog, bound_client_log
    from ._contract.entry import ToolEntry, ToolOptions
    from ._contract.names import DefinitionFormat
    from ._contract.result_message_types import (
        AnthropicToolResult,
        GeminiFunctionResponsePart,
        McpToolResult,
        OpenAIFunctionCallOutput,
        OpenAIToolMessage,
    )
    from ._contract.result_messages import tool_result_message
    from ._contract.results import is_tool_error, tool_error, tool_result
    from ._contract.tool_context import ToolContext, current_context
    from ._core.decisions import Decision
    from ._core.plugin_policy import PluginPolicy
    from ._discovery.builtins import discover_builtin_tools, get_discovery_failures
    from ._discovery.cache_files import get_cache_problems
    from ._dispatch.dispatch import DispatchHooks
    from ._dispatch.workers import worker_stats
    from ._loaders.api import get_plugin_host, load_plugins, reload_plugins, unload_plugin
    from ._loaders.hook_runner import HookFailure
    from ._loaders.plugins import PluginHost
    from ._loaders.report import PluginOutcome, PluginReport
    from ._mcp.api import get_mcp_manager, start_mcp, stop_mcp
    from ._mcp.link import ReconnectPolicy as ReconnectPolicy  # outside __all__: needs mcp
    from ._mcp.manager import McpManager as McpManager  # outside __all__: needs mcp
    from ._policy.apply_config import apply_config, apply_toolset_config
    from ._policy.config import Config, ConfigError, load_config, parse_config
    from ._registry.registry import ToolRegistry, registry
    from ._registry.strict_tools import strict_arguments, strict_refusals
    from ._registry.tracing_switch import enable_tracing
    from ._schemas.definition_types import (
        AnthropicToolDefinition,
        GeminiFunctionDeclaration,
        McpToolDefinition,
        OpenAIFunction,
        OpenAIResponsesToolDefinition,
        OpenAIToolDefinition,
    )
    from ._search.hit import SearchHit
    from .hookspecs import hookimpl
del TYPE_CHECKING

#: Where each public name is defined, relative to this package.
_SOURCES = {
    "AnthropicToolDefinition": "._schemas.definition_types",
    "AnthropicToolResult": "._contract.result_message_types",
    "ClientLog": "._contract.client_log",
    "Config": "._policy.config",
    "ConfigError": "._policy.config",
    "Decision": "._core.decisions",
    "DefinitionFormat": "._contract.names",
    "DispatchHooks": "._dispatch.dispatch",
    "GeminiFunctionDeclaration": "._schemas.definition_types",
    "GeminiFunctionResponsePart": "._contract.result_message_types",
    "HookFailure": "._loaders.hook_runner",
    "McpManager": "._mcp.manager",
    "McpToolDefinition": "._schemas.definition_types",
    "McpToolResult": "._contract.result_message_types",
    "OpenAIFunction": "._schemas.definition_types",
    "OpenAIFunctionCallOutput": "._contract.result_message_types",
    "OpenAIResponsesToolDefinition": "._schemas.definition_types",
    "OpenAIToolDefinition": "._schemas.definition_types",
    "OpenAIToolMessage": "._contract.result_message_types",
    "PluginHost": "._loaders.plugins",
    "PluginOutcome": "._loaders.report",
    "PluginPolicy": "._core.plugin_policy",
    "PluginReport": "._loaders.report",
    "ReconnectPolicy": "._mcp.link",
    "SearchHit": "._search.hit",
    "ToolContext": "._contract.tool_context",
    "ToolEntry": "._contract.entry",
    "ToolOptions": "._contract.entry",
    "ToolRegistry": "._registry.registry",
    "apply_config": "._policy.apply_config",
    "current_context": "._contract.tool_context",
    "apply_toolset_config": "._policy.apply_config",
    "bound_client_log": "._contract.client_log",
    "discover_builtin_tools": "._discovery.builtins",
    "enable_tracing": "._registry.tracing_switch",
    "get_cache_problems": "._discovery.cache_files",
    "get_discovery_failures": "._discovery.builtins",
    "get_mcp_manager": "._mcp.api",
    "get_plugin_host": "._loaders.api",
    "hookimpl": ".hookspecs",
    "is_tool_error": "._contract.results",
    "load_config": "._policy.config",
    "load_plugins": "._loaders.api",
    "parse_config": "._policy.config",
    "registry": "._registry.registry",
    "reload_plugins": "._loaders.api",
    "start_mcp": "._mcp.api",
    "stop_mcp": "._mcp.api",
    "strict_arguments": "._registry.strict_tools",
    "strict_refusals": "._registry.strict_tools",
    "tool": "._authoring.decorator",
    "tool_error": "._contract.results",
    "tool_result": "._contract.results",
    "tool_result_message": "._contract.result_messages",
    "unload_plugin": "._loaders.api",
    "worker_stats": "._dispatch.workers",
}

#: Public names whose modules need the optional MCP SDK: left out of ``__all__``.
_NEEDS_MCP = frozenset({"McpManager", "ReconnectPolicy"})

__all__ = [
    "AnthropicToolDefinition",
    "AnthropicToolResult",
    "ClientLog",
    "Config",
    "ConfigError",
    "Decision",
    "DefinitionFormat",
    "DispatchHooks",
    "GeminiFunctionDeclaration",
    "GeminiFunctionResponsePart",
    "HookFailure",
    "McpToolDefinition",
    "McpToolResult",
    "OpenAIFunction",
    "OpenAIFunctionCallOutput",
    "OpenAIResponsesToolDefinition",
    "OpenAIToolDefinition",
    "OpenAIToolMessage",
    "PluginHost",
    "PluginOutcome",
    "PluginPolicy",
    "PluginReport",
    "SearchHit",
    "ToolContext",
    "ToolEntry",
    "ToolOptions",
    "ToolRegistry",
    "__version__",
    "apply_config",
    "apply_toolset_config",
    "bound_client_log",
    "current_context",
    "discover_builtin_tools",
    "enable_tracing",
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
    "strict_arguments",
    "strict_refusals",
    "tool",
    "tool_error",
    "tool_result",
    "tool_result_message",
    "unload_plugin",
    "worker_stats",
]


def __getattr__(name: str) -> object:
    source = _SOURCES.get(name)
    if source is None:
        raise AttributeError(f"module 'toolreg' has no attribute {name!r}")
    import importlib

    try:
        module = importlib.import_module(source, __name__)
    except ImportError as exc:
        if name not in _NEEDS_MCP:
            raise
        from ._mcp.api import MCP_MISSING

        raise ImportError(f"toolreg.{name} needs the MCP SDK: {MCP_MISSING}") from exc
    _bind_loaded()
    return globals()[name] if name in globals() else getattr(module, name)


def __dir__() -> list[str]:
    return sorted({*globals(), *_SOURCES})


def _bind_loaded() -> None:
    """Bind every public name whose module is loaded now, presented as ``toolreg``'s.

    Reprs, tracebacks and docs then show "toolreg.ToolRegistry", the name users
    import, instead of the private module that happens to define it, whichever
    name was asked for first. A name already bound (``toolreg.registry``
    pointed at another registry by a loader) is left alone, even when that
    happens on another thread while this runs: ``setdefault`` never replaces.
    """
    import sys

    namespace = globals()
    for name, source in _SOURCES.items():
        module = sys.modules.get(__name__ + source)
        if name in namespace or module is None or not hasattr(module, name):
            continue
        value = getattr(module, name)
        is_definition = isinstance(value, type) or hasattr(value, "__code__")
        if is_definition and str(getattr(value, "__module__", "")).startswith(__name__ + "."):
            value.__module__ = __name__
        namespace.setdefault(name, value)
