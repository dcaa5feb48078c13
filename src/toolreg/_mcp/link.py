"""One MCP server's link: connect, list, refresh, reconnect, and call its tools.

A ``ServerLink`` lives on the manager's event loop; other threads reach it only
through ``calls.call_sync`` and plain attribute reads.
"""

from __future__ import annotations

import asyncio
import json
import logging
import random
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import anyio
import mcp_types
from mcp import Client
from mcp.client.subscriptions import ListenNotSupportedError, SubscriptionLost
from mcp.shared.exceptions import MCPError
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from .._contract.names import toolset_name
from .._contract.version import __version__
from .._core.availability import Verdict
from .._policy.config import McpServerConfig
from .._registry.registry import ToolRegistry
from ._entries import build_entries, named_tools
from .claims import NameClaims
from .lock_check import LockIssue, ServerLock, check_listing
from .transport import connection_lost, describe, open_transport
from .upstream_relay import ServerRelays

logger = logging.getLogger("toolreg.mcp")


#: A server that answers with endless cursors cannot keep a refresh going forever.
MAX_PAGES = 1000


@dataclass(frozen=True)
class ReconnectPolicy:
    """How a lost or failed server is retried; the defaults suit real servers."""

    #: Seconds before the first retry; each further failure doubles it.
    initial_delay: float = 0.5
    max_delay: float = 30.0
    #: Consecutive failures after which the server is parked (no more retries).
    max_failures: int = 8
    #: A session that lasted this long starts the failure count afresh when it drops.
    stable_after: float = 10.0
    #: Seconds a burst of change signals is given to land before one re-list.
    coalesce: float = 0.05

    def delay(self, failures: int) -> float:
        base = min(self.max_delay, self.initial_delay * 2 ** max(0, failures - 1))
        # Jitter spreads out servers (and hosts) that lost the same backend at once.
        return base * random.uniform(0.5, 1.0)


