"""The isolated packs of one plugin host: their processes, started, watched and stopped.

Each ``isolation = "process"`` pack runs as a child process linked by an
:class:`~toolreg._loaders.isolated_link.IsolatedLink` on a background event loop,
and is restarted with backoff if it dies.
"""

from __future__ import annotations

import asyncio
import atexit
import logging
import sys
import threading
import weakref
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from .._core.plugin_policy import PluginPolicy
from .._discovery.entrypoints import PackRecord
from .._discovery.local_plugins import LocalPlugin
from .._mcp.link import ReconnectPolicy
from .._policy.config import Config, McpServerConfig
from .._registry.registry import ToolRegistry
from .isolated_environment import child_environment, hide_host_from_children, workspace
from .isolated_link import IsolatedLink
from .isolated_wire import CHILD_MODULE, SPEC_ENV, PackSpec

logger = logging.getLogger("toolreg.plugins")

#: How long a pack's process may take to import the pack and list its tools.
START_TIMEOUT = 60.0
#: How long one call into a pack's process may take.
CALL_TIMEOUT = 120.0
#: Seconds ``stop`` waits for a process to close (the SDK bounds its shutdown at ~6 s).
STOP_TIMEOUT = 15.0
#: Stands for the pack's module namespace, which is not in this process.
PLACEHOLDER_NAMESPACE = "toolreg_isolated_pack"


@dataclass
class Started:
    """How starting an isolated pack went; ``hook_plugin`` goes to pluggy when loaded."""

    status: str
    reason: str = ""
    traceback: str = ""
    hooks: list[str] = field(default_factory=list)
    hook_plugin: Any = None


class IsolatedPacks:
    """The child processes of one registry's isolated packs, on one event loop."""

    def __init__(self, registry: ToolRegistry, policy: ReconnectPolicy | None = None) -> None:
        self.registry = registry
        self.policy = policy or ReconnectPolicy()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._links: dict[str, tuple[IsolatedLink, asyncio.Future[None]]] = {}
        self._lock = threading.Lock()
        _live.add(self)

    @property
    def links(self) -> dict[str, IsolatedLink]:
        return {pid: link for pid, (link, _) in self._links.items()}

    def status(self) -> list[dict[str, Any]]:
        """One dict per running pack: state, tools, restarts so far, last error."""
        return [link.status() for link, _ in self._links.values()]

    def start(
        self,
        plugin_id: str,
        source: PackRecord | LocalPlugin,
        config: Config,
        *,
        allowed: bool | None = None,
        locked_tools: Mapping[str, str] | None = None,
    ) -> Started:
        """Start the pack's process and register what it lists; wait until it has.

        ``allowed`` is its override consent as the loader worked it out (the config's,
        capped by ``toolreg.lock``; None: the config's); ``locked_tools`` the tool
        definitions the lock holds its writes to (``PluginPolicy.locked_tools``).
        """
        hide_host_from_children()
        loop, thread = self._event_loop()
        settings = config.plugins.entry(plugin_id)
        env = child_environment(settings.env)
        spec = PackSpec(
            plugin_id=plugin_id,
            record=source if isinstance(source, PackRecord) else None,
            local_path=str(source.path) if isinstance(source, LocalPlugin) else None,
            settings=dict(settings.settings),
            validate=config.dispatch.validate,
            environment=tuple(sorted(env)),
        )
        env[SPEC_ENV] = spec.to_json()
        server = McpServerConfig(
            name=plugin_id,
            command=sys.executable,
            args=("-m", CHILD_MODULE, plugin_id),
            env=env,
            cwd=workspace(),
            timeout=CALL_TIMEOUT,
            connect_timeout=START_TIMEOUT,
        )
        gate = PluginPolicy(
            namespace=PLACEHOLDER_NAMESPACE,
            allowed=settings.allow_tool_override if allowed is None else allowed,
            plugin_id=plugin_id,
            tool_patterns=settings.tools,
            locked_tools=None if locked_tools is None else MappingProxyType(dict(locked_tools)),
        )
        link = IsolatedLink(
            server, self.registry, self.policy, loop, thread, gate=gate, toolsets=config.toolsets
        )
        task = asyncio.run_coroutine_threadsafe(self._settle(link), loop).result()
        with self._lock:
            self._links[plugin_id] = (link, task)
        manifest = link.manifest
        if link.state != "connected" or manifest is None:
            self.stop(plugin_id)
            return Started("failed", f"its process did not start: {link.last_error or link.state}")
        started = Started(
            manifest.status, manifest.reason, manifest.traceback, list(manifest.hooks)
        )
        if manifest.status == "loaded":
            started.hook_plugin = link.hook_plugin(manifest.dispatch_hooks)
        else:
            self.stop(plugin_id)
        return started

    async def _settle(self, link: IsolatedLink) -> asyncio.Future[None]:
        task = asyncio.ensure_future(link.run())
        # A backstop: the link settles by itself when its connect_timeout passes.
        waiting = asyncio.ensure_future(link.settled.wait())
        await asyncio.wait(
            {task, waiting},
            timeout=link.config.connect_timeout + 5.0,
            return_when=asyncio.FIRST_COMPLETED,
        )
        waiting.cancel()
        return task

    def stop(self, plugin_id: str) -> None:
        """End the pack's process; its tools stay until the host removes them."""
        with self._lock:
            found = self._links.pop(plugin_id, None)
        if found is None or self._loop is None:
            return
        link, task = found
        link.remove_tools()
        future = asyncio.run_coroutine_threadsafe(_stopped(link, task), self._loop)
        try:
            future.result(STOP_TIMEOUT)
        except Exception as exc:  # stopping must go on whatever the process did
            logger.warning("Isolated pack %s did not stop cleanly: %r", plugin_id, exc)

    def stop_all(self) -> None:
        for plugin_id in list(self._links):
            self.stop(plugin_id)

    def _event_loop(self) -> tuple[asyncio.AbstractEventLoop, threading.Thread]:
        with self._lock:
            if self._loop is None or self._thread is None:
                self._loop = asyncio.new_event_loop()
                self._thread = threading.Thread(
                    target=self._loop.run_forever, name="toolreg-isolation", daemon=True
                )
                self._thread.start()
            return self._loop, self._thread


async def _stopped(link: IsolatedLink, task: asyncio.Future[None]) -> None:
    link.stop()
    await asyncio.gather(task, return_exceptions=True)


_live: weakref.WeakSet[IsolatedPacks] = weakref.WeakSet()


@atexit.register
def _stop_all() -> None:
    # A host that never unloaded its packs must not leave their processes behind.
    for packs in list(_live):
        packs.stop_all()
