"""Lazy entry points to MCP: ``import toolreg`` must work without the ``mcp`` package.

``start_mcp`` imports ``toolreg._mcp.manager`` (and with it the SDK) on its first
call; ``stop_mcp`` and ``get_mcp_manager`` never import it, since without a
started manager there is nothing to stop or report.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .._policy.config import Config, McpConfig
    from .._registry.registry import ToolRegistry
    from .manager import McpManager

_MANAGER = "toolreg._mcp.manager"
_SDK_MODULES = frozenset({"mcp", "mcp_types", "httpx2", "anyio", "pydantic"})
MCP_MISSING = "MCP support needs the 'mcp' package: pip install 'toolreg-core[mcp]'"


def start_mcp(
    config: Config | McpConfig, registry: ToolRegistry | None = None, **options: Any
) -> McpManager:
    """Connect the config's ``[mcp.servers]`` and register their tools as ``mcp-<name>``.

    Returns once every enabled server has connected or failed its first
    attempt (each bounded by its ``connect_timeout``); reconnects go on in the
    background. Raises ImportError when the ``mcp`` package is not installed.
    See docs/mcp.md.
    """
    try:
        from . import manager
    except ModuleNotFoundError as exc:
        if missing_sdk(exc):
            raise ImportError(MCP_MISSING) from exc
        raise
    return manager.start_mcp(config, registry, **options)


def missing_sdk(exc: ModuleNotFoundError) -> bool:
    """Whether ``exc`` says a module of the ``mcp`` extra is not installed."""
    return (exc.name or "").partition(".")[0] in _SDK_MODULES


def stop_mcp(registry: ToolRegistry | None = None) -> None:
    """Close the registry's MCP sessions and remove their toolsets (a no-op when none run)."""
    manager = sys.modules.get(_MANAGER)
    if manager is not None:
        manager.stop_mcp(registry)


def get_mcp_manager(registry: ToolRegistry | None = None) -> McpManager | None:
    """The registry's running MCP manager (``status()`` for each server), or None."""
    manager = sys.modules.get(_MANAGER)
    return None if manager is None else manager.get_mcp_manager(registry)
