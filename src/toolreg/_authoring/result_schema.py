"""The output schema of an ``@tool`` function: its return type's schema, when that is a structure.

A TypedDict, dataclass or pydantic model return type gives an MCP ``outputSchema``
(built like ``type_schema``'s, for values as returned); any other gives None.
"""

from __future__ import annotations

import copy
import inspect
from typing import Any

from .type_kinds import (
    UnsupportedType,
    is_dataclass_type,
    is_model_class,
    is_typeddict,
    split_annotated,
    type_name,
)
from .type_schema import REF_PREFIX, SchemaBuilder


def is_structured(annotation: Any) -> bool:
    """True for a TypedDict, a dataclass or a pydantic model (``Annotated`` or not)."""
    base = split_annotated(annotation)[0]
    return is_typeddict(base) or is_dataclass_type(base) or is_model_class(base)


def result_schema(tool: str, annotation: Any) -> dict[str, Any] | None:
    """The output schema for a return annotation, or None when it is not a structure.

    Raises TypeError, naming the tool, when the structure holds a type that
    has no JSON Schema.
    """
    if annotation is inspect.Signature.empty or not is_structured(annotation):
        return None
    base = split_annotated(annotation)[0]
    builder = SchemaBuilder(mode="serialization")
    try:
        reference = builder.schema(base)
    except UnsupportedType as exc:
        raise TypeError(
            f"Tool {tool!r}: return type {type_name(base)} has no JSON Schema "
            f"({type_name(exc.culprit)} cannot be expressed); return a str, or pass "
            "output_schema=False"
        ) from None
    found, defs = builder.finish({"result": reference})
    root = found["result"]["$ref"][len(REF_PREFIX) :]
    schema = dict(defs[root])
    # The root stays filed under $defs only if something refers to it (a tree).
    others = {name: body for name, body in defs.items() if name != root}
    if _refers_to(others, root) or _refers_to(schema, root):
        others[root] = defs[root]
    if others:
        schema["$defs"] = others
    # A copy: the root's body is in $defs too when something refers to it.
    return copy.deepcopy(schema) if schema.get("type") == "object" else None


def _refers_to(node: Any, name: str) -> bool:
    target = REF_PREFIX + name
    stack = [node]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            if item.get("$ref") == target:
                return True
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return False
