"""Provider definition formats: shapes, name rules, Gemini's schema subset, the CLI flags.

Each shape is checked against the provider's published definition of a tool:

- openai (Chat Completions): https://platform.openai.com/docs/api-reference/chat/create
  (``tools[].function``), as typed in openai-python
  ``src/openai/types/shared_params/function_definition.py``: name "Must be a-z, A-Z,
  0-9, or contain underscores and dashes, with a maximum length of 64".
- openai-responses: https://platform.openai.com/docs/api-reference/responses/create
  (``tools[]``, "Function"), matched against the ``FunctionToolParam`` type openai-python
  generates from that API spec, ``src/openai/types/responses/function_tool_param.py``:
  ``type: "function"``, ``name``, ``description``, ``parameters``, ``strict``
  ("Whether to enforce strict parameter validation. Default `true`.").
- anthropic: https://docs.anthropic.com/en/docs/build-with-claude/tool-use ("Specifying
  tools"): ``name`` "Must match the regex ^[a-zA-Z0-9_-]{1,64}$", ``description``,
  ``input_schema``; the SDK's ``ToolParam.input_schema`` has ``type: Literal["object"]``.
- gemini: https://ai.google.dev/api/caching#FunctionDeclaration and #Schema; the name's
  first-character rule is from
  https://cloud.google.com/vertex-ai/docs/reference/rest/v1beta1/FunctionDeclaration.
- mcp: https://modelcontextprotocol.io/specification/2025-11-25/server/tools (Tool,
  "Tool names"); schema.ts: ``inputSchema: {type: "object"; properties?; required?}``.
"""

from __future__ import annotations

import copy
import json
import logging
from collections.abc import Iterator
from typing import Any

import pytest

from conftest import RICH_SCHEMA
from toolreg import ToolRegistry, registry
from toolreg._schemas.formats import FORMATS, get_formatter
from toolreg.cli import main
from toolreg.cli._app import FORMATS as CLI_FORMATS

ALL_FORMATS = ["openai", "openai-responses", "anthropic", "gemini", "gemini-json-schema", "mcp"]

PARAMS: dict[str, Any] = {
    "type": "object",
    "properties": {"path": {"type": "string", "description": "A path."}},
    "required": ["path"],
}


def handler(args: dict[str, Any]) -> str:
    return "ok"


def gemini(parameters: dict[str, Any]) -> dict[str, Any]:
    """Gemini's ``parameters`` for a tool with these JSON-Schema parameters."""
    return FORMATS["gemini"]("t", "d", parameters)["parameters"]


def gemini_props(properties: dict[str, Any], **extra: Any) -> dict[str, Any]:
    """Gemini's version of each property, for an object schema with these properties."""
    return gemini({"type": "object", "properties": properties, **extra})["properties"]


def containers(value: Any) -> Iterator[Any]:
    """Every dict and list inside ``value``, itself included."""
    if isinstance(value, (dict, list)):
        yield value
        for item in value.values() if isinstance(value, dict) else value:
            yield from containers(item)


def only_json_types(value: Any) -> bool:
    if isinstance(value, dict):
        return all(isinstance(k, str) and only_json_types(v) for k, v in value.items())
    if isinstance(value, list):
        return all(only_json_types(v) for v in value)
    return value is None or isinstance(value, (str, int, float, bool))


# -- shapes ----------------------------------------------------------------------------