class ServerLink:
    """The live state of one configured MCP server."""

    def __init__(
        self,
        config: McpServerConfig,
        registry: ToolRegistry,
        policy: ReconnectPolicy,
        loop: asyncio.AbstractEventLoop,
        thread: threading.Thread,
        claims: NameClaims | None = None,
        lock: ServerLock | None = None,
    ) -> None:
        self.config = config
        #: What ``toolreg.lock`` says of this server; None when no lock is in force.
        self.lock = lock
        #: Server tool name -> how its last listing differs from the lock.
        self.lock_issues: dict[str, LockIssue] = {}
        self._lock_warned: set[tuple[str, str]] = set()
        self._held: dict[str, str] = {}
        self.name = config.name
        self.toolset = toolset_name(config.name)
        self.registry = registry
        self.state = "connecting" if config.enabled else "disabled"
        self.failures = 0
        self.last_error = ""
        self.protocol_version: str | None = None
        self.tool_names: list[str] = []
        #: Set once the first connection attempt has ended, either way.
        self.settled = asyncio.Event()
        #: The manager's loop and its thread; the connected session's client.
        self.loop = loop
        self.thread = thread
        self.client: Client | None = None
        self._policy = policy
        self._listing: list[dict[str, Any]] | None = None
        #: (the check_fn, the listing's JSON, the contested names' JSON) last published:
        #: a new check_fn or a rival server's change republishes.
        self._published: tuple[Callable[[], Verdict], str, str] | None = None
        self._connected_at: float | None = None
        self._aliased = False
        self._rejections: set[str] = set()
        self._refresh_wanted = asyncio.Event()
        self._lost = asyncio.Event()
        self._scope: anyio.CancelScope | None = None
        self._stopping = False
        self._check = self._make_check()
        #: The names this manager's servers map their tools to (one per link if alone).
        self.claims = claims if claims is not None else NameClaims()
        self.claims.join(self.name, self._reregister_tools)
        #: The calls running on the server, and where its log messages go.
        self.relays = ServerRelays(self)

    @property
    def listing(self) -> list[dict[str, Any]] | None:
        """The server's tools as it last listed them (its own names and fields); None
        before the first listing. What ``toolreg lock`` records."""
        return self._listing

    @property
    def label(self) -> str:
        """How messages name this link's server."""
        return f"MCP server {self.name}"

    # -- what the registry sees ------------------------------------------------

    def verdict(self) -> Verdict:
        """(available, reason) for every tool of this server."""
        if self.state == "connected":
            return True, ""
        detail = self.down_detail()
        return False, f"server {self.name} disconnected" + (f" ({detail})" if detail else "")

    def down_detail(self) -> str:
        """Why the server is not connected: the last error, and whether it was given up on."""
        if self.state != "parked":
            return self.last_error
        detail = f"parked after {self.failures} failed attempts"
        return detail + (f"; last error: {self.last_error}" if self.last_error else "")

    def _make_check(self) -> Callable[[], Verdict]:
        # A fresh function per state change: the registry caches probe results
        # per function (and forgives failures soon after a success), so a new
        # identity makes the change visible at once, without touching the
        # cached verdicts of anybody else's tools.
        def check() -> Verdict:
            return self.verdict()

        check.__qualname__ = f"mcp_server_check[{self.name}]"
        return check

    def status(self) -> dict[str, Any]:
        """What ``toolreg doctor`` shows for this server."""
        cfg = self.config
        return {
            "name": self.name,
            "toolset": self.toolset,
            "transport": cfg.transport,
            "target": cfg.url if cfg.url is not None else " ".join([cfg.command or "", *cfg.args]),
            "state": self.state,
            "tools": len(self.tool_names),
            "failures": self.failures,
            "last_error": self.last_error or None,
            "protocol_version": self.protocol_version,
            "lock": "no lock" if self.lock is None else self.lock.state,
            "lock_issues": self._lock_report(),
        }

    def _lock_report(self) -> list[dict[str, Any]]:
        lock, issues = self.lock, self.lock_issues
        if lock is None:
            return []
        withholds = lock.mode == "withhold" or lock.error is not None
        return [
            {
                "tool": issue.tool,
                "status": issue.status,
                "withheld": withholds and issue.status != "gone",
                "reason": issue.detail,
            }
            for issue in sorted(issues.values())
        ]

    def _set_state(self, state: str, error: str = "") -> None:
        changed = state != self.state
        self.state = state
        if error:
            self.last_error = error[:300]
        if changed:
            self._check = self._make_check()
            if self._listing is not None:
                self._register_tools(self._listing)

    # -- publishing --------------------------------------------------------------

    def _register_tools(self, listing: list[dict[str, Any]]) -> None:
        """Put ``listing`` into the registry, if anything changed since the last time."""
        if self._stopping:
            return
        self._listing = listing
        by_name = named_tools(self, listing)
        # Staking may make a rival server reregister first, dropping a name both map to.
        contested = self.claims.stake(
            self.name, {n: tools[0]["name"] for n, tools in by_name.items()}
        )
        listed = json.dumps(listing, sort_keys=True, default=str)
        key = (self._check, listed, json.dumps(contested, sort_keys=True))
        if key == self._published:
            return  # a refresh that found nothing new publishes nothing
        self._swap(listing, by_name, contested)
        self._published = key

    def _swap(
        self,
        listing: list[dict[str, Any]],
        by_name: dict[str, Any],
        contested: dict[str, Any],
    ) -> None:
        """Swap the toolset for ``listing`` in one step."""
        held = self._check_lock(listing, by_name)
        entries, rejected = build_entries(self, by_name, self._check, contested, held)
        for entry, reason in rejected:
            if reason not in self._rejections:  # once, not on every refresh
                self._rejections.add(reason)
                logger.warning("MCP server %s: %s", self.name, reason)
                self.registry.record_rejection(entry, reason)
        self.tool_names = self.registry.replace_toolset(self.toolset, entries)
        # An alias dies with its toolset's last tool, so it is re-made when tools return.
        if self.tool_names and self.registry.resolve_toolset(self.name) != self.toolset:
            try:
                self.registry.register_toolset_alias(self.name, self.toolset)
            except ValueError as exc:
                if not self._aliased:  # warned once: a refused alias stays refused
                    logger.warning(
                        "MCP server %s: no toolset alias %r: %s", self.name, self.name, exc
                    )
            self._aliased = True

    def _check_lock(
        self, listing: list[dict[str, Any]], by_name: dict[str, list[dict[str, Any]]]
    ) -> dict[str, str]:
        """The listing against the lock: server tool name -> why it is withheld.

        Every kept tool is checked on every listing that changed, so a tool that
        returns to its locked definition is offered again.
        """
        lock = self.lock
        if lock is None:
            return {}
        kept = [tool for tools in by_name.values() for tool in tools]
        issues = check_listing(lock, kept, (t.get("name") for t in listing))
        self.lock_issues = issues
        held: dict[str, str] = {}
        for name, issue in issues.items():
            if issue.status == "gone":
                continue
            if lock.mode == "withhold" or lock.error is not None:
                held[name] = issue.withheld_reason(self.name, lock)
            elif (name, issue.digest) not in self._lock_warned:  # once per definition
                self._lock_warned.add((name, issue.digest))
                logger.warning("MCP server %s: %s", self.name, issue.warning(self.name, lock))
        # A tool offered again is warned of afresh if it is withheld again.
        self._rejections.difference_update(set(self._held.values()) - set(held.values()))
        self._held = held
        return held

    def mark_lost(self) -> None:
        """The connection is gone: reconnect (call on the loop)."""
        self._lost.set()

    def request_refresh(self) -> None:
        """Re-list the server's tools soon (from any thread)."""
        self.loop.call_soon_threadsafe(self._refresh_wanted.set)

    def _reregister_tools(self) -> None:
        """A rival server's names changed: apply the last listing again."""
        if self._listing is not None:
            self._register_tools(self._listing)

    def remove_tools(self) -> None:
        """Remove the server's tools (on stop)."""
        self._stopping = True
        self.registry.replace_toolset(self.toolset, [])
        self.tool_names = []

    # -- the connection --------------------------------------------------------------

    async def run(self) -> None:
        """Connect, serve, and reconnect with backoff, until stopped or parked."""
        with anyio.CancelScope() as scope:
            self._scope = scope
            while not self._stopping:
                self._connected_at = None
                try:
                    await self._session()
                    error = "connection lost"
                except Exception as exc:
                    error = describe(exc)
                if self._stopping:
                    break
                was_up = self._connected_at is not None
                uptime = time.monotonic() - self._connected_at if was_up else 0.0
                # The drop counts as a failure; only a session that had run a
                # while starts the count afresh.
                stable = uptime >= self._policy.stable_after
                self.failures = 1 if stable else self.failures + 1
                self._set_state("disconnected", error)
                self.settled.set()
                if self.failures >= self._policy.max_failures:
                    logger.error(
                        "%s parked after %d failed attempts: %s",
                        self.label,
                        self.failures,
                        error,
                    )
                    self._set_state("parked")
                    return
                delay = self._policy.delay(self.failures)
                log = logger.warning if self.failures == 1 or was_up else logger.info
                log("%s: %s; retrying in %.2f s", self.label, error, delay)
                await anyio.sleep(delay)

    def stop(self) -> None:
        """Ask ``run`` to close the session and return (call on the loop)."""
        self._stopping = True
        self.state = "stopped"
        if self._scope is not None:
            self._scope.cancel()

    async def _session(self) -> None:
        """One connection, from connect to loss; raises if connecting fails."""
        lost = self._lost = asyncio.Event()
        self._refresh_wanted.clear()
        # The run task owns the SDK Client, so its task groups are entered and left in one task.
        client = Client(
            open_transport(self.config, lost.set),
            mode="auto",
            message_handler=self._on_message,
            logging_callback=self.relays.on_log,
            cache=None,  # a refresh must see the server's listing, never a cached one
            client_info=mcp_types.Implementation(name="toolreg", version=__version__),
        )
        connected = False
        with anyio.CancelScope() as connecting:

            def expire() -> None:
                if not connected:
                    connecting.cancel()
                    # Say so now: closing the transport may take a few seconds more.
                    self._set_state("disconnected", timeout_error)
                    self.settled.set()

            timeout_error = f"no answer within connect_timeout ({self.config.connect_timeout:g} s)"

            timer = self.loop.call_later(self.config.connect_timeout, expire)
            try:
                async with client:
                    await self._refresh(client)  # the first listing counts as connecting
                    connected = True
                    timer.cancel()
                    self.client = client
                    # failures is not reset here: a server that crashes right after
                    # connecting must still get parked (see run).
                    self._connected_at = time.monotonic()
                    self.protocol_version = client.protocol_version
                    self._set_state("connected")
                    self.settled.set()
                    logger.info("%s connected: %d tools", self.label, len(self.tool_names))
                    async with anyio.create_task_group() as tasks:
                        tasks.start_soon(self._refresher, client)
                        if client.protocol_version in MODERN_PROTOCOL_VERSIONS:
                            tasks.start_soon(self._listener, client)
                        if self.config.refresh_interval is not None:
                            tasks.start_soon(self._poller, self.config.refresh_interval)
                        await lost.wait()
                        tasks.cancel_scope.cancel()
            finally:
                timer.cancel()
                self.client = None
        if connecting.cancelled_caught and not connected:
            raise TimeoutError(timeout_error)

    # -- refresh ----------------------------------------------------------------------

    async def _on_message(self, message: Any) -> None:
        # Runs inside the session's receive path: only flag the refresh here.
        if isinstance(message, mcp_types.ToolListChangedNotification):
            self._refresh_wanted.set()
        elif isinstance(message, Exception):
            logger.debug("MCP server %s: transport error: %s", self.name, describe(message))

    async def _refresher(self, client: Client) -> None:
        while True:
            await self._refresh_wanted.wait()
            await anyio.sleep(self._policy.coalesce)
            self._refresh_wanted.clear()  # signals from here on get their own pass
            try:
                with anyio.fail_after(self.config.timeout):
                    await self._refresh(client)
            except Exception as exc:
                if connection_lost(exc):
                    self._lost.set()
                    return
                logger.warning(
                    "MCP server %s: re-listing tools failed: %s", self.name, describe(exc)
                )

    async def _listener(self, client: Client) -> None:
        """Follow ``subscriptions/listen`` (2026-07-28); re-listen after a graceful close."""
        while True:
            try:
                async with client.listen(tools_list_changed=True) as subscription:
                    self._refresh_wanted.set()  # changes between the listing and the ack
                    async for _event in subscription:
                        self._refresh_wanted.set()
            except ListenNotSupportedError:
                return
            except SubscriptionLost:
                self._lost.set()
                return
            except (MCPError, TimeoutError) as exc:
                if connection_lost(exc):
                    self._lost.set()
                else:
                    logger.info(
                        "MCP server %s: no subscriptions/listen (%s); relying on notifications",
                        self.name,
                        describe(exc),
                    )
                return
            await anyio.sleep(1.0)

    async def _poller(self, interval: float) -> None:
        while True:
            await anyio.sleep(interval)
            self._refresh_wanted.set()

    async def _refresh(self, client: Client) -> None:
        self._register_tools(await self._list_tools(client))

    async def _list_tools(self, client: Client) -> list[dict[str, Any]]:
        """Every page of the server's ``tools/list``, following ``nextCursor``.

        A server whose cursors come round again, or never end, is stopped at the
        repeat or after ``MAX_PAGES`` pages, with a warning: its tools are the
        ones listed so far, each name once (the first listing wins).
        """
        tools: dict[str, dict[str, Any]] = {}
        cursor: str | None = None
        seen: set[str] = set()
        for pages in range(1, MAX_PAGES + 1):
            page = await client.list_tools(cursor=cursor)
            for tool in page.tools:
                if tool.name not in tools:
                    dumped = tool.model_dump(by_alias=True, mode="json", exclude_none=True)
                    tools[tool.name] = dumped
            cursor = page.next_cursor
            if not cursor:
                break
            if cursor in seen:
                logger.warning(
                    "MCP server %s: tools/list sent a cursor it had sent before, after %d "
                    "page(s); stopped there, with the %d tool(s) listed so far",
                    self.name,
                    pages,
                    len(tools),
                )
                break
            seen.add(cursor)
        else:
            logger.warning(
                "MCP server %s: tools/list still had more after %d pages; stopped there, "
                "with the %d tool(s) listed so far",
                self.name,
                MAX_PAGES,
                len(tools),
            )
        return list(tools.values())
