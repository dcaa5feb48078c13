"""JSON Schema to the OpenAPI-3.0 subset Gemini accepts in ``FunctionDeclaration.parameters``.

Only the fields of https://ai.google.dev/api/caching#Schema are kept, since Gemini rejects
a request over one unknown keyword (the rules: docs/formats.md). The input is never mutated.
"""

from __future__ import annotations

import copy
import json
from typing import Any

from .._contract.schema_limits import MAX_REF_HOPS, resolve_pointer

# Schema fields copied as they are: everything in Gemini's Schema message that
# needs no rewriting. Any other keyword is dropped.
_PLAIN = (
    "title",
    "description",
    "default",
    "example",
    "pattern",
    "minimum",
    "maximum",
    "minLength",
    "maxLength",
    "minItems",
    "maxItems",
    "minProperties",
    "maxProperties",
    "propertyOrdering",
)

# ``format`` values Gemini acts on, per type; others have been answered with
# 400 "only 'enum' and 'date-time' are supported for STRING type".
_FORMATS = {
    "string": ("enum", "date-time"),
    "integer": ("int32", "int64"),
    "number": ("float", "double"),
}

# A $ref that cannot be inlined (a cycle, a pointer outside the schema, a chain
# longer than MAX_REF_HOPS) becomes this: the model can still pass an object, just without a shape.
_OPAQUE: dict[str, Any] = {"type": "object"}


def to_gemini_schema(parameters: dict[str, Any]) -> dict[str, Any]:
    """The Gemini ``Schema`` for a tool's JSON-Schema ``parameters`` (an object schema).

    Every dict and list in it is new; ``parameters`` is never changed.
    """
    schema = _Normaliser(parameters).final(parameters, ())
    schema["type"] = "object"
    return schema


class _Normaliser:
    def __init__(self, root: dict[str, Any]) -> None:
        self.root = root  # $ref pointers are resolved against the whole parameters schema

    def final(self, node: Any, refs: tuple[str, ...]) -> dict[str, Any]:
        """A schema in its final place (the root, a property, items, an anyOf branch)."""
        return _finish(self.schema(node, refs))

    def schema(self, node: Any, refs: tuple[str, ...]) -> dict[str, Any]:
        """One (sub)schema, not yet finished: allOf branches and inlined $refs are merged
        into their parent first, and only the merged whole can be checked (a ``required``
        may name a property that another branch declares).

        ``refs`` are the $refs being expanded above this node, to stop cycles.
        """
        if not isinstance(node, dict):  # boolean schemas (true/false) say nothing Gemini can use
            return {}
        if isinstance(node.get("$ref"), str):
            return self._ref(node, refs)

        out: dict[str, Any] = {}
        for sub in _list(node.get("allOf")):  # every branch applies: merge them
            out = _merge(out, self.schema(sub, refs))
        alternatives = node.get("anyOf") if "anyOf" in node else node.get("oneOf")
        if isinstance(alternatives, list):
            out = _merge(out, self._alternatives(alternatives, refs))
        return _merge(out, self._own(node, refs))

    def _own(self, node: dict[str, Any], refs: tuple[str, ...]) -> dict[str, Any]:
        """The node's own keywords, before the combinators are merged under them."""
        out: dict[str, Any] = {}
        types = node.get("type")
        if isinstance(types, list):  # ["string", "null"] is the nullable string
            concrete = [t for t in types if t != "null"]
            if len(concrete) < len(types):
                out["nullable"] = True
            if len(concrete) == 1:
                out["type"] = concrete[0]
            elif concrete:
                out["anyOf"] = [{"type": t} for t in concrete]
        elif isinstance(types, str):
            out["type"] = types
        if node.get("nullable") is True:
            out["nullable"] = True
        out.update((key, copy.deepcopy(node[key])) for key in _PLAIN if key in node)
        if "format" in node:
            out["format"] = node["format"]
        # _fix_enum keeps only the string values, so no list or dict of the input survives.
        if "const" in node:
            out["enum"] = [node["const"]]
        elif isinstance(node.get("enum"), list):
            out["enum"] = list(node["enum"])
        properties = node.get("properties")
        if isinstance(properties, dict):
            out["properties"] = {name: self.final(sub, refs) for name, sub in properties.items()}
        if isinstance(node.get("required"), list):
            out["required"] = [r for r in node["required"] if isinstance(r, str)]
        items = node.get("items")
        if isinstance(items, list):  # tuple form: Gemini has no tuples, so describe the first
            items = items[0] if items else None
        if items is not None:
            out["items"] = self.final(items, refs)
        return out

    def _alternatives(self, alternatives: list[Any], refs: tuple[str, ...]) -> dict[str, Any]:
        """anyOf/oneOf: a null branch becomes ``nullable``; one branch left is inlined."""
        # oneOf's "exactly one" cannot be said in Gemini's Schema; anyOf is the nearest.
        branches = [self.schema(alt, refs) for alt in alternatives]
        concrete = [b for b in branches if b != {"type": "null"}]
        out: dict[str, Any] = {"nullable": True} if len(concrete) < len(branches) else {}
        if len(concrete) == 1:
            return _merge(concrete[0], out)
        finished = [_finish(b) for b in concrete]
        # A branch that says nothing accepts anything, and so does the whole anyOf.
        if finished and all(finished):
            out["anyOf"] = finished
        return out

    def _ref(self, node: dict[str, Any], refs: tuple[str, ...]) -> dict[str, Any]:
        ref = node["$ref"]
        inlinable = ref not in refs and len(refs) < MAX_REF_HOPS
        target = resolve_pointer(self.root, ref) if inlinable else None
        base = copy.deepcopy(_OPAQUE) if target is None else self.schema(target, (*refs, ref))
        siblings = {key: value for key, value in node.items() if key != "$ref"}
        if not siblings:
            return base
        # Keywords beside a $ref (often a description) describe this use: they win.
        return _merge(base, self.schema(siblings, refs))


