"""MCP tool annotations: a title and four hints about what a tool does to its world.

An author's are checked by :func:`tool_annotations`; what another process lists is
filtered by :func:`received_annotations`. Either way, a shared read-only mapping.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

#: MCP's annotation keys, in MCP's order, with the type of their values.
KEYS: dict[str, type] = {
    "title": str,
    "readOnlyHint": bool,
    "destructiveHint": bool,
    "idempotentHint": bool,
    "openWorldHint": bool,
}
#: The MCP SDK's Python spellings (``ToolAnnotations(read_only_hint=True)``).
_SDK_NAMES = {
    "read_only_hint": "readOnlyHint",
    "destructive_hint": "destructiveHint",
    "idempotent_hint": "idempotentHint",
    "open_world_hint": "openWorldHint",
}

Annotations = Mapping[str, Any]
#: What an entry without annotations reads: one empty mapping for all of them.
NO_ANNOTATIONS: Annotations = MappingProxyType({})


def tool_annotations(tool: str, value: Any) -> Annotations:
    """An author's annotations, checked; ValueError naming ``tool`` and the bad key.

    ``value`` is a mapping or the MCP SDK's ``ToolAnnotations`` model; a key
    whose value is None is left out, as MCP reads a missing hint.
    """
    if value is None:
        return NO_ANNOTATIONS
    if not isinstance(value, Mapping) and callable(getattr(value, "model_dump", None)):
        value = value.model_dump(by_alias=True, exclude_none=True)
    if not isinstance(value, Mapping):
        raise ValueError(
            f"Tool {tool!r}: annotations must be a mapping such as "
            f"{{'readOnlyHint': True}}, got {type(value).__name__}"
        )
    found: dict[str, Any] = {}
    for key, hint in value.items():
        mcp_key = key if key in KEYS else _SDK_NAMES.get(key) if isinstance(key, str) else None
        if mcp_key is None:
            raise ValueError(f"Tool {tool!r}: annotations key {key!r} {_unknown(key)}")
        if hint is None:
            continue
        if type(hint) is not KEYS[mcp_key]:
            kind = "a string" if KEYS[mcp_key] is str else "True or False"
            raise ValueError(f"Tool {tool!r}: annotation {key!r} must be {kind}, got {hint!r}")
        if mcp_key in found:
            raise ValueError(f"Tool {tool!r}: annotation {mcp_key!r} is given twice")
        found[mcp_key] = hint
    return _shared(_ordered(found))


def received_annotations(value: Any) -> Annotations:
    """Annotations another process listed: the known keys with the right types, no more.

    Never raises: whatever a server sends, the worst outcome is fewer hints.
    """
    if not isinstance(value, Mapping):
        return NO_ANNOTATIONS
    found = {key: value[key] for key, kind in KEYS.items() if type(value.get(key)) is kind}
    return _shared(_ordered(found))


def _ordered(found: dict[str, Any]) -> tuple[tuple[str, Any], ...]:
    return tuple((key, found[key]) for key in KEYS if key in found)


@functools.lru_cache(maxsize=256)
def _shared(items: tuple[tuple[str, Any], ...]) -> Annotations:
    # Tools mostly share a handful of hint sets: one mapping each, not one per entry.
    return MappingProxyType(dict(items)) if items else NO_ANNOTATIONS


def _unknown(key: Any) -> str:
    import difflib  # only when an author got a key wrong: start-up never pays for it

    known = ", ".join(KEYS)
    close = difflib.get_close_matches(str(key), [*KEYS, *_SDK_NAMES], n=1)
    hint = f" (did you mean {close[0]!r}?)" if close else ""
    return f"is not an MCP tool annotation{hint}; expected one of {known}"
