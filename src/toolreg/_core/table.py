"""The tool table: registration, removal, aliases and lookups, through the write gate.

Readers never lock; writers are serialised by one re-entrant lock. The rules live in
:mod:`.gate`, who is calling in :mod:`.callers`, the data in :mod:`.table_state`.
"""

from __future__ import annotations

import contextlib
import logging
import sys
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from .._contract.entry import (
    DEFAULT_OPTIONS,
    ToolEntry,
    ToolOptions,
)
from .._contract.schema_checks import check_registration, check_result_limit
from .callers import Callers, CallSite
from .decisions import Action, DecisionLog
from .gate import Ruling, judge, judge_alias, judge_removal
from .ownership import Owner
from .table_state import ChangeListener, Row, TableState

if TYPE_CHECKING:
    from .plugin_policy import PluginPolicy

logger = logging.getLogger("toolreg.registry")


class ToolTable:
    """Name → ToolEntry, with the rules that decide who may write what."""

    def __init__(self, callers: Callers, lock: threading.RLock, log: DecisionLog) -> None:
        self._lock = lock
        self._callers = callers
        self._log = log
        self._state = TableState(log)
        # Rows a batch has admitted and not yet swapped in; only ever set while
        # the batching thread holds the lock.
        self._staged: dict[str, Row] | None = None
        # The decision each staged name gets at the swap: its first write's,
        # against what stood there before the batch.
        self._staged_actions: dict[str, Action] = {}
        # The stack add_all read once for its registrations; only ever set while
        # the batching thread holds the lock, and only used by register calls
        # made from that very frame.
        self._site: CallSite | None = None

    # -- reads: lock-free -------------------------------------------------

    @property
    def generation(self) -> int:
        """Bumped by every accepted write; caches compare it to detect change."""
        return self._state.generation

    @property
    def live(self) -> dict[str, ToolEntry]:
        """The live name -> entry dict, for point reads (``get``, ``in``); never iterate it."""
        return self._state.live

    @property
    def tools(self) -> dict[str, ToolEntry]:
        """The entries as of this generation, never changed afterwards: iterate this."""
        return self._state.snapshot()

    def live_entries(self) -> tuple[int, Iterable[ToolEntry]]:
        """The generation and the entries of one snapshot."""
        generation = self._state.generation
        return generation, self._state.snapshot().values()

    def get_owner(self, name: str) -> str | None:
        """``builtin``, ``host``, a plugin id or ``mcp:<server>``; None if unknown."""
        owner = self._state.owned.get(name)
        return owner.label if owner is not None else None

    def maker_of(self, name: str) -> PluginPolicy | None:
        """The plugin whose code a tool's callables are: its owner's policy, unless the
        host registered it on the plugin's behalf (``acting_for``); None if unknown."""
        owner = self._state.owned.get(name)
        return None if owner is None or owner.acted else owner.policy

    def get_options(self, name: str) -> ToolOptions | None:
        """Dispatch settings (validation, timeout) of a tool; None if unknown."""
        return self._state.options_of(name)

    def names_in(self, toolset: str) -> list[str]:
        """The tools of a toolset (or of the toolset an alias names), sorted."""
        return sorted(self._state.toolsets.get(self.resolve_toolset(toolset), ()))

    def toolsets(self) -> list[str]:
        return sorted(self._state.toolsets)

    def resolve_toolset(self, name: str) -> str:
        """The toolset an alias points to, or ``name`` itself."""
        return self._state.aliases.get(name, name)

    def aliases(self) -> dict[str, str]:
        return dict(self._state.aliases)

    # -- writes ---------------------------------------------------------------

    def add(
        self, entry: ToolEntry, override: bool, options: ToolOptions = DEFAULT_OPTIONS
    ) -> ToolEntry | None:
        """Write one checked entry, if the gate admits it; None when rejected."""
        site = self._site
        if site is not None and site.first_frame is sys._getframe(2):
            # register called by add_all's own loop, which holds the lock: the
            # stack outward of that running frame cannot change, so it was read
            # once; each handler's own code is still read per write. A register
            # call from anywhere else reads its own stack (held by
            # test_register_many_reads_each_handler_and_each_nested_register_afresh).
            owner, plugins = site.owner(entry.toolset, entry.handler)
            return self._stage(entry, options, override, owner, plugins)
        owner, plugins = self._callers.owner_for(entry.toolset, entry.handler, 2)
        # ``with``, not acquire() then try: a Ctrl-C handled just after acquire()
        # returned would leave the lock held, and every other writer waiting.
        with self._lock:
            if self._staged is not None:
                return self._stage(entry, options, override, owner, plugins)
            action, existing, previous = self._admit(entry, owner, plugins, override)
            if action is None:
                return None
            self._state.put(entry, owner, options, action, existing, previous)
            return entry

    def add_all(
        self,
        register: Callable[..., ToolEntry | None],
        specs: Iterable[Mapping[str, Any]],
    ) -> list[ToolEntry | None]:
        """``register(**spec)`` for each spec, in one batch; the results in order.

        ``register`` ends in :meth:`add`, which reads whose code is calling
        from the stack. Called from this loop, that stack is this frame's, the
        same for every spec: it is read once, and each handler's own code per
        spec. A register call from anywhere else (code run by a generator of
        specs, say) reads its own stack, as always.
        """
        with self.batch():
            site = CallSite(self._callers, 0)
            previous, self._site = self._site, site
            try:
                results = []
                for spec in specs:
                    results.append(register(**spec))
                return results
            finally:
                self._site = previous

    def _stage(
        self,
        entry: ToolEntry,
        options: ToolOptions,
        override: bool,
        owner: Owner,
        plugins: Sequence[PluginPolicy],
    ) -> ToolEntry | None:
        """Judge one entry and stage it for the batch's swap; caller holds the lock."""
        action = self._admit(entry, owner, plugins, override)[0]
        if action is None:
            return None
        self._staged[entry.name] = (entry, owner, options)  # type: ignore[index]
        self._staged_actions.setdefault(entry.name, action)
        return entry

    @contextlib.contextmanager
    def batch(self) -> Iterator[None]:
        """Hold the writes of the block back, then swap them in at once.

        Readers see none of the block's registrations until it ends, then all
        of them; if the block raises, none. Each is judged as it is made,
        against the table and the batch so far. Other threads' writes wait
        for the block to end. A removal inside the block swaps in what the
        block registered so far, then removes.
        """
        with self._lock:
            if self._staged is not None:
                yield  # nested: part of the outer batch
                return
            self._staged, self._staged_actions = {}, {}
            try:
                yield
                self._flush_batch()
            finally:
                self._staged, self._staged_actions = None, {}

    def _flush_batch(self) -> None:
        """Swap in what a batch staged so far (if any); caller holds the lock."""
        staged = self._staged
        if staged:
            actions = self._staged_actions
            self._staged, self._staged_actions = {}, {}
            self._state.swap(staged, (), None, actions)

    def _admit(
        self,
        entry: ToolEntry,
        owner: Owner,
        plugins: Sequence[PluginPolicy],
        override: bool,
        refresh: bool = False,
    ) -> tuple[Action | None, ToolEntry | None, Owner | None]:
        """Ask the gate about ``entry`` meeting what stands under its name (the batch's
        so far, else the table's): the action (None: rejected, logged and recorded),
        with the entry and owner it meets. Caller holds the lock.
        """
        name, state = entry.name, self._state
        staged = self._staged.get(name) if self._staged else None
        if staged is not None:
            existing, previous = staged[0], staged[1]
        else:
            existing, previous = state.live.get(name), state.owned.get(name)
        aliases = state.aliases
        alias_of = aliases.get(entry.toolset) if aliases else None
        verdict = judge(entry, owner, plugins, override, existing, previous, alias_of, refresh)
        action = verdict.action
        if action is None or action == "overridden":
            self._report(verdict, entry, owner, existing, previous)
        return action, existing, previous

    def _report(
        self,
        verdict: Ruling,
        entry: ToolEntry,
        owner: Owner,
        existing: ToolEntry | None,
        previous: Owner | None,
    ) -> None:
        """Log a rejection (recorded; PermissionError when refused) or an override."""
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

    def deregister(self, name: str) -> bool:
        """Remove a tool; whether it existed (``ToolRegistry.deregister``)."""
        callers = self._callers.current()
        with self._lock:
            self._flush_batch()
            if self._state.live.get(name) is None:
                return False
            owner = self._state.owned[name]
            reason = judge_removal(name, owner, callers, "deregister")
            if reason is not None:
                self._callers.refuse(callers[0], reason, tool=name)
            self._state.drop(name)
        return True

    def replace_toolset(
        self,
        toolset: str,
        entries: Iterable[ToolEntry],
        *,
        options: ToolOptions = DEFAULT_OPTIONS,
    ) -> list[str]:
        """Swap a whole toolset in one step; the names now in it (``ToolRegistry``'s)."""
        entries = list(entries)
        seen: set[str] = set()
        for entry in entries:
            check_registration(entry.name, entry.toolset, entry.schema, entry.handler)
            check_result_limit(entry.name, entry.max_result_size_chars)
            if type(entry.name) is not str or type(entry.toolset) is not str:  # keys: no __eq__
                raise ValueError(f"Tool {entry.name!r}: its name and toolset must be plain str")
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
            self._flush_batch()
            current = frozenset(self._state.toolsets.get(toolset, ()))
            added: dict[str, Row] = {}
            # A refusal raises before anything is published: all or nothing.
            for entry, (owner, plugins) in zip(entries, owners, strict=True):
                refresh = entry.name in current
                if self._admit(entry, owner, plugins, False, refresh)[0] is not None:
                    added[entry.name] = (entry, owner, options)
            removed = tuple(sorted(current - added.keys()))
            self._check_removal(removed, callers, "replace_toolset")
            self._state.swap(added, removed, None)
            return sorted(added)

    def remove_owner(self, label: str) -> list[str]:
        """Remove every tool ``label`` owns, in one step; their names (``ToolRegistry``'s).

        A tool it overrode comes back only while the owner's entry is still current.
        """
        callers = self._callers.current()
        with self._lock:
            self._flush_batch()
            owned = sorted(n for n, owner in self._state.owned.items() if owner.label == label)
            self._check_removal(owned, callers, "remove_owner")
            restored = self._state.history.forget_owner(label, owned)
            removed = tuple(name for name in owned if name not in restored)
            if owned:
                self._state.swap(restored, removed, "restored")
            return owned

    def register_toolset_alias(self, alias: str, toolset: str) -> None:
        """Let config say ``alias`` for ``toolset``; host only (``ToolRegistry``'s)."""
        with self._lock:
            self._callers.require_host(f"create toolset alias {alias!r}")
            if alias == toolset and isinstance(alias, str) and alias:
                return
            target = self._state.aliases.get(toolset, toolset)
            problem = judge_alias(alias, target, self._toolsets_after_batch())
            if problem is not None:
                raise ValueError(problem[0].upper() + problem[1:])
            self._state.aliases = {**self._state.aliases, str.__str__(alias): str.__str__(target)}
            self._state.generation += 1

    def _toolsets_after_batch(self) -> frozenset[str]:
        """The toolsets as readers will see them once the batch swaps in; caller holds the lock.

        Outside a batch, the table's. Inside one, an alias is judged against
        the toolsets the batch registered too, so that it can neither hide one
        of them nor miss one it names.
        """
        state = self._state
        staged = self._staged
        if not staged:
            return frozenset(state.toolsets)
        toolsets = {entry.toolset for entry, _, _ in staged.values()}
        for toolset, members in state.toolsets.items():
            if toolset in toolsets:
                continue
            for name in members:  # kept while one member is not moved elsewhere by the batch
                moved = staged.get(name)
                if moved is None or moved[0].toolset == toolset:
                    toolsets.add(toolset)
                    break
        return frozenset(toolsets)

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
                "rejected", entry, owner, reason, self._state.live.get(name), self._owner_of(name)
            )

    # -- internals ------------------------------------------------------------

    def _check_removal(self, names: Iterable[str], callers: list[PluginPolicy], how: str) -> None:
        """PermissionError unless the calling plugins may remove every one of ``names``."""
        if not callers:
            return
        for name in names:
            reason = judge_removal(name, self._state.owned[name], callers, how)
            if reason is not None:
                self._callers.refuse(callers[0], reason, tool=name)

    def _owner_of(self, name: str) -> Owner | None:
        return self._state.owned.get(name)

    def on_change(self, listener: ChangeListener) -> None:
        """The one way caches above the table learn of a write: explicit, and only one."""
        if self._state.listener is not None:
            raise RuntimeError("the table already has a change listener")
        self._state.listener = listener

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
        self._log.record(action, entry, owner.label, reason, previous, before, self.generation)
