"""The host's side of strict definitions: which tools were left out, and the way back.

``strict_arguments`` turns strict-mode arguments (``null`` for what the model left out,
maps as key/value pairs) back into what the registered schema takes, before dispatch.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any, overload

from .._schemas.formats import NotStrict
from .._schemas.strict_schema import Restore, strict_schema

if TYPE_CHECKING:
    from .registry import ToolRegistry

# name -> (the shared definition it was made from, its restore); a registration
# makes a new definition object, so the identity check is the staleness check.
_restores: dict[str, tuple[object, Restore | None]] = {}
_lock = threading.Lock()


def _registry(registry: ToolRegistry | None) -> ToolRegistry:
    if registry is not None:
        return registry
    from .registry import registry as default

    return default


def strict_refusals(
    tool_names: Iterable[str] | None = None, *, registry: ToolRegistry | None = None
) -> dict[str, str]:
    """``{tool name: reason}`` for the available tools strict mode cannot hold.

    These are the tools ``get_definitions(..., strict=True)`` leaves out for
    the same ``tool_names``; offer them without strict mode, or not at all.
    """
    refused: dict[str, str] = {}
    for definition in _registry(registry).get_definitions(tool_names, format="mcp"):
        try:
            strict_schema(definition["inputSchema"])
        except NotStrict as exc:
            refused[definition["name"]] = str(exc)
    return refused


@overload
def strict_arguments(
    name: str, args: Mapping[str, Any] | str, *, registry: ToolRegistry | None = None
) -> Mapping[str, Any] | str: ...


@overload
def strict_arguments(name: str, args: None, *, registry: ToolRegistry | None = None) -> None: ...


def strict_arguments(
    name: str, args: Mapping[str, Any] | str | None, *, registry: ToolRegistry | None = None
) -> Mapping[str, Any] | str | None:
    """The model's arguments for a strict definition of ``name``, as the tool takes them.

    A ``null`` for an optional property is removed (the tool's default
    applies) and key/value pair lists become objects again. Arguments given
    as a JSON string are parsed first; what is not JSON, not an object, or
    for an unknown or non-strict tool is returned as it came, so ``dispatch``
    reports it.
    """
    if isinstance(args, str):
        try:
            parsed = json.loads(args) if args.strip() else {}
        except ValueError:
            return args
    else:
        parsed = args
    if not isinstance(parsed, Mapping):
        return args
    restore = _restore_for(_registry(registry), name)
    if restore is None:
        return parsed if isinstance(args, str) else args
    return restore(dict(parsed))


def _restore_for(registry: ToolRegistry, name: str) -> Restore | None:
    definition = registry.get_definition(name, format="mcp")
    if definition is None:
        return None
    with _lock:
        kept = _restores.get(name)
    if kept is not None and kept[0] is definition:
        return kept[1]
    try:
        restore: Restore | None = strict_schema(definition["inputSchema"])[1]
    except NotStrict:
        restore = None
    with _lock:
        _restores[name] = (definition, restore)
    return restore
