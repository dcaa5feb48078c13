"""Who is calling: the plugin policies the host bound, and whose code is on the stack.

The table asks here on every write; :meth:`Callers.require_host` refuses (and records)
a host action with plugin code on the stack. The rules live in :mod:`.gate`.
"""

from __future__ import annotations

import contextlib
import contextvars
import logging
import sys
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from types import CoroutineType, FrameType, FunctionType
from typing import TYPE_CHECKING, Any, NoReturn, TypeVar

from .._contract.entry import Handler
from .._contract.names import MCP_PREFIX
from .decisions import Decision, DecisionLog
from .gate import judge_host_action
from .ownership import (
    BUILTIN_LABEL,
    HOST_LABEL,
    MCP_LABEL_PREFIX,
    Owner,
    PolicyBook,
    builtin_on_stack,
    handler_origins,
    is_builtin_module,
)

if TYPE_CHECKING:
    from .plugin_policy import PluginPolicy

logger = logging.getLogger("toolreg.registry")

#: The host's Owner, shared by every host write.
HOST = Owner(HOST_LABEL)
_BUILTIN = Owner(BUILTIN_LABEL)
_OWNERS_LIMIT = 1024
_getframe = sys._getframe

#: Returns the listener to tell of a refusal, or None once it is gone (a weak reference).
RefusalListener = Callable[[], "Callable[[Decision], None] | None"]

_T = TypeVar("_T")

#: The plugins whose code toolreg is running in this context, outermost first: a
#: handler, check_fn, schema override or hook a pack handed over, or its import.
#: Code a pack made runs later from host context, and its file may be none of the
#: pack's (loaded from elsewhere, or given a built-in module's globals), so the
#: stack alone would judge it as the host: what it writes is judged as its
#: maker's too. A context variable, so that tasks, ``call_soon`` callbacks and
#: toolreg's worker threads started inside inherit it.
_MAKERS: contextvars.ContextVar[tuple[PluginPolicy, ...]] = contextvars.ContextVar(
    "toolreg_makers", default=()
)


def run_made_by(
    maker: PluginPolicy | None, fn: Callable[..., _T], /, *args: Any, **kwargs: Any
) -> _T:
    """Call ``fn``, which ``maker``'s pack handed over: its registry writes are judged
    as that pack's too. A coroutine it returns runs so as well, whenever awaited."""
    if maker is None:
        return fn(*args, **kwargs)
    token = _MAKERS.set((*_MAKERS.get(), maker))
    try:
        result = fn(*args, **kwargs)
    finally:
        _MAKERS.reset(token)
    if type(result) is CoroutineType:
        return _awaited_made_by(maker, result)  # type: ignore[return-value]
    return result


async def _awaited_made_by(maker: PluginPolicy, coro: Any) -> Any:
    token = _MAKERS.set((*_MAKERS.get(), maker))
    try:
        return await coro
    finally:
        _MAKERS.reset(token)


def made_by(maker: PluginPolicy | None, fn: Callable[..., _T]) -> Callable[..., _T]:
    """``fn`` itself for host code (no maker), else ``fn`` run by :func:`run_made_by`."""
    if maker is None:
        return fn
    import functools

    return functools.partial(run_made_by, maker, fn)


