"""Host-only actions: the one internal protocol toolreg's upper layers use on a registry.

A pack that reaches the plugin host, the MCP manager or ``apply_config`` is refused and
recorded here; nothing outside ``_registry`` touches a registry's private parts.
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
