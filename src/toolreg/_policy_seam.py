"""The seam between the table and the plugin policy: who is registering, and may they.

The plugin loader binds each pack's module namespace to the operator's
decision here; the table asks, on every write, whose code is writing.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence

from ._conflicts import is_mcp
from ._entry import Handler
from ._ownership import (
    Owner,
    PluginPolicy,
    PolicyBook,
    caller_origins,
    handler_origins,
    is_builtin,
)


class PolicySeamMixin:
    """Policy binding (host code only) and code-derived ownership, for the table."""

    _lock: threading.RLock
    _policies: PolicyBook

    def register_plugin_override_policy(
        self,
        module_namespace: str,
        allowed: bool,
        *,
        plugin_id: str | None = None,
        paths: Sequence[str] | None = None,
        tool_patterns: Sequence[str] | None = None,
    ) -> PluginPolicy:
        """Bind a plugin's module namespace to the operator's override decision.

        Only host code may call this: a call from inside any bound plugin
        namespace raises PermissionError, so a pack cannot grant itself consent.
        """
        with self._lock:
            callers = self._policies.involved(caller_origins(2))
            if callers:
                raise PermissionError(
                    f"Plugin {callers[0].plugin_id!r} may not change plugin policies "
                    f"(attempted for namespace {module_namespace!r})"
                )
            return self._policies.bind(module_namespace, allowed, plugin_id, paths, tool_patterns)

    def get_plugin_policy(self, module_namespace: str) -> PluginPolicy | None:
        return self._policies.get(module_namespace)

    def remove_plugin_override_policy(self, module_namespace: str) -> None:
        """Forget a namespace's policy (host only, like binding)."""
        with self._lock:
            callers = self._policies.involved(caller_origins(2))
            if callers:
                raise PermissionError(f"Plugin {callers[0].plugin_id!r} may not change policies")
            self._policies.unbind(module_namespace)

    def _owner_for(
        self, toolset: str, handler: Handler, depth: int
    ) -> tuple[Owner, list[PluginPolicy]]:
        """Work out who is registering, from the handler's code and the stack."""
        origins = list(handler_origins(handler))
        stack = list(caller_origins(depth + 1))
        plugins = self._policies.involved(stack + origins) if self._policies else []
        if plugins:
            return Owner(plugins[0].plugin_id, plugins[0]), plugins
        if is_mcp(toolset):
            return Owner("mcp:" + toolset.removeprefix("mcp-")), []
        if is_builtin(origins) or is_builtin(stack):
            return Owner("builtin"), []
        return Owner("host"), []
