"""JSON Schema for Python types, shaped like pydantic v2's output minus ``title``.

Each type maps to the schema pydantic emits for it, so our tool schemas match the
MCP SDK's and the OpenAI Agents SDK's; pydantic is used only for its own types.
"""

from __future__ import annotations

import contextlib
import copy
import dataclasses
import enum
import inspect
import json
import re
from typing import Any, Literal, get_args, get_origin

from .schema_metadata import apply_metadata
from .tool_json import to_jsonable
from .type_kinds import (
    ANY_TYPES,
    DICT_ORIGINS,
    LIST_ORIGINS,
    SET_ORIGINS,
    UnsupportedType,
    has_default,
    init_fields,
    is_dataclass_type,
    is_model_class,
    is_one_of,
    is_typeddict,
    is_union,
    needs_pydantic,
    split_annotated,
    stdlib_type,
    tuple_items,
    typeddict_fields,
)

Schema = dict[str, Any]
REF_PREFIX = "#/$defs/"

_SCALARS: dict[Any, Schema] = {
    str: {"type": "string"},
    int: {"type": "integer"},
    float: {"type": "number"},
    bool: {"type": "boolean"},
    type(None): {"type": "null"},
    bytes: {"type": "string", "format": "binary"},
}
# By (module, name): recognised without importing them (see type_kinds.stdlib_type).
_STDLIB_SCALARS: dict[tuple[str, str], Schema] = {
    ("datetime", "datetime"): {"type": "string", "format": "date-time"},
    ("datetime", "date"): {"type": "string", "format": "date"},
    ("datetime", "time"): {"type": "string", "format": "time"},
    ("uuid", "UUID"): {"type": "string", "format": "uuid"},
    ("pathlib", "Path"): {"type": "string", "format": "path"},
    ("pathlib", "PurePath"): {"type": "string", "format": "path"},
    ("decimal", "Decimal"): {"anyOf": [{"type": "number"}, {"type": "string"}]},
}
# JSON type names of Python values, for the "type" pydantic puts on enums and literals.
_JSON_TYPES = {str: "string", int: "integer", float: "number", bool: "boolean", type(None): "null"}


def json_type(values: list[Any]) -> str | None:
    """The one JSON type all values share (bool is not an integer), or None."""
    kinds = {_JSON_TYPES.get(type(v)) for v in values}
    return kinds.pop() if len(kinds) == 1 else None


def strip_titles(node: Any) -> Any:
    """Drop every ``title`` keyword (but never a property that is named "title")."""
    if isinstance(node, list):
        return [strip_titles(item) for item in node]
    if not isinstance(node, dict):
        return node
    out = {}
    for key, value in node.items():
        if key == "title":
            continue
        if key in ("properties", "$defs", "definitions", "patternProperties") and isinstance(
            value, dict
        ):
            out[key] = {name: strip_titles(sub) for name, sub in value.items()}
        elif key in ("default", "examples", "const", "enum"):
            out[key] = value  # data, not schema
        else:
            out[key] = strip_titles(value)
    return out


def rename_refs(node: Any, renames: dict[str, str]) -> Any:
    """Point ``$ref``s at renamed ``$defs`` entries."""
    if isinstance(node, list):
        return [rename_refs(item, renames) for item in node]
    if not isinstance(node, dict):
        return node
    out = {key: rename_refs(value, renames) for key, value in node.items()}
    ref = out.get("$ref")
    if isinstance(ref, str) and ref.startswith(REF_PREFIX) and ref[len(REF_PREFIX) :] in renames:
        out["$ref"] = REF_PREFIX + renames[ref[len(REF_PREFIX) :]]
    return out


# -- the builder ----------------------------------------------------------------------------


