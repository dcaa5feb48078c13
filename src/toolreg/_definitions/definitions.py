"""Tool definitions for the model: built once per entry and format, frozen, then shared.

Each call gets a fresh list of the shared definitions (safe to append to); a tool with
``dynamic_schema_overrides`` gets a private copy, merged afresh on every call.
"""

from __future__ import annotations

import json
import logging
import threading
from collections import deque
from collections.abc import Callable, Iterable
from itertools import compress
from typing import TYPE_CHECKING, Any

from .._contract.entry import ToolEntry
from .._contract.frozen import FrozenDict, thaw
from .._contract.schema_checks import check_parameters, parameters_of
from .._core.availability import Availability
from .._core.callers import run_made_by
from .._core.table import ToolTable
from .._schemas.formats import (
    FormatKey,
    Formatter,
    Unrepresentable,
    format_key,
    get_formatter,
)
from .definition_layout import Built, Layout

if TYPE_CHECKING:
    from .._core.plugin_policy import PluginPolicy

#: The pack whose code a tool's callables are (``ToolTable.maker_of``).
MakerOf = Callable[[str], "PluginPolicy | None"]

logger = logging.getLogger("toolreg.definitions")

#: Names written since the last read beyond which the lists are walked again, not patched.
_PATCH_LIMIT = 256
_MEMO_LIMIT = 256

_MemoKey = tuple[Any, FormatKey, int]


class _Memo:
    """A layout under one set of availability verdicts: the answer itself."""

    __slots__ = ("layout", "gated", "verdicts", "built", "definitions", "dynamic", "json")

    def __init__(
        self, layout: Layout, verdicts: tuple[bool, ...], available: list[bool] | None
    ) -> None:
        self.layout = layout
        self.gated = layout.gated_entries
        self.verdicts = verdicts
        rows = layout.rows
        if available is None and None not in rows:  # the usual case: one copy, in C
            self.built: list[Built] = rows  # type: ignore[assignment]
            self.definitions: list[dict[str, Any]] = layout.definitions  # type: ignore[assignment]
        else:
            keep = [
                one is not None and (available is None or available[index])
                for index, one in enumerate(rows)
            ]
            self.built = list(compress(rows, keep))  # type: ignore[arg-type]
            self.definitions = list(compress(layout.definitions, keep))  # type: ignore[arg-type]
        self.dynamic: tuple[tuple[int, Built], ...] = ()
        if layout.dynamic:
            self.dynamic = tuple(
                (index, one)
                for index, one in enumerate(self.built)
                if one.entry.dynamic_schema_overrides is not None
            )
        self.json: str | None = None


def _static_definition(entry: ToolEntry, formatter: Formatter) -> FrozenDict:
    # The schema's description is written for the model; ``description=`` is
    # the short line people see in listings, and stands in only when it is missing.
    description = entry.schema.get("description") or entry.description or ""
    return formatter(entry.name, description, parameters_of(entry.schema), entry)


def _dynamic_definition(
    entry: ToolEntry, formatter: Formatter, static: Built, maker_of: MakerOf
) -> dict[str, Any]:
    """The definition with ``dynamic_schema_overrides()`` merged in, as a private copy.

    The overrides run as the code of the pack that made them.
    """
    overrides = None
    try:
        overrides = run_made_by(maker_of(entry.name), entry.dynamic_schema_overrides)  # type: ignore[arg-type]
        if overrides is not None and not isinstance(overrides, dict):
            raise TypeError(f"returned {type(overrides).__name__}, expected dict or None")
        if overrides and "parameters" in overrides:
            check_parameters(entry.name, overrides["parameters"])
        json.dumps(overrides)  # what the model cannot receive must not reach it
    except Exception as exc:
        logger.warning(
            "dynamic_schema_overrides for tool %s failed (%s: %s); using its static schema",
            entry.name,
            type(exc).__name__,
            exc,
        )
        overrides = None
    if not overrides:
        return thaw(static.definition)
    merged = {**entry.schema, **overrides}
    description = merged.get("description") or entry.description or ""
    return thaw(formatter(entry.name, description, parameters_of(merged), entry))


def _listed(memo: _Memo, format: FormatKey, maker_of: MakerOf) -> list[dict[str, Any]]:
    """A fresh list of the memo's shared definitions, dynamic tools merged afresh."""
    definitions = memo.definitions.copy()
    if memo.dynamic:
        formatter = get_formatter(format)
        refused: list[int] = []
        for index, built in memo.dynamic:
            try:
                definitions[index] = _dynamic_definition(built.entry, formatter, built, maker_of)
            except Unrepresentable as exc:  # its overrides cannot be: left out, never loose
                logger.warning("Left out of the definitions %s: %s", _asked(format), exc)
                refused.append(index)
        for index in reversed(refused):
            del definitions[index]
    return definitions


