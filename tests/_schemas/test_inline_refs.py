"""``inline_refs``: every local ``$ref`` spelled out, or the reason it cannot be."""

from __future__ import annotations

import copy
from typing import Any

import jsonschema
import pytest

from toolreg._schemas.formats import NotInlinable
from toolreg._schemas.inline_refs import MAX_INLINED_DEPTH, MAX_INLINED_NODES, inline_refs

POINT = {
    "type": "object",
    "properties": {"x": {"type": "number"}, "y": {"type": "number"}},
    "required": ["x", "y"],
}


def test_defs_are_inlined_where_used_and_dropped() -> None:
    schema = {
        "type": "object",
        "$defs": {"Point": POINT, "Unused": {"$ref": "#/$defs/Unused"}},
        "properties": {"at": {"$ref": "#/$defs/Point"}, "path": {"type": "array"}},
    }
    schema["properties"]["path"]["items"] = {"$ref": "#/$defs/Point"}
    before = copy.deepcopy(schema)

    inlined = inline_refs(schema)

    assert inlined == {
        "type": "object",
        "properties": {"at": POINT, "path": {"type": "array", "items": POINT}},
    }
    assert schema == before, "the input is never changed"
    assert inlined["properties"]["at"] is not schema["$defs"]["Point"]


def test_draft_07_definitions_chains_escaped_pointers_and_the_root() -> None:
    schema = {
        "type": "object",
        "definitions": {"a/b": {"$ref": "#/definitions/c~0d"}, "c~d": {"type": "string"}},
        "properties": {
            "s": {"$ref": "#/definitions/a~1b"},
            "t": {"$ref": "#/properties/s"},  # any local pointer, not only into definitions
        },
    }
    assert inline_refs(schema)["properties"] == {"s": {"type": "string"}, "t": {"type": "string"}}


def test_keywords_beside_a_ref_describe_this_use_and_win() -> None:
    schema = {
        "type": "object",
        "$defs": {"Point": {**POINT, "description": "A point."}},
        "properties": {"at": {"$ref": "#/$defs/Point", "description": "Where."}},
    }
    assert inline_refs(schema)["properties"]["at"] == {**POINT, "description": "Where."}


def test_data_that_looks_like_a_ref_is_left_alone() -> None:
    schema = {
        "type": "object",
        "properties": {
            "link": {
                "type": "object",
                "default": {"$ref": "#/nowhere"},
                "enum": [{"$ref": "https://example.invalid/x"}],
            }
        },
    }
    assert inline_refs(schema) == schema


def test_inlining_keeps_what_the_schema_accepts() -> None:
    schema = {
        "type": "object",
        "$defs": {"Point": POINT, "Points": {"type": "array", "items": {"$ref": "#/$defs/Point"}}},
        "properties": {"line": {"$ref": "#/$defs/Points"}, "at": {"$ref": "#/$defs/Point"}},
        "required": ["line"],
    }
    inlined = inline_refs(schema)
    cases = [
        {"line": []},
        {"line": [{"x": 1, "y": 2}], "at": {"x": 0, "y": 0}},
        {"line": [{"x": 1}]},
        {"line": "no"},
        {"at": {"x": 1, "y": 1}},
        {"line": [], "at": {"x": "1", "y": 1}},
    ]
    for args in cases:
        expected = jsonschema.Draft202012Validator(schema).is_valid(args)
        assert jsonschema.Draft202012Validator(inlined).is_valid(args) == expected, args


# -- what cannot be inlined: refused with the reason, never half done ------------------


def test_a_self_referencing_definition_is_refused_as_recursive() -> None:
    tree = {
        "type": "object",
        "$defs": {
            "Node": {
                "type": "object",
                "properties": {"children": {"type": "array", "items": {"$ref": "#/$defs/Node"}}},
            }
        },
        "properties": {"root": {"$ref": "#/$defs/Node"}},
    }
    with pytest.raises(NotInlinable, match=r"\$ref '#/\$defs/Node' is recursive") as caught:
        inline_refs(tree)
    assert "#/$defs/Node/properties/children/items" in str(caught.value)


@pytest.mark.parametrize(
    "schema",
    [
        {"type": "object", "properties": {"me": {"$ref": "#"}}},
        {
            "type": "object",
            "$defs": {"A": {"$ref": "#/$defs/B"}, "B": {"anyOf": [{"$ref": "#/$defs/A"}]}},
            "properties": {"a": {"$ref": "#/$defs/A"}},
        },
    ],
    ids=["the root", "mutual"],
)
def test_every_cycle_is_refused(schema: dict[str, Any]) -> None:
    with pytest.raises(NotInlinable, match="recursive"):
        inline_refs(schema)


@pytest.mark.parametrize(
    ("ref", "reason"),
    [
        ("#/$defs/Missing", "names no schema"),
        ("#/properties/a/type", "names no schema"),
        ("https://127.0.0.1:9/schema.json", "never fetched"),
        ("other.json#/Point", "never fetched"),
        ("#anchor", "never fetched"),
        (17, "not a local reference"),
    ],
)
def test_a_ref_to_nothing_or_elsewhere_is_refused(ref: Any, reason: str) -> None:
    schema = {"type": "object", "properties": {"a": {"type": "string"}, "b": {"$ref": ref}}}
    with pytest.raises(NotInlinable, match=reason) as caught:
        inline_refs(schema)
    assert "#/properties/b" in str(caught.value)


def test_a_chain_of_a_thousand_refs_is_refused_before_the_recursion_limit() -> None:
    defs = {f"a{i}": {"$ref": f"#/$defs/a{i + 1}"} for i in range(1000)}
    defs["a1000"] = {"type": "string"}
    schema = {"type": "object", "$defs": defs, "properties": {"x": {"$ref": "#/$defs/a0"}}}
    with pytest.raises(NotInlinable, match=f"more than {MAX_INLINED_DEPTH} levels deep"):
        inline_refs(schema)


def test_a_chain_within_the_limit_is_inlined() -> None:
    depth = MAX_INLINED_DEPTH - 2
    defs = {f"a{i}": {"$ref": f"#/$defs/a{i + 1}"} for i in range(depth)}
    defs[f"a{depth}"] = {"type": "string"}
    schema = {"type": "object", "$defs": defs, "properties": {"x": {"$ref": "#/$defs/a0"}}}
    assert inline_refs(schema) == {"type": "object", "properties": {"x": {"type": "string"}}}


def test_refs_that_double_at_each_step_are_refused_by_size() -> None:
    # Twenty steps of two refs each would inline to 2**20 copies of the last one.
    defs: dict[str, Any] = {
        f"d{i}": {
            "type": "object",
            "properties": {"l": {"$ref": f"#/$defs/d{i + 1}"}, "r": {"$ref": f"#/$defs/d{i + 1}"}},
        }
        for i in range(20)
    }
    defs["d20"] = {"type": "string"}
    schema = {"type": "object", "$defs": defs, "properties": {"x": {"$ref": "#/$defs/d0"}}}
    with pytest.raises(NotInlinable, match=f"more than {MAX_INLINED_NODES} subschemas"):
        inline_refs(schema)