class SchemaBuilder:
    """Builds the schemas of one function's parameters, sharing one ``$defs``.

    ``mode="serialization"`` describes values as a function returns them (a
    pydantic model's computed fields and serializers apply), for output schemas.
    """

    def __init__(self, mode: Literal["validation", "serialization"] = "validation") -> None:
        self.mode = mode
        self.defs: dict[str, Schema] = {}
        self._names: dict[Any, str] = {}
        self._clashes: set[str] = set()

    def schema(self, tp: Any) -> Schema:
        """The JSON Schema of ``tp``; raises UnsupportedType."""
        if needs_pydantic(tp):
            return self._adopt_pydantic(tp)
        base, metadata = split_annotated(tp)
        if metadata:
            return apply_metadata(self.schema(base), metadata)
        if is_one_of(tp, ANY_TYPES):
            return {}
        if tp is None or is_one_of(tp, _SCALARS):
            return copy.deepcopy(_SCALARS[type(None) if tp is None else tp])
        stdlib = stdlib_type(tp, _STDLIB_SCALARS)
        if stdlib is not None:
            return copy.deepcopy(_STDLIB_SCALARS[stdlib])
        if hasattr(tp, "__supertype__"):  # typing.NewType
            return self.schema(tp.__supertype__)
        if is_union(tp):
            return {"anyOf": [self.schema(member) for member in get_args(tp)]}
        origin, args = get_origin(tp), get_args(tp)
        if origin is Literal:
            return literal_schema(args)
        if isinstance(tp, type) and issubclass(tp, enum.Enum):
            return self._named(tp, self._enum)
        if is_model_class(tp):
            return self._model(tp)
        if is_typeddict(tp):
            return self._named(tp, self._typeddict)
        if is_dataclass_type(tp):
            return self._named(tp, self._dataclass)
        return self._container(tp, origin, args)

    def _container(self, tp: Any, origin: Any, args: tuple[Any, ...]) -> Schema:
        kind = origin if origin is not None else tp
        if is_one_of(kind, LIST_ORIGINS):
            return {"type": "array", "items": self.schema(args[0]) if args else {}}
        if is_one_of(kind, SET_ORIGINS):
            items = self.schema(args[0]) if args else {}
            return {"type": "array", "items": items, "uniqueItems": True}
        if kind is tuple:
            items = tuple_items(tp)
            if items is None:
                return {"type": "array", "items": self.schema(args[0]) if args else {}}
            schema: Schema = {"type": "array", "minItems": len(items), "maxItems": len(items)}
            if items:
                schema["prefixItems"] = [self.schema(item) for item in items]
            return schema
        if is_one_of(kind, DICT_ORIGINS):
            if not args:
                return {"type": "object", "additionalProperties": True}
            key = split_annotated(args[0])[0]
            values = self.schema(args[1])
            schema = {"type": "object", "additionalProperties": values or True}
            if key is str or key is int or is_one_of(key, ANY_TYPES):
                return schema
            keys = self.schema(key)
            if keys.get("type") != "string" and "$ref" not in keys and "enum" not in keys:
                raise UnsupportedType(key)  # JSON object keys are strings
            if "enum" in keys or "const" in keys:
                keys.pop("type", None)  # pydantic leaves it off for Literal keys
            schema["propertyNames"] = keys
            return schema
        raise UnsupportedType(tp)

    # Named types live in $defs, built once; a type that refers to itself
    # (a tree of dataclasses) finds its name already reserved.
    def _named(self, tp: type, build: Any) -> Schema:
        name = self._names.get(tp)
        if name is None:
            name = tp.__name__
            if name in self.defs or name in self._names.values():
                self._clashes.add(name)  # finish() qualifies the first holder too
                name = _qualified(tp)
            self._names[tp] = name
            self.defs[name] = {}  # reserved while the body is built
            self.defs[name] = build(tp)
        return {"$ref": REF_PREFIX + name}

    def _enum(self, cls: type[enum.Enum]) -> Schema:
        try:
            values = [to_jsonable(member.value) for member in cls]
        except (TypeError, ValueError):
            raise UnsupportedType(cls) from None
        schema: Schema = {"enum": values}
        kind = json_type(values)
        if kind is not None:
            schema["type"] = kind
        return _with_doc(schema, cls)

    def _typeddict(self, td: type) -> Schema:
        fields, required = typeddict_fields(td)
        return _with_doc(self._object(fields, [k for k in fields if k in required], {}), td)

    def _dataclass(self, cls: type) -> Schema:
        fields = init_fields(cls)
        defaults = {f.name: f.default for f, _ in fields if f.default is not dataclasses.MISSING}
        required = [f.name for f, _ in fields if not has_default(f)]
        schema = self._object({f.name: hint for f, hint in fields}, required, defaults)
        # A dataclass without a docstring gets a generated one, "Name(x: int)".
        if (cls.__doc__ or "").startswith(cls.__name__ + "("):
            return schema
        return _with_doc(schema, cls)

    def _object(self, fields: dict[str, Any], required: list[str], defaults: dict) -> Schema:
        properties = {}
        for key, hint in fields.items():
            prop = self.schema(hint)
            if key in defaults:
                # pydantic leaves out a default it cannot serialise, too.
                with contextlib.suppress(TypeError, ValueError):
                    prop["default"] = to_jsonable(defaults[key])
            properties[key] = prop
        schema: Schema = {"type": "object", "properties": properties}
        if required:
            schema["required"] = required
        return schema

    def _model(self, cls: type) -> Schema:
        """A pydantic model: its own ``model_json_schema()``, filed under ``$defs``."""
        name = self._names.get(cls)
        if name is not None:
            return {"$ref": REF_PREFIX + name}
        schema = cls.model_json_schema(**self._pydantic_options())  # type: ignore[attr-defined]
        if "$ref" not in schema:  # a recursive model is already a $ref into its $defs
            schema = {"$defs": {**schema.pop("$defs", {}), cls.__name__: schema}}
            schema["$ref"] = REF_PREFIX + cls.__name__
        ref = self._adopt_pydantic_schema(schema)
        self._names[cls] = ref["$ref"][len(REF_PREFIX) :]
        return ref

    def _adopt_pydantic(self, tp: Any) -> Schema:
        from pydantic import TypeAdapter  # the type is pydantic's, so pydantic is installed

        return self._adopt_pydantic_schema(TypeAdapter(tp).json_schema(**self._pydantic_options()))

    def _pydantic_options(self) -> dict[str, Any]:
        if self.mode == "validation":
            return {"ref_template": REF_PREFIX + "{model}"}
        # Results are encoded with model_dump(mode="json"): field names, not aliases.
        return {"ref_template": REF_PREFIX + "{model}", "mode": self.mode, "by_alias": False}

    def _adopt_pydantic_schema(self, schema: Schema) -> Schema:
        """Move a pydantic schema's ``$defs`` into ours, renaming any that clash."""
        schema = strip_titles(schema)
        incoming = schema.pop("$defs", {})
        renames = {}
        for key, body in incoming.items():
            if key in self.defs and self.defs[key] != body:
                fresh, n = key, 2
                while fresh in self.defs or fresh in incoming:
                    fresh, n = f"{key}_{n}", n + 1
                renames[key] = fresh
        for key, body in incoming.items():
            self.defs[renames.get(key, key)] = rename_refs(body, renames)
        return rename_refs(schema, renames)

    def finish(self, properties: dict[str, Schema]) -> tuple[dict[str, Schema], dict[str, Schema]]:
        """``(properties, $defs)`` with the names pydantic would give.

        Two types that share a name are both qualified by their module, and a
        type filed twice (directly, and inside a model's own ``$defs``) is one
        entry.
        """
        qualify = {
            name: _qualified(tp)
            for tp, name in self._names.items()
            if name in self._clashes and not is_model_class(tp)
        }
        defs = {qualify.get(k, k): rename_refs(v, qualify) for k, v in self.defs.items()}
        properties = rename_refs(properties, qualify)
        seen: dict[str, list[str]] = {}
        merge = {}
        for name in sorted(defs, key=len):
            same = seen.setdefault(json.dumps(defs[name], sort_keys=True), [])
            # Only a second name for the same type ("mod__Color", "Color_2") is
            # merged; two enums that merely have the same values keep their names.
            twin = next((n for n in same if _variant_of(name, n)), None)
            if twin is not None:
                merge[name] = twin
            else:
                same.append(name)
        defs = {k: rename_refs(v, merge) for k, v in defs.items() if k not in merge}
        return rename_refs(properties, merge), defs


def _qualified(tp: type) -> str:
    """pydantic's name for a type whose short name is taken: ``module__Qual__Name``."""
    return re.sub(r"[^a-zA-Z0-9.\-_]", "_", f"{tp.__module__}.{tp.__qualname__}").replace(".", "__")


def _variant_of(name: str, original: str) -> bool:
    return (
        name.endswith("__" + original)
        or re.fullmatch(re.escape(original) + r"_\d+", name) is not None
    )


def literal_schema(values: tuple[Any, ...]) -> Schema:
    """``const`` for one value, ``enum`` for several, typed when they share a JSON type."""
    expected = [to_jsonable(v.value if isinstance(v, enum.Enum) else v) for v in values]
    schema: Schema = {"const": expected[0]} if len(expected) == 1 else {"enum": expected}
    kind = json_type(expected)
    if kind is not None:
        schema["type"] = kind
    return schema


def _with_doc(schema: Schema, cls: type) -> Schema:
    # A class without a docstring has __doc__ None, not its base's; except that
    # Python 3.10 gives every Enum "An enumeration.", which says nothing.
    if cls.__doc__ and cls.__doc__ != "An enumeration.":
        schema["description"] = inspect.cleandoc(cls.__doc__)
    return schema