class TestShapes:
    def test_openai(self) -> None:
        assert FORMATS["openai"]("read", "Read.", PARAMS) == {
            "type": "function",
            "function": {"name": "read", "description": "Read.", "parameters": PARAMS},
        }

    def test_openai_responses_is_flat_and_not_strict(self) -> None:
        definition = FORMATS["openai-responses"]("read", "Read.", PARAMS)
        assert definition == {
            "type": "function",
            "name": "read",
            "description": "Read.",
            "parameters": PARAMS,
            # Sent explicitly: the API's default is true, which would reject PARAMS
            # (it lacks additionalProperties: false).
            "strict": False,
        }
        assert "function" not in definition

    def test_anthropic(self) -> None:
        assert FORMATS["anthropic"]("read", "Read.", PARAMS) == {
            "name": "read",
            "description": "Read.",
            "input_schema": PARAMS,
        }

    def test_mcp(self) -> None:
        assert FORMATS["mcp"]("read", "Read.", PARAMS) == {
            "name": "read",
            "description": "Read.",
            "inputSchema": PARAMS,
        }

    def test_gemini_function_declaration(self) -> None:
        assert FORMATS["gemini"]("read", "Read.", PARAMS) == {
            "name": "read",
            "description": "Read.",
            "parameters": PARAMS,
        }

    @pytest.mark.parametrize("fmt", ["openai", "openai-responses", "anthropic", "mcp"])
    def test_schema_without_properties_gets_empty_properties(self, fmt: str) -> None:
        definition = FORMATS[fmt]("ping", "Ping.", {"type": "object"})
        text = json.dumps(definition)
        assert '"properties": {}' in text
        assert '"type": "object"' in text

    @pytest.mark.parametrize("fmt", ALL_FORMATS)
    def test_non_object_parameters_are_refused(self, fmt: str) -> None:
        with pytest.raises(ValueError, match="'read'.*object"):
            FORMATS[fmt]("read", "Read.", {"type": "string"})

    def test_unknown_format_lists_every_known_one(self) -> None:
        with pytest.raises(ValueError) as info:
            get_formatter("cohere")
        for fmt in ALL_FORMATS:
            assert fmt in str(info.value)

    def test_cli_offers_exactly_the_registry_formats(self) -> None:
        assert sorted(CLI_FORMATS) == sorted(FORMATS) == sorted(ALL_FORMATS)


class TestFreshCopies:
    SCHEMA: dict[str, Any] = {
        "type": "object",
        "$defs": {"P": {"type": "object", "properties": {"x": {"type": "number"}}}},
        "properties": {
            "p": {"$ref": "#/$defs/P"},
            "tags": {
                "type": "array",
                "items": {"type": "string", "enum": ["a", "b"]},
                "default": ["a"],
                "example": ["b", "a"],
            },
            "n": {"anyOf": [{"type": "integer", "default": 3}, {"type": "null"}]},
            "meta": {"type": "object", "properties": {"k": {"type": "string"}}},
        },
        "required": ["p"],
    }

    @pytest.mark.parametrize("fmt", ALL_FORMATS)
    def test_output_shares_nothing_with_the_input(self, fmt: str) -> None:
        schema = copy.deepcopy(self.SCHEMA)
        before = copy.deepcopy(schema)
        definition = FORMATS[fmt]("t", "d", schema)
        assert schema == before  # not mutated
        inputs = {id(c) for c in containers(schema)}
        assert not any(id(c) in inputs for c in containers(definition))
        for c in containers(schema):  # and changing the input cannot reach the output
            c.clear()
        assert json.loads(json.dumps(definition)) == FORMATS[fmt]("t", "d", before)

    @pytest.mark.parametrize("fmt", ALL_FORMATS)
    def test_output_is_frozen_json(self, fmt: str) -> None:
        definition = FORMATS[fmt]("t", "d", self.SCHEMA)
        assert only_json_types(definition)
        for c in containers(definition):  # every dict and list in it is read-only
            with pytest.raises(TypeError, match="copy.deepcopy"):
                c.clear()
        assert json.loads(json.dumps(definition)) == definition

    @pytest.mark.parametrize("fmt", ALL_FORMATS)
    def test_a_value_json_cannot_hold_is_a_value_error_naming_the_tool(self, fmt: str) -> None:
        schema = copy.deepcopy(self.SCHEMA)
        schema["properties"]["tags"]["default"] = {1: "x"}  # not a JSON object: an int key
        with pytest.raises(ValueError, match="Tool 't'.*not JSON.*key"):
            FORMATS[fmt]("t", "d", schema)


# -- name rules ------------------------------------------------------------------------

VALID = True
INVALID = False

