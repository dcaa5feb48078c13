"""MCP servers' tools in the registry: the manager and the API behind ``toolreg.start_mcp``.

The manager connects every enabled ``[mcp.servers.*]`` server on its own
background event loop and keeps each server's tools current as toolset
``mcp-<name>``. One manager per registry.
"""

from __future__ import annotations

import asyncio
import atexit
import concurrent.futures
import logging
import threading
import time
from collections.abc import Iterable
from typing import Any

from .._contract.names import toolset_name
from .._contract.tool_context import stamp_call_records
from .._policy.config import Config, McpConfig, McpServerConfig
from .._policy.config_reader import ConfigError
from .._policy.lock_file import Lock, read_lock
from .._registry.host_only import require_host
from .._registry.registry import ToolRegistry
from .._registry.registry import registry as default_registry
from .claims import NameClaims
from .link import ReconnectPolicy, ServerLink
from .lock_check import ServerLock

logger = logging.getLogger("toolreg.mcp")

#: Seconds ``stop`` waits for sessions to close: stdio shutdown is bounded at ~6 s.
STOP_TIMEOUT = 15.0
#: How often a waiting main thread looks for a pending Ctrl-C.
_WAIT_SLICE = 0.1

__all__ = ["McpManager", "ReconnectPolicy", "get_mcp_manager", "start_mcp", "stop_mcp"]


def wait_interruptibly(future: concurrent.futures.Future[Any], timeout: float) -> Any:
    """``future.result(timeout)``, waited in short slices.

    The kernel may hand a Ctrl-C to any thread; Python then only sets a flag,
    and a main thread blocked in one long wait would not see it until the wait
    ends. Short waits let it raise KeyboardInterrupt within a fraction of a second.
    """
    deadline = time.monotonic() + timeout
    while True:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise concurrent.futures.TimeoutError
        try:
            return future.result(min(remaining, _WAIT_SLICE))
        except concurrent.futures.TimeoutError:
            if future.done():
                raise  # the coroutine's own TimeoutError, not the wait's
            continue


class McpManager:
    """Holds the MCP sessions of one registry on a background event loop."""

    def __init__(
        self,
        servers: Iterable[McpServerConfig],
        registry: ToolRegistry,
        *,
        policy: ReconnectPolicy | None = None,
        lock: Lock | None = None,
        lock_error: str | None = None,
        mcp_drift: str = "withhold",
    ) -> None:
        """``lock``: the ``toolreg.lock`` its servers are checked against (None: none);
        ``lock_error``: why the lock could not be read, which withholds every tool."""
        stamp_call_records()  # its links log on the calls' behalf
        self.registry = registry
        self._configs = list(servers)
        self._policy = policy or ReconnectPolicy()
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(
            target=self._loop.run_forever, name="toolreg-mcp", daemon=True
        )
        self._links: dict[str, ServerLink] = {}
        self._tasks: list[asyncio.Task[None]] = []
        self._started = False
        self._stopped = False
        self._lock = lock
        self._lock_error = lock_error
        self._mcp_drift = mcp_drift

    def __repr__(self) -> str:
        states = ", ".join(f"{s['name']}={s['state']}" for s in self.status())
        return f"<McpManager {states or 'no servers'}>"

    @property
    def links(self) -> dict[str, ServerLink]:
        """Server name → its live link (for status and tests)."""
        return dict(self._links)

    def status(self) -> list[dict[str, Any]]:
        """One dict per configured server, by name: state, tools, failures, last error."""
        if not self._links:  # not started yet, or nothing configured
            return [
                {"name": c.name, "state": "disabled" if not c.enabled else "stopped"}
                for c in sorted(self._configs, key=lambda c: c.name)
            ]
        return [self._links[name].status() for name in sorted(self._links)]

    def start(self) -> None:
        """Connect every enabled server at once; return when each has settled."""
        require_host(self.registry, "start MCP servers")
        if self._started:
            raise RuntimeError("this McpManager has already been started")
        self._started = True
        self._thread.start()
        future = asyncio.run_coroutine_threadsafe(self._start(), self._loop)
        # Each server's first attempt is bounded by its own connect_timeout.
        deadline = max((c.connect_timeout for c in self._configs if c.enabled), default=0.0)
        try:
            wait_interruptibly(future, deadline + 5.0)
        except concurrent.futures.TimeoutError:  # pragma: no cover - a bound fired late
            logger.warning("MCP servers still connecting after %.0f s; continuing", deadline)

    async def _start(self) -> None:
        claims = NameClaims()  # tools of two servers never share a registry name
        for config in self._configs:
            link = ServerLink(
                config,
                self.registry,
                self._policy,
                self._loop,
                self._thread,
                claims,
                self._server_lock(config.name),
            )
            self._links[config.name] = link
            if config.enabled:
                self._tasks.append(asyncio.ensure_future(link.run()))
        waits = [
            # A backstop: the link itself settles when its connect_timeout passes.
            asyncio.wait_for(link.settled.wait(), link.config.connect_timeout + 1.0)
            for link in self._links.values()
            if link.config.enabled
        ]
        await asyncio.gather(*waits, return_exceptions=True)

    def _server_lock(self, name: str) -> ServerLock | None:
        if self._lock_error is not None:
            # Nothing the lock says can be believed, not even which servers it names.
            return ServerLock(None, self._mcp_drift, self._lock_error)
        if self._lock is None:
            return None
        return ServerLock(self._lock.servers.get(name), self._mcp_drift)

    def refresh(self, name: str) -> None:
        """Ask server ``name`` to re-list its tools now (they swap in when it answers)."""
        require_host(self.registry, "refresh an MCP server")
        self._links[name].request_refresh()

    def stop(self) -> None:
        """Close every session, end stdio servers, remove the toolsets, join the thread."""
        require_host(self.registry, "stop MCP servers")
        if self._stopped:
            return
        self._stopped = True
        if self._thread.is_alive():
            future = asyncio.run_coroutine_threadsafe(self._stop(), self._loop)
            try:
                future.result(STOP_TIMEOUT)
            except Exception as exc:  # closing must go on whatever a session did
                logger.warning("MCP sessions did not close cleanly: %r", exc)
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(STOP_TIMEOUT)
        for link in self._links.values():
            link.remove_tools()
        if not self._thread.is_alive():
            self._loop.close()

    async def _stop(self) -> None:
        for link in self._links.values():
            link.stop()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        # Calls still waiting on a closed session: end them, so no caller hangs.
        current = asyncio.current_task()
        leftovers = [t for t in asyncio.all_tasks() if t is not current]
        for task in leftovers:
            task.cancel()
        await asyncio.gather(*leftovers, return_exceptions=True)


