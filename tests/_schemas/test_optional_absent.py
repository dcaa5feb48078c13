"""``optional_as_absent``: an optional nullable property told as the plain type it also is."""

from __future__ import annotations

import copy
from typing import Any

import jsonschema
import pytest

import conftest
from toolreg._schemas.optional_absent import optional_as_absent


class Plot(conftest.Plot):
    size: int | None = None
    must_say: str | None  # required, and null is one of its values


def props(properties: dict[str, Any], required: list[str] | None = None) -> dict[str, Any]:
    schema = {"type": "object", "properties": properties, "required": required or []}
    return optional_as_absent(schema)["properties"]


def test_pydantic_optionals_become_their_plain_type() -> None:
    schema = Plot.model_json_schema()
    before = copy.deepcopy(schema)

    rewritten = optional_as_absent(schema)["properties"]

    assert rewritten["label"] == {"type": "string", "title": "Label"}
    assert rewritten["size"] == {"type": "integer", "title": "Size"}
    assert rewritten["near"] == {"$ref": "#/$defs/Point"}
    assert rewritten["must_say"] == schema["properties"]["must_say"], "required: null stays"
    assert rewritten["at"] == schema["properties"]["at"]
    assert schema == before, "the input is never changed"


@pytest.mark.parametrize(
    ("prop", "told"),
    [
        ({"type": ["integer", "null"], "default": None}, {"type": "integer"}),
        ({"type": ["string", "integer", "null"]}, {"type": ["string", "integer"]}),
        ({"type": ["string", "null"], "enum": ["a", None]}, {"type": "string", "enum": ["a"]}),
        ({"oneOf": [{"type": "null"}, {"type": "string"}]}, {"type": "string"}),
        ({"anyOf": [{"type": "string"}, {"const": None}]}, {"type": "string"}),
        (
            {"anyOf": [{"type": "string"}, {"type": "integer"}, {"type": "null"}]},
            {"anyOf": [{"type": "string"}, {"type": "integer"}]},
        ),
        (
            {"anyOf": [{"type": "string", "description": "Inner."}, {"type": "null"}]},
            {"type": "string", "description": "Inner."},
        ),
        (
            {"anyOf": [{"type": "string"}, {"type": "null"}], "description": "Outer."},
            {"type": "string", "description": "Outer."},
        ),
        # Two constraints on one keyword cannot be merged: the branch stays a branch.
        (
            {"anyOf": [{"type": "string", "maxLength": 3}, {"type": "null"}], "maxLength": 9},
            {"anyOf": [{"type": "string", "maxLength": 3}], "maxLength": 9},
        ),
    ],
)
def test_each_way_of_saying_or_null(prop: dict[str, Any], told: dict[str, Any]) -> None:
    assert props({"p": prop}) == {"p": told}


@pytest.mark.parametrize(
    "prop",
    [
        {"type": "null"},
        {"anyOf": [{"type": "null"}]},
        {"type": "string", "default": None},
        {"anyOf": [{"type": "string"}, {"type": "null", "minimum": 1}]},
    ],
)
def test_what_is_not_a_nullable_union_is_left_as_it_is(prop: dict[str, Any]) -> None:
    assert props({"p": prop}) == {"p": prop}


def test_nested_objects_and_definitions_are_rewritten_too() -> None:
    inner = {"type": "object", "properties": {"n": {"type": ["integer", "null"]}}}
    schema = {
        "type": "object",
        "$defs": {"Inner": inner},
        "properties": {"list": {"type": "array", "items": inner}, "ref": {"$ref": "#/$defs/Inner"}},
        "required": ["list", "ref"],
    }
    rewritten = optional_as_absent(schema)
    told = {"type": "object", "properties": {"n": {"type": "integer"}}}
    assert rewritten["properties"]["list"]["items"] == told
    assert rewritten["$defs"]["Inner"] == told


def test_every_call_the_rewritten_schema_takes_the_registered_one_takes() -> None:
    schema = Plot.model_json_schema()
    rewritten = optional_as_absent(schema)
    told, registered = (
        jsonschema.Draft202012Validator(rewritten),
        jsonschema.Draft202012Validator(schema),
    )
    point = {"x": 1, "y": 2}
    calls = [
        {"at": point, "must_say": None},
        {"at": point, "must_say": "hi", "label": "a", "size": 3, "near": point},
        {"at": point, "must_say": "hi", "label": None},
        {"at": point},
        {"at": point, "must_say": "x", "size": "3"},
    ]
    for args in calls:
        if told.is_valid(args):
            assert registered.is_valid(args), args
    assert told.is_valid(calls[1]) and not told.is_valid(calls[2])  # a null is no longer asked for
    assert registered.is_valid(calls[2]), "but dispatch, checking the registered schema, takes it"