NAME_COLUMNS = ["openai", "openai-responses", "anthropic", "gemini", "mcp"]
NAME_RULE_OF = {"gemini-json-schema": "gemini"}  # the same API, the same name rule

NAME_CASES = {
    # name: (openai, openai-responses, anthropic, gemini, mcp)
    "read_file": (VALID, VALID, VALID, VALID, VALID),
    "read-file": (VALID, VALID, VALID, VALID, VALID),
    "_private": (VALID, VALID, VALID, VALID, VALID),
    "x" * 64: (VALID, VALID, VALID, VALID, VALID),
    "fs.read": (INVALID, INVALID, INVALID, VALID, VALID),  # dots: Gemini and MCP only
    "x" * 65: (INVALID, INVALID, INVALID, INVALID, VALID),  # MCP allows up to 128
    "x" * 128: (INVALID, INVALID, INVALID, INVALID, VALID),
    "x" * 129: (INVALID, INVALID, INVALID, INVALID, INVALID),
    "2fa_check": (VALID, VALID, VALID, INVALID, VALID),  # Gemini: letter or '_' first
    "-dash": (VALID, VALID, VALID, INVALID, VALID),
    ".dot": (INVALID, INVALID, INVALID, INVALID, VALID),
    "read\n": (INVALID, INVALID, INVALID, INVALID, INVALID),  # no "$"-before-newline slip
    "": (INVALID, INVALID, INVALID, INVALID, INVALID),
    "has space": (INVALID, INVALID, INVALID, INVALID, INVALID),
}


@pytest.mark.parametrize(
    ("name", "fmt", "valid"),
    [
        (name, fmt, verdicts[NAME_COLUMNS.index(NAME_RULE_OF.get(fmt, fmt))])
        for name, verdicts in NAME_CASES.items()
        for fmt in ALL_FORMATS
    ],
)
def test_name_rules(name: str, fmt: str, valid: bool) -> None:
    formatter = FORMATS[fmt]
    if valid:
        assert json.dumps(formatter(name, "d", PARAMS)).count(json.dumps(name)) == 1
    else:
        with pytest.raises(ValueError) as info:
            formatter(name, "d", PARAMS)
        message = str(info.value)
        assert repr(name) in message  # names the tool
        assert "names must be" in message  # and states the rule


class TestNamesThroughTheRegistry:
    def test_a_tool_invalid_for_the_provider_is_logged_and_left_out(
        self, caplog: pytest.LogCaptureFixture
    ) -> None:
        reg = ToolRegistry()
        reg.register("fs.read", "fs", {"parameters": PARAMS}, handler)
        reg.register("fs_write", "fs", {"parameters": PARAMS}, handler)
        with caplog.at_level(logging.ERROR, logger="toolreg.definitions"):
            openai = reg.get_definitions(format="openai")
        assert [d["function"]["name"] for d in openai] == ["fs_write"]
        assert "fs.read" in caplog.text
        assert [d["name"] for d in reg.get_definitions(format="gemini")] == ["fs.read", "fs_write"]
        assert [d["name"] for d in reg.get_definitions(format="mcp")] == ["fs.read", "fs_write"]

    def test_get_definition_raises_naming_the_tool(self) -> None:
        reg = ToolRegistry()
        reg.register("fs.read", "fs", {"parameters": PARAMS}, handler)
        with pytest.raises(ValueError, match=r"'fs\.read'.*Anthropic"):
            reg.get_definition("fs.read", format="anthropic")


# -- Gemini schema normalisation ---------------------------------------------------------


