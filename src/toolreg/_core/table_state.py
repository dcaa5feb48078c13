"""The table's data and how a write changes it; the rules that allow a write live above.

Reads never lock. A write of one tool changes the live dicts in place: each
step is one dict or set operation, atomic for readers, so a reader sees the
tool before or after, and the write costs the same at ten tools or ten
thousand. A write of many tools at once (``replace_toolset``, ``remove_owner``,
a batch) builds new dicts and swaps them in, so readers see all of it or none.

Code that iterates reads :meth:`TableState.snapshot`, a copy taken once per
generation: iterating the live dict while a writer adds to it would fail.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from .._contract.entry import DEFAULT_OPTIONS, ToolEntry, ToolOptions
from .decisions import Action, DecisionLog
from .override_history import OverrideHistory
from .ownership import Owner

#: One row of the table, the unit of a write.
Row = tuple[ToolEntry, Owner, ToolOptions]
#: Told the names a write changed, the generation it made and the dict readers
#: now read, after it is visible and before the lock is let go.
ChangeListener = Callable[[Iterable[str], int, dict[str, ToolEntry]], None]


class TableState:
    """Entries, owners, toolsets and aliases; every method but the reads needs the writer lock."""

    def __init__(self, log: DecisionLog) -> None:
        self._log = log
        #: name -> entry; changed in place by one-tool writes, swapped by bulk ones.
        self.live: dict[str, ToolEntry] = {}
        #: name -> who owns it.
        self.owned: dict[str, Owner] = {}
        #: name -> dispatch options, for the few tools whose options are not the default.
        self.options: dict[str, ToolOptions] = {}
        #: toolset -> its names (a dict used as an ordered set: half a set's memory).
        self.toolsets: dict[str, dict[str, None]] = {}
        self.aliases: dict[str, str] = {}
        self.generation = 0
        self._snapshot: tuple[int, dict[str, ToolEntry]] = (0, {})
        # So unloading a plugin can put back what it overrode.
        self.history = OverrideHistory()
        self.listener: ChangeListener | None = None

    def options_of(self, name: str) -> ToolOptions | None:
        """A tool's dispatch options; None for an unknown tool."""
        if name not in self.live:
            return None
        return self.options.get(name, DEFAULT_OPTIONS)

    def _set_options(
        self, options_by_name: dict[str, ToolOptions], name: str, options: ToolOptions
    ) -> None:
        if options is DEFAULT_OPTIONS:
            options_by_name.pop(name, None)
        else:
            options_by_name[name] = options

    def snapshot(self) -> dict[str, ToolEntry]:
        """The entries as of one generation, never changed afterwards: safe to iterate."""
        generation, tools = self._snapshot
        current = self.generation
        if generation != current:
            # dict.copy is one C call: atomic against the in-place writes. A
            # write landing between the two reads is in the copy, and bumps
            # the generation, so the next reader copies again.
            tools = self.live.copy()
            self._snapshot = (current, tools)
        return tools

    # -- one tool, in place ----------------------------------------------------

    def put(
        self,
        entry: ToolEntry,
        owner: Owner,
        options: ToolOptions,
        action: Action,
        old: ToolEntry | None,
        old_owner: Owner | None,
    ) -> None:
        """Write one admitted entry in place of ``old`` (owned by ``old_owner``) and record it."""
        name, toolset = entry.name, entry.toolset
        verb: Action = action
        before = None
        joins = True  # the name is not yet among its toolset's
        if old is not None and old_owner is not None:
            before = old_owner.label
            if verb == "registered":
                verb = "replaced"
            elif verb == "overridden":
                row = (old, old_owner, self.options.get(name, DEFAULT_OPTIONS))
                self.history.record(name, row, owner.label)
            if old.toolset != toolset:
                self._leave(old.toolset, name)
            else:
                joins = False
        if old_owner is not owner:
            self.owned[name] = owner
        if options is not DEFAULT_OPTIONS or self.options:
            self._set_options(self.options, name, options)
        self.live[name] = entry
        if joins:
            members = self.toolsets.get(toolset)
            if members is None:
                self.toolsets[toolset] = {name: None}
            else:
                members[name] = None
        self.generation = generation = self.generation + 1
        self._log.record(verb, entry, owner.label, "", old, before, generation)
        listener = self.listener
        if listener is not None:
            listener((name,), generation, self.live)

    def drop(self, name: str) -> None:
        """Remove one tool in place and record it."""
        old = self.live.pop(name)
        owner = self.owned.pop(name)
        self.options.pop(name, None)
        self._leave(old.toolset, name)
        self.generation += 1
        self._log.record("deregistered", old, owner.label, "", None, None, self.generation)
        if self.listener is not None:
            self.listener((name,), self.generation, self.live)

    def _leave(self, toolset: str, name: str) -> None:
        members = self.toolsets.get(toolset)
        if members is None:
            return
        members.pop(name, None)
        if not members:
            del self.toolsets[toolset]
            if toolset in self.aliases.values():
                # An alias dies with its toolset, so it cannot later hide a new one.
                self.aliases = {a: t for a, t in self.aliases.items() if t != toolset}

    # -- many tools, swapped in at once -------------------------------------------

    def swap(
        self,
        added: dict[str, Row],
        removed: Iterable[str],
        action: Action | None,
        actions: dict[str, Action] | None = None,
    ) -> None:
        """Build new dicts and swap them in: readers see all of it or none.

        ``action`` names every added row's decision (None: registered or
        replaced, by what stood there); ``actions`` overrides it per name.
        """
        removed = tuple(removed)
        tools = self.live.copy()
        owners = self.owned.copy()
        options_by_name = self.options.copy()
        decisions: list[tuple[Action, ToolEntry, str, ToolEntry | None, str | None]] = []
        # Names leaving and joining each toolset, so only touched toolsets are
        # rebuilt, with one set operation each: a bulk write stays linear.
        gone: dict[str, set[str]] = {}
        came: dict[str, set[str]] = {}
        for name in removed:
            old = tools.pop(name)
            old_owner = owners.pop(name)
            options_by_name.pop(name, None)
            gone.setdefault(old.toolset, set()).add(name)
            decisions.append(("deregistered", old, old_owner.label, None, None))
        actions = actions or {}
        fallback = action or "registered"
        for name, (entry, owner, options) in added.items():
            old = tools.get(name)
            tools[name] = entry
            members = came.get(entry.toolset)
            if members is None:
                came[entry.toolset] = {name}
            else:
                members.add(name)
            if old is None:  # a new name (the commonest in a batch): no owner, options or history
                owners[name] = owner
                if options is not DEFAULT_OPTIONS:
                    options_by_name[name] = options
                decisions.append((actions.get(name) or fallback, entry, owner.label, None, None))
                continue
            old_owner = owners[name]
            owners[name] = owner
            if options is not DEFAULT_OPTIONS or name in options_by_name:
                old_options = options_by_name.get(name, DEFAULT_OPTIONS)
                self._set_options(options_by_name, name, options)
            else:
                old_options = DEFAULT_OPTIONS
            verb = actions.get(name) or fallback
            if verb == "registered":
                verb = "replaced"
            gone.setdefault(old.toolset, set()).add(name)
            if verb == "overridden":
                self.history.record(name, (old, old_owner, old_options), owner.label)
            decisions.append((verb, entry, owner.label, old, old_owner.label))
        toolsets = self.toolsets.copy()
        for toolset in gone.keys() | came.keys():
            members = toolsets.get(toolset)
            if members is None:  # a new toolset: only names that came
                toolsets[toolset] = dict.fromkeys(came[toolset])
                continue
            names = (members.keys() - gone.get(toolset, set())) | came.get(toolset, set())
            if names:
                toolsets[toolset] = dict.fromkeys(names)
            else:
                toolsets.pop(toolset, None)
        if self.aliases and any(toolset not in toolsets for toolset in gone):
            self.aliases = {a: t for a, t in self.aliases.items() if t in toolsets}
        self.toolsets = toolsets
        self.owned = owners
        self.options = options_by_name
        self.live = tools
        self.generation += 1
        if self.listener is not None:
            self.listener(set(removed) | added.keys(), self.generation, tools)
        self._log.record_many(decisions, self.generation)
