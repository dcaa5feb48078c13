"""Tool schemas rewritten for OpenAI's strict mode, and the way back for the arguments.

What strict mode cannot express without changing what the tool accepts raises
:class:`NotStrict` with the reason; the rules are in docs/formats.md, "Strict mode".
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from typing import Any

from .._contract.schema_limits import MAX_REF_HOPS
from .formats import NotStrict

__all__ = ["NotStrict", "Restore", "strict_schema"]

Restore = Callable[[Any], Any]

# Kept as they are: the keywords strict mode supports.
_KEPT = frozenset(
    {"type", "description", "enum", "const", "pattern", "minimum", "maximum"}
    | {"exclusiveMinimum", "exclusiveMaximum", "multipleOf", "minItems", "maxItems"}
)
# Strict mode refuses these; they move into the description (dispatch checks them).
_DESCRIBED = ("minLength", "maxLength", "minProperties", "maxProperties", "uniqueItems")
# Dropped: annotations, and default, which an optional property's description states.
_DROPPED = frozenset(
    {"default", "title", "$schema", "$id", "$comment", "examples", "deprecated"}
    | {"readOnly", "writeOnly"}
)
_STRICT_FORMATS = frozenset(
    {"date-time", "time", "date", "duration", "email", "hostname", "ipv4", "ipv6", "uuid"}
)
_SCALARS = frozenset({"string", "number", "integer", "boolean", "null"})


def strict_schema(parameters: dict[str, Any]) -> tuple[dict[str, Any], Restore]:
    """The strict form of a tool's object schema, and the function that turns the
    model's arguments back into arguments for the original schema."""
    converter = _Converter(parameters)
    schema, restore = converter.convert(parameters, "parameters")
    return schema, restore or (lambda args: args)


class _Converter:
    def __init__(self, root: dict[str, Any]) -> None:
        self.root = root
        self.expanding: list[str] = []

    def convert(self, node: Any, path: str) -> tuple[dict[str, Any], Restore | None]:
        """``node`` rewritten, and its restore function (None: the arguments need none)."""
        if not isinstance(node, dict):
            raise NotStrict(f"{path}: a schema of {json.dumps(node)} accepts any value")
        if "$ref" in node:
            return self._inline(node, path)
        out: dict[str, Any] = {}
        notes: list[str] = []
        for key, value in node.items():
            if key in _KEPT:
                out[key] = copy.deepcopy(value)
            elif key == "format":
                if value in _STRICT_FORMATS:
                    out[key] = value
                else:
                    notes.append(f"format: {value}")
            elif key in _DESCRIBED:
                notes.append(f"{key}: {json.dumps(value)}")
            elif key not in _DROPPED and key not in _STRUCTURAL:
                raise NotStrict(f"{path}: keyword {key!r} has no strict-mode form")
        if notes:
            described = node.get("description")
            note = "; ".join(notes)
            out["description"] = f"{described} ({note})" if described else f"({note})"
        restore: Restore | None = None
        if "anyOf" in node or "oneOf" in node:
            restore = self._union(node, out, path)
        kinds = _kinds(node)
        if "object" in kinds:
            restore = self._object(node, out, path) or restore
        if "array" in kinds:
            restore = self._array(node, out, path) or restore
        return out, restore

    def _inline(self, node: dict[str, Any], path: str) -> tuple[dict[str, Any], Restore | None]:
        ref = node["$ref"]
        if not isinstance(ref, str) or ref in self.expanding:
            raise NotStrict(f"{path}: $ref {ref!r} is recursive or not a string")
        if len(self.expanding) >= MAX_REF_HOPS:
            raise NotStrict(f"{path}: $ref {ref!r} ends a chain of more than {MAX_REF_HOPS} $refs")
        target = _resolve(self.root, ref, path)
        merged = {**target, **{k: v for k, v in node.items() if k != "$ref"}}
        self.expanding.append(ref)
        try:
            return self.convert(merged, path)
        finally:
            self.expanding.pop()

    def _union(self, node: dict[str, Any], out: dict[str, Any], path: str) -> Restore | None:
        branches = [*node.get("anyOf", ()), *node.get("oneOf", ())]
        converted = [self.convert(b, f"{path}.anyOf[{i}]") for i, b in enumerate(branches)]
        out["anyOf"] = [schema for schema, _ in converted]
        rewriting = [(b, r) for b, (_, r) in zip(branches, converted, strict=True) if r is not None]
        if not rewriting:
            return None
        others = [b for b in branches if all(b is not r[0] for r in rewriting)]
        # The way back must know which branch a value took: only one branch may need
        # rewriting, and no other branch may take the same kind of value (object, array).
        rewritten_kinds = _kinds(rewriting[0][0]) - _SCALARS
        if len(rewriting) > 1 or any(_kinds(b) & (rewritten_kinds | {"any"}) for b in others):
            raise NotStrict(f"{path}: a union whose branches cannot be told apart once rewritten")
        return rewriting[0][1]

    def _object(self, node: dict[str, Any], out: dict[str, Any], path: str) -> Restore | None:
        properties = node.get("properties")
        extra = node.get("additionalProperties")
        if not properties and isinstance(extra, dict) and "patternProperties" not in node:
            if path == "parameters":  # the arguments themselves must stay an object
                raise NotStrict(f"{path}: a map of arguments with no declared properties")
            return self._map(extra, out, path)
        if "patternProperties" in node or (extra is not None and extra is not False):
            raise NotStrict(f"{path}: an object that takes properties it does not declare")
        if not properties:
            if "additionalProperties" not in node and path != "parameters":
                raise NotStrict(f"{path}: a free-form object (no properties declared)")
            properties = {}
        required = set(node.get("required") or ())
        out_props: dict[str, Any] = {}
        restores: dict[str, Restore] = {}
        optional: set[str] = set()
        for name, prop in properties.items():
            schema, restore = self.convert(prop, f"{path}.{name}")
            if name not in required and not _accepts_null(schema):
                schema = _nullable(schema, prop)
                optional.add(name)
            out_props[name] = schema
            if restore is not None:
                restores[name] = restore
        out.update(properties=out_props, required=list(out_props), additionalProperties=False)
        out.setdefault("type", "object")
        if not optional and not restores:
            return None

        def restore_object(value: Any) -> Any:
            if not isinstance(value, dict):
                return value
            args = {}
            for key, item in value.items():
                if key in optional and item is None:
                    continue  # left out: the tool's own default applies
                args[key] = restores[key](item) if key in restores else item
            return args

        return restore_object

    def _map(self, values: dict[str, Any], out: dict[str, Any], path: str) -> Restore:
        value_schema, value_restore = self.convert(values, f"{path}.<value>")
        pair = {
            "type": "object",
            "properties": {"key": {"type": "string"}, "value": value_schema},
            "required": ["key", "value"],
            "additionalProperties": False,
        }
        out["type"] = ["array", "null"] if _accepts_null(out) else "array"
        out["items"] = pair
        out["description"] = f"{out.get('description', '')} (a list of key/value pairs)".lstrip()
        restore_value = value_restore or (lambda v: v)

        def restore_map(value: Any) -> Any:
            if not isinstance(value, list):
                return value
            pairs = [p for p in value if isinstance(p, dict) and "key" in p]
            return {p["key"]: restore_value(p.get("value")) for p in pairs}

        return restore_map

    def _array(self, node: dict[str, Any], out: dict[str, Any], path: str) -> Restore | None:
        items = node.get("items")
        if not isinstance(items, dict) or not (items.keys() & _TYPED):
            raise NotStrict(f"{path}: an array whose items have no type")
        schema, restore = self.convert(items, f"{path}[]")
        out["items"] = schema
        if restore is None:
            return None
        return lambda value: [restore(v) for v in value] if isinstance(value, list) else value