# -- the module API --------------------------------------------------------------------------

_managers: dict[int, McpManager] = {}
_lock = threading.Lock()


def start_mcp(
    config: Config | McpConfig,
    registry: ToolRegistry | None = None,
    *,
    policy: ReconnectPolicy | None = None,
) -> McpManager:
    """Start the config's MCP servers into ``registry`` (default: the process-wide one).

    A manager already running for that registry is stopped first. With a full
    ``Config``, servers whose toolset (``mcp-<name>``) or alias (``<name>``)
    the ``[toolsets]`` lists turn off are not started.
    """
    registry = default_registry if registry is None else registry
    lock, lock_error, mcp_drift = _read_lock(config)
    manager = McpManager(
        _servers(config),
        registry,
        policy=policy,
        lock=lock,
        lock_error=lock_error,
        mcp_drift=mcp_drift,
    )
    with _lock:
        old = _managers.get(id(registry))
        _managers[id(registry)] = manager
    if old is not None:
        old.stop()
    manager.start()
    return manager


def stop_mcp(registry: ToolRegistry | None = None) -> None:
    """Stop the registry's MCP manager, if it has one."""
    registry = default_registry if registry is None else registry
    with _lock:
        manager = _managers.pop(id(registry), None)
    if manager is not None:
        manager.stop()


def get_mcp_manager(registry: ToolRegistry | None = None) -> McpManager | None:
    """The registry's running MCP manager, or None."""
    registry = default_registry if registry is None else registry
    return _managers.get(id(registry))


@atexit.register
def _stop_all() -> None:
    # A host that never called stop_mcp must not leave server processes behind.
    with _lock:
        managers = list(_managers.values())
        _managers.clear()
    for manager in managers:
        manager.stop()


def _read_lock(config: Config | McpConfig) -> tuple[Lock | None, str | None, str]:
    """(the lock, why it cannot be read, ``[lock] mcp_drift``), read once per manager."""
    if isinstance(config, McpConfig) or config.lock.path is None:
        return None, None, "withhold"  # no lock to look for: enforcement off
    mode = config.lock.mcp_drift
    try:
        return read_lock(config.lock.path), None, mode
    except ConfigError as exc:
        # Fail closed: a lock that cannot be read cannot say which tools are reviewed.
        logger.error("MCP servers' tools are withheld: the lock cannot be read: %s", exc)
        return None, str(exc), mode


def _servers(config: Config | McpConfig) -> list[McpServerConfig]:
    if isinstance(config, McpConfig):
        return list(config.servers.values())
    servers = []
    for server in config.mcp.servers.values():
        if server.enabled and not _toolset_on(config, server.name):
            logger.info("MCP server %s: toolset turned off by [toolsets]", server.name)
            server = server._replace(enabled=False)
        servers.append(server)
    return servers


def _toolset_on(config: Config, server: str) -> bool:
    toolset = toolset_name(server)
    names = {toolset, server}
    names |= {alias for alias, target in config.toolsets.aliases.items() if target in names}
    # The server's name and its config aliases all mean its toolset.
    return config.toolsets.allows(toolset, lambda name: toolset if name in names else name)
