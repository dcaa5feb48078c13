"""A check program: the commonest simple schemas' checks as data, for compiled code to run.

The compiled dispatch (toolreg-speedups) reads a tool's arguments against
such a program before anything else runs, and calls the handler right away
when they certainly pass; whatever it does not accept it hands to the tool's
fast call, which gives the exact verdict. So a program may be stricter than
the validator, never looser, and it covers only a strict subset of the
simple schemas (``simple_schemas``), each rule one comparison in C:

- the top level ``{"type": "object", "properties": {...}, "required":
  [...], "additionalProperties": false}`` (absent or true allows other keys);
- each property ``{"type": "string"}`` (with ``enum`` of strings,
  ``minLength``, ``maxLength``), ``{"type": "integer"}`` (with integer
  ``minimum``/``maximum`` that fit 64 bits), ``{"type": "number"}`` (with
  finite bounds a double holds exactly), ``{"type": "boolean"}``, or
  ``{"type": "array", "items": {"type": ...}}`` of one of those four types.

Annotation keywords are ignored, as ``simple_schemas`` ignores them. Any
other keyword, a type list, a bound that is not a plain number, a nested
object, ``$ref``... and the schema gets no program.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from .simple_schemas import ANNOTATIONS, is_count, is_finite_number, plain_dialect

#: The property types a program checks, and the types of an array's items it checks.
KINDS = frozenset({"string", "integer", "number", "boolean", "array"})
ITEM_KINDS = frozenset({"string", "integer", "number", "boolean"})

_TOP_KEYWORDS = ANNOTATIONS | {"type", "properties", "required", "additionalProperties", "$schema"}
_RULES = {
    "string": frozenset({"type", "enum", "minLength", "maxLength"}),
    "integer": frozenset({"type", "minimum", "maximum"}),
    "number": frozenset({"type", "minimum", "maximum"}),
    "boolean": frozenset({"type"}),
    "array": frozenset({"type", "items"}),
}
# The compiled checks hold lengths and integer bounds in 64 bits, and compare
# numbers as doubles: an integer beyond 2**53 is not always one exactly.
_INT64 = range(-(2**63), 2**63)
_EXACT_IN_DOUBLE = range(-(2**53), 2**53 + 1)


class Field(NamedTuple):
    """The checks of one property."""

    name: str
    #: One of ``KINDS``.
    kind: str
    #: An array's item type (one of ``ITEM_KINDS``), else None.
    items: str | None
    required: bool
    #: minLength (an int) for a string, minimum for a number (a float) or integer (an int).
    low: int | float | None
    #: maxLength, or maximum, likewise.
    high: int | float | None
    #: A string's allowed values, when the schema lists them.
    enum: frozenset[str] | None


class Program(NamedTuple):
    """The checks of one schema: its fields, and whether other keys may come too."""

    others_allowed: bool
    fields: tuple[Field, ...]


def check_program(parameters: Any) -> Program | None:
    """The program for ``parameters``; None when the schema is outside the subset."""
    if type(parameters) is not dict or not set(parameters) <= _TOP_KEYWORDS:
        return None
    if not _one_of(parameters.get("type"), {"object"}) or not plain_dialect(parameters):
        return None
    properties = parameters.get("properties", {})
    required = parameters.get("required", [])
    others = parameters.get("additionalProperties", True)
    if type(properties) is not dict or type(required) is not list or type(others) is not bool:
        return None
    if any(type(name) is not str for name in [*properties, *required]):
        return None
    if not set(required) <= properties.keys():
        return None
    fields = []
    for name, schema in properties.items():
        field = _field(name, schema, name in required)
        if field is None:
            return None
        fields.append(field)
    return Program(others, tuple(fields))


def _one_of(value: Any, choices: frozenset[str] | set[str]) -> bool:
    # Exactly a str: a subclass's own __eq__ and __hash__ would decide the lookup.
    return type(value) is str and value in choices


def _field(name: str, schema: Any, required: bool) -> Field | None:
    if type(schema) is not dict or any(schema[k] is None for k in schema.keys() - ANNOTATIONS):
        return None  # a null rule is no rule to read as absent
    kind: Any = schema.get("type")
    if not _one_of(kind, KINDS) or not set(schema) - ANNOTATIONS <= _RULES[kind]:
        return None
    if kind == "array":
        items = schema.get("items")
        if type(items) is not dict or set(items) - ANNOTATIONS != {"type"}:
            return None
        if not _one_of(items["type"], ITEM_KINDS):
            return None
        return Field(name, kind, items["type"], required, None, None, None)
    if kind == "string":
        return _string_field(name, schema, required)
    low, high = schema.get("minimum"), schema.get("maximum")
    if kind == "integer":
        if not all(b is None or (type(b) is int and b in _INT64) for b in (low, high)):
            return None
        return Field(name, kind, None, required, low, high, None)
    if kind == "number":
        if not all(b is None or _a_double_exactly(b) for b in (low, high)):
            return None
        low, high = (None if b is None else float(b) for b in (low, high))
    return Field(name, kind, None, required, low, high, None)


def _a_double_exactly(bound: Any) -> bool:
    return is_finite_number(bound) and (type(bound) is float or bound in _EXACT_IN_DOUBLE)


def _string_field(name: str, schema: dict[str, Any], required: bool) -> Field | None:
    low, high = schema.get("minLength"), schema.get("maxLength")
    if not all(n is None or (is_count(n) and n in _INT64) for n in (low, high)):
        return None
    enum = None
    if "enum" in schema:
        members = schema["enum"]
        if type(members) is not list or not members or any(type(m) is not str for m in members):
            return None
        enum = frozenset(members)
    return Field(name, "string", None, required, low, high, enum)
