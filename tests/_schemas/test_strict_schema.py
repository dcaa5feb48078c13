"""Strict-mode schemas: accepted by openai-agents' own strict check, and the way back.

Every converted schema goes through ``agents.strict_schema.ensure_strict_json_schema``
(what ``FunctionTool(strict_json_schema=True)`` runs), and the restored arguments
through the original schema's validation, so the rewrite changes neither side.
"""

from __future__ import annotations

import copy
import json
from typing import Any

import fastjsonschema
import pytest
from agents.strict_schema import ensure_strict_json_schema

from dists import REPO
from toolreg._schemas.strict_schema import NotStrict, strict_schema

EXAMPLES = "toolreg-sqlite,toolreg-sandbox"


def strict(parameters: dict[str, Any]) -> tuple[dict[str, Any], Any]:
    original = copy.deepcopy(parameters)
    schema, restore = strict_schema(parameters)
    assert parameters == original, "the registered schema is never changed"
    assert ensure_strict_json_schema(copy.deepcopy(schema)) == schema, "already strict"
    return schema, restore


def obj(properties: dict[str, Any], required: list[str] = ()) -> dict[str, Any]:
    return {"type": "object", "properties": properties, "required": list(required)}


def test_optional_properties_become_required_and_nullable_and_null_is_dropped() -> None:
    schema, restore = strict(
        obj({"q": {"type": "string"}, "n": {"type": "integer", "default": 5}}, ["q"])
    )
    assert schema["required"] == ["q", "n"]
    assert schema["additionalProperties"] is False
    assert schema["properties"]["n"] == {
        "type": ["integer", "null"],
        "description": "Optional: null for 5.",
    }
    assert restore({"q": "x", "n": None}) == {"q": "x"}
    assert restore({"q": "x", "n": 3}) == {"q": "x", "n": 3}


def test_a_property_that_already_takes_null_keeps_the_models_null() -> None:
    schema, restore = strict(obj({"body": {"anyOf": [{"type": "string"}, {"type": "null"}]}}))
    assert schema["properties"]["body"]["anyOf"][1] == {"type": "null"}
    assert restore({"body": None}) == {"body": None}


def test_nested_objects_and_arrays_are_rewritten_at_every_depth() -> None:
    point = obj({"x": {"type": "number"}, "label": {"type": "string"}}, ["x"])
    schema, restore = strict(obj({"points": {"type": "array", "items": point}}, ["points"]))
    items = schema["properties"]["points"]["items"]
    assert items["required"] == ["x", "label"]
    model_args = {"points": [{"x": 1, "label": None}, {"x": 2, "label": "b"}]}
    assert restore(model_args) == {"points": [{"x": 1}, {"x": 2, "label": "b"}]}


def test_a_map_becomes_key_value_pairs_and_comes_back_as_an_object() -> None:
    headers = {"type": "object", "additionalProperties": {"type": "string"}}
    schema, restore = strict(obj({"headers": headers}))
    pairs = schema["properties"]["headers"]
    assert pairs["type"] == ["array", "null"]
    assert pairs["items"]["required"] == ["key", "value"]
    assert restore({"headers": [{"key": "Accept", "value": "text/plain"}]}) == {
        "headers": {"Accept": "text/plain"}
    }
    assert restore({"headers": None}) == {}


def test_local_refs_are_inlined_and_refused_keywords_described() -> None:
    parameters = {
        "type": "object",
        "$defs": {"Name": {"type": "string", "minLength": 2, "title": "Name"}},
        "properties": {"who": {"$ref": "#/$defs/Name", "description": "Who."}},
        "required": ["who"],
    }
    schema, _ = strict(parameters)
    assert schema["properties"]["who"] == {"type": "string", "description": "Who. (minLength: 2)"}
    assert "$defs" not in schema


def test_one_of_becomes_any_of() -> None:
    schema, _ = strict(obj({"v": {"oneOf": [{"type": "string"}, {"type": "integer"}]}}, ["v"]))
    assert schema["properties"]["v"] == {"anyOf": [{"type": "string"}, {"type": "integer"}]}


@pytest.mark.parametrize(
    ("parameters", "reason"),
    [
        (obj({"meta": {"type": "object"}}), "parameters.meta: a free-form object"),
        (obj({"tags": {"type": "array"}}), "parameters.tags: an array whose items have no type"),
        (obj({"x": True}), "parameters.x: a schema of true accepts any value"),
        (obj({"x": {"not": {"type": "string"}}}), "keyword 'not' has no strict-mode form"),
        (
            {"type": "object", "properties": {}, "additionalProperties": True},
            "an object that takes properties it does not declare",
        ),
        (
            {
                "type": "object",
                "$defs": {"Node": obj({"next": {"$ref": "#/$defs/Node"}})},
                "properties": {"head": {"$ref": "#/$defs/Node"}},
            },
            "is recursive",
        ),
        (obj({"x": {"$ref": "https://example.org/s.json"}}), "points outside the schema"),
        (
            {"type": "object", "additionalProperties": {"type": "string"}},
            "parameters: a map of arguments with no declared properties",
        ),
        (
            obj({"x": {"anyOf": [obj({"a": {"type": "string"}}), obj({"b": {"type": "string"}})]}}),
            "a union whose branches cannot be told apart",
        ),
    ],
)
def test_what_strict_mode_cannot_hold_is_refused_with_the_reason(parameters, reason) -> None:
    with pytest.raises(NotStrict, match=reason.replace("(", r"\(")):
        strict_schema(parameters)


def _pack_definitions(pack_venv, tmp_path, config: str) -> dict[str, dict[str, Any]]:
    path = tmp_path / "toolreg.toml"
    path.write_text(config)
    done = pack_venv.run(
        "--config", str(path), "list", "--json", "--format", "mcp", TOOLREG_PLUGINS=EXAMPLES
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return {item["name"]: item["definition"] for item in json.loads(done.stdout)}


def test_all_twelve_built_in_and_example_pack_tools_are_strict(pack_venv, tmp_path) -> None:
    """The built-ins, toolreg-sqlite, and toolreg-sandbox's terminal (with consent)."""
    plain = _pack_definitions(pack_venv, tmp_path, "")
    sandboxed = _pack_definitions(
        pack_venv,
        tmp_path,
        (REPO / "example_plugins" / "demo.toml").read_text(),
    )
    schemas = [d["inputSchema"] for d in plain.values()] + [sandboxed["terminal"]["inputSchema"]]
    assert plain["terminal"] != sandboxed["terminal"]
    assert len(schemas) == 12
    for parameters in schemas:
        schema, restore = strict(parameters)
        validate = fastjsonschema.compile(parameters)
        # The model's answer in strict mode: every field, null where it has nothing to say.
        model_args = {name: None for name in schema["properties"]}
        model_args.update({name: _sample(parameters["properties"][name]) for name in
                           parameters.get("required", [])})  # fmt: skip
        validate(restore(model_args))


def _sample(prop: dict[str, Any]) -> Any:
    return {"string": "x", "integer": 1, "number": 1.0, "boolean": True}[prop["type"]]


def test_without_the_rewrite_the_framework_refuses_the_http_tool() -> None:
    """The baseline the rewrite fixes: a map of headers is not strict as registered."""
    from agents import FunctionTool
    from agents.exceptions import UserError

    from toolreg import discover_builtin_tools, registry

    discover_builtin_tools()
    parameters = registry.get_definition("http_request", format="mcp")["inputSchema"]
    with pytest.raises(UserError, match="additionalProperties"):
        FunctionTool("http_request", "", parameters, lambda ctx, args: None)
    strict(parameters)


def _ref_chain(hops: int) -> dict[str, Any]:
    """Parameters whose one property reaches an integer through ``hops`` $refs."""
    defs: dict[str, Any] = {f"D{i}": {"$ref": f"#/$defs/D{i + 1}"} for i in range(hops - 1)}
    defs[f"D{hops - 1}"] = {"type": "integer"}
    return {"type": "object", "properties": {"v": {"$ref": "#/$defs/D0"}}, "$defs": defs}


def test_a_long_ref_chain_is_refused_with_its_reason_not_a_recursion_error():
    from toolreg._contract.schema_limits import MAX_REF_HOPS

    converted, _ = strict_schema(_ref_chain(MAX_REF_HOPS))
    assert converted["properties"]["v"]["type"] == ["integer", "null"]  # inlined; optional
    with pytest.raises(NotStrict, match=f"chain of more than {MAX_REF_HOPS} \\$refs"):
        strict_schema(_ref_chain(1000))


def test_a_long_ref_chain_becomes_an_opaque_object_for_gemini():
    from toolreg._contract.schema_limits import MAX_REF_HOPS
    from toolreg._schemas.gemini_schema import to_gemini_schema

    assert to_gemini_schema(_ref_chain(MAX_REF_HOPS))["properties"]["v"] == {"type": "integer"}
    assert to_gemini_schema(_ref_chain(1000))["properties"]["v"] == {"type": "object"}
