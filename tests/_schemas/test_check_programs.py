"""Which schemas get a check program, and what it says.

A program is for a strict subset of the simple schemas (``check_programs``
lists it); everything else, down to one odd keyword or constant, gets none
and keeps the fast call's Python checks. What a program accepts is tried
against the validator in tests/_dispatch/test_compiled_checks.py.
"""

from __future__ import annotations

import json
import math
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import StrSub
from toolreg._schemas.check_programs import Field, Program, check_program
from toolreg._schemas.simple_schemas import schema_checks
from toolreg._schemas.validation import compiled_schema

BENCH = {
    "type": "object",
    "properties": {
        "path": {"type": "string", "description": "File to read."},
        "limit": {"type": "integer", "minimum": 1, "description": "Most lines."},
        "mode": {"type": "string", "enum": ["text", "bytes"], "title": "How."},
        "tags": {"type": "array", "items": {"type": "string", "description": "One."}},
        "follow": {"type": "boolean", "default": False},
        "ratio": {"type": "number", "minimum": 0, "maximum": 0.5, "examples": [0.1]},
    },
    "required": ["path", "limit"],
    "additionalProperties": False,
    "$schema": "http://json-schema.org/draft-07/schema#",
}


def test_the_commonest_shape_gets_its_checks_as_data():
    assert check_program(BENCH) == Program(
        False,
        (
            Field("path", "string", None, True, None, None, None),
            Field("limit", "integer", None, True, 1, None, None),
            Field("mode", "string", None, False, None, None, frozenset({"text", "bytes"})),
            Field("tags", "array", "string", False, None, None, None),
            Field("follow", "boolean", None, False, None, None, None),
            Field("ratio", "number", None, False, 0.0, 0.5, None),
        ),
    )


def test_a_number_bound_is_a_float_and_an_integer_bound_an_int():
    program = check_program(BENCH)
    assert program is not None
    ratio, limit = program.fields[5], program.fields[1]
    assert type(ratio.low) is float and type(limit.low) is int


@pytest.mark.parametrize("others", [{}, {"additionalProperties": True}])
def test_other_keys_are_allowed_unless_the_schema_says_false(others: dict[str, Any]):
    schema = {"type": "object", "properties": {"a": {"type": "string"}}, **others}
    field = Field("a", "string", None, False, None, None, None)
    assert check_program(schema) == Program(True, (field,))


def test_an_object_without_properties_takes_any_keys_or_none():
    assert check_program({"type": "object"}) == Program(True, ())
    closed = {"type": "object", "properties": {}, "additionalProperties": False}
    assert check_program(closed) == Program(False, ())


OUTSIDE: list[Any] = [
    # keywords a simple schema may have, but a program does not check
    {"type": "string", "pattern": "^a"},
    {"type": "string", "format": "email"},
    {"type": "string", "const": "a"},
    {"type": "integer", "exclusiveMinimum": 1},
    {"type": "integer", "enum": [1, 2]},
    {"type": "array", "items": {"type": "string"}, "minItems": 1},
    {"type": "array"},
    {"type": "array", "items": {"type": "string", "minLength": 1}},
    {"type": "array", "items": {"type": "array", "items": {"type": "string"}}},
    {"type": "array", "items": {"type": "null"}},
    {"type": "array", "items": True},
    {"type": "object", "properties": {}},
    {"type": "null"},
    {"type": ["string", "null"]},
    {"type": StrSub("string")},
    {},
    True,
    {"$ref": "#"},
    {"anyOf": [{"type": "string"}]},
    {"type": "string", "maximum": 3},  # a rule for another type: the validator ignores it
    # constants a program cannot hold exactly
    {"type": "string", "enum": []},
    {"type": "string", "enum": ["a", 1]},
    {"type": "string", "enum": [StrSub("a")]},
    {"type": "string", "enum": ("a",)},
    {"type": "string", "minLength": -1},
    {"type": "string", "minLength": 1.0},
    {"type": "string", "maxLength": True},
    {"type": "string", "maxLength": 2**63},
    {"type": "integer", "minimum": 1.5},
    {"type": "integer", "minimum": 1.0},
    {"type": "integer", "minimum": True},
    {"type": "integer", "maximum": 2**63},
    {"type": "integer", "minimum": -(2**63) - 1},
    {"type": "number", "minimum": math.inf},
    {"type": "number", "maximum": math.nan},
    {"type": "number", "maximum": 2**53 + 1},
    {"type": "number", "maximum": "1"},
    {"type": "integer", "minimum": None},
    {"type": "string", "maxLength": None},
]