class _Acting(threading.local):
    """The plugin host code acts for on this thread (see ``Callers.acting_for``)."""

    # A class default: reading it where unset is a plain lookup, not a caught AttributeError.
    policy: PluginPolicy | None = None


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
        self._acting = _Acting()
        # How many acting_for blocks are open, on any thread: while none is, a
        # write need not read its thread's.
        self._acting_now = 0
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
        locked_tools: Mapping[str, str] | None = None,
    ) -> PluginPolicy:
        """Bind a plugin's namespace and files to the operator's decision. Host only."""
        with self._lock:
            self.require_host(f"change plugin policies (namespace {module_namespace!r})")
            return self.policies.bind(
                module_namespace, allowed, plugin_id, paths, tool_patterns, files, locked_tools
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
        with self._lock:  # counted exactly: a lost count would judge a write as the host's
            self._acting_now += 1
        previous = self._acting.policy
        self._acting.policy = policy
        try:
            yield
        finally:
            self._acting.policy = previous
            with self._lock:
                self._acting_now -= 1

    def current(self) -> list[PluginPolicy]:
        """The plugins whose code is on the stack (or on whose behalf the host acts).

        The whole stack, toolreg's own frames included: they belong to no plugin.
        """
        acting = self._acting.policy
        callers = self.policies.involved(sys._getframe(0))
        if acting is not None and acting not in callers:
            callers.append(acting)
        return _with_makers(callers, _MAKERS.get())

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
        with self._lock:  # the log's writers are ordered by the writer lock
            self._log.append(decision)
        listener = self.refusal_listener() if self.refusal_listener is not None else None
        if listener is not None:
            listener(decision)
        raise PermissionError(reason)

    def owner_for(
        self, toolset: str, handler: Handler, depth: int
    ) -> tuple[Owner, Sequence[PluginPolicy]]:
        """Work out who is registering, from the handler's code and the stack.

        ``depth`` counts frames out from the code that asks: 0 is that code.
        """
        if self.policies.bound or self._acting_now or _MAKERS.get():
            return CallSite(self, depth + 1).owner(toolset, handler)
        return self.unbound_owner(toolset, handler, _getframe(depth + 1))

    def unbound_owner(
        self, toolset: str, handler: Handler, frame: FrameType
    ) -> tuple[Owner, Sequence[PluginPolicy]]:
        """Who registers from ``frame`` with no plugin bound and none acted for: host
        code, a built-in or an MCP server, and no pack's files need looking up."""
        if toolset.startswith(MCP_PREFIX):
            return self._owner(MCP_LABEL_PREFIX + toolset.removeprefix(MCP_PREFIX), None), ()
        if _builtin_handler(handler) or builtin_on_stack(frame):
            return _BUILTIN, ()
        return HOST, ()

    def _owner(self, label: str, policy: PluginPolicy | None, acted: bool = False) -> Owner:
        """One Owner per (label, policy, acted), shared by all its tools: the table keeps
        one per tool."""
        key = (label, policy, acted)
        owner = self._owners.get(key)
        if owner is None:
            if len(self._owners) >= _OWNERS_LIMIT:
                self._owners.clear()
            owner = self._owners[key] = Owner(label, policy, acted)
        return owner


def _with_makers(
    plugins: list[PluginPolicy], makers: tuple[PluginPolicy, ...]
) -> list[PluginPolicy]:
    """``plugins``, then the makers of the code running (innermost first), without repeats."""
    if not makers:
        return plugins
    return plugins + [maker for maker in reversed(makers) if maker not in plugins]


def _builtin_handler(handler: Handler) -> bool:
    """Whether a layer of ``handler`` names a built-in module; asked once no plugin is involved."""
    if type(handler) is FunctionType and not handler.__dict__:
        # Most writes are a plain function's: its one layer is its own module
        # (``handler_origins`` says so too), read without building the list.
        return is_builtin_module(handler.__module__)
    return any(is_builtin_module(module) for module, _ in handler_origins(handler))


class CallSite:
    """Whose code is on a writer's stack, read once for one write or a whole batch.

    A batch's registrations share the stack, so it is walked once (again only
    if policies were bound or unbound meanwhile); each handler's own code, the
    plugin the host acts for and the bound policies are read per write. Lives
    for one call: it holds a frame.
    """

    __slots__ = ("_callers", "first_frame", "_bound", "_plugins", "_builtin")

    def __init__(self, callers: Callers, depth: int) -> None:
        """``depth`` counts frames out from the code that makes the CallSite."""
        self._callers = callers
        #: The innermost frame read: the caller of the code that made this.
        self.first_frame: FrameType = sys._getframe(depth + 1)
        book = callers.policies
        self._bound = book.bound
        self._plugins = book.involved(self.first_frame) if self._bound else []
        self._builtin: bool | None = None  # walked for only when no plugin is involved

    def owner(self, toolset: str, handler: Handler) -> tuple[Owner, Sequence[PluginPolicy]]:
        """Who registers ``handler`` into ``toolset`` from this stack.

        The stack is read again if policies were bound or unbound since it was read.
        """
        callers = self._callers
        book = callers.policies
        makers = _MAKERS.get()
        if not book.bound and not callers._acting_now and not makers:
            return callers.unbound_owner(toolset, handler, self.first_frame)
        if book.bound is not self._bound:
            self._bound = book.bound
            self._plugins = book.involved(self.first_frame)
        plugins = self._plugins
        if self._bound:
            plugins = callers.policies.with_files(plugins, handler_origins(handler))
        plugins = _with_makers(plugins, makers)
        acting = callers._acting.policy
        if acting is not None:
            return callers._owner(acting.plugin_id, acting, acted=True), [acting, *plugins]
        if plugins:
            return callers._owner(plugins[0].plugin_id, plugins[0]), plugins
        if toolset.startswith(MCP_PREFIX):
            label = MCP_LABEL_PREFIX + toolset.removeprefix(MCP_PREFIX)
            return callers._owner(label, None), ()
        if _builtin_handler(handler):
            return _BUILTIN, ()
        if self._builtin is None:
            self._builtin = builtin_on_stack(self.first_frame)
        return (_BUILTIN if self._builtin else HOST), ()
