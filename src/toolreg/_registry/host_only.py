"""Host-only actions: the one internal protocol toolreg's upper layers use on a registry.

The plugin host, the MCP manager and ``apply_config`` act for the host. Each
asks here first, so a pack that reaches them (through a hook, say) is refused
and recorded like any other plugin code asking for a host action. Nothing
outside ``_registry`` touches a registry's private parts; it comes through here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .._core.callers import RefusalListener
    from .registry import ToolRegistry


def require_host(registry: ToolRegistry, what: str) -> None:
    """PermissionError (recorded) when plugin code is on the stack asking for ``what``."""
    registry._callers.require_host(what)


def listen_for_refusals(registry: ToolRegistry, listener: RefusalListener | None) -> None:
    """Tell ``listener`` of every refusal the registry records (one listener; None: none)."""
    registry._callers.refusal_listener = listener