class TestGeminiKeywords:
    def test_unsupported_keywords_are_dropped_everywhere(self) -> None:
        noise = {
            "additionalProperties": False,
            "$id": "urn:x",
            "$comment": "c",
            "examples": ["e"],
            "patternProperties": {"^x": {"type": "string"}},
            "unevaluatedProperties": False,
        }
        leaf_noise = {"examples": [1], "multipleOf": 2, "exclusiveMinimum": 0, "not": {}}
        params = {
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "type": "object",
            "properties": {
                "obj": {"type": "object", "properties": {"n": {"type": "integer", **leaf_noise}}}
                | noise,
                "list": {
                    "type": "array",
                    "uniqueItems": True,
                    "items": {"type": "object", "properties": {"s": {"type": "string"}}} | noise,
                },
            },
            **noise,
        }
        assert gemini(params) == {
            "type": "object",
            "properties": {
                "obj": {"type": "object", "properties": {"n": {"type": "integer"}}},
                "list": {
                    "type": "array",
                    "items": {"type": "object", "properties": {"s": {"type": "string"}}},
                },
            },
        }

    def test_documented_fields_are_kept(self) -> None:
        kept = {
            "type": "string",
            "title": "Name",
            "description": "The name.",
            "default": "x",
            "example": "bob",
            "pattern": "^[a-z]+$",
            "minLength": 1,
            "maxLength": 9,
        }
        numbers = {"type": "number", "minimum": 0, "maximum": 1.5}
        array = {"type": "array", "items": {"type": "string"}, "minItems": 1, "maxItems": 3}
        props = gemini_props({"s": kept, "n": numbers, "a": array}, propertyOrdering=["s", "n"])
        assert props == {"s": kept, "n": numbers, "a": array}
        assert gemini({"type": "object", "properties": {"s": kept}, "propertyOrdering": ["s"]})[
            "propertyOrdering"
        ] == ["s"]

    def test_string_const_becomes_a_one_value_enum(self) -> None:
        assert gemini_props({"mode": {"const": "fast", "description": "M."}}) == {
            "mode": {"type": "string", "enum": ["fast"], "description": "M."}
        }

    def test_non_string_const_is_kept_in_the_description(self) -> None:
        assert gemini_props({"v": {"const": 2}, "on": {"const": True, "description": "On."}}) == {
            "v": {"type": "integer", "description": "Allowed values: 2."},
            "on": {"type": "boolean", "description": "On. Allowed values: true."},
        }

    def test_enum_on_a_non_string_type_moves_to_the_description(self) -> None:
        level = {"type": "integer", "enum": [1, 2, 3], "description": "Level."}
        assert gemini_props({"level": level}) == {
            "level": {"type": "integer", "description": "Level. Allowed values: 1, 2, 3."}
        }

    def test_string_enum_is_kept_and_null_in_it_means_nullable(self) -> None:
        assert gemini_props(
            {
                "unit": {"type": "string", "enum": ["c", "f"]},
                "maybe": {"enum": ["a", None]},  # no type: inferred from the values
            }
        ) == {
            "unit": {"type": "string", "enum": ["c", "f"]},
            "maybe": {"type": "string", "enum": ["a"], "nullable": True},
        }

    @pytest.mark.parametrize(
        ("schema", "kept"),
        [
            ({"type": "string", "format": "date-time"}, True),
            ({"type": "string", "format": "enum", "enum": ["a"]}, True),
            ({"type": "integer", "format": "int32"}, True),
            ({"type": "integer", "format": "int64"}, True),
            ({"type": "number", "format": "float"}, True),
            ({"type": "number", "format": "double"}, True),
            ({"type": "string", "format": "email"}, False),
            ({"type": "string", "format": "uri"}, False),
            ({"type": "string", "format": "uuid"}, False),
            ({"type": "string", "format": "date"}, False),
            ({"type": "string", "format": "enum"}, False),  # "enum" format needs an enum
            ({"type": "number", "format": "int32"}, False),
            ({"type": "integer", "format": "date-time"}, False),
            ({"format": "date-time"}, False),
        ],
    )
    def test_format_only_where_gemini_supports_it(self, schema: dict[str, Any], kept: bool) -> None:
        out = gemini_props({"v": schema})["v"]
        assert ("format" in out) is kept
        if kept:
            assert out["format"] == schema["format"]

    def test_nested_format_is_checked_too(self) -> None:
        links = {
            "type": "array",
            "items": {"type": "object", "properties": {"url": {"type": "string", "format": "uri"}}},
        }
        assert gemini_props({"links": links})["links"]["items"]["properties"]["url"] == {
            "type": "string"
        }


