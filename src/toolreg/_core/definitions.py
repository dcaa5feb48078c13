"""Tool definitions for the model, memoised per table generation.

A host asks for definitions every turn, and the answer changes only when the
table changes (its generation), availability changes, or a tool's
``dynamic_schema_overrides`` says something new. So the static part is built
once and frozen as a ``marshal`` blob: each call thaws a private deep copy in
C, and the few dynamic tools are re-merged on top.
"""

from __future__ import annotations

import copy
import json
import logging
import marshal
import threading
from collections.abc import Callable, Iterable
from typing import Any

from .._contract.entry import ToolEntry
from .._contract.formats import Formatter, get_formatter
from .._contract.schemas import check_parameters, parameters_of
from .availability import Availability, Verdict

logger = logging.getLogger("toolreg.definitions")

_MEMO_LIMIT = 256

_MemoKey = tuple[Any, str, int]


class _Memo:
    __slots__ = ("gated", "verdicts", "blob", "dynamic", "json")

    def __init__(
        self,
        gated: tuple[ToolEntry, ...],
        verdicts: tuple[bool, ...],
        blob: bytes,
        dynamic: tuple[tuple[int, ToolEntry], ...],
    ) -> None:
        self.gated = gated
        self.verdicts = verdicts
        self.blob = blob
        self.dynamic = dynamic
        self.json: str | None = None


def _static_definition(entry: ToolEntry, formatter: Formatter) -> dict[str, Any]:
    # The schema's description is written for the model; ``description=`` is
    # the short line people see in listings, and stands in only when it is missing.
    description = entry.schema.get("description") or entry.description or ""
    return formatter(entry.name, description, parameters_of(entry.schema), entry)


def _dynamic_definition(entry: ToolEntry, formatter: Formatter) -> dict[str, Any]:
    """The definition with ``dynamic_schema_overrides()`` merged in, as a private copy."""
    if entry.dynamic_schema_overrides is None:
        return copy.deepcopy(_static_definition(entry, formatter))
    overrides = None
    try:
        overrides = entry.dynamic_schema_overrides()
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
        return copy.deepcopy(_static_definition(entry, formatter))
    merged = {**entry.schema, **overrides}
    description = merged.get("description") or entry.description or ""
    return copy.deepcopy(formatter(entry.name, description, parameters_of(merged), entry))


def _thaw(memo: _Memo, format: str) -> list[dict[str, Any]]:
    """A private deep copy of the memoised list, with dynamic tools merged afresh."""
    definitions = marshal.loads(memo.blob)
    if memo.dynamic:
        formatter = get_formatter(format)
        for index, entry in memo.dynamic:
            definitions[index] = _dynamic_definition(entry, formatter)
    return definitions


class DefinitionsMixin:
    """``get_definitions`` and friends, for a table that has availability."""

    _tools: dict[str, ToolEntry]
    _generation: int
    _availability: Availability

    def _init_definitions(self) -> None:
        self._memo: dict[_MemoKey, _Memo] = {}
        self._memo_lock = threading.Lock()

    def get_definition(self, name: str, *, format: str = "openai") -> dict[str, Any] | None:
        """One tool's definition, available or not; None for an unknown tool."""
        formatter = get_formatter(format)
        entry = self._tools.get(name)
        if entry is None:
            return None
        return _dynamic_definition(entry, formatter)

    def get_definitions(
        self, tool_names: Iterable[str] | None = None, *, format: str = "openai"
    ) -> list[dict[str, Any]]:
        """Definitions of the available tools among ``tool_names`` (all when None), by name.

        Each call returns fresh copies: mutate them freely.
        """
        return _thaw(self._memo_for(tool_names, format), format)

    def get_definitions_json(
        self, tool_names: Iterable[str] | None = None, *, format: str = "openai"
    ) -> str:
        """``get_definitions`` serialised to JSON; memoised whole when no tool is dynamic."""
        memo = self._memo_for(tool_names, format)
        if memo.dynamic:
            return json.dumps(_thaw(memo, format), ensure_ascii=False)
        if memo.json is None:
            memo.json = json.dumps(marshal.loads(memo.blob), ensure_ascii=False)
        return memo.json

    def _memo_for(self, tool_names: Iterable[str] | None, format: str) -> _Memo:
        generation = self._generation
        tools = self._tools
        names_key = None if tool_names is None else frozenset(tool_names)
        key = (names_key, format, generation)
        memo = self._memo.get(key)
        # One read: tools that share a probe share one run of it.
        check = self._availability.checker()
        if memo is not None and tuple([check(e)[0] for e in memo.gated]) == memo.verdicts:
            return memo
        memo = self._build(tools, names_key, format, check)
        with self._memo_lock:
            if len(self._memo) >= _MEMO_LIMIT:
                self._memo.clear()
            self._memo[key] = memo
        return memo

    def _build(
        self,
        tools: dict[str, ToolEntry],
        names_key: frozenset[str] | None,
        format: str,
        check: Callable[[ToolEntry], Verdict],
    ) -> _Memo:
        formatter = get_formatter(format)
        if names_key is None:
            names = sorted(tools)
        else:
            names = sorted(name for name in names_key if name in tools)
        entries = [tools[name] for name in names]
        gated = tuple(e for e in entries if e.check_fn is not None or e.requires_env)
        verdicts = tuple(check(entry)[0] for entry in gated)
        unavailable = {entry.name for entry, ok in zip(gated, verdicts, strict=True) if not ok}
        definitions: list[dict[str, Any]] = []
        dynamic: list[tuple[int, ToolEntry]] = []
        for entry in entries:
            if entry.name in unavailable:
                continue
            try:
                definition = _static_definition(entry, formatter)
                marshal.dumps(definition)  # proves it can be frozen with the rest
            except Exception as exc:  # one bad tool never breaks the list
                logger.error("Skipping tool %s in definitions: %s", entry.name, exc)
                continue
            if entry.dynamic_schema_overrides is not None:
                dynamic.append((len(definitions), entry))
            definitions.append(definition)
        return _Memo(gated, verdicts, marshal.dumps(definitions), tuple(dynamic))