def _merge(base: dict[str, Any], extra: dict[str, Any]) -> dict[str, Any]:
    """``extra`` over ``base``; properties and required are unions, not replacements."""
    out = dict(base)
    for key, value in extra.items():
        if key == "properties" and isinstance(out.get(key), dict):
            out[key] = {**out[key], **value}
        elif key == "required" and isinstance(out.get(key), list):
            out[key] = out[key] + [r for r in value if r not in out[key]]
        else:
            out[key] = value
    return out


def _finish(schema: dict[str, Any]) -> dict[str, Any]:
    """Make one merged schema consistent with Gemini's rules on type, enum and format."""
    if "enum" in schema:
        _fix_enum(schema)
    if "type" not in schema:
        if "properties" in schema:
            schema["type"] = "object"
        elif "items" in schema:
            schema["type"] = "array"
    kind = schema.get("type")
    fmt = schema.pop("format", None)
    if fmt in _FORMATS.get(kind, ()) and (fmt != "enum" or "enum" in schema):
        schema["format"] = fmt
    properties = schema.get("properties")
    if properties == {}:
        # Gemini answers 400 "properties: should be non-empty for OBJECT type".
        del schema["properties"]
    required = [r for r in schema.pop("required", []) if r in (properties or {})]
    if required:
        schema["required"] = required
    return schema


def _fix_enum(schema: dict[str, Any]) -> None:
    """Gemini's enum is a list of strings, for string schemas only."""
    values = schema.pop("enum")
    if None in values:
        schema["nullable"] = True
        values = [v for v in values if v is not None]
    if "type" not in schema and values:
        kinds = {_json_type(v) for v in values}
        if len(kinds) == 1:
            schema["type"] = kinds.pop()
    if schema.get("type") == "string":
        strings = [v for v in values if isinstance(v, str)]
        if strings:
            schema["enum"] = strings
    elif values:
        # The constraint cannot be a Gemini enum; keep it where the model still reads it.
        allowed = ", ".join(json.dumps(v, ensure_ascii=False) for v in values)
        note = f"Allowed values: {allowed}."
        description = schema.get("description")
        schema["description"] = f"{description} {note}" if description else note


def _json_type(value: Any) -> str:
    if isinstance(value, bool):  # before int: bool is an int subclass
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    return "array" if isinstance(value, list) else "object"


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []
