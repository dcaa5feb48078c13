"""Schemas dispatch could not validate are refused at registration, naming the tool."""

from __future__ import annotations

import json
from typing import Any

import pytest

from toolreg import ToolRegistry
from toolreg._contract.schema_limits import MAX_SCHEMA_DEPTH, check_validatable


def nested(levels: int, keyword: str = "properties") -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "string"}
    for _ in range(levels):
        if keyword == "properties":
            schema = {"type": "object", "properties": {"a": schema}}
        else:
            schema = {"type": "array", keyword: schema}
    return schema


def params(**properties: Any) -> dict[str, Any]:
    return {"type": "object", "properties": properties}


@pytest.mark.parametrize(
    ("parameters", "fragment"),
    [
        (params(a={"$ref": "#/properties/a"}), "$ref loop"),
        ({"type": "object", "allOf": [{"$ref": "#"}]}, "$ref loop"),
        (
            {
                "type": "object",
                "$defs": {"x": {"$ref": "#/$defs/y"}, "y": {"anyOf": [{"$ref": "#/$defs/x"}]}},
                "properties": {"a": {"$ref": "#/$defs/x"}},
            },
            "$ref loop",
        ),
        # The loop hides under a key that is no keyword; the validator still follows it.
        (
            {"type": "object", "x-loop": {"$ref": "#/x-loop"}, **params(a={"$ref": "#/x-loop"})},
            "loop",
        ),
        (params(a={"$ref": "http://127.0.0.1:9/schema.json"}), "only local references"),
        (params(a={"$ref": "other.json#/a"}), "only local references"),
        (params(a={"$ref": "#/$defs/missing"}), "names nothing"),
        (params(a={"$ref": "#/type"}), "does not name a schema"),
        (params(a=nested(MAX_SCHEMA_DEPTH)), "nested too deeply"),
        (params(a=nested(100_000)), "nested too deeply"),
        (params(a=nested(MAX_SCHEMA_DEPTH // 2, "contains")), "nested too deeply"),
    ],
)
def test_unvalidatable_schemas_are_refused_naming_the_tool(reg: ToolRegistry, parameters, fragment):
    with pytest.raises(ValueError) as info:
        reg.register("odd", "t", {"parameters": parameters}, lambda args: "ran")
    assert "'odd'" in str(info.value) and fragment in str(info.value)
    assert reg.get_entry("odd") is None


def test_a_schema_that_contains_itself_is_refused(reg: ToolRegistry):
    loop: dict[str, Any] = {"type": "object"}
    loop["properties"] = {"a": loop}
    with pytest.raises(ValueError, match="'loop'.*nested too deeply"):
        reg.register("loop", "t", {"parameters": loop}, lambda args: "ran")


def test_recursion_through_the_data_is_allowed_and_deep_data_is_refused(reg: ToolRegistry):
    tree = {
        "type": "object",
        "properties": {
            "name": {"type": "string"},
            "children": {"type": "array", "items": {"$ref": "#"}},
        },
    }
    reg.register("tree", "t", {"parameters": tree}, lambda args: "ran")
    assert reg.dispatch("tree", {"name": "root", "children": [{"name": "leaf"}]}) == "ran"
    deep: dict[str, Any] = {"name": "leaf"}
    for _ in range(5_000):
        deep = {"children": [deep]}
    result = json.loads(reg.dispatch("tree", deep))
    assert result["error_type"] == "invalid_arguments" and "nested too deeply" in result["error"]


def test_local_refs_and_the_deepest_allowed_nesting_register_and_validate(reg: ToolRegistry):
    parameters = {
        "type": "object",
        "$defs": {"n": {"type": "integer"}},
        "properties": {"count": {"$ref": "#/$defs/n"}, "deep": nested(MAX_SCHEMA_DEPTH - 1)},
    }
    check_validatable("fine", parameters)
    reg.register("fine", "t", {"parameters": parameters}, lambda args: "ran")
    assert reg.dispatch("fine", {"count": 3}) == "ran"
    assert "integer" in json.loads(reg.dispatch("fine", {"count": "x"}))["error"]


def test_a_remote_ref_is_never_fetched(reg: ToolRegistry, schema_server):
    """The validator would fetch a remote $ref on first use; registration refuses it first."""
    url, fetched = schema_server
    with pytest.raises(ValueError, match="never fetched"):
        reg.register("remote", "t", {"parameters": params(a={"$ref": url})}, str)
    assert reg.dispatch("remote", {"a": "x"})  # unknown tool: nothing compiled
    assert fetched == []


def test_a_schema_mutated_after_registration_is_not_compiled(reg: ToolRegistry, caplog):
    """The registry keeps the caller's dict; a later edit still cannot make dispatch recurse."""
    schema = {"parameters": params(a={"type": "string"})}
    reg.register("mutable", "t", schema, lambda args: "ran")
    schema["parameters"]["properties"]["a"] = {"$ref": "#/properties/a"}
    assert reg.dispatch("mutable", {"a": 1}) == "ran"
    assert "will not be validated" in caplog.text
