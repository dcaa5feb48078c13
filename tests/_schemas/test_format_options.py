"""The definition options ``inline_refs`` and ``optional_as_absent``, in every format.

Checked against each SDK's own types offline (openai's ``ChatCompletionToolParam``
and ``FunctionToolParam``, anthropic's ``ToolParam``, google-genai's
``FunctionDeclaration``, MCP's ``Tool``), and against hostile schemas: a ``$ref`` to
a missing definition, a chain of a thousand, a self-referencing definition and a
remote URL, which is never fetched.
"""

from __future__ import annotations

import copy
import json
import logging
from typing import Any

import pytest
from anthropic.types import ToolParam
from google.genai import types as genai_types
from mcp import types as mcp_types
from openai.types.chat import ChatCompletionToolParam
from openai.types.responses import FunctionToolParam

from conftest import Plot, Point, conforms
from toolreg import ToolRegistry
from toolreg._schemas.formats import format_key, get_formatter

PLOT = Plot.model_json_schema()
TREE = {
    "type": "object",
    "$defs": {
        "Node": {
            "type": "object",
            "properties": {
                "name": {"type": "string"},
                "children": {"type": "array", "items": {"$ref": "#/$defs/Node"}},
            },
        }
    },
    "properties": {"root": {"$ref": "#/$defs/Node"}},
}
CHAIN = {
    "type": "object",
    "$defs": {
        **{f"a{i}": {"$ref": f"#/$defs/a{i + 1}"} for i in range(1000)},
        "a1000": {"type": "string"},
    },
    "properties": {"x": {"$ref": "#/$defs/a0"}},
}
PARAMETERS = {"openai": "parameters", "openai-responses": "parameters", "anthropic": "input_schema"}
PARAMETERS |= {"gemini-json-schema": "parameters_json_schema", "mcp": "inputSchema"}


def handler(args: dict[str, Any]) -> str:
    return json.dumps(args, sort_keys=True)


def registry_with(**tools: dict[str, Any]) -> ToolRegistry:
    reg = ToolRegistry()
    for name, parameters in tools.items():
        reg.register(name, "t", {"description": "A tool.", "parameters": parameters}, handler)
    return reg


def parameters_of(definition: dict[str, Any], fmt: str) -> dict[str, Any]:
    holder = definition["function"] if fmt == "openai" else definition
    parameters: dict[str, Any] = holder[PARAMETERS[fmt]]
    return parameters


def the_rest(definition: dict[str, Any], fmt: str) -> dict[str, Any]:
    """A private copy of ``definition`` without its parameters."""
    rest = copy.deepcopy(definition)
    del (rest["function"] if fmt == "openai" else rest)[PARAMETERS[fmt]]
    return rest


def sdk_accepts(fmt: str, definition: dict[str, Any]) -> None:
    if fmt == "openai":
        conforms(ChatCompletionToolParam, definition)
    elif fmt == "openai-responses":
        conforms(FunctionToolParam, definition)
    elif fmt == "anthropic":
        conforms(ToolParam, definition)
    elif fmt == "gemini-json-schema":
        conforms(genai_types.FunctionDeclarationDict, definition)
        parsed = genai_types.FunctionDeclaration.model_validate(definition)
        assert parsed.parameters_json_schema == definition["parameters_json_schema"]
    else:
        parsed_tool = mcp_types.Tool.model_validate(definition)
        assert parsed_tool.input_schema == definition["inputSchema"]


def words_in(value: Any) -> set[str]:
    text = json.dumps(value)
    return {word for word in ("$ref", "$defs", '"null"') if word in text}


@pytest.mark.parametrize("fmt", list(PARAMETERS))
def test_both_options_give_a_schema_with_no_ref_and_no_null_that_each_sdk_takes(fmt: str) -> None:
    reg = registry_with(plot=copy.deepcopy(PLOT))
    (plain,) = reg.get_definitions(format=fmt)
    (told,) = reg.get_definitions(format=fmt, inline_refs=True, optional_as_absent=True)

    assert words_in(parameters_of(plain, fmt)) == {"$ref", "$defs", '"null"'}
    assert words_in(parameters_of(told, fmt)) == set()
    properties = parameters_of(told, fmt)["properties"]
    assert properties["at"] == properties["near"] == Point.model_json_schema()
    assert properties["label"] == {"type": "string", "title": "Label"}
    sdk_accepts(fmt, told)
    assert the_rest(told, fmt) == the_rest(plain, fmt), "only the parameters differ"


@pytest.mark.parametrize("fmt", list(PARAMETERS))
@pytest.mark.parametrize(
    ("options", "left"),
    [({"inline_refs": True}, {'"null"'}), ({"optional_as_absent": True}, {"$ref", "$defs"})],
)
def test_each_option_on_its_own(fmt: str, options: dict[str, bool], left: set[str]) -> None:
    reg = registry_with(plot=copy.deepcopy(PLOT))
    (told,) = reg.get_definitions(format=fmt, **options)
    assert words_in(parameters_of(told, fmt)) == left
    sdk_accepts(fmt, told)


