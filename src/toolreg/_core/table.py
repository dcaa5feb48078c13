"""The tool table: registration, removal, aliases and lookups, through the write gate.

The rules themselves live in :mod:`.gate`; who is calling, in :mod:`.callers`.

Readers never lock and never copy: every write builds a new dict and publishes
it with one attribute assignment, which is atomic under the GIL (and under
free-threading, since the published dicts are never mutated afterwards).
Writers are serialised by one re-entrant lock.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterable
from dataclasses import replace

from .._contract.entry import (
    DEFAULT_OPTIONS,
    ToolEntry,
    ToolOptions,
)
from .._contract.schema_checks import check_registration, check_result_limit
from .callers import Callers
from .decisions import Action, Decision, DecisionLog
from .gate import judge, judge_alias, judge_removal
from .override_history import OverrideHistory
from .ownership import Owner, PluginPolicy

logger = logging.getLogger("toolreg.registry")


#: Besides the entry, what the table keeps per name: who owns it, how to dispatch it.
OwnerOptions = tuple[Owner, ToolOptions]
#: One row of the table, the unit of a write.
Row = tuple[ToolEntry, Owner, ToolOptions]
#: Told the names a write changed, after it is visible and before the lock is let go.
ChangeListener = Callable[[frozenset[str]], None]


class ToolTable:
    """Name → ToolEntry, with the rules that decide who may write what."""

    def __init__(self, callers: Callers, lock: threading.RLock, log: DecisionLog) -> None:
        self._lock = lock
        self._callers = callers
        self._log = log
        self._tools: dict[str, ToolEntry] = {}
        # Kept beside _tools rather than in it: _tools stays a plain name ->
        # entry dict, so the registry's get_entry can be that dict's own ``get``.
        self._owned: dict[str, OwnerOptions] = {}
        self._toolsets: dict[str, frozenset[str]] = {}
        self._aliases: dict[str, str] = {}
        self._generation = 0
        # So unloading a plugin can put back what it overrode.
        self._history = OverrideHistory()
        self._listener: ChangeListener | None = None

    # -- reads: lock-free -------------------------------------------------

    @property
    def generation(self) -> int:
        """Bumped by every accepted mutation; caches compare it to detect change."""
        return self._generation

    @property
    def tools(self) -> dict[str, ToolEntry]:
        """The published name → entry dict. Never mutated: read it, do not change it."""
        return self._tools

    def live_entries(self) -> tuple[int, Iterable[ToolEntry]]:
        """The generation and the entries of one published table."""
        return self._generation, self._tools.values()

    def get_owner(self, name: str) -> str | None:
        """``builtin``, ``host``, a plugin id or ``mcp:<server>``; None if unknown."""
        held = self._owned.get(name)
        return held[0].label if held is not None else None

    def get_options(self, name: str) -> ToolOptions | None:
        """Dispatch settings (validation, timeout) of a tool; None if unknown."""
        held = self._owned.get(name)
        return held[1] if held is not None else None

    def names_in(self, toolset: str) -> list[str]:
        """The tools of a toolset (or of the toolset an alias names), sorted."""
        return sorted(self._toolsets.get(self.resolve_toolset(toolset), ()))

    def toolsets(self) -> list[str]:
        return sorted(self._toolsets)

    def resolve_toolset(self, name: str) -> str:
        """The toolset an alias points to, or ``name`` itself."""
        return self._aliases.get(name, name)

    def aliases(self) -> dict[str, str]:
        return dict(self._aliases)

    # -- writes ---------------------------------------------------------------

    def add(self, entry: ToolEntry, options: ToolOptions, override: bool) -> ToolEntry | None:
        """Write one checked entry, if the gate admits it; None when rejected."""
        owner, plugins = self._callers.owner_for(entry.toolset, entry.handler, depth=3)
        with self._lock:
            action = self._admit(entry, owner, plugins, override)
            if action is None:
                return None
            self._write({entry.name: (entry, owner, options)}, removed=(), action=action)
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
        callers = self._callers.current()
        with self._lock:
            if self._tools.get(name) is None:
                return False
            owner = self._owned[name][0]
            reason = judge_removal(name, owner, callers, "deregister")
            if reason is not None:
                self._callers.refuse(callers[0], reason, tool=name)
            self._write({}, removed=(name,), action="deregistered")
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
        owners = [self._callers.owner_for(toolset, entry.handler, depth=2) for entry in entries]
        callers = self._callers.current()
        with self._lock:
            current = self._toolsets.get(toolset, frozenset())
            added: dict[str, Row] = {}
            # A refusal raises before anything is published: all or nothing.
            for entry, (owner, plugins) in zip(entries, owners, strict=True):
                if entry.name in current and not plugins:
                    added[entry.name] = (entry, owner, options)  # its own tool, refreshed
                    continue
                if self._admit(entry, owner, plugins, override=False) is not None:
                    added[entry.name] = (entry, owner, options)
            removed = tuple(sorted(current - added.keys()))
            self._check_removal(removed, callers, "replace_toolset")
            self._write(added, removed=removed, action=None)
            return sorted(added)

    def remove_owner(self, label: str) -> list[str]:
        """Remove every tool ``label`` owns, in one step; returns their names.

        A tool it overrode comes back, but only while the owner's entry is
        still the current one: if someone replaced it since, that one stays.
        A plugin may remove only its own tools, unless the operator allowed it
        overrides.
        """
        callers = self._callers.current()
        with self._lock:
            owned = sorted(name for name, held in self._owned.items() if held[0].label == label)
            self._check_removal(owned, callers, "remove_owner")
            restored = self._history.forget_owner(label, owned)
            removed = tuple(name for name in owned if name not in restored)
            if owned:
                self._write(restored, removed=removed, action="restored")
            return owned

    def register_toolset_alias(self, alias: str, toolset: str) -> None:
        """Let config say ``alias`` for ``toolset`` (e.g. ``foo`` for ``mcp-foo``).

        Host only. The alias must not hide a toolset, and lives as long as its
        toolset has tools. ValueError for an alias that breaks those rules.
        """
        with self._lock:
            self._callers.require_host(f"create toolset alias {alias!r}")
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
        owner, _ = self._callers.owner_for(entry.toolset, entry.handler, depth=2)
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
            reason = judge_removal(name, self._owned[name][0], callers, how)
            if reason is not None:
                self._callers.refuse(callers[0], reason, tool=name)

    def _write(
        self,
        added: dict[str, Row],
        removed: Iterable[str],
        action: Action | None,
    ) -> None:
        """Build new dicts and swap them in; caller holds the lock."""
        removed = tuple(removed)
        tools = dict(self._tools)
        held = dict(self._owned)
        decisions: list[tuple[Action, ToolEntry, Owner, ToolEntry | None, Owner | None]] = []
        # Names leaving and joining each toolset, so only touched toolsets are
        # rebuilt, with one set operation each: a bulk write stays linear.
        gone: dict[str, set[str]] = {}
        came: dict[str, set[str]] = {}
        for name in removed:
            old = tools.pop(name)
            old_owner, _ = held.pop(name)
            gone.setdefault(old.toolset, set()).add(name)
            decisions.append(("deregistered", old, old_owner, None, None))
        for name, (entry, owner, options) in added.items():
            old = tools.get(name)
            old_held = held.get(name)
            tools[name] = entry
            held[name] = (owner, options)
            verb = action or ("registered" if old is None else "replaced")
            if old is not None and old_held is not None:
                gone.setdefault(old.toolset, set()).add(name)
                if verb == "overridden":
                    self._history.record(name, (old, *old_held), owner.label)
            came.setdefault(entry.toolset, set()).add(name)
            decisions.append((verb, entry, owner, old, old_held[0] if old_held else None))
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
        self._owned = held
        self._tools = tools
        self._generation += 1
        if self._listener is not None:
            self._listener(frozenset(removed) | added.keys())
        for verb, entry, owner, old, old_owner in decisions:
            self._record(verb, entry, owner, "", old, old_owner)

    def _owner_of(self, name: str) -> Owner | None:
        held = self._owned.get(name)
        return held[0] if held is not None else None

    def on_change(self, listener: ChangeListener) -> None:
        """The one way caches above the table learn of a write: explicit, and only one."""
        if self._listener is not None:
            raise RuntimeError("the table already has a change listener")
        self._listener = listener

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