class TestGeminiNullsAndUnions:
    @pytest.mark.parametrize("key", ["anyOf", "oneOf"])
    def test_union_with_null_is_the_nullable_other_branch(self, key: str) -> None:
        props = gemini_props(
            {
                "a": {key: [{"type": "string"}, {"type": "null"}], "description": "A."},
                "b": {key: [{"type": "null"}, {"type": "integer", "minimum": 1}]},
            }
        )
        assert props == {
            "a": {"type": "string", "nullable": True, "description": "A."},
            "b": {"type": "integer", "minimum": 1, "nullable": True},
        }

    def test_type_list_with_null(self) -> None:
        assert gemini_props({"s": {"type": ["string", "null"], "description": "S."}}) == {
            "s": {"type": "string", "nullable": True, "description": "S."}
        }

    def test_type_list_of_several_types_becomes_any_of(self) -> None:
        assert gemini_props({"v": {"type": ["string", "integer", "null"]}}) == {
            "v": {"anyOf": [{"type": "string"}, {"type": "integer"}], "nullable": True}
        }

    def test_any_of_is_kept_because_gemini_has_it(self) -> None:
        v = {
            "anyOf": [{"type": "string", "format": "email"}, {"type": "integer"}, {"type": "null"}]
        }
        assert gemini_props({"v": v}) == {
            "v": {"anyOf": [{"type": "string"}, {"type": "integer"}], "nullable": True}
        }

    def test_one_of_becomes_any_of(self) -> None:
        v = {"oneOf": [{"type": "string"}, {"type": "array", "items": {"type": "string"}}]}
        assert gemini_props({"v": v}) == {
            "v": {"anyOf": [{"type": "string"}, {"type": "array", "items": {"type": "string"}}]}
        }

    def test_any_of_with_an_unconstrained_branch_constrains_nothing(self) -> None:
        v = {"anyOf": [{"type": "string"}, {"examples": ["x"]}], "description": "V."}
        assert gemini_props({"v": v}) == {"v": {"description": "V."}}

    def test_all_of_is_merged(self) -> None:
        v = {
            "allOf": [
                {"type": "object", "properties": {"a": {"type": "string"}}},
                {"properties": {"b": {"type": "integer"}}, "required": ["b"]},
                {"required": ["a"]},
            ],
            "description": "Both.",
        }
        assert gemini_props({"v": v}) == {
            "v": {
                "type": "object",
                "properties": {"a": {"type": "string"}, "b": {"type": "integer"}},
                "required": ["b", "a"],
                "description": "Both.",
            }
        }

    def test_nullable_inside_items(self) -> None:
        tags = {"type": "array", "items": {"anyOf": [{"type": "string"}, {"type": "null"}]}}
        assert gemini_props({"tags": tags}) == {
            "tags": {"type": "array", "items": {"type": "string", "nullable": True}}
        }