def test_the_model_leaving_an_optional_out_is_a_call_dispatch_takes() -> None:
    reg = registry_with(plot=copy.deepcopy(PLOT))
    told = reg.get_definition("plot", format="mcp", inline_refs=True, optional_as_absent=True)
    assert told is not None and told["inputSchema"]["required"] == ["at"]
    assert reg.dispatch("plot", {"at": {"x": 1, "y": 2}}) == '{"at": {"x": 1, "y": 2}}'
    assert reg.dispatch("plot", {"at": {"x": 1, "y": 2}, "label": None}).startswith('{"at"')


class TestWhereAnOptionChangesNothing:
    def test_gemini_and_strict_mode_always_inline(self) -> None:
        assert format_key("gemini", inline_refs=True) == "gemini"
        assert format_key("openai", strict=True, inline_refs=True) == ("openai", "strict")
        reg = registry_with(plot=copy.deepcopy(PLOT))
        assert reg.get_definitions(format="gemini", inline_refs=True) == reg.get_definitions(
            format="gemini"
        )
        strict = reg.get_definitions(strict=True)
        assert reg.get_definitions(strict=True, inline_refs=True)[0] is strict[0]

    def test_strict_mode_refuses_optional_as_absent(self) -> None:
        reg = registry_with(plot=copy.deepcopy(PLOT))
        with pytest.raises(ValueError, match="cannot be combined with strict=True"):
            reg.get_definitions(strict=True, optional_as_absent=True)

    def test_gemini_takes_optional_as_absent_as_a_non_nullable_property(self) -> None:
        reg = registry_with(plot=copy.deepcopy(PLOT))
        (plain,) = reg.get_definitions(format="gemini")
        (told,) = reg.get_definitions(format="gemini", optional_as_absent=True)
        assert plain["parameters"]["properties"]["label"]["nullable"] is True
        assert "nullable" not in told["parameters"]["properties"]["label"]
        genai_types.FunctionDeclaration.model_validate(told)

    @pytest.mark.parametrize("key", [("mcp", "strict"), ("openai", "fast"), ("cohere", "strict")])
    def test_a_key_with_an_option_its_format_lacks_is_refused(self, key: tuple[str, ...]) -> None:
        with pytest.raises(ValueError, match="format"):
            get_formatter(key)


# -- hostile schemas --------------------------------------------------------------------


def test_a_self_referencing_definition_is_left_out_named_and_offered_plain(
    caplog: pytest.LogCaptureFixture,
) -> None:
    reg = registry_with(tree=copy.deepcopy(TREE), plot=copy.deepcopy(PLOT))
    with caplog.at_level(logging.WARNING, "toolreg.definitions"):
        told = reg.get_definitions(format="anthropic", inline_refs=True)
    assert [d["name"] for d in told] == ["plot"]
    (warning,) = [r.getMessage() for r in caplog.records]
    assert "in anthropic with inline_refs" in warning
    assert "Tool 'tree' cannot have its $refs inlined" in warning and "recursive" in warning
    with pytest.raises(ValueError, match=r"Tool 'tree' cannot have its \$refs inlined"):
        reg.get_definition("tree", format="anthropic", inline_refs=True)
    assert [d["name"] for d in reg.get_definitions(format="anthropic")] == ["plot", "tree"]
    assert json.loads(reg.get_definitions_json(format="mcp", inline_refs=True))[0]["name"] == "plot"


def test_a_chain_of_a_thousand_refs_is_left_out_with_the_reason(
    caplog: pytest.LogCaptureFixture,
) -> None:
    reg = registry_with(chain=copy.deepcopy(CHAIN))  # registration allows it: each ref is local
    with caplog.at_level(logging.WARNING, "toolreg.definitions"):
        assert reg.get_definitions(format="mcp", inline_refs=True) == []
    assert "Tool 'chain'" in caplog.text and "more than 64 levels deep" in caplog.text
    assert "recursion" not in caplog.text


@pytest.mark.parametrize("target", ["remote", "#/$defs/Missing"])
def test_a_ref_to_a_missing_definition_or_a_url_is_refused_and_never_fetched(
    target: str, schema_server: tuple[str, list[str]]
) -> None:
    url, fetched = schema_server
    ref = url if target == "remote" else target
    hostile = {"type": "object", "properties": {"p": {"$ref": ref}}}
    with pytest.raises(ValueError, match="Tool 'hostile'"):  # registration says so first
        registry_with(hostile=hostile)
    # A schema changed after registration reaches the formatter unchecked.
    reg = registry_with(hostile={"type": "object", "properties": {"p": {"type": "string"}}})
    schema = reg.get_entry("hostile").schema
    schema["parameters"]["properties"]["p"] = {"$ref": ref}

    assert reg.get_definitions(format="openai-responses", inline_refs=True) == []
    with pytest.raises(ValueError, match="never fetched" if target == "remote" else "names no"):
        reg.get_definition("hostile", format="openai-responses", inline_refs=True)
    assert fetched == []
