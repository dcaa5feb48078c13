"""``Optional[X]`` said the way every consumer reads it: a property ``X`` that may be left out.

Only what the model is told narrows: a required property keeps its null, and dispatch
still validates against the registered schema. The rules are in docs/formats.md.
"""

from __future__ import annotations

from typing import Any

from .._contract.schema_limits import map_subschemas

# Deeper than this is left as registered: registration bounds nesting far below it.
_MAX_DEPTH = 64
# Keywords a null-only branch may carry besides its type.
_ANNOTATIONS = frozenset({"title", "description", "$comment"})


def optional_as_absent(parameters: dict[str, Any]) -> dict[str, Any]:
    """``parameters`` with every optional nullable property written as its non-null form.

    New dicts and lists wherever it rewrites; the input is never changed.
    """
    rewritten: dict[str, Any] = _rewrite(parameters, 0)
    return rewritten


def _rewrite(node: Any, depth: int) -> Any:
    if not isinstance(node, dict) or depth > _MAX_DEPTH:
        return node
    out = map_subschemas(node, lambda sub, _: _rewrite(sub, depth + 1))
    properties = out.get("properties")
    if isinstance(properties, dict):
        required = out.get("required")
        required = set(required) if isinstance(required, list) else set()
        out["properties"] = {
            name: schema if name in required else _without_null(schema)
            for name, schema in properties.items()
        }
    return out


def _without_null(schema: Any) -> Any:
    """``schema`` minus the null it accepts, where something else is left to accept."""
    if not isinstance(schema, dict):
        return schema
    out = dict(schema)
    types = out.get("type")
    if isinstance(types, list) and "null" in types and len(set(types)) > 1:
        rest = [kind for kind in types if kind != "null"]
        out["type"] = rest[0] if len(rest) == 1 else rest
    values = out.get("enum")
    if isinstance(values, list) and None in values and len(values) > values.count(None):
        out["enum"] = [value for value in values if value is not None]
    for key in ("anyOf", "oneOf"):
        branches = out.get(key)
        if isinstance(branches, list) and any(map(_is_null, branches)):
            out = _without_null_branch(out, key)
    if out != schema and "default" in out and out["default"] is None:
        del out["default"]  # no longer a value of the schema; leaving the property out is
    return out


def _without_null_branch(schema: dict[str, Any], key: str) -> dict[str, Any]:
    kept = [branch for branch in schema[key] if not _is_null(branch)]
    if not kept:
        return schema  # null is all it takes: nothing to say instead
    rest = {k: v for k, v in schema.items() if k != key}
    only = kept[0] if len(kept) == 1 else None
    if isinstance(only, dict) and not (only.keys() & (rest.keys() - _ANNOTATIONS)):
        # One branch left: the property is that branch, described as the property was.
        return {**only, **rest}
    return {**rest, key: kept}


def _is_null(branch: Any) -> bool:
    """A branch that accepts null and nothing else."""
    if not isinstance(branch, dict):
        return False
    constraint = branch.keys() - _ANNOTATIONS
    return (
        (constraint == {"type"} and branch["type"] == "null")
        or (constraint == {"const"} and branch["const"] is None)
        or (constraint == {"enum"} and branch["enum"] == [None])
    )