class TestGeminiRefs:
    POINT = {
        "type": "object",
        "properties": {"x": {"type": "number"}, "y": {"type": "number"}},
        "required": ["x", "y"],
        "additionalProperties": False,
    }
    POINT_OUT = {
        "type": "object",
        "properties": {"x": {"type": "number"}, "y": {"type": "number"}},
        "required": ["x", "y"],
    }

    def test_refs_are_inlined_and_defs_dropped(self) -> None:
        params = {
            "type": "object",
            "$defs": {"Point": self.POINT},
            "properties": {
                "at": {"$ref": "#/$defs/Point"},
                "path": {"type": "array", "items": {"$ref": "#/$defs/Point"}},
            },
        }
        assert gemini(params) == {
            "type": "object",
            "properties": {
                "at": self.POINT_OUT,
                "path": {"type": "array", "items": self.POINT_OUT},
            },
        }

    def test_draft_07_definitions_and_ref_chains(self) -> None:
        params = {
            "type": "object",
            "definitions": {"Alias": {"$ref": "#/definitions/Unit"}, "Unit": {"enum": ["c", "f"]}},
            "properties": {"unit": {"$ref": "#/definitions/Alias"}},
        }
        assert gemini(params)["properties"] == {"unit": {"type": "string", "enum": ["c", "f"]}}

    def test_keywords_beside_a_ref_win(self) -> None:
        props = gemini_props(
            {"at": {"$ref": "#/$defs/Point", "description": "Where."}},
            **{"$defs": {"Point": {**self.POINT, "description": "A point."}}},
        )
        assert props["at"]["description"] == "Where."

    def test_pydantic_style_optional_model(self) -> None:
        params = {
            "type": "object",
            "$defs": {"Point": self.POINT},
            "properties": {
                "at": {"anyOf": [{"$ref": "#/$defs/Point"}, {"type": "null"}], "default": None},
                "to": {"allOf": [{"$ref": "#/$defs/Point"}], "description": "Target."},
            },
        }
        assert gemini(params)["properties"] == {
            "at": {**self.POINT_OUT, "nullable": True, "default": None},
            "to": {**self.POINT_OUT, "description": "Target."},
        }

    def test_escaped_pointer(self) -> None:
        props = gemini_props(
            {"v": {"$ref": "#/$defs/a~1b%20c"}}, **{"$defs": {"a/b c": {"type": "boolean"}}}
        )
        assert props == {"v": {"type": "boolean"}}

    def test_self_reference_stops_at_a_plain_object(self) -> None:
        params = {
            "type": "object",
            "$defs": {
                "Node": {
                    "type": "object",
                    "description": "A node.",
                    "properties": {
                        "value": {"type": "integer"},
                        "children": {"type": "array", "items": {"$ref": "#/$defs/Node"}},
                    },
                }
            },
            "properties": {"root": {"$ref": "#/$defs/Node"}},
        }
        assert gemini(params)["properties"]["root"] == {
            "type": "object",
            "description": "A node.",
            "properties": {
                "value": {"type": "integer"},
                "children": {"type": "array", "items": {"type": "object"}},
            },
        }

    def test_mutual_reference_stops_too(self) -> None:
        params = {
            "type": "object",
            "$defs": {
                "A": {"type": "object", "properties": {"b": {"$ref": "#/$defs/B"}}},
                "B": {"type": "object", "properties": {"a": {"$ref": "#/$defs/A"}}},
            },
            "properties": {"a": {"$ref": "#/$defs/A"}},
        }
        a = gemini(params)["properties"]["a"]
        assert a == {
            "type": "object",
            "properties": {"b": {"type": "object", "properties": {"a": {"type": "object"}}}},
        }

    def test_the_root_can_refer_to_itself(self) -> None:
        params = {
            "type": "object",
            "properties": {"again": {"$ref": "#"}, "n": {"type": "integer"}},
        }
        assert gemini(params)["properties"] == {
            "again": {
                "type": "object",
                "properties": {"again": {"type": "object"}, "n": {"type": "integer"}},
            },
            "n": {"type": "integer"},
        }

    @pytest.mark.parametrize(
        "ref", ["#/$defs/Missing", "https://example.com/point.json", "#anchor", "#/$defs/P/x/9"]
    )
    def test_unresolvable_ref_is_a_plain_object(self, ref: str) -> None:
        props = gemini_props(
            {"v": {"$ref": ref, "description": "V."}}, **{"$defs": {"P": {"type": "string"}}}
        )
        assert props == {"v": {"type": "object", "description": "V."}}


