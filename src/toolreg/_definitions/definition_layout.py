"""Which tools one definitions list covers, and which of their definitions are built.

A :class:`Layout` is patched, not rebuilt, after a write that only registered tools
again, so a read after a write builds only the changed tools.
"""

from __future__ import annotations

import copy
import json
from bisect import bisect_left
from collections.abc import Iterable

from .._contract.entry import ToolEntry
from .._contract.frozen import FrozenDict


class Built:
    """One tool's definition in one format, for one entry object."""

    __slots__ = ("entry", "definition", "json")

    def __init__(self, entry: ToolEntry, definition: FrozenDict) -> None:
        self.entry = entry
        self.definition = definition
        self.json: str | None = None

    def as_json(self) -> str:
        if self.json is None:
            self.json = json.dumps(self.definition, ensure_ascii=False)
        return self.json


def _gated(entry: ToolEntry) -> bool:
    """Whether the tool's availability must be asked on every call."""
    return entry.check_fn is not None or bool(entry.requires_env)


def _current(cache: dict[str, Built], entry: ToolEntry) -> Built | None:
    one = cache.get(entry.name)
    return one if one is not None and one.entry is entry else None


class Layout:
    """Rows by name: entry, cached definition or None (not built yet), and what is gated.

    Never changed once made: a write or a build makes a new one, sharing what
    stayed the same.
    """

    __slots__ = (
        "names_key",
        "generation",
        "names",
        "entries",
        "rows",
        "definitions",
        "gated",
        "gated_entries",
        "dynamic",
    )

    def __init__(
        self,
        names_key: frozenset[str] | None,
        generation: int,
        names: list[str],
        entries: list[ToolEntry],
        rows: list[Built | None],
        gated: list[int],
        dynamic: bool,
    ) -> None:
        self.names_key = names_key
        self.generation = generation
        self.names = names
        self.entries = entries
        self.rows = rows
        #: Each row's definition (None where the row is), so a list is one copy.
        self.definitions = [None if one is None else one.definition for one in rows]
        #: Indexes and entries of the tools whose availability is asked on every call.
        self.gated = gated
        self.gated_entries = [entries[i] for i in gated]
        #: False when no tool has dynamic_schema_overrides (True may be stale: it saves a scan).
        self.dynamic = dynamic

    @classmethod
    def walk(
        cls,
        tools: dict[str, ToolEntry],
        names_key: frozenset[str] | None,
        generation: int,
        cache: dict[str, Built],
    ) -> Layout:
        """The layout of ``tools``, read name by name."""
        names = sorted(tools) if names_key is None else sorted(names_key.intersection(tools))
        entries = [tools[name] for name in names]
        rows = [_current(cache, entry) for entry in entries]
        gated = [index for index, entry in enumerate(entries) if _gated(entry)]
        dynamic = any(entry.dynamic_schema_overrides is not None for entry in entries)
        return cls(names_key, generation, names, entries, rows, gated, dynamic)

    def with_built(self, built: dict[int, Built]) -> Layout:
        """This layout with the definitions just built, by row index."""
        twin = copy.copy(self)
        twin.rows, twin.definitions = self.rows.copy(), self.definitions.copy()
        for index, one in built.items():
            twin.rows[index] = one
            twin.definitions[index] = one.definition
        return twin

    def patched(
        self,
        tools: dict[str, ToolEntry],
        generation: int,
        changed: Iterable[str],
        cache: dict[str, Built],
    ) -> Layout | None:
        """This layout after writes that changed only ``changed``; None when names came or went.

        ``tools`` must be the table of ``generation``, and ``changed`` every
        name written since this layout's generation.
        """
        names = self.names
        replaced: dict[int, ToolEntry] = {}
        for name in changed:
            index = bisect_left(names, name)
            entry = tools.get(name)
            if index < len(names) and names[index] == name:
                if entry is None:
                    return None  # a tool left the list
                replaced[index] = entry
            elif entry is not None and (self.names_key is None or name in self.names_key):
                return None  # a tool joined the list: walk it again
        twin = copy.copy(self)
        twin.generation = generation
        if not replaced:
            return twin
        twin.entries, twin.rows = self.entries.copy(), self.rows.copy()
        twin.definitions = self.definitions.copy()
        regate = False
        for index, entry in replaced.items():
            regate = regate or _gated(entry) != _gated(self.entries[index])
            twin.entries[index] = entry
            one = twin.rows[index] = _current(cache, entry)
            twin.definitions[index] = None if one is None else one.definition
            twin.dynamic = twin.dynamic or entry.dynamic_schema_overrides is not None
        if regate:
            twin.gated = [index for index, entry in enumerate(twin.entries) if _gated(entry)]
        twin.gated_entries = [twin.entries[i] for i in twin.gated]
        return twin
