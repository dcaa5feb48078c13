"""ToolRegistry: a table, availability, definitions and a dispatcher, composed.

Each public method hands the call to one part (a subclass's own method is used); writes
reach the caches above the table through :meth:`ToolRegistry._table_changed`.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable, Coroutine, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal, TypeVar, overload

from .._contract.entry import (
    DEFAULT_OPTIONS,
    CheckFn,
    Handler,
    SchemaOverrides,
    ToolEntry,
    ToolOptions,
)
from .._contract.names import DefinitionFormat
from .._contract.tool_context import ProgressCallback
from .._core.availability import Availability, Verdict
from .._core.callers import Callers
from .._core.decisions import DecisionLog
from .._core.table import ToolTable
from .._core.toolset_report import AvailabilityView
from .._definitions.definitions import Definitions
from .._schemas.definition_types import (
    AnthropicToolDefinition,
    GeminiFunctionDeclaration,
    McpToolDefinition,
    OpenAIResponsesToolDefinition,
    OpenAIToolDefinition,
)
from .dispatch_parts import DispatchParts
from .entry_making import make_entry
from .search_part import SearchPart

if TYPE_CHECKING:
    from typing_extensions import Unpack

    from .._authoring.decorator import ToolOptions
    from .._core.decisions import Decision
    from .._core.permissions import Permissions
    from .._core.plugin_policy import PluginPolicy
    from .._definitions.deferred import SearchMode
    from .._dispatch.dispatch import Dispatcher, DispatchHooks
    from .._dispatch.dispatch_many import Batches, BatchProgressCallback
    from .._dispatch.permission_check import Approver
    from .._search.hit import SearchHit
    from .session import ToolSession


#: A function ``@registry.tool`` decorates, given back with its own type.
_F = TypeVar("_F", bound=Callable[..., Any])


class ToolRegistry:
    """Name → tool, with availability, provider definitions and safe dispatch."""

    def __init__(
        self, *, clock: Callable[[], float] = time.monotonic, decision_log_size: int = 1000
    ) -> None:
        lock = threading.RLock()
        log = DecisionLog(decision_log_size)
        self._callers = Callers(lock, log, lambda: self._table.generation)
        self._table = ToolTable(self._callers, lock, log)
        self._log = log
        self._availability = Availability(clock, self._table.live_entries, self._table.maker_of)
        self._view = AvailabilityView(self._table, self._availability)
        self._definitions = Definitions(self._table, self._availability)
        # Made by the first dispatch (or dispatch setting) and never replaced.
        self._dispatch = DispatchParts(self._table, self._callers, log)
        self._search = SearchPart(self._table)  # the index is made by the first search
        self._live = self._table.live  # what get_entry reads (_table_changed follows it)
        self._table.on_change(self._table_changed)

    def _table_changed(
        self, names: Iterable[str], generation: int, live: dict[str, ToolEntry]
    ) -> None:
        # Under the writer lock, after the write is visible: a swap made a new dict.
        self._live = live
        made = self._dispatch.made
        if made is not None:
            made[0].forget(names)
            made[1].forget(names)
        self._definitions.forget(names, generation)
        index = self._search.made
        if index is not None:
            index.forget(names)

    @property
    def _dispatcher(self) -> Dispatcher:
        return self._dispatch.get()[0]

    @property
    def _batches(self) -> Batches:
        return self._dispatch.get()[1]

    def __repr__(self) -> str:
        return f"<ToolRegistry tools={len(self)} generation={self.generation}>"

    @overload
    def tool(self, func: _F, /) -> _F: ...

    @overload
    def tool(self, func: None = None, /, **options: Unpack[ToolOptions]) -> Callable[[_F], _F]: ...

    def tool(self, func: Callable[..., Any] | None = None, /, **options: Any) -> Any:
        """``@registry.tool`` or ``@registry.tool(...)``: :func:`toolreg.tool` registering into
        this registry; the function comes back unchanged, its type too."""
        from .._authoring.decorator import tool  # imported on use: most registries never decorate

        return tool(func, registry=self, **options)

    # -- reads ----------------------------------------------------------------

    def get_entry(self, name: str) -> ToolEntry | None:
        """The entry registered under ``name``, or None: one dict read, no copy.

        The entry is read-only: assigning a field raises AttributeError. To change
        a tool, register it again (through the gate).
        """
        return self._live.get(name)

    @property
    def generation(self) -> int:
        """Bumped by every accepted mutation; caches compare it to detect change."""
        return self._table.generation

    def get_owner(self, name: str) -> str | None:
        """``builtin``, ``host``, a plugin id or ``mcp:<server>``; None if unknown."""
        return self._table.get_owner(name)

    def get_options(self, name: str) -> ToolOptions | None:
        """Dispatch settings (validation, timeout) of a tool; None if unknown."""
        return self._table.get_options(name)

    def get_all_tool_names(self) -> list[str]:
        return sorted(self._live)

    def get_toolset_for_tool(self, name: str) -> str | None:
        entry = self._live.get(name)
        return entry.toolset if entry is not None else None

    def get_tool_names_for_toolset(self, toolset: str) -> list[str]:
        return self._table.names_in(toolset)

    def get_toolsets(self) -> list[str]:
        return self._table.toolsets()

    def resolve_toolset(self, name: str) -> str:
        """The toolset an alias points to, or ``name`` itself."""
        return self._table.resolve_toolset(name)

    def get_toolset_aliases(self) -> dict[str, str]:
        return self._table.aliases()

    def decisions(self, since: int = 0) -> list[Decision]:
        """Registration decisions, and calls the operator's permissions judged, after
        sequence ``since``, oldest first (bounded log)."""
        return self._log.snapshot(since)

    @property
    def last_decision_seq(self) -> int:
        """The sequence number of the newest decision (0 before any)."""
        return self._log.last_seq

    def __len__(self) -> int:
        return len(self._live)

    def __contains__(self, name: object) -> bool:
        return name in self._live

    # -- writes, each through the gate ------------------------------------------

    def register(
        self,
        name: str,
        toolset: str,
        schema: dict[str, Any],
        handler: Handler,
        check_fn: CheckFn | None = None,
        requires_env: Sequence[str] | None = None,
        is_async: bool = False,
        description: str = "",
        emoji: str = "",
        max_result_size_chars: int | None = None,
        dynamic_schema_overrides: SchemaOverrides | None = None,
        override: bool = False,
        *,
        validate: bool = True,
        timeout: float | None = None,
        annotations: Mapping[str, Any] | None = None,
        output_schema: dict[str, Any] | None = None,
        searchable: bool = True,
    ) -> ToolEntry | None:
        """Register a tool; returns the new entry, or None when rejected.

        ``searchable=False`` keeps the tool out of :meth:`search`. Raises
        ValueError for a malformed name, schema, ``annotations`` (MCP's hints)
        or ``output_schema``, and PermissionError for a plugin override the
        operator has not allowed.
        """
        # fmt: off
        entry, options = make_entry(name, toolset, schema, handler, check_fn, requires_env,
                                    is_async, description, emoji, max_result_size_chars,
                                    dynamic_schema_overrides, annotations, output_schema,
                                    validate, timeout, searchable)
        # fmt: on
        return self._table.add(entry, override, options)

    def batch(self) -> contextlib.AbstractContextManager[None]:
        """``with registry.batch():`` the block's registrations appear at once, when it ends.

        Until then no reader sees them; if the block raises, none are kept. Each is
        judged (and may be rejected or refused) as it is made. Other threads' writes wait
        for the block to end, so it is host code only: a pack that hung inside one would
        hold every writer. Packs use :meth:`register_many`.
        """
        self._callers.require_host("hold the table for a batch")
        return self._table.batch()

    def register_many(self, tools: Iterable[Mapping[str, Any]]) -> list[ToolEntry | None]:
        """``register(**spec)`` for each spec, in one batch; the results in order."""
        return self._table.add_all(self.register, tools)

    def deregister(self, name: str) -> bool:
        """Remove a tool; returns whether it existed.

        A plugin may remove only its own tools unless the operator allowed it
        overrides (PermissionError otherwise).
        """
        return self._table.deregister(name)

    def replace_toolset(
        self, toolset: str, entries: Iterable[ToolEntry], *, options: ToolOptions = DEFAULT_OPTIONS
    ) -> list[str]:
        """Swap a whole toolset in one step; returns the names now in it.

        Readers see either the old toolset or the new one, never a mix. An
        entry whose name another toolset owns is skipped and logged as rejected.
        """
        return self._table.replace_toolset(toolset, entries, options=options)

    def remove_owner(self, label: str) -> list[str]:
        """Remove every tool ``label`` owns, in one step; returns their names.

        A tool it overrode comes back, but only while the owner's entry is
        still the current one. A plugin may remove only its own tools, unless
        the operator allowed it overrides.
        """
        return self._table.remove_owner(label)

    def register_toolset_alias(self, alias: str, toolset: str) -> None:
        """Let config say ``alias`` for ``toolset`` (e.g. ``foo`` for ``mcp-foo``).

        Host only. The alias must not hide a toolset, and lives as long as its
        toolset has tools. ValueError for an alias that breaks those rules.
        """
        self._table.register_toolset_alias(alias, toolset)

    def record_rejection(self, entry: ToolEntry, reason: str) -> None:
        """Record that a writer above the table refused ``entry`` itself.

        For refusals decided before registering (an MCP tool whose name
        clashes), so that ``decisions()`` and ``toolreg doctor`` show them.
        """
        self._table.record_rejection(entry, reason)

    # -- plugin policies (host only) ----------------------------------------------

    def register_plugin_override_policy(
        self,
        module_namespace: str,
        allowed: bool,
        *,
        plugin_id: str | None = None,
        paths: Sequence[str] | None = None,
        tool_patterns: Sequence[str] | None = None,
        files: Iterable[str] = (),
        locked_tools: Mapping[str, str] | None = None,
    ) -> PluginPolicy:
        """Bind a plugin's module namespace and code to the operator's override decision.

        ``files`` are the exact files its distribution installed; ``paths`` the
        directories holding its code (found from the namespace when None).
        ``locked_tools`` (tool name -> definition digest, from ``toolreg.lock``)
        holds the pack's writes to those definitions; None: not held. Only host
        code may call this, so a pack cannot grant itself consent.
        """
        return self._callers.bind(
            module_namespace, allowed, plugin_id, paths, tool_patterns, files, locked_tools
        )

    def get_plugin_policy(self, module_namespace: str) -> PluginPolicy | None:
        """The policy bound for ``module_namespace``, or None."""
        return self._callers.policies.get(module_namespace)

    def remove_plugin_override_policy(self, module_namespace: str) -> None:
        """Forget a namespace's policy (host only, like binding)."""
        self._callers.unbind(module_namespace)

    def acting_for(self, policy: PluginPolicy) -> contextlib.AbstractContextManager[None]:
        """``with registry.acting_for(policy):`` host code writing on a plugin's behalf (a
        process-isolated pack's tools): its writes are owned and judged as ``policy``'s."""
        return self._callers.acting_for(policy)

    # -- dispatch -------------------------------------------------------------

    def dispatch(
        self,
        name: str,
        args: Mapping[str, Any] | str,
        /,
        *,
        progress: ProgressCallback | None = None,
        approve: Approver | None = None,
        **kwargs: Any,
    ) -> str | dict[str, Any]:
        """Run tool ``name``; never raises (see ``Dispatcher.dispatch``).

        ``approve(name, arguments, rule)`` answers this call's ``ask``, should the
        operator's permissions ask (see ``set_approver``); it never allows a denied call.
        """
        made = self._dispatch.made  # read, not a property: this runs for every call
        dispatcher = made[0] if made is not None else self._dispatcher
        if progress is None and approve is None and not kwargs:
            return dispatcher.dispatch(name, args)  # the usual call, without re-packing
        if progress is not None:
            kwargs["progress"] = progress
        if approve is not None:
            kwargs["approve"] = approve
        return dispatcher.dispatch(name, args, **kwargs)

    def adispatch(
        self,
        name: str,
        args: Mapping[str, Any] | str,
        /,
        *,
        progress: ProgressCallback | None = None,
        approve: Approver | None = None,
        **kwargs: Any,
    ) -> Coroutine[Any, Any, str | dict[str, Any]]:
        """The async twin of ``dispatch``: sync handlers run in a worker thread, and
        so does a sync approver."""
        # Not ``async def``: the dispatcher's own coroutine, with nothing wrapped around it.
        if progress is not None:
            kwargs["progress"] = progress
        if approve is not None:
            kwargs["approve"] = approve
        return self._dispatcher.adispatch(name, args, **kwargs)

    def dispatch_many(
        self,
        calls: Sequence[Sequence[Any]],
        max_concurrency: int = 8,
        *,
        progress: BatchProgressCallback | None = None,
    ) -> list[str | dict[str, Any]]:
        """Run ``calls`` concurrently, at most ``max_concurrency`` at once; results in order.

        Each call, ``(name, args)`` or ``(name, args, call_id)``, is a ``dispatch`` of its
        own (hooks, timeout, errors as results). ``progress(index, progress, total,
        message)`` hears each call's reports. ValueError for a concurrency below 1.
        """
        return self._batches.dispatch_many(calls, max_concurrency, progress=progress)

    def adispatch_many(
        self,
        calls: Sequence[Sequence[Any]],
        max_concurrency: int = 8,
        *,
        progress: BatchProgressCallback | None = None,
    ) -> Coroutine[Any, Any, list[str | dict[str, Any]]]:
        """The async twin of ``dispatch_many``: async tools on the caller's loop."""
        return self._batches.adispatch_many(calls, max_concurrency, progress=progress)

    def enable_tracing(self, *, tracer_provider: Any = None, meter_provider: Any = None) -> None:
        """Trace every dispatch with OpenTelemetry (see ``toolreg.enable_tracing``). Host only."""
        self._dispatcher.enable_tracing(
            tracer_provider=tracer_provider, meter_provider=meter_provider
        )

    def disable_tracing(self) -> None:
        """Stop tracing dispatches. Host only."""
        self._dispatcher.disable_tracing()

    def set_dispatch_hooks(self, hooks: DispatchHooks | None) -> None:
        """Install (or with None, remove) the hooks around every dispatch. Host only."""
        self._dispatch.set_dispatch_hooks(hooks)

    def set_permissions(self, permissions: Permissions | Mapping[str, Any] | None) -> None:
        """Install the operator's call-time rules; None removes them. Host only.

        ``permissions`` is a compiled ``[permissions]`` table (``Config.permissions``)
        or the table's shape, ``{"default": "ask", "deny": [...], ...}`` (ValueError
        naming a malformed rule). ``apply_config`` calls this. See docs/permissions.md.
        """
        if permissions is not None:
            from .._core.permissions import Permissions  # imported on use: most hosts have none

            if not isinstance(permissions, Permissions):
                permissions = Permissions.from_table(permissions)
        self._dispatch.set_permissions(permissions)

    @property
    def permissions(self) -> Permissions | None:
        """The rules installed by ``set_permissions`` (or ``apply_config``), or None."""
        return self._dispatch.permissions

    def set_approver(self, approver: Approver | None) -> None:
        """What answers a call the operator's rules ``ask`` about; None: nothing. Host only.

        ``approver(name, arguments, rule)``, sync or async, gets the tool's name, a copy
        of the validated arguments and the rule as written (None for the default); it
        returns ``"allow"``, ``"deny"`` or ``("deny", reason)``. Anything else, or an
        exception, denies.
        """
        self._dispatch.set_approver(approver)

    def permission_counts(self) -> list[dict[str, Any]]:
        """Per rule (precedence order, then the default): the calls it allowed, denied and
        put to an approver since the rules were installed; [] without rules."""
        return self._dispatch.permission_counts()

    def set_validation(self, enabled: bool) -> None:
        """Turn argument validation on or off for every tool (operator switch). Host only."""
        self._dispatch.set_validation(enabled)

    @property
    def validation_enabled(self) -> bool:
        return self._dispatch.validation_enabled

    # -- definitions ------------------------------------------------------------
    # One overload per format, so a type checker knows each provider's shape.

    @overload
    def get_definition(
        self,
        name: str,
        *,
        format: Literal["openai"] = ...,
        strict: bool = ...,
        inline_refs: bool = ...,
        optional_as_absent: bool = ...,
    ) -> OpenAIToolDefinition | None: ...

    @overload
    def get_definition(
        self,
        name: str,
        *,
        format: Literal["openai-responses"],
        strict: bool = ...,
        inline_refs: bool = ...,
        optional_as_absent: bool = ...,
    ) -> OpenAIResponsesToolDefinition | None: ...

    @overload
    def get_definition(
        self,
        name: str,
        *,
        format: Literal["anthropic"],
        strict: bool = ...,
        inline_refs: bool = ...,
        optional_as_absent: bool = ...,
    ) -> AnthropicToolDefinition | None: ...

    @overload
    def get_definition(
        self,
        name: str,
        *,
        format: Literal["gemini", "gemini-json-schema"],
        strict: bool = ...,
        inline_refs: bool = ...,
        optional_as_absent: bool = ...,
    ) -> GeminiFunctionDeclaration | None: ...

    @overload
    def get_definition(
        self,
        name: str,
        *,
        format: Literal["mcp"],
        strict: bool = ...,
        inline_refs: bool = ...,
        optional_as_absent: bool = ...,
    ) -> McpToolDefinition | None: ...

    @overload
    def get_definition(
        self,
        name: str,
        *,
        format: DefinitionFormat,
        strict: bool = ...,
        inline_refs: bool = ...,
        optional_as_absent: bool = ...,
    ) -> Any | None: ...

    @overload
    def get_definitions(
        self,
        tool_names: Iterable[str] | None = ...,
        *,
        format: DefinitionFormat = ...,
        strict: bool = ...,
        inline_refs: bool = ...,
        optional_as_absent: bool = ...,
        defer: Literal[True],
        always_loaded: Iterable[str] = ...,
        search: SearchMode = ...,
    ) -> list[Any]: ...

    @overload
    def get_definitions(
        self,
        tool_names: Iterable[str] | None = ...,
        *,
        format: Literal["openai"] = ...,
        strict: bool = ...,
        inline_refs: bool = ...,
        optional_as_absent: bool = ...,
        defer: Literal[False] = ...,
    ) -> list[OpenAIToolDefinition]: ...

    @overload
    def get_definitions(
        self,
        tool_names: Iterable[str] | None = ...,
        *,
        format: Literal["openai-responses"],
        strict: bool = ...,
        inline_refs: bool = ...,
        optional_as_absent: bool = ...,
        defer: Literal[False] = ...,
    ) -> list[OpenAIResponsesToolDefinition]: ...

    @overload
    def get_definitions(
        self,
        tool_names: Iterable[str] | None = ...,
        *,
        format: Literal["anthropic"],
        strict: bool = ...,
        inline_refs: bool = ...,
        optional_as_absent: bool = ...,
        defer: Literal[False] = ...,
    ) -> list[AnthropicToolDefinition]: ...

    @overload
    def get_definitions(
        self,
        tool_names: Iterable[str] | None = ...,
        *,
        format: Literal["gemini", "gemini-json-schema"],
        strict: bool = ...,
        inline_refs: bool = ...,
        optional_as_absent: bool = ...,
        defer: Literal[False] = ...,
    ) -> list[GeminiFunctionDeclaration]: ...

    @overload
    def get_definitions(
        self,
        tool_names: Iterable[str] | None = ...,
        *,
        format: Literal["mcp"],
        strict: bool = ...,
        inline_refs: bool = ...,
        optional_as_absent: bool = ...,
        defer: Literal[False] = ...,
    ) -> list[McpToolDefinition]: ...

    @overload
    def get_definitions(
        self,
        tool_names: Iterable[str] | None = ...,
        *,
        format: DefinitionFormat,
        strict: bool = ...,
        inline_refs: bool = ...,
        optional_as_absent: bool = ...,
        defer: Literal[False] = ...,
    ) -> list[Any]: ...

    def get_definition(
        self,
        name: str,
        *,
        format: DefinitionFormat = "openai",
        strict: bool = False,
        inline_refs: bool = False,
        optional_as_absent: bool = False,
    ) -> Any | None:
        """One tool's definition, available or not (None: unknown); ValueError for a tool
        an option cannot hold. The options are ``get_definitions``'."""
        return self._definitions.get_definition(
            name,
            format=format,
            strict=strict,
            inline_refs=inline_refs,
            optional_as_absent=optional_as_absent,
        )

    def get_definitions(
        self,
        tool_names: Iterable[str] | None = None,
        *,
        format: DefinitionFormat = "openai",
        strict: bool = False,
        inline_refs: bool = False,
        optional_as_absent: bool = False,
        defer: bool = False,
        always_loaded: Iterable[str] = (),
        search: SearchMode = "server",
    ) -> list[Any]:
        """Definitions of the available tools among ``tool_names`` (all when None).

        A fresh list of shared, read-only definitions (``copy.deepcopy`` one to
        change it). ``strict``: OpenAI's strict mode; ``inline_refs``: every local
        ``$ref`` inlined; ``optional_as_absent``: an optional nullable property
        written as a non-null one. A tool an option cannot hold is left out, with
        a warning; one bad tool never breaks the list.

        ``defer=True``: the ``always_loaded`` tools (names, or ``toolset:NAME``)
        in full, the others deferred in ``format``'s own form with its search
        tool, run by the provider (``search="server"``) or by the host
        (``"client"``); docs/search.md, "Deferred loading".
        """
        if defer:
            return self._deferred_definitions(
                tool_names,
                self._pinned(always_loaded),
                format=format,
                search=search,
                strict=strict,
                inline_refs=inline_refs,
                optional_as_absent=optional_as_absent,
            )
        return self._definitions.get_definitions(
            tool_names,
            format=format,
            strict=strict,
            inline_refs=inline_refs,
            optional_as_absent=optional_as_absent,
        )

    def get_definitions_json(
        self,
        tool_names: Iterable[str] | None = None,
        *,
        format: DefinitionFormat = "openai",
        strict: bool = False,
        inline_refs: bool = False,
        optional_as_absent: bool = False,
    ) -> str:
        """``get_definitions`` serialised to JSON; memoised whole when no tool is dynamic."""
        return self._definitions.get_definitions_json(
            tool_names,
            format=format,
            strict=strict,
            inline_refs=inline_refs,
            optional_as_absent=optional_as_absent,
        )

    # -- search -------------------------------------------------------------------

    def search(
        self,
        query: str,
        *,
        limit: int = 5,
        toolsets: Iterable[str] | None = None,
        include_unavailable: bool = False,
        min_score: float | None = None,
    ) -> list[SearchHit]:
        """The tools that best answer ``query`` (keywords or a whole question), best first.

        At most ``limit`` hits. None when the best scores below ``min_score``
        (None: docs/search.md's default), so an empty list means no tool fits;
        otherwise the runners-up down to half of it come too. Only
        tools available now, unless ``include_unavailable``; only the
        ``toolsets`` given (aliases resolved), when given. Tools registered with
        ``searchable=False`` are never found. The first search builds the
        index; later writes update it name by name. ValueError for a
        ``limit`` below 1.
        """
        if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
            raise ValueError(f"search: limit must be a whole number of at least 1, got {limit!r}")
        if not isinstance(query, str):
            raise TypeError(f"search: query must be a string, got {type(query).__name__}")
        if isinstance(toolsets, str):
            toolsets = (toolsets,)  # one toolset, not its letters
        wanted = None if toolsets is None else frozenset(map(self.resolve_toolset, toolsets))
        return self._search.get().search(
            query,
            limit=limit,
            min_score=min_score,
            toolsets=wanted,
            available=None if include_unavailable else self.is_tool_available,
        )

    def session(
        self,
        *,
        always_loaded: Iterable[str] = (),
        toolsets: Iterable[str] | None = None,
        min_score: float | None = None,
    ) -> ToolSession:
        """A :class:`ToolSession` for one conversation: the ``always_loaded`` tools, a
        ``tool_search`` tool, and the tools it finds (among ``toolsets`` when given)."""
        from .session import ToolSession

        return ToolSession(
            self, always_loaded=always_loaded, toolsets=toolsets, min_score=min_score
        )

    def _pinned(self, always_loaded: Iterable[str]) -> frozenset[str]:
        """The tool names ``always_loaded`` stands for, as registered now."""
        if isinstance(always_loaded, str):
            always_loaded = (always_loaded,)  # one name, not its letters
        names: set[str] = set()
        for item in always_loaded:
            if not isinstance(item, str):
                raise TypeError(f"always_loaded: expected tool names, got {type(item).__name__}")
            if item.startswith("toolset:"):
                names.update(self._table.names_in(self.resolve_toolset(item[len("toolset:") :])))
            else:
                names.add(item)
        return frozenset(names)

    def _deferred_definitions(
        self,
        tool_names: Iterable[str] | None,
        pinned: frozenset[str],
        *,
        format: DefinitionFormat,
        search: str,
        strict: bool,
        inline_refs: bool,
        optional_as_absent: bool,
        found: Sequence[str] = (),
    ) -> list[Any]:
        """``pinned`` in full by name, then ``found`` in full in the order found,
        the rest as ``format`` and ``search`` defer them, and the search tool."""
        from .._definitions.deferred import (  # here: most hosts never defer
            TOOL_SEARCH,
            deferred_list,
            definition_name,
            needs_rest,
            offers_function,
        )

        if search not in ("server", "client", "function"):
            raise ValueError(f"search must be 'server' or 'client', got {search!r}")
        wants_rest = needs_rest(format, search)
        if not wants_rest:
            # Only the full ones are listed: never walk a large catalog for a few tools.
            named = pinned | frozenset(found)
            tool_names = named if tool_names is None else named.intersection(tool_names)
        every = self._definitions.get_definitions(
            tool_names,
            format=format,
            strict=strict,
            inline_refs=inline_refs,
            optional_as_absent=optional_as_absent,
        )
        function = offers_function(format, search)
        options = self._table.get_options
        full: list[dict[str, Any]] = []
        rest: list[dict[str, Any]] = []
        later: dict[str, dict[str, Any] | None] = dict.fromkeys(n for n in found if n not in pinned)
        for definition in every:
            name = definition_name(definition)
            if function and name == TOOL_SEARCH:
                continue  # the search tool's name: its calls are answered by the search
            if name in pinned:
                full.append(definition)
            elif name in later:
                later[name] = definition
            elif wants_rest:
                # A tool hidden from search is never found, so deferring it would hide it
                # behind the provider's own search instead.
                settings = options(name)
                if settings is None or settings.searchable:
                    rest.append(definition)
        full += [definition for definition in later.values() if definition is not None]
        return deferred_list(
            full, rest, format=format, search=search, toolset_of=self.get_toolset_for_tool
        )

    # -- availability -----------------------------------------------------------

    def availability(self, name: str) -> Verdict:
        """(available, reason) for one tool; unknown tools are unavailable."""
        return self._view.availability(name)

    def is_tool_available(self, name: str) -> bool:
        return self._view.is_tool_available(name)

    def invalidate_check_fn_cache(self) -> None:
        """Forget cached check_fn results, so the next read probes afresh."""
        self._view.invalidate_check_fn_cache()

    def is_toolset_available(self, toolset: str) -> bool:
        """True when the toolset (or the one an alias names) has an available tool."""
        return self._view.is_toolset_available(toolset)

    def check_toolset_requirements(self) -> dict[str, bool]:
        """``{toolset: available}`` for every toolset."""
        return self._view.check_toolset_requirements()

    def get_available_toolsets(self) -> dict[str, dict[str, Any]]:
        """Per toolset: available, its tools, what they require, and why not; from one
        snapshot of the table, so a toolset removed meanwhile is whole or absent."""
        return self._view.get_available_toolsets()


#: The process-wide registry: built-in tools, packs and MCP servers write into it, and
#: hosts read from it. Tests and embedders that want isolation make their own.
registry = ToolRegistry()