# Handled by the converter's own steps, never copied as they are.
_STRUCTURAL = frozenset(
    {"properties", "required", "additionalProperties", "items", "anyOf", "oneOf"}
    | {"$defs", "definitions", "format"}
)
_TYPED = frozenset({"type", "$ref", "anyOf", "oneOf", "enum", "const", "properties"})


def _resolve(root: dict[str, Any], ref: str, path: str) -> dict[str, Any]:
    if not ref.startswith("#"):
        raise NotStrict(f"{path}: $ref {ref!r} points outside the schema")
    target: Any = root
    for part in filter(None, ref[1:].split("/")):
        part = part.replace("~1", "/").replace("~0", "~")
        target = target.get(part) if isinstance(target, dict) else None
    if not isinstance(target, dict):
        raise NotStrict(f"{path}: $ref {ref!r} does not resolve to a schema")
    return target


def _kinds(node: Any) -> set[str]:
    """The JSON kinds a schema may take: its types, or ``{"any"}`` when unknown."""
    if not isinstance(node, dict):
        return {"any"}
    typ = node.get("type")
    if isinstance(typ, str):
        return {typ}
    if isinstance(typ, list):
        return set(typ)
    if "properties" in node or "additionalProperties" in node:
        return {"object"}
    if "items" in node:
        return {"array"}
    values = node.get("enum", [node["const"]] if "const" in node else None)
    if isinstance(values, list):
        return {_json_kind(v) for v in values}
    return {"any"}


def _json_kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    return {str: "string", list: "array", dict: "object"}.get(type(value), "any")


def _accepts_null(schema: dict[str, Any]) -> bool:
    typ = schema.get("type")
    return (
        typ == "null"
        or (isinstance(typ, list) and "null" in typ)
        or any(isinstance(b, dict) and _accepts_null(b) for b in schema.get("anyOf", ()))
    )


def _nullable(schema: dict[str, Any], original: dict[str, Any]) -> dict[str, Any]:
    """``schema`` that also takes null, and says what null means."""
    default = original.get("default") if isinstance(original, dict) else None
    meaning = "null for the default" if default is None else f"null for {json.dumps(default)}"
    description = schema.get("description")
    note = f"Optional: {meaning}."
    described = f"{description} {note}" if description else note
    typ = schema.get("type")
    if isinstance(typ, (str, list)) and "anyOf" not in schema:
        out = dict(schema, description=described)
        out["type"] = [*(typ if isinstance(typ, list) else [typ]), "null"]
        if "enum" in out:
            out["enum"] = [*out["enum"], None]
        if "const" in out:
            out["enum"] = [out.pop("const"), None]
        return out
    inner = {k: v for k, v in schema.items() if k != "description"}
    return {"anyOf": [inner, {"type": "null"}], "description": described}
