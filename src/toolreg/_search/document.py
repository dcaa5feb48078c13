"""What of a tool is searched: its fields as text, each cut to a bound.

Names, descriptions and schemas come from packs and MCP servers, so none is
trusted to be small: each field keeps at most its first ``MAX_FIELD_CHARS``
characters, and the schema walk stops after ``MAX_SCHEMA_NODES`` nodes or
``MAX_SCHEMA_DEPTH`` levels. Whatever a tool holds, indexing it costs a bounded
amount of time and memory.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from .._contract.entry import ToolEntry

#: Characters of one field that are indexed; a description's first 2,000 say what it does.
MAX_FIELD_CHARS = 2_000
#: Schema nodes (properties, items, variants) read per tool.
MAX_SCHEMA_NODES = 200
#: Levels of nested schema read below ``parameters``.
MAX_SCHEMA_DEPTH = 6
#: Values read from one ``enum``.
MAX_ENUM_VALUES = 50


class Fields(NamedTuple):
    """One tool's searchable text, field by field."""

    name: str
    description: str
    params: str
    toolset: str


def fields_of(entry: ToolEntry) -> Fields:
    """The searchable fields of ``entry``, each at most ``MAX_FIELD_CHARS`` long."""
    schema = entry.schema if isinstance(entry.schema, dict) else {}
    description = entry.description
    if not isinstance(description, str) or not description:
        found = schema.get("description")
        description = found if isinstance(found, str) else ""
    parts: list[str] = []
    _walk(schema.get("parameters"), parts, 0, [0, 0])
    return Fields(
        entry.name[:MAX_FIELD_CHARS],
        description[:MAX_FIELD_CHARS],
        _join(parts),
        entry.toolset[:MAX_FIELD_CHARS],
    )


def _join(parts: list[str]) -> str:
    return " ".join(parts)[:MAX_FIELD_CHARS]


def _add(parts: list[str], spent: list[int], text: str) -> None:
    room = MAX_FIELD_CHARS - spent[1]
    if room > 0:
        parts.append(text[:room])
        spent[1] += min(len(text), room) + 1


def _walk(node: Any, parts: list[str], depth: int, spent: list[int]) -> None:
    """Parameter names, descriptions and enum values; ``spent`` counts nodes and characters."""
    if not isinstance(node, dict) or depth > MAX_SCHEMA_DEPTH:
        return
    if spent[0] >= MAX_SCHEMA_NODES or spent[1] >= MAX_FIELD_CHARS:
        return
    spent[0] += 1
    text = node.get("description")
    if isinstance(text, str):
        _add(parts, spent, text)
    enum = node.get("enum")
    if isinstance(enum, list):
        for value in enum[:MAX_ENUM_VALUES]:
            if isinstance(value, str):
                _add(parts, spent, value[:64])
    properties = node.get("properties")
    if isinstance(properties, dict):
        for index, (name, child) in enumerate(properties.items()):
            if index >= MAX_SCHEMA_NODES or spent[0] >= MAX_SCHEMA_NODES:
                break
            if isinstance(name, str):
                _add(parts, spent, name[:64])
            _walk(child, parts, depth + 1, spent)
    items = node.get("items")
    if isinstance(items, dict):
        _walk(items, parts, depth + 1, spent)
    for key in ("anyOf", "oneOf", "allOf"):
        variants = node.get(key)
        if isinstance(variants, list):
            for child in variants[:MAX_SCHEMA_NODES]:
                _walk(child, parts, depth + 1, spent)