class TestGeminiObjects:
    @pytest.mark.parametrize(
        "params",
        [
            {"type": "object"},
            {"type": "object", "properties": {}},
            {"type": "object", "properties": {}, "required": [], "additionalProperties": False},
        ],
    )
    def test_no_properties_means_no_parameters(self, params: dict[str, Any]) -> None:
        assert FORMATS["gemini"]("ping", "Ping.", params) == {
            "name": "ping",
            "description": "Ping.",
        }

    def test_nested_free_form_object_has_no_empty_properties(self) -> None:
        props = gemini_props(
            {
                "env": {"type": "object", "additionalProperties": {"type": "string"}},
                "opts": {"type": "object", "properties": {}, "required": []},
            }
        )
        assert props == {"env": {"type": "object"}, "opts": {"type": "object"}}

    def test_required_names_only_declared_properties(self) -> None:
        params = {
            "type": "object",
            "properties": {
                "o": {
                    "type": "object",
                    "properties": {"a": {"type": "string"}},
                    "required": ["a", "ghost"],
                },
                "e": {"type": "object", "required": ["x"]},
            },
            "required": ["o"],
        }
        assert gemini(params) == {
            "type": "object",
            "properties": {
                "o": {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]},
                "e": {"type": "object"},
            },
            "required": ["o"],
        }

    def test_type_is_inferred_from_properties_and_items(self) -> None:
        props = gemini_props(
            {"o": {"properties": {"a": {"type": "string"}}}, "l": {"items": {"type": "integer"}}}
        )
        assert props == {
            "o": {"type": "object", "properties": {"a": {"type": "string"}}},
            "l": {"type": "array", "items": {"type": "integer"}},
        }

    def test_boolean_and_tuple_item_schemas(self) -> None:
        props = gemini_props(
            {
                "any": {"type": "array", "items": True},
                "pair": {"type": "array", "items": [{"type": "string"}, {"type": "integer"}]},
            }
        )
        assert props == {
            "any": {"type": "array", "items": {}},
            "pair": {"type": "array", "items": {"type": "string"}},
        }


# -- end to end --------------------------------------------------------------------------

RICH_GEMINI = {
    "name": "plot",
    "description": "Plot a point.",
    "parameters": {
        "type": "object",
        "properties": {
            "at": {
                "type": "object",
                "properties": {"x": {"type": "number"}, "y": {"type": "number"}},
                "required": ["x", "y"],
            },
            "label": {"type": "string", "nullable": True, "default": None},
            "kind": {"type": "string", "enum": ["scatter"]},
            "size": {"type": "integer", "description": "Marker size. Allowed values: 1, 2, 4."},
        },
        "required": ["at", "kind"],
    },
}


class TestEndToEnd:
    def test_get_definitions_per_format(self) -> None:
        reg = ToolRegistry()
        schema = copy.deepcopy(RICH_SCHEMA)
        reg.register("plot", "charts", schema, handler)
        params = RICH_SCHEMA["parameters"]

        assert reg.get_definitions(format="gemini") == [RICH_GEMINI]
        assert json.loads(reg.get_definitions_json(format="gemini")) == [RICH_GEMINI]
        assert reg.get_definition("plot", format="gemini") == RICH_GEMINI
        # The other providers take JSON Schema as it is.
        assert reg.get_definitions(format="openai")[0]["function"]["parameters"] == params
        assert reg.get_definitions(format="anthropic")[0]["input_schema"] == params
        assert reg.get_definitions(format="mcp")[0]["inputSchema"] == params
        responses = reg.get_definitions(format="openai-responses")
        assert responses == [
            {
                "type": "function",
                "name": "plot",
                "description": "Plot a point.",
                "parameters": params,
                "strict": False,
            }
        ]
        assert schema == RICH_SCHEMA  # the registered schema is untouched

    def test_dynamic_overrides_are_normalised_too(self) -> None:
        reg = ToolRegistry()
        dynamic = {
            "parameters": {
                "type": "object",
                "properties": {"q": {"type": ["string", "null"], "format": "uri"}},
                "additionalProperties": False,
            }
        }
        reg.register(
            "search",
            "web",
            {"parameters": PARAMS},
            handler,
            dynamic_schema_overrides=lambda: dynamic,
        )
        [definition] = reg.get_definitions(format="gemini")
        assert definition["parameters"] == {
            "type": "object",
            "properties": {"q": {"type": "string", "nullable": True}},
        }

    def test_a_tool_without_parameters(self) -> None:
        reg = ToolRegistry()
        reg.register("ping", "net", {"description": "Ping."}, handler)
        assert reg.get_definitions(format="gemini") == [{"name": "ping", "description": "Ping."}]
        assert reg.get_definitions(format="mcp") == [
            {
                "name": "ping",
                "description": "Ping.",
                "inputSchema": {"type": "object", "properties": {}},
            }
        ]


