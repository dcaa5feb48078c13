"""The seam between the table and the plugin policy: who is calling, and may they.

The plugin loader binds each pack's files to the operator's decision here; the
table asks, on every write, whose code is writing. Host-only actions ask
:meth:`PolicySeamMixin._require_host`, which refuses (and records) any call
with plugin code on the stack.
"""

from __future__ import annotations

import contextlib
import logging
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence

from .._contract.entry import Handler
from .._contract.names import MCP_PREFIX, is_mcp
from .decisions import Decision, DecisionLog
from .gate import judge_host_action
from .ownership import (
    BUILTIN_LABEL,
    HOST_LABEL,
    MCP_LABEL_PREFIX,
    Owner,
    PluginPolicy,
    PolicyBook,
    caller_origins,
    handler_origins,
    is_builtin,
)

logger = logging.getLogger("toolreg.registry")


class PolicySeamMixin:
    """Policy binding (host code only) and code-derived ownership, for the table."""

    _lock: threading.RLock
    _policies: PolicyBook
    _log: DecisionLog
    _generation: int

    def _init_policy_seam(self) -> None:
        self._policies = PolicyBook()
        # Set by host code registering on a pack's behalf (a process-isolated
        # pack's tools); per thread, so no other thread's writes are affected.
        self._acting = threading.local()
        #: Told of every refusal, so a plugin report can show ones that come
        #: after loading (a hook's, at call time). Weak: a host may be dropped.
        self._refusal_listener: Callable[[], Callable[[Decision], None] | None] | None = None

    def register_plugin_override_policy(
        self,
        module_namespace: str,
        allowed: bool,
        *,
        plugin_id: str | None = None,
        paths: Sequence[str] | None = None,
        tool_patterns: Sequence[str] | None = None,
        files: Iterable[str] = (),
    ) -> PluginPolicy:
        """Bind a plugin's module namespace and code to the operator's override decision.

        ``files`` are the exact files its distribution installed; ``paths`` the
        directories holding its code (found from the namespace when None). Only
        host code may call this, so a pack cannot grant itself consent.
        """
        with self._lock:
            self._require_host(f"change plugin policies (namespace {module_namespace!r})")
            return self._policies.bind(
                module_namespace, allowed, plugin_id, paths, tool_patterns, files
            )

    def get_plugin_policy(self, module_namespace: str) -> PluginPolicy | None:
        return self._policies.get(module_namespace)

    def remove_plugin_override_policy(self, module_namespace: str) -> None:
        """Forget a namespace's policy (host only, like binding)."""
        with self._lock:
            self._require_host(f"change plugin policies (namespace {module_namespace!r})")
            self._policies.unbind(module_namespace)

    @contextlib.contextmanager
    def acting_for(self, policy: PluginPolicy) -> Iterator[None]:
        """Host code writing on a plugin's behalf: its writes pass that plugin's gate.

        For tools whose code is not in this process (a process-isolated pack):
        they are owned by, and judged as, ``policy``. Host only.
        """
        self._require_host(f"act for plugin {policy.plugin_id!r}")
        previous = getattr(self._acting, "policy", None)
        self._acting.policy = policy
        try:
            yield
        finally:
            self._acting.policy = previous

    # -- who is calling --------------------------------------------------------------

    def _callers(self) -> list[PluginPolicy]:
        """The plugins whose code is on the stack (or on whose behalf the host acts).

        The whole stack, toolreg's own frames included: they belong to no plugin.
        """
        acting = getattr(self._acting, "policy", None)
        callers = self._policies.involved(list(caller_origins(1))) if self._policies else []
        if acting is not None and acting not in callers:
            callers.append(acting)
        return callers

    def _require_host(self, what: str) -> None:
        """Raise PermissionError (and record it) when plugin code asks for a host action."""
        callers = self._callers()
        reason = judge_host_action(what, callers)
        if reason is not None:
            self._refused(callers[0], reason)

    def _refused(self, policy: PluginPolicy, reason: str, tool: str = "") -> None:
        logger.error("REFUSED: %s", reason)
        decision = Decision(
            action="rejected",
            tool=tool,
            toolset="",
            owner=policy.plugin_id,
            reason=reason,
            generation=self._generation,
        )
        self._log.append(decision)
        listener = self._refusal_listener() if self._refusal_listener is not None else None
        if listener is not None:
            listener(decision)
        raise PermissionError(reason)

    def _owner_for(
        self, toolset: str, handler: Handler, depth: int
    ) -> tuple[Owner, list[PluginPolicy]]:
        """Work out who is registering, from the handler's code and the stack."""
        origins = list(handler_origins(handler))
        stack = list(caller_origins(depth + 1))
        plugins = self._policies.involved(stack + origins) if self._policies else []
        acting = getattr(self._acting, "policy", None)
        if acting is not None:
            return Owner(acting.plugin_id, acting), [acting, *plugins]
        if plugins:
            return Owner(plugins[0].plugin_id, plugins[0]), plugins
        if is_mcp(toolset):
            return Owner(MCP_LABEL_PREFIX + toolset.removeprefix(MCP_PREFIX)), []
        if is_builtin(origins) or is_builtin(stack):
            return Owner(BUILTIN_LABEL), []
        return Owner(HOST_LABEL), []