@pytest.mark.parametrize("field", OUTSIDE, ids=repr)
def test_anything_else_gets_no_program(field: Any):
    assert check_program({"type": "object", "properties": {"a": field}}) is None


@pytest.mark.parametrize(
    "top",
    [
        {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["b"]},
        {"type": "object", "required": ("a",), "properties": {"a": {"type": "string"}}},
        {"type": "object", "additionalProperties": {"type": "string"}},
        {"type": "object", "additionalProperties": 0},
        {"type": "object", "minProperties": 1},
        {"type": "object", "$schema": "http://json-schema.org/draft-04/schema#"},
        {"type": "object", "$schema": 4},
        {"type": ["object"]},
        {"properties": {"a": {"type": "string"}}},
        {"type": "object", "properties": {1: {"type": "string"}}},
        {"type": "object", "properties": []},
        [],
        None,
    ],
    ids=repr,
)
def test_a_top_level_outside_the_shape_gets_no_program(top: Any):
    assert check_program(top) is None


def test_a_number_bound_up_to_two_to_the_53_is_kept_exactly():
    schema = {"type": "object", "properties": {"a": {"type": "number", "maximum": 2**53}}}
    program = check_program(schema)
    assert program is not None and program.fields[0].high == 2.0**53


def test_the_validator_compiles_a_program_beside_a_simple_schemas_checks():
    compiled = compiled_schema(BENCH)
    assert not isinstance(compiled, str)
    assert compiled.program == check_program(BENCH)
    # The same program object for an equal schema: compiled checks are kept by it.
    again = compiled_schema(json.loads(json.dumps(BENCH)))
    assert not isinstance(again, str) and again.program is compiled.program
    nullable = {"type": "object", "properties": {"a": {"type": ["string", "null"]}}}
    other = compiled_schema(nullable)  # simple, but no program
    assert not isinstance(other, str) and other.accepts is not None and other.program is None


# -- a program only where simple_schemas has checks ---------------------------------------

leaf = st.one_of(
    st.fixed_dictionaries(
        {"type": st.sampled_from(["string", "integer", "number", "boolean", "null", "object"])},
        optional={
            "minimum": st.sampled_from([0, 1.5, -1, True, math.inf, 2**60]),
            "maxLength": st.sampled_from([0, 2, -1, 1.0]),
            "enum": st.lists(st.sampled_from(["a", "b", 1, None]), max_size=3),
            "description": st.just("d"),
        },
    ),
    st.fixed_dictionaries(
        {"type": st.just("array")},
        optional={"items": st.sampled_from([{"type": "string"}, {"type": "integer"}, {}, True])},
    ),
)
tops = st.builds(
    lambda properties, required, others: {
        "type": "object",
        "properties": properties,
        **({"required": required} if required is not None else {}),
        **({"additionalProperties": others} if others is not None else {}),
    },
    st.dictionaries(st.sampled_from(["a", "b", "c"]), leaf, max_size=3),
    st.none() | st.lists(st.sampled_from(["a", "b"]), max_size=2),
    st.none() | st.sampled_from([True, False, {}]),
)


@settings(max_examples=300, deadline=None)
@given(tops)
def test_every_program_is_for_a_schema_simple_schemas_checks(schema: dict[str, Any]):
    if check_program(schema) is not None:
        assert schema_checks(schema) is not None
