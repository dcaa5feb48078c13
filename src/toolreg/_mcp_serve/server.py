"""``toolreg serve``: the registry's tools offered to MCP clients over stdio or HTTP.

``ToolServer`` answers ``tools/list`` from the registry and runs ``tools/call``
through ``registry.dispatch``; over HTTP it is an ASGI app behind the guard and
the health probes. Imports ``mcp``.
"""

from __future__ import annotations

import json
import logging
import signal
import socket
import sys
import time
from collections.abc import Callable, Iterable
from typing import Any

import anyio
import anyio.abc
import anyio.to_thread
import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel.server import NotificationOptions, Server
from mcp.server.models import InitializationOptions
from mcp.server.stdio import stdio_server
from mcp.server.streamable_http import EventStore
from mcp.server.subscriptions import InMemorySubscriptionBus, ListenHandler, ToolsListChanged
from mcp.shared.exceptions import MCPError

from .._contract.results import clip, tool_error
from .._contract.tool_context import ProgressCallback
from .._contract.version import __version__
from .._dispatch.permission_check import Approver
from .._mcp.convert import KEEP_STRUCTURED
from .._registry.registry import ToolRegistry
from .._registry.session import ToolSession
from .._schemas.definition_types import McpToolDefinition
from . import DEFAULT_MAX_CALLS, DEFAULT_MAX_CALLS_PER_SESSION
from .event_store import RETRY_MS, MemoryEventStore, SessionEvents, SessionScopes, resumable
from .http_guard import HttpGuard, is_loopback_host
from .paging import BadCursor, Cursors, Pages
from .probes import ProbeRoutes
from .server_approval import (
    ELICIT_TIMEOUT,
    ElicitingApprover,
    RoundTripApprover,
    RoundTrips,
    can_ask,
    can_ask_in_rounds,
)
from .server_calls import CallLimits, ClientGone, DisconnectWatch, departure_of, session_key
from .server_deferred import TOOL_SEARCH, DeferredSessions, connection_of
from .server_log import ServeLogs, relaying
from .server_progress import progress_for_call
from .server_results import StructuredResults

logger = logging.getLogger("toolreg.serve")

#: Seconds between two reads of ``registry.generation``.
POLL_INTERVAL = 0.5
#: Seconds between availability re-checks when nothing was registered: a tool
#: whose ``check_fn`` starts failing leaves the list without bumping the generation.
RECHECK_INTERVAL = 30.0
#: Where the streamable HTTP transport answers.
HTTP_PATH = "/mcp"
#: The first protocol revision whose clients hear of changes on ``subscriptions/listen``.
_LISTEN_ERA = "2026-07-28"


class _StdioKey:
    """The key of a stdio server's one 2026-07-28 client's deferred state."""


class NotOffered(LookupError):
    """A call names a tool this server does not offer: unknown, unavailable or filtered out."""

    def __init__(self, name: str) -> None:
        super().__init__(name)
        self.name = name


class _ToolregServer(Server[Any]):
    """The SDK server, declaring ``tools.listChanged`` to handshake-era clients.

    The streamable-HTTP manager builds its own initialization options with no
    notification options, so the flag has to live on the server itself.
    """

    def __init__(self, list_changed: bool, **kwargs: Any) -> None:
        super().__init__("toolreg", version=__version__, **kwargs)
        self.tools_list_changed = list_changed

    def create_initialization_options(
        self,
        notification_options: NotificationOptions | None = None,
        experimental_capabilities: dict[str, dict[str, Any]] | None = None,
        extensions: dict[str, dict[str, Any]] | None = None,
    ) -> InitializationOptions:
        options = notification_options or NotificationOptions(tools_changed=self.tools_list_changed)
        return super().create_initialization_options(options, experimental_capabilities, extensions)