# -- CLI -----------------------------------------------------------------------------------


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def dotted_tool() -> Iterator[str]:
    """A tool in the CLI's registry whose name OpenAI and Anthropic refuse."""
    name = "formats_test.dotted"
    registry.register(
        name, "formats-test", {"description": "Dotted.", "parameters": PARAMS}, handler
    )
    yield name
    registry.deregister(name)


class TestCli:
    def test_show_gemini(self, capsys: pytest.CaptureFixture[str]) -> None:
        code, out, _ = run(capsys, "show", "current_time", "--json", "--format", "gemini")
        assert code == 0
        definition = json.loads(out)
        assert set(definition) == {"name", "description", "parameters"}
        assert definition["name"] == "current_time"
        params = definition["parameters"]
        assert params["type"] == "object"
        assert "additionalProperties" not in params  # current_time declares it
        assert params["properties"]["timezone"]["type"] == "string"
        assert params["properties"]["timezone"]["default"] == "UTC"

    def test_show_openai_responses(self, capsys: pytest.CaptureFixture[str]) -> None:
        code, out, _ = run(capsys, "show", "current_time", "--json", "--format", "openai-responses")
        assert code == 0
        definition = json.loads(out)
        assert set(definition) == {"type", "name", "description", "parameters", "strict"}
        assert definition["strict"] is False

    def test_show_human_names_the_format(self, capsys: pytest.CaptureFixture[str]) -> None:
        code, out, _ = run(capsys, "show", "current_time", "--format", "gemini")
        assert code == 0
        assert "definition (gemini):" in out

    def test_show_a_name_the_provider_refuses(
        self, capsys: pytest.CaptureFixture[str], dotted_tool: str
    ) -> None:
        code, out, err = run(capsys, "show", dotted_tool, "--format", "anthropic")
        assert code == 1
        assert out == ""
        assert err.startswith("toolreg: error: ") and dotted_tool in err
        assert "internal error" not in err and "Traceback" not in err

    def test_list_json_with_format_adds_definitions(
        self, capsys: pytest.CaptureFixture[str]
    ) -> None:
        code, out, _ = run(capsys, "list", "--json", "--format", "mcp")
        assert code == 0
        tools = json.loads(out)
        assert tools
        for tool in tools:
            assert {"name", "toolset", "available", "reason", "owner", "description"} < set(tool)
            assert tool["definition"]["name"] == tool["name"]
            assert tool["definition"]["inputSchema"]["type"] == "object"

    def test_list_json_without_format_has_no_definitions(
        self, capsys: pytest.CaptureFixture[str]
    ) -> None:
        code, out, _ = run(capsys, "list", "--json")
        assert code == 0
        assert all("definition" not in tool for tool in json.loads(out))

    def test_list_definition_is_null_where_the_format_refuses_the_tool(
        self, capsys: pytest.CaptureFixture[str], dotted_tool: str
    ) -> None:
        code, out, err = run(capsys, "list", "--json", "--format", "openai")
        assert code == 0
        by_name = {t["name"]: t for t in json.loads(out)}
        assert by_name[dotted_tool]["definition"] is None
        assert by_name["current_time"]["definition"]["function"]["name"] == "current_time"
        assert dotted_tool in err and "warning" in err

    def test_list_format_needs_json(self, capsys: pytest.CaptureFixture[str]) -> None:
        code, out, err = run(capsys, "list", "--format", "gemini")
        assert code == 2
        assert out == ""
        assert "--json" in err

    @pytest.mark.parametrize("command", ["list", "show"])
    def test_unknown_format_is_a_usage_error(
        self, capsys: pytest.CaptureFixture[str], command: str
    ) -> None:
        argv = ["list", "--json"] if command == "list" else ["show", "current_time"]
        code, _, err = run(capsys, *argv, "--format", "cohere")
        assert code == 2
        assert "invalid choice" in err