class Definitions:
    """``get_definitions`` and friends: per-tool definitions shared, lists memoised."""

    def __init__(self, table: ToolTable, availability: Availability) -> None:
        self._table = table
        self._availability = availability
        self._memo: dict[_MemoKey, _Memo] = {}
        # format -> name -> the definition built for the entry registered then.
        # Used only while that very entry is in the table; ``forget`` drops it
        # when the name changes, so no entry that left the table is kept alive.
        self._built: dict[FormatKey, dict[str, Built]] = {}
        # (names, format) -> the layout of that list at the current generation;
        # the next read after a write patches it, so a call after a write builds
        # only what the write changed.
        self._layouts: dict[tuple[frozenset[str] | None, FormatKey], Layout] = {}
        # The writes since the layouts were last patched, as (sequence number,
        # table generation after it, names): appended by writers, read by
        # readers. Bounded: a reader that finds a gap walks the table instead.
        self._writes: deque[tuple[int, int, Iterable[str]]] = deque(maxlen=_PATCH_LIMIT)
        self._written = 0  # the last write's sequence number; writers only
        self._patched = 0  # the last write the layouts know; readers only, under the lock
        # The table's generation after that write: a patch is good for that
        # generation, not for a later write whose names have not come in yet.
        self._known_generation = table.generation
        # Readers' lock, for building and patching. Writers never take it: a
        # writer waiting on a reader the interpreter switched away from would
        # wait a whole switch interval.
        self._lock = threading.Lock()

    def forget(self, names: Iterable[str], generation: int) -> None:
        """The table changed ``names``, making ``generation``: drop their definitions;
        the next read patches the lists.

        The table's change listener calls this under the writer lock on every
        write, so it does work in proportion to the write, never to the table,
        and takes no lock of its own. Afterwards nothing here holds an entry
        that left the table (``_keep`` checks again after it stores).
        """
        built = self._built
        if built:
            for cache in built.values():  # copied on write: never resized under us
                for name in names:
                    cache.pop(name, None)
        if self._memo:
            self._memo.clear()  # every memo is of an older generation now
        self._written = written = self._written + 1
        self._writes.append((written, generation, names))

    def _patch_layouts(self) -> None:
        """Bring the kept layouts up to the table for the writes since; caller holds the lock.

        A write whose ``forget`` has not run yet may already be in the table
        read here, but not in ``_writes``: the patched layouts are marked with
        the generation of the last write read, so a reader at a later
        generation walks the table instead of serving a half-patched list.
        Patching the same change twice, when that write's names come in, is
        harmless.
        """
        if self._written == self._patched:
            return
        writes = [write for write in list(self._writes) if write[0] > self._patched]
        if not writes:
            return
        changed = {name for _, _, names in writes for name in names}
        lost = writes[0][0] != self._patched + 1
        self._patched, self._known_generation = writes[-1][0], writes[-1][1]
        if lost or len(changed) > _PATCH_LIMIT:
            # Writes fell off the bounded queue, or walking beats patching.
            self._layouts.clear()
            return
        generation, tools = self._known_generation, self._table.tools
        for key, layout in list(self._layouts.items()):
            patched = layout.patched(tools, generation, changed, self._built[key[1]])
            if patched is None:  # names came or went: the next call walks the table
                del self._layouts[key]
            else:
                self._layouts[key] = patched

    def get_definition(
        self,
        name: str,
        *,
        format: str = "openai",
        strict: bool = False,
        inline_refs: bool = False,
        optional_as_absent: bool = False,
    ) -> dict[str, Any] | None:
        """One tool's definition, available or not; None for an unknown tool.

        Shared and read-only, like ``get_definitions``'; a tool with
        ``dynamic_schema_overrides`` gets a private copy.
        """
        format = format_key(
            format, strict=strict, inline_refs=inline_refs, optional_as_absent=optional_as_absent
        )
        formatter = get_formatter(format)
        entry = self._table.live.get(name)
        if entry is None:
            return None
        built = self._cache(format).get(name)
        if built is None or built.entry is not entry:
            built = Built(entry, _static_definition(entry, formatter))
            self._keep(format, {name: built})
        if entry.dynamic_schema_overrides is not None:
            return _dynamic_definition(entry, formatter, built, self._table.maker_of)
        return built.definition

    def get_definitions(
        self,
        tool_names: Iterable[str] | None = None,
        *,
        format: str = "openai",
        strict: bool = False,
        inline_refs: bool = False,
        optional_as_absent: bool = False,
    ) -> list[dict[str, Any]]:
        """Definitions of the available tools among ``tool_names`` (all when None), by name.

        A fresh list of shared, read-only definitions: append to the list, but
        ``copy.deepcopy`` a definition before changing it.
        """
        key = format_key(
            format, strict=strict, inline_refs=inline_refs, optional_as_absent=optional_as_absent
        )
        return _listed(self._memo_for(tool_names, key), key, self._table.maker_of)

    def get_definitions_json(
        self,
        tool_names: Iterable[str] | None = None,
        *,
        format: str = "openai",
        strict: bool = False,
        inline_refs: bool = False,
        optional_as_absent: bool = False,
    ) -> str:
        """``get_definitions`` serialised to JSON; memoised whole when no tool is dynamic."""
        key = format_key(
            format, strict=strict, inline_refs=inline_refs, optional_as_absent=optional_as_absent
        )
        memo = self._memo_for(tool_names, key)
        if memo.dynamic:
            return json.dumps(_listed(memo, key, self._table.maker_of), ensure_ascii=False)
        if memo.json is None:
            # Each tool's text is kept with its definition, so a change re-encodes one tool.
            memo.json = "[" + ", ".join([b.as_json() for b in memo.built]) + "]"
        return memo.json

    def _cache(self, format: FormatKey) -> dict[str, Built]:
        cache = self._built.get(format)
        if cache is None:
            get_formatter(format)  # only known formats get a cache
            with self._lock:
                cache = self._built.get(format)
                if cache is None:
                    cache = {}
                    # A new dict, not a new key: a writer may be iterating this one.
                    self._built = {**self._built, format: cache}
        return cache

    def _keep(self, format: FormatKey, fresh: dict[str, Built]) -> None:
        """Cache fresh definitions whose entry is still the table's.

        Checked under the lock ``forget`` takes: a write that lands meanwhile
        either is seen here or forgets the name after, so nothing stale stays.
        """
        with self._lock:
            tools, cache = self._table.live, self._built[format]
            for name, built in fresh.items():
                if tools.get(name) is built.entry:
                    cache[name] = built
                    # A write between the check and the store has dropped the
                    # name already, or comes after and drops it: look again.
                    if tools.get(name) is not built.entry:
                        cache.pop(name, None)

    def _memo_for(self, tool_names: Iterable[str] | None, format: FormatKey) -> _Memo:
        # Generation first: a write in between makes this memo's key stale, never wrong.
        table = self._table
        generation = table.generation
        tools = table.tools
        names_key = None if tool_names is None else frozenset(tool_names)
        key = (names_key, format, generation)
        memo = self._memo.get(key)
        # One read: tools that share a probe share one run of it.
        check = self._availability.checker()
        if memo is not None:
            verdicts = tuple([check(e)[0] for e in memo.gated])
            if verdicts == memo.verdicts:
                return memo
            layout = memo.layout  # only availability changed
        else:
            cache = self._cache(format)
            with self._lock:
                self._patch_layouts()
                layout = self._layouts.get((names_key, format))
            if layout is None or layout.generation != generation:
                layout = Layout.walk(tools, names_key, generation, cache)
            verdicts = tuple([check(e)[0] for e in layout.gated_entries])
        memo = self._assemble(layout, verdicts, format)
        with self._lock:
            # A write since this call began has moved on: keep nothing of the past.
            if table.generation == generation:
                if len(self._memo) >= _MEMO_LIMIT:
                    self._memo.clear()
                    self._layouts.clear()
                self._memo[key] = memo
                self._layouts[(names_key, format)] = memo.layout
        return memo

    def _assemble(self, layout: Layout, verdicts: tuple[bool, ...], format: FormatKey) -> _Memo:
        """The memo for a layout under ``verdicts``, building the definitions it lacks."""
        available: list[bool] | None = None
        if False in verdicts:
            available = [True] * len(layout.rows)
            for index, ok in zip(layout.gated, verdicts, strict=True):
                available[index] = ok
        missing = _indexes_of_none(layout.rows)
        if available is not None:
            missing = [index for index in missing if available[index]]
        if missing:
            formatter = get_formatter(format)
            cache = self._built[format]
            built: dict[int, Built] = {}
            refused: list[str] = []
            for index in missing:
                entry = layout.entries[index]
                one = cache.get(entry.name)
                if one is None or one.entry is not entry:  # not built since the layout was
                    try:
                        one = Built(entry, _static_definition(entry, formatter))
                    except Unrepresentable as exc:  # never sent without the option asked for
                        refused.append(str(exc))
                        continue
                    except Exception as exc:  # one bad tool never breaks the list
                        logger.error("Skipping tool %s in definitions: %s", entry.name, exc)
                        continue
                built[index] = one
            if refused:
                logger.warning(
                    "Left out of the definitions %s: %s", _asked(format), "; ".join(refused)
                )
            self._keep(format, {one.entry.name: one for one in built.values()})
            layout = layout.with_built(built)
        return _Memo(layout, verdicts, available)


def _asked(format: FormatKey) -> str:
    """The options of a format key, as the warning names them."""
    if isinstance(format, str):
        return f"in {format}"
    name, *options = format
    hint = " (strict_refusals() lists them)" if "strict" in options else ""
    return f"in {name} with {', '.join(options)}{hint}"


def _indexes_of_none(rows: list[Any]) -> list[int]:
    # list.count and list.index compare pointers in C: after a change most
    # rows are cached, and this finds the few that are not without a Python loop.
    found: list[int] = []
    index = -1
    for _ in range(rows.count(None)):
        index = rows.index(None, index + 1)
        found.append(index)
    return found