class ToolServer:
    """One registry (all of it, or the tools of ``toolsets``) behind an MCP server.

    ``serve_stdio()`` serves one client on stdin/stdout; ``serve_http(sock,
    host)`` serves streamable HTTP on a socket from ``bind``; ``http_app(host)``
    is the ASGI app alone. ``reload`` runs on SIGHUP, in a worker thread.
    ``page_size`` pages ``tools/list`` (None: every tool in one answer; ``paging``).
    ``deferred`` offers each session the ``always_loaded`` tools (names or
    ``toolset:NAME``) and ``tool_search``, then what its searches found
    (``server_deferred``); ``min_score`` is the search's threshold.
    """

    def __init__(
        self,
        registry: ToolRegistry,
        toolsets: Iterable[str] | None = None,
        *,
        stateless: bool = False,
        reload: Callable[[], None] | None = None,
        poll_interval: float = POLL_INTERVAL,
        max_calls: int = DEFAULT_MAX_CALLS,
        max_calls_per_session: int = DEFAULT_MAX_CALLS_PER_SESSION,
        event_store: EventStore | None = None,
        inline_refs: bool = False,
        optional_as_absent: bool = False,
        page_size: int | None = None,
        deferred: bool = False,
        always_loaded: Iterable[str] = (),
        min_score: float | None = None,
        elicit_timeout: float = ELICIT_TIMEOUT,
    ) -> None:
        if page_size is not None and (
            not isinstance(page_size, int) or isinstance(page_size, bool) or page_size < 1
        ):
            raise ValueError(f"page_size must be a whole number >= 1 or None, got {page_size!r}")
        self.registry = registry
        # How tools/list shapes schemas for clients that need it (docs/formats.md);
        # calls are still checked against the registered schema.
        self.inline_refs = inline_refs
        self.optional_as_absent = optional_as_absent
        #: Where HTTP sessions' stream events wait for a client to resume (None: in memory).
        self.event_store = event_store if event_store is not None else MemoryEventStore()
        self.calls = CallLimits(max_calls, max_calls_per_session)
        #: Seconds a call an ``ask`` rule stops waits for its client's user (``server_approval``).
        self.elicit_timeout = elicit_timeout
        self.toolsets = tuple(toolsets) if toolsets else None
        #: Tools per ``tools/list`` page (None: all of them in one).
        self.page_size = page_size
        self.cursors = Cursors(self.toolsets)
        self.pages: Pages[types.Tool] = Pages(lambda tool: tool.name)
        self._stdio_key = _StdioKey()
        #: Each MCP session's ``ToolSession`` when deferred (None: every tool offered).
        self.deferred = (
            DeferredSessions(registry, always_loaded, self.toolsets, min_score)
            if deferred
            else None
        )
        self.reload_fn = reload
        #: ``[True]`` makes the server reload as soon as it runs (a SIGHUP came early).
        self.reload_pending: list[bool] = [False]
        self.poll_interval = poll_interval
        self.bus = InMemorySubscriptionBus()
        self.listen = ListenHandler(self.bus)
        self.stateless = stateless
        # Stateless HTTP has no standing connection to push a notification on.
        self.notify_connections = not stateless
        self.server = _ToolregServer(
            self.notify_connections,
            on_list_tools=self._list_tools,
            on_call_tool=self._call_tool,
            on_subscriptions_listen=self.listen,
            get_tool_input_schema=self._input_schema,
        )
        #: Log messages to clients: ``logging/setLevel``, each call's, the relay (``server_log``).
        self.logs = ServeLogs()
        self.logs.install(self.server)
        #: How a 2026-07-28 client's user is asked: sealed request state (``server_approval``).
        self.round_trips = RoundTrips(elicit_timeout)
        self.round_trips.install(self.server)
        if self.notify_connections:
            self.server.add_notification_handler(
                "notifications/initialized", types.NotificationParams, self._follow_changes
            )
        self.results = StructuredResults()
        self._names_memo: tuple[int, frozenset[str] | None] = (-1, None)
        #: (definitions JSON, the SDK ``Tool`` models made from it) last listed.
        self._listed: tuple[str, list[types.Tool]] = ("", [])
        # Handshake-era connections wait on ``_changed``; ``_serial`` counts changes so
        # a connection busy sending one notification cannot miss the next.
        self._serial = 0
        self._changed: anyio.Event | None = None
        self._poke: anyio.Event | None = None
        self._reload_lock: anyio.Lock | None = None

    # -- what is offered -----------------------------------------------------------

    def offered_names(self) -> frozenset[str] | None:
        """The names ``--toolset`` allows (None: all), recomputed per generation."""
        if self.toolsets is None:
            return None
        generation = self.registry.generation
        memo_generation, names = self._names_memo
        if memo_generation != generation:
            names = frozenset(
                name
                for toolset in self.toolsets
                for name in self.registry.get_tool_names_for_toolset(toolset)
            )
            self._names_memo = (generation, names)
        return names

    def definitions(self) -> list[McpToolDefinition]:
        """The available offered tools, as MCP ``Tool`` dicts."""
        return self.registry.get_definitions(
            self.offered_names(),
            format="mcp",
            inline_refs=self.inline_refs,
            optional_as_absent=self.optional_as_absent,
        )

    def definitions_json(self) -> str:
        return self.registry.get_definitions_json(
            self.offered_names(),
            format="mcp",
            inline_refs=self.inline_refs,
            optional_as_absent=self.optional_as_absent,
        )

    def listed_tools(self, state: ToolSession | None = None) -> list[types.Tool]:
        """``definitions()`` as SDK ``Tool`` models, rebuilt only when the definitions change.

        The registry memoises the JSON per generation (and availability), so an
        unchanged list costs a string comparison instead of a copy and a validation.
        A deferred session's ``state`` lists its own tools (``session_tools``).
        """
        if state is not None:
            return self.session_tools(state)
        text = self.definitions_json()
        listed = self._listed
        if text != listed[0]:
            tools = [types.Tool.model_validate(d, by_name=False) for d in json.loads(text)]
            listed = self._listed = (text, tools)
        return listed[1]

    def session_tools(self, state: ToolSession) -> list[types.Tool]:
        """What a deferred session is offered: its always-loaded and found tools that are
        available and pass ``--toolset``, and ``tool_search``; in name order, as the
        whole list is and pages are."""
        names = self.offered_names()
        definitions = state.definitions(
            "mcp", inline_refs=self.inline_refs, optional_as_absent=self.optional_as_absent
        )
        return [
            types.Tool.model_validate(definition, by_name=False)
            for definition in sorted(definitions, key=lambda definition: definition["name"])
            if names is None or definition["name"] == TOOL_SEARCH or definition["name"] in names
        ]

    def session_state(self, ctx: ServerRequestContext[Any]) -> ToolSession | None:
        """The ``ToolSession`` of the request's MCP session (None: not deferred)."""
        if self.deferred is None:
            return None
        return self.deferred.of(self.session_key_of(ctx))

    def session_key_of(self, ctx: ServerRequestContext[Any]) -> object | None:
        """What a deferred session's state is kept by (None: the request has no session).

        A handshake-era connection (stdio, or a stateful HTTP session): its SDK
        connection object. A 2026-07-28 client on stdio (each request is its own
        exchange; the process serves one client): the server's one stdio key.
        """
        if self.stateless or session_key(ctx.request) is None:
            return None  # stateless HTTP, or a 2026-07-28 client over HTTP
        if ctx.protocol_version >= _LISTEN_ERA:
            return self._stdio_key if ctx.request is None else None
        return connection_of(ctx.session)

    def is_offered(self, name: str) -> bool:
        names = self.offered_names()
        if names is not None and name not in names:
            return False
        return self.registry.availability(name)[0]

    def dispatch(
        self,
        name: str,
        arguments: dict[str, Any],
        progress: ProgressCallback | None = None,
        state: ToolSession | None = None,
        approve: Approver | None = None,
    ) -> str | dict[str, Any]:
        """``registry.dispatch`` for an offered tool; NotOffered for any other name.

        The verdict comes from the registry before the call, never from the
        result: a handler may return any text, the unknown-tool error's included.
        A deferred session's ``state`` answers ``tool_search``; as in ``ToolSession``,
        a tool it has not found yet is called all the same (``--toolset`` still holds).
        ``approve`` answers the call's ``ask`` rule (``server_approval``).
        """
        if state is not None and name == TOOL_SEARCH:
            return state.dispatch(TOOL_SEARCH, arguments)
        if not self.is_offered(name):
            raise NotOffered(name)
        keep = KEEP_STRUCTURED.set(True)  # a proxied MCP tool's structuredContent comes along
        try:
            return self.registry.dispatch(name, arguments, progress=progress, approve=approve)
        finally:
            KEEP_STRUCTURED.reset(keep)

    # -- MCP handlers -----------------------------------------------------------------

    async def _list_tools(
        self, ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        cursor = params.cursor if params is not None else None
        state = self.session_state(ctx)
        if cursor is None and self.page_size is None:  # one page: the whole list
            # Availability probes (check_fn) may block: keep them off the event loop.
            tools = await anyio.to_thread.run_sync(self.listed_tools, state)
            # The typed result fills in what each protocol revision requires (resultType, ttlMs...).
            return types.ListToolsResult(tools=tools)
        try:
            after = None if cursor is None else self.cursors.read(cursor)
        except BadCursor as exc:
            raise MCPError(types.INVALID_PARAMS, str(exc)) from None
        page, last = await anyio.to_thread.run_sync(self.list_page, after, state)
        next_cursor = None if last is None else self.cursors.make(last)
        return types.ListToolsResult(tools=page, next_cursor=next_cursor)

    def list_page(
        self, after: str | None, state: ToolSession | None = None
    ) -> tuple[list[types.Tool], str | None]:
        """The offered tools whose names sort after ``after``, ``page_size`` of them at most.

        Pages are cut from the list in name order (the registry's own order too), so
        a cursor (the last name sent) continues where it was even if the list changed
        in between. Also returns the last
        name of the page when more tools follow (None: this is the last page).
        A deferred session's page is cut from its own list, whatever the cursor names.
        """
        return self.pages.page(self.listed_tools(state), after, self.page_size)

    async def _call_tool(
        self, ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult | types.InputRequiredResult:
        # The calls' own thread pool, shared fairly between sessions (server_calls).
        request = ctx.request
        state = self.session_state(ctx)
        searching = state is not None and params.name == TOOL_SEARCH
        before = state.found if state is not None and searching else ()
        approver = self._approver(ctx, params)
        try:
            # What the call logs, and its progress if the client asked, go to its client.
            async with self.logs.for_call(ctx), progress_for_call(ctx) as progress:
                result = await self.calls.run(
                    f"tools/call {params.name}",
                    session_key(request),
                    # A client that can resume a broken stream has not gone away:
                    # the call goes on, and its answer waits in the event store.
                    None if self._resumable(request) else departure_of(request),
                    self._outcome,
                    params.name,
                    params.arguments or {},
                    progress,
                    state,
                    approver,
                )
        except ClientGone:  # nobody is left to read this answer
            result = tool_error("The client went away before the call started")
        if isinstance(approver, RoundTripApprover) and approver.question is not None:
            # The ask stopped the call before it ran: the client's user answers, then it retries.
            return approver.input_required()
        if isinstance(result, NotOffered):
            # MCP lists a call to a tool the server does not have among the protocol
            # errors; the model cannot fix that one by changing the arguments. A tool
            # hidden or unavailable gets the words of one that does not exist.
            raise MCPError(types.INVALID_PARAMS, clip(f"Unknown tool: {result.name}"))
        if searching:
            assert state is not None
            if not set(state.found) <= set(before):
                await self._tell_session(ctx)
            return self.results.call_result(None, result)  # JSON text, as ToolSession answers
        return self.results.call_result(self.registry.get_entry(params.name), result)

    async def _tell_session(self, ctx: ServerRequestContext[Any]) -> None:
        """Send ``notifications/tools/list_changed`` to the session of ``ctx`` alone.

        A handshake-era client gets it on the call's own stream, ahead of the
        result; a 2026-07-28 client on stdio on its listen stream (the server's
        only connection). Sessions that forget their searches hear nothing.
        """
        if not self.notify_connections or self.session_key_of(ctx) is None:
            return
        if ctx.protocol_version >= _LISTEN_ERA:
            if ctx.request is None:  # stdio: every listen stream is this client's
                await self.bus.publish(ToolsListChanged())
            return
        await ctx.session.send_notification(
            types.ToolListChangedNotification(), related_request_id=ctx.request_id
        )

    def _outcome(
        self,
        name: str,
        arguments: dict[str, Any],
        progress: ProgressCallback | None,
        state: ToolSession | None = None,
        approve: Approver | None = None,
    ) -> str | dict[str, Any] | NotOffered:
        """``dispatch``'s result, or its NotOffered as a value.

        Returned, not raised: the calls' task groups would wrap an exception in
        an ExceptionGroup on its way back to ``_call_tool``.
        """
        try:
            return self.dispatch(name, arguments, progress, state, approve)
        except NotOffered as exc:
            return exc

    def _approver(
        self, ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
    ) -> Approver | None:
        """What answers this call's ``ask``: its client's user, when it can be asked.

        None leaves the registry's own approver (a host's ``set_approver``), and
        with none the call is denied with ``approval_required``.
        """
        if self.registry.permissions is None:
            return None
        if can_ask_in_rounds(ctx):
            return self.round_trips.approver(params)
        if not can_ask(ctx, self.stateless):
            return None
        return ElicitingApprover(ctx, self.elicit_timeout)

    def _resumable(self, request: Any) -> bool:
        return not self.stateless and resumable(request)

    def _input_schema(self, name: str) -> dict[str, Any] | None:
        if self.deferred is not None and name == TOOL_SEARCH:
            return None  # the session answers it, whatever the registry holds
        if not self.is_offered(name):
            return None
        definition = self.registry.get_definition(name, format="mcp")
        return definition["inputSchema"] if definition else None

    async def _follow_changes(
        self, ctx: ServerRequestContext[Any], params: types.NotificationParams
    ) -> None:
        """Forward list changes (on stdio, logs too) to one handshake-era connection.

        The SDK runs a notification handler in the connection's task group, which
        cancels it when the connection ends; so this handler is the connection's
        subscription, and nothing has to track connections or clean up after them.
        (The SDK has no public list of live connections to broadcast to.)
        """
        async with self.logs.for_connection(ctx):
            seen = self._serial
            while True:
                if self._serial == seen:
                    await self._change_event().wait()
                seen = self._serial
                await ctx.session.send_tool_list_changed()

    # -- change detection ---------------------------------------------------------

    def _change_event(self) -> anyio.Event:
        if self._changed is None:
            self._changed = anyio.Event()
        return self._changed

    async def announce(self) -> None:
        """Tell every connected client that the tool list changed."""
        logger.info("tool list changed; notifying clients")
        self._serial += 1
        event, self._changed = self._change_event(), anyio.Event()
        event.set()
        await self.bus.publish(ToolsListChanged())

    async def watch(self) -> None:
        """Poll the generation; announce when the offered definitions changed."""
        self._poke = anyio.Event()
        last_generation = self.registry.generation
        last_json = await anyio.to_thread.run_sync(self.definitions_json)
        last_check = time.monotonic()
        while True:
            with anyio.move_on_after(self.poll_interval):
                await self._poke.wait()
            self._poke = anyio.Event()
            if self._reload_lock is not None and self._reload_lock.locked():
                continue  # a reload is half done; look once it has finished
            generation = self.registry.generation
            if generation == last_generation:
                if time.monotonic() - last_check < RECHECK_INTERVAL:
                    continue
            else:
                generation = await self._settled(generation)
            last_generation, last_check = generation, time.monotonic()
            current = await anyio.to_thread.run_sync(self.definitions_json)
            if current != last_json:
                last_json = current
                await self.announce()

    async def _settled(self, generation: int) -> int:
        """Wait until the generation stops moving: one change burst, one notification."""
        while True:
            await anyio.sleep(self.poll_interval / 5)
            now = self.registry.generation
            if now == generation:
                return now
            generation = now

    async def reload(self) -> None:
        """Run the reload callback in a worker thread, then look for changes at once."""
        if self.reload_fn is None:
            return
        if self._reload_lock is None:
            self._reload_lock = anyio.Lock()
        async with self._reload_lock:
            logger.info("reloading tool packs and config")
            try:
                await anyio.to_thread.run_sync(self.reload_fn)
            except Exception:
                logger.exception("reload failed; serving what was loaded before")
        if self._poke is not None:
            self._poke.set()

    async def _reload_on_sighup(self) -> None:
        with anyio.open_signal_receiver(signal.SIGHUP) as signals:
            # Checked once the receiver is in place, so no SIGHUP falls in between.
            if self.reload_pending[0]:
                await self.reload()
            async for _ in signals:
                await self.reload()

    async def _background(self, tg: anyio.abc.TaskGroup) -> None:
        tg.start_soon(self.watch)
        if self.reload_fn is not None and hasattr(signal, "SIGHUP"):
            tg.start_soon(self._reload_on_sighup)

    # -- transports -----------------------------------------------------------------

    async def serve_stdio(self) -> None:
        """Serve one client on stdin/stdout until it closes stdin."""
        with relaying(self.logs.relay):
            async with anyio.create_task_group() as tg:
                await self._background(tg)
                # stdio_server points fd 1 at stderr while it serves: stray prints from
                # handlers cannot corrupt the protocol stream.
                async with stdio_server() as (read_stream, write_stream):
                    await self.server.run(
                        read_stream, write_stream, self.server.create_initialization_options()
                    )
                tg.cancel_scope.cancel()

    def http_app(self, host: str, *, stateless: bool = False, token: str | None = None) -> Any:
        """The ASGI app: streamable HTTP at ``/mcp`` behind the guard, and the health probes.

        The guard (``http_guard``) checks Host and Origin on a loopback ``host``,
        and the bearer ``token`` when there is one; ``/healthz`` and ``/readyz``
        are answered ahead of it, with details only for requests it admits (``probes``).
        """
        from mcp.server.transport_security import TransportSecuritySettings

        async def details() -> dict[str, Any]:
            tools = await anyio.to_thread.run_sync(self.definitions)
            return {"tools": len(tools), "generation": self.registry.generation}

        # Sessions keep their streams' events for a client that resumes (event_store).
        events = None if stateless else SessionEvents(self.event_store)
        app = self.server.streamable_http_app(
            streamable_http_path=HTTP_PATH,
            stateless_http=stateless,
            event_store=events,
            retry_interval=None if events is None else RETRY_MS,
            # The guard checks Host and Origin for every route and every loopback
            # address; the SDK's own check knows three spellings and only /mcp.
            transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False),
        )
        inner = DisconnectWatch(app) if events is None else SessionScopes(DisconnectWatch(app))
        guard = HttpGuard(inner, loopback=is_loopback_host(host), token=token)
        return ProbeRoutes(guard, guard.admits, details)

    async def serve_http(
        self,
        sock: socket.socket,
        host: str,
        *,
        stateless: bool = False,
        token: str | None = None,
        verbose: bool = False,
    ) -> None:
        """Serve streamable HTTP on an already bound socket until SIGINT/SIGTERM."""
        import uvicorn

        config = uvicorn.Config(
            self.http_app(host, stateless=stateless, token=token),
            # Our CLI logging already sends the root logger to stderr; uvicorn's
            # default config would put access lines on stdout.
            log_config=None,
            log_level="info" if verbose else "warning",
            access_log=verbose,
            # Open listen/SSE streams never end by themselves.
            timeout_graceful_shutdown=3,
        )
        with relaying(self.logs.relay):
            async with anyio.create_task_group() as tg:
                await self._background(tg)
                await uvicorn.Server(config).serve(sockets=[sock])
                tg.cancel_scope.cancel()


def bind(host: str, port: int) -> socket.socket:
    """A listening TCP socket on ``host:port`` (port 0: any free port), for ``serve_http``."""
    family, kind, proto, _, address = socket.getaddrinfo(
        host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
    )[0]
    sock = socket.socket(family, kind, proto)
    if sys.platform != "win32":
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind(address)
        sock.listen(2048)
    except OSError:
        sock.close()
        raise
    return sock


def url_for(sock: socket.socket) -> str:
    """The URL MCP clients reach ``sock``'s server at."""
    host, port = sock.getsockname()[:2]
    shown = f"[{host}]" if ":" in host else host
    return f"http://{shown}:{port}{HTTP_PATH}"
