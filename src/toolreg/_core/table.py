"""The tool table: registration, removal, aliases and lookups, through the write gate.

The rules themselves live in :mod:`.gate`; who is calling, in :mod:`.policy_seam`.

Readers never lock and never copy: every write builds a new dict and publishes
it with one attribute assignment, which is atomic under the GIL (and under
free-threading, since the published dicts are never mutated afterwards).
Writers are serialised by one re-entrant lock.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import replace
from typing import Any

from .._contract.entry import (
    DEFAULT_OPTIONS,
    CheckFn,
    Handler,
    SchemaOverrides,
    ToolEntry,
    ToolOptions,
    make_options,
)
from .._contract.schemas import check_registration, check_result_limit
from .decisions import Action, Decision, DecisionLog
from .gate import judge, judge_alias, judge_removal
from .override_history import OverrideHistory
from .ownership import Owner, PluginPolicy
from .policy_seam import PolicySeamMixin

logger = logging.getLogger("toolreg.registry")


#: Besides the entry, what the table keeps per name: who owns it, how to dispatch it.
Meta = tuple[Owner, ToolOptions]
#: A write's unit: the entry with its meta.
Slot = tuple[ToolEntry, Owner, ToolOptions]


class ToolTable(PolicySeamMixin):
    """Name → ToolEntry, with the rules that decide who may write what."""

    def __init__(self, *, decision_log_size: int = 1000) -> None:
        self._lock = threading.RLock()
        self._tools: dict[str, ToolEntry] = {}
        # Kept beside _tools rather than in it: _tools stays a plain name ->
        # entry dict, so get_entry can be that dict's own ``get``.
        self._meta: dict[str, Meta] = {}
        self._toolsets: dict[str, frozenset[str]] = {}
        self._aliases: dict[str, str] = {}
        self._generation = 0
        self._init_policy_seam()
        self._log = DecisionLog(decision_log_size)
        # So unloading a plugin can put back what it overrode.
        self._history = OverrideHistory()
        self._change_listeners: list[Callable[[frozenset[str]], None]] = []

    # -- reads: lock-free -------------------------------------------------

    @property
    def generation(self) -> int:
        """Bumped by every accepted mutation; caches compare it to detect change."""
        return self._generation

    def get_entry(self, name: str) -> ToolEntry | None:
        """The entry registered under ``name``, or None. A plain dict read.

        Each write rebinds it to the new table's ``dict.get``, so look it up on
        the registry at each use rather than keeping the bound method.
        """
        return self._tools.get(name)

    def get_owner(self, name: str) -> str | None:
        """``builtin``, ``host``, a plugin id or ``mcp:<server>``; None if unknown."""
        meta = self._meta.get(name)
        return meta[0].label if meta is not None else None

    def get_options(self, name: str) -> ToolOptions | None:
        """Dispatch settings (validation, timeout) of a tool; None if unknown."""
        meta = self._meta.get(name)
        return meta[1] if meta is not None else None

    def get_all_tool_names(self) -> list[str]:
        return sorted(self._tools)

    def get_toolset_for_tool(self, name: str) -> str | None:
        entry = self._tools.get(name)
        return entry.toolset if entry is not None else None

    def get_tool_names_for_toolset(self, toolset: str) -> list[str]:
        return sorted(self._toolsets.get(self.resolve_toolset(toolset), ()))

    def get_toolsets(self) -> list[str]:
        return sorted(self._toolsets)

    def resolve_toolset(self, name: str) -> str:
        """The toolset an alias points to, or ``name`` itself."""
        return self._aliases.get(name, name)

    def get_toolset_aliases(self) -> dict[str, str]:
        return dict(self._aliases)

    def decisions(self, since: int = 0) -> list[Decision]:
        """Registration decisions after sequence number ``since``, oldest first.

        The log is bounded: the oldest decisions fall off.
        """
        return self._log.snapshot(since)

    @property
    def last_decision_seq(self) -> int:
        """The sequence number of the newest decision (0 before any)."""
        return self._log.last_seq

    def __len__(self) -> int:
        return len(self._tools)

    def __contains__(self, name: object) -> bool:
        return name in self._tools

    # -- writes ---------------------------------------------------------------

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
    ) -> ToolEntry | None:
        """Register a tool; returns the new entry, or None when rejected.

        Raises ValueError for a malformed name, schema, ``annotations`` (MCP's
        hints) or ``output_schema``, and PermissionError for a plugin override
        the operator has not allowed.
        """
        check_registration(name, toolset, schema, handler)
        check_result_limit(name, max_result_size_chars)
        options = make_options(name, validate, timeout)
        entry = ToolEntry(
            name=name,
            toolset=toolset,
            schema=schema,
            handler=handler,
            check_fn=check_fn,
            requires_env=requires_env,
            is_async=is_async,
            description=description,
            emoji=emoji,
            max_result_size_chars=max_result_size_chars,
            dynamic_schema_overrides=dynamic_schema_overrides,
            annotations=annotations,
            output_schema=output_schema,
        )
        owner, plugins = self._owner_for(toolset, handler, depth=2)
        with self._lock:
            action = self._admit(entry, owner, plugins, override)
            if action is None:
                return None
            self._publish({name: (entry, owner, options)}, removed=(), action=action)
        return entry

    def _admit(
        self, entry: ToolEntry, owner: Owner, plugins: list[PluginPolicy], override: bool
    ) -> Action | None:
        """Apply the conflict rules; None means rejected (logged and recorded)."""
        existing = self._tools.get(entry.name)
        previous = self._owner_of(entry.name)
        alias_of = self._aliases.get(entry.toolset)
        verdict = judge(entry, owner, plugins, override, existing, previous, alias_of)
        if verdict.action is None:
            kind = "REFUSED" if verdict.refuse else "REJECTED"
            logger.error("Tool registration %s: %s", kind, verdict.reason)
            self._record("rejected", entry, owner, verdict.reason, existing, previous)
            if verdict.refuse:
                raise PermissionError(verdict.reason)
        elif verdict.action == "overridden" and existing is not None and previous is not None:
            logger.info(
                "Tool %r of toolset %r (%s) overridden by toolset %r (%s)",
                entry.name,
                existing.toolset,
                previous.label,
                entry.toolset,
                owner.label,
            )
        return verdict.action

    def deregister(self, name: str) -> bool:
        """Remove a tool; returns whether it existed.

        A plugin may remove only its own tools unless the operator allowed it
        overrides (PermissionError otherwise).
        """
        callers = self._callers()
        with self._lock:
            if self._tools.get(name) is None:
                return False
            owner = self._meta[name][0]
            reason = judge_removal(name, owner, callers, "deregister")
            if reason is not None:
                self._refused(callers[0], reason, tool=name)
            self._publish({}, removed=(name,), action="deregistered")
        return True

    def replace_toolset(
        self,
        toolset: str,
        entries: Iterable[ToolEntry],
        *,
        options: ToolOptions = DEFAULT_OPTIONS,
    ) -> list[str]:
        """Swap a whole toolset in one step; returns the names now in it.

        Readers see either the old toolset or the new one, never a mix. An
        entry whose name another toolset owns is skipped and logged as rejected.
        """
        entries = list(entries)
        seen: set[str] = set()
        for entry in entries:
            check_registration(entry.name, entry.toolset, entry.schema, entry.handler)
            check_result_limit(entry.name, entry.max_result_size_chars)
            if entry.toolset != toolset:
                raise ValueError(
                    f"Tool {entry.name!r}: entry toolset {entry.toolset!r} is not {toolset!r}"
                )
            if entry.name in seen:
                raise ValueError(f"Tool {entry.name!r} appears twice in toolset {toolset!r}")
            seen.add(entry.name)
        owners = [self._owner_for(toolset, entry.handler, depth=2) for entry in entries]
        callers = self._callers()
        with self._lock:
            current = self._toolsets.get(toolset, frozenset())
            added: dict[str, Slot] = {}
            # A refusal raises before anything is published: all or nothing.
            for entry, (owner, plugins) in zip(entries, owners, strict=True):
                if entry.name in current and not plugins:
                    added[entry.name] = (entry, owner, options)  # its own tool, refreshed
                    continue
                if self._admit(entry, owner, plugins, override=False) is not None:
                    added[entry.name] = (entry, owner, options)
            removed = tuple(sorted(current - added.keys()))
            self._check_removal(removed, callers, "replace_toolset")
            self._publish(added, removed=removed, action=None)
            return sorted(added)

    def remove_owner(self, label: str) -> list[str]:
        """Remove every tool ``label`` owns, in one step; returns their names.

        A tool it overrode comes back, but only while the owner's entry is
        still the current one: if someone replaced it since, that one stays.
        A plugin may remove only its own tools, unless the operator allowed it
        overrides.
        """
        callers = self._callers()
        with self._lock:
            owned = sorted(name for name, meta in self._meta.items() if meta[0].label == label)
            self._check_removal(owned, callers, "remove_owner")
            restored = self._history.forget_owner(label, owned)
            removed = tuple(name for name in owned if name not in restored)
            if owned:
                self._publish(restored, removed=removed, action="restored")
            return owned

    def register_toolset_alias(self, alias: str, toolset: str) -> None:
        """Let config say ``alias`` for ``toolset`` (e.g. ``foo`` for ``mcp-foo``).

        Host only. The alias must not hide a toolset, and lives as long as its
        toolset has tools. ValueError for an alias that breaks those rules.
        """
        with self._lock:
            self._require_host(f"create toolset alias {alias!r}")
            if alias == toolset and isinstance(alias, str) and alias:
                return
            target = self._aliases.get(toolset, toolset)
            problem = judge_alias(alias, target, self._toolsets.keys())
            if problem is not None:
                raise ValueError(problem[0].upper() + problem[1:])
            self._aliases = {**self._aliases, alias: target}
            self._generation += 1

    def record_rejection(self, entry: ToolEntry, reason: str) -> None:
        """Record that a writer above the table refused ``entry`` itself.

        For refusals decided before registering (an MCP tool whose name clashes),
        so that ``decisions()`` and ``toolreg doctor`` show them like the table's
        own. Nothing is published and the generation stays; the caller logs.
        """
        owner, _ = self._owner_for(entry.toolset, entry.handler, depth=2)
        with self._lock:
            name = entry.name
            self._record(
                "rejected", entry, owner, reason, self._tools.get(name), self._owner_of(name)
            )

    # -- internals ------------------------------------------------------------

    def _check_removal(self, names: Iterable[str], callers: list[PluginPolicy], how: str) -> None:
        """PermissionError unless the calling plugins may remove every one of ``names``."""
        if not callers:
            return
        for name in names:
            reason = judge_removal(name, self._meta[name][0], callers, how)
            if reason is not None:
                self._refused(callers[0], reason, tool=name)

    def _publish(
        self,
        added: dict[str, Slot],
        removed: Iterable[str],
        action: Action | None,
    ) -> None:
        """Build new dicts and swap them in; caller holds the lock."""
        removed = tuple(removed)
        tools = dict(self._tools)
        meta = dict(self._meta)
        decisions: list[tuple[Action, ToolEntry, Owner, ToolEntry | None, Owner | None]] = []
        # Names leaving and joining each toolset, so only touched toolsets are
        # rebuilt, with one set operation each: a bulk write stays linear.
        gone: dict[str, set[str]] = {}
        came: dict[str, set[str]] = {}
        for name in removed:
            old = tools.pop(name)
            old_owner, _ = meta.pop(name)
            gone.setdefault(old.toolset, set()).add(name)
            decisions.append(("deregistered", old, old_owner, None, None))
        for name, (entry, owner, options) in added.items():
            old = tools.get(name)
            old_meta = meta.get(name)
            tools[name] = entry
            meta[name] = (owner, options)
            verb = action or ("registered" if old is None else "replaced")
            if old is not None and old_meta is not None:
                gone.setdefault(old.toolset, set()).add(name)
                if verb == "overridden":
                    self._history.record(name, (old, *old_meta), owner.label)
            came.setdefault(entry.toolset, set()).add(name)
            decisions.append((verb, entry, owner, old, old_meta[0] if old_meta else None))
        toolsets = dict(self._toolsets)
        for toolset in gone.keys() | came.keys():
            names = (toolsets.get(toolset, frozenset()) - gone.get(toolset, set())) | came.get(
                toolset, set()
            )
            if names:
                toolsets[toolset] = frozenset(names)
            else:
                toolsets.pop(toolset, None)
        if self._aliases and any(toolset not in toolsets for toolset in gone):
            # An alias dies with its toolset, so it cannot later hide a new one.
            self._aliases = {a: t for a, t in self._aliases.items() if t in toolsets}
        self._toolsets = toolsets
        self._meta = meta
        self._tools = tools
        # get_entry becomes the published dict's own ``get``: the dispatch hot
        # path's lookup is then a C call, with no Python frame in between.
        self.get_entry = tools.get  # type: ignore[method-assign]
        self._generation += 1
        changed = frozenset(removed) | added.keys()
        for listener in self._change_listeners:
            listener(changed)
        for verb, entry, owner, old, old_owner in decisions:
            self._record(verb, entry, owner, "", old, old_owner)

    def _owner_of(self, name: str) -> Owner | None:
        meta = self._meta.get(name)
        return meta[0] if meta is not None else None

    def _on_change(self, listener: Callable[[frozenset[str]], None]) -> None:
        """Call ``listener`` with the changed names after every publish (under the lock).

        The one way caches above the table (dispatch plans) learn of a change:
        explicit, so it never depends on the order of a class's bases.
        """
        self._change_listeners.append(listener)

    def _record(
        self,
        action: Action,
        entry: ToolEntry,
        owner: Owner,
        reason: str,
        previous: ToolEntry | None,
        previous_owner: Owner | None,
    ) -> None:
        before = previous_owner.label if previous_owner is not None else None
        decision = Decision.about(entry, action, owner.label, reason, previous, before)
        self._log.append(replace(decision, generation=self._generation))
