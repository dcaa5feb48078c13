"""OpenAI strict definitions: accepted by the SDKs' strict checks, refusals named, the way back.

``openai.lib._pydantic._ensure_strict_json_schema`` is what openai-python runs on a
``pydantic_function_tool`` before it sends ``"strict": true``, and
``agents.strict_schema.ensure_strict_json_schema`` what openai-agents runs; a schema
they leave unchanged is one they consider strict already.
"""

from __future__ import annotations

import copy
import logging
from typing import Any

import pytest
from agents.strict_schema import ensure_strict_json_schema as agents_strict
from openai.lib._pydantic import _ensure_strict_json_schema as openai_strict
from openai.types.chat import ChatCompletionToolParam
from openai.types.responses import FunctionToolParam

from conftest import conforms
from toolreg import ToolRegistry, discover_builtin_tools, strict_arguments, strict_refusals
from toolreg import registry as default_registry

SEARCH = {
    "description": "Search.",
    "parameters": {
        "type": "object",
        "properties": {
            "q": {"type": "string", "minLength": 1},
            "limit": {"type": "integer", "default": 10},
            "filters": {"type": "object", "additionalProperties": {"type": "string"}},
        },
        "required": ["q"],
    },
}
FREE_FORM = {
    "description": "Takes anything.",
    "parameters": {"type": "object", "properties": {"blob": {"type": "object"}}},
}


def handler(args: dict[str, Any]) -> str:
    return repr(sorted(args.items()))


@pytest.fixture
def reg() -> ToolRegistry:
    registry = ToolRegistry()
    registry.register("search", "t", SEARCH, handler)
    registry.register("blob", "t", FREE_FORM, handler)
    return registry


def sdk_strict(schema: dict[str, Any]) -> None:
    """Both SDKs' strict checks leave ``schema`` as it is."""
    assert openai_strict(copy.deepcopy(schema), path=(), root=copy.deepcopy(schema)) == schema
    assert agents_strict(copy.deepcopy(schema)) == schema


def test_chat_completions_strict_definitions_are_what_the_sdk_sends(reg) -> None:
    (definition,) = reg.get_definitions(format="openai", strict=True)
    conforms(ChatCompletionToolParam, definition)
    function = definition["function"]
    assert function["strict"] is True
    sdk_strict(function["parameters"])
    assert function["parameters"]["required"] == ["q", "limit", "filters"]
    assert "default" not in function["parameters"]["properties"]["limit"]


def test_responses_strict_definitions_are_what_the_sdk_sends(reg) -> None:
    (definition,) = reg.get_definitions(format="openai-responses", strict=True)
    conforms(FunctionToolParam, definition)
    assert definition["strict"] is True
    sdk_strict(definition["parameters"])


def test_the_plain_formats_are_unchanged_by_the_strict_ones(reg) -> None:
    reg.get_definitions(format="openai", strict=True)
    plain = reg.get_definitions(format="openai")
    assert [d["function"]["name"] for d in plain] == ["blob", "search"]
    assert "strict" not in plain[1]["function"]
    assert plain[1]["function"]["parameters"] == SEARCH["parameters"]
    assert reg.get_definitions(format="openai-responses")[0]["strict"] is False


def test_a_tool_strict_mode_cannot_hold_is_left_out_warned_and_listed(reg, caplog) -> None:
    with caplog.at_level(logging.WARNING, logger="toolreg.definitions"):
        names = [d["name"] for d in reg.get_definitions(format="openai-responses", strict=True)]
    assert names == ["search"]
    (record,) = [r for r in caplog.records if "strict" in r.getMessage()]
    assert "'blob'" in record.getMessage() and "free-form object" in record.getMessage()
    assert strict_refusals(registry=reg) == {
        "blob": "parameters.blob: a free-form object (no properties declared)"
    }
    assert strict_refusals(["search"], registry=reg) == {}
    assert '"blob"' not in reg.get_definitions_json(format="openai", strict=True)


def test_get_definition_raises_for_a_tool_strict_mode_cannot_hold(reg) -> None:
    with pytest.raises(ValueError, match="'blob' cannot be made strict: parameters.blob"):
        reg.get_definition("blob", format="openai", strict=True)
    assert reg.get_definition("search", format="openai", strict=True)["function"]["strict"]


def test_dynamic_overrides_that_cannot_be_strict_leave_the_tool_out(caplog) -> None:
    reg = ToolRegistry()
    overrides: dict[str, Any] = {}
    reg.register("search", "t", SEARCH, handler, dynamic_schema_overrides=lambda: overrides)
    assert len(reg.get_definitions(format="openai", strict=True)) == 1
    overrides["parameters"] = FREE_FORM["parameters"]
    with caplog.at_level(logging.WARNING, logger="toolreg.definitions"):
        assert reg.get_definitions(format="openai", strict=True) == []
    assert "'search' cannot be made strict" in caplog.text
    assert list(strict_refusals(registry=reg)) == ["search"]


@pytest.mark.parametrize("format", ["anthropic", "gemini", "mcp"])
def test_strict_is_refused_for_formats_without_it(reg, format) -> None:
    with pytest.raises(ValueError, match=f"'{format}' has no strict mode"):
        reg.get_definitions(format=format, strict=True)


def test_the_models_strict_arguments_come_back_as_the_tool_takes_them(reg) -> None:
    model = '{"q": "x", "limit": null, "filters": [{"key": "lang", "value": "en"}]}'
    args = strict_arguments("search", model, registry=reg)
    assert args == {"q": "x", "filters": {"lang": "en"}}
    assert reg.dispatch("search", args) == "[('filters', {'lang': 'en'}), ('q', 'x')]"
    # As sent, the registered schema refuses the null and the pair list.
    assert "limit" in reg.dispatch("search", model)


def test_strict_arguments_pass_what_they_cannot_read_to_dispatch(reg) -> None:
    assert strict_arguments("search", "{not json", registry=reg) == "{not json"
    assert strict_arguments("search", "[1]", registry=reg) == "[1]"
    assert strict_arguments("nope", '{"a": null}', registry=reg) == {"a": None}
    same = {"blob": None}
    assert strict_arguments("blob", same, registry=reg) is same  # not strict: as it came


def test_strict_arguments_follow_a_new_registration(reg) -> None:
    assert strict_arguments("search", {"q": "x", "limit": None}, registry=reg) == {"q": "x"}
    reg.register(
        "search",
        "t",
        {"parameters": {"type": "object", "properties": {"limit": {"type": ["integer", "null"]}}}},
        handler,
    )
    assert strict_arguments("search", {"limit": None}, registry=reg) == {"limit": None}


def test_every_built_in_tool_is_strict_for_both_sdks() -> None:
    discover_builtin_tools()
    assert strict_refusals() == {}
    definitions = default_registry.get_definitions(format="openai", strict=True)
    assert len(definitions) == len(default_registry.get_definitions(format="openai"))
    for definition in definitions:
        sdk_strict(definition["function"]["parameters"])
