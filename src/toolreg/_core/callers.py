"""Who is calling: the plugin policies the host bound, and whose code is on the stack.

The plugin loader binds each pack's files to the operator's decision here; the
table asks, on every write, whose code is writing. Host-only actions call
:meth:`Callers.require_host`, which refuses (and records) any call with plugin
code on the stack. The rules themselves live in :mod:`.gate`.
"""

from __future__ import annotations

import contextlib
import logging
import sys
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import NoReturn

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
    handler_origins,
    is_builtin,
    stack_modules,
)

logger = logging.getLogger("toolreg.registry")

_HOST = Owner(HOST_LABEL)
_BUILTIN = Owner(BUILTIN_LABEL)
_OWNERS_LIMIT = 1024

#: Returns the listener to tell of a refusal, or None once it is gone (a weak reference).
RefusalListener = Callable[[], Callable[[Decision], None] | None]


class Callers:
    """Policy binding (host code only) and code-derived identity, for one registry."""

    def __init__(
        self, lock: threading.RLock, log: DecisionLog, generation: Callable[[], int]
    ) -> None:
        #: The registry's writer lock: binding a policy is serialised with writes.
        self._lock = lock
        self._log = log
        self._generation = generation
        self.policies = PolicyBook()
        # Set by host code registering on a pack's behalf (a process-isolated
        # pack's tools); per thread, so no other thread's writes are affected.
        self._acting = threading.local()
        #: Told of every refusal, so a plugin report can show ones that come
        #: after loading (a hook's, at call time). Weak: a host may be dropped.
        self.refusal_listener: RefusalListener | None = None
        self._owners: dict[tuple[str, PluginPolicy | None], Owner] = {}

    def bind(
        self,
        module_namespace: str,
        allowed: bool,
        plugin_id: str | None,
        paths: Sequence[str] | None,
        tool_patterns: Sequence[str] | None,
        files: Iterable[str],
    ) -> PluginPolicy:
        """Bind a plugin's namespace and files to the operator's decision. Host only."""
        with self._lock:
            self.require_host(f"change plugin policies (namespace {module_namespace!r})")
            return self.policies.bind(
                module_namespace, allowed, plugin_id, paths, tool_patterns, files
            )

    def unbind(self, module_namespace: str) -> None:
        """Forget a namespace's policy. Host only."""
        with self._lock:
            self.require_host(f"change plugin policies (namespace {module_namespace!r})")
            self.policies.unbind(module_namespace)

    @contextlib.contextmanager
    def acting_for(self, policy: PluginPolicy) -> Iterator[None]:
        """Host code writing on a plugin's behalf: its writes pass that plugin's gate."""
        self.require_host(f"act for plugin {policy.plugin_id!r}")
        previous = getattr(self._acting, "policy", None)
        self._acting.policy = policy
        try:
            yield
        finally:
            self._acting.policy = previous

    def current(self) -> list[PluginPolicy]:
        """The plugins whose code is on the stack (or on whose behalf the host acts).

        The whole stack, toolreg's own frames included: they belong to no plugin.
        """
        acting = getattr(self._acting, "policy", None)
        callers = self.policies.involved(sys._getframe(0)) if self.policies else []
        if acting is not None and acting not in callers:
            callers.append(acting)
        return callers

    def require_host(self, what: str) -> None:
        """Raise PermissionError (and record it) when plugin code asks for a host action."""
        callers = self.current()
        reason = judge_host_action(what, callers)
        if reason is not None:
            self.refuse(callers[0], reason)

    def refuse(self, policy: PluginPolicy, reason: str, tool: str = "") -> NoReturn:
        """Record a refusal under the plugin's id, tell the listener, raise PermissionError."""
        logger.error("REFUSED: %s", reason)
        decision = Decision(
            action="rejected",
            tool=tool,
            toolset="",
            owner=policy.plugin_id,
            reason=reason,
            generation=self._generation(),
        )
        self._log.append(decision)
        listener = self.refusal_listener() if self.refusal_listener is not None else None
        if listener is not None:
            listener(decision)
        raise PermissionError(reason)

    def owner_for(
        self, toolset: str, handler: Handler, depth: int
    ) -> tuple[Owner, list[PluginPolicy]]:
        """Work out who is registering, from the handler's code and the stack."""
        origins = list(handler_origins(handler))
        stack = sys._getframe(depth)
        plugins = self.policies.involved(stack, origins) if self.policies else []
        acting = getattr(self._acting, "policy", None)
        if acting is not None:
            return self._owner(acting.plugin_id, acting), [acting, *plugins]
        if plugins:
            return self._owner(plugins[0].plugin_id, plugins[0]), plugins
        if is_mcp(toolset):
            return self._owner(MCP_LABEL_PREFIX + toolset.removeprefix(MCP_PREFIX), None), []
        if is_builtin(module for module, _ in origins) or is_builtin(stack_modules(stack)):
            return _BUILTIN, []
        return _HOST, []

    def _owner(self, label: str, policy: PluginPolicy | None) -> Owner:
        """One Owner per (label, policy), shared by all its tools: the table keeps one per tool."""
        key = (label, policy)
        owner = self._owners.get(key)
        if owner is None:
            if len(self._owners) >= _OWNERS_LIMIT:
                self._owners.clear()
            owner = self._owners[key] = Owner(label, policy)
        return owner
