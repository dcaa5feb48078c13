"""Deferred definitions in each provider's form, checked against the SDKs' own types."""

from __future__ import annotations

import json
from typing import Any

import pytest
from anthropic.types import ToolSearchToolBm25_20251119Param, ToolUnionParam
from google.genai import types as genai_types
from mcp import types as mcp_types
from openai.types.chat import ChatCompletionToolParam
from openai.types.responses import (
    FunctionToolParam,
    NamespaceToolParam,
    ToolParam,
    ToolSearchToolParam,
)

from conftest import conforms
from toolreg import ToolRegistry
from toolreg._definitions.deferred import TOOL_SEARCH, definition_name

FORMATS = ["openai", "openai-responses", "anthropic", "gemini", "gemini-json-schema", "mcp"]


def handler(args: dict[str, Any]) -> str:
    return "ok"


def schema(name: str, description: str) -> dict[str, Any]:
    properties = {"city": {"type": "string", "description": "A city."}}
    parameters = {"type": "object", "properties": properties}
    return {"name": name, "description": description, "parameters": parameters}


@pytest.fixture
def catalog(reg: ToolRegistry) -> ToolRegistry:
    reg.register("read_file", "files", schema("read_file", "Read a file."), handler)
    reg.register("write_file", "files", schema("write_file", "Write a file."), handler)
    reg.register("get_weather", "weather", schema("get_weather", "Weather for a city."), handler)
    reg.register(
        "admin_reset",
        "admin",
        schema("admin_reset", "Reset everything."),
        handler,
        searchable=False,
    )
    return reg


def names(definitions: list[dict[str, Any]]) -> list[str]:
    return [definition_name(d) for d in definitions if "name" in d or "function" in d]


def test_anthropic_server_defers_all_but_the_pinned_and_adds_bm25(catalog: ToolRegistry) -> None:
    listed = catalog.get_definitions(format="anthropic", defer=True, always_loaded=["read_file"])
    for definition in listed:
        conforms(ToolUnionParam, definition)
    by_name = {d["name"]: d for d in listed}
    assert "defer_loading" not in by_name["read_file"]
    assert by_name["write_file"]["defer_loading"] is True
    assert by_name["get_weather"]["defer_loading"] is True
    # Hidden from search: Anthropic's own search must not find it either.
    assert "admin_reset" not in by_name
    assert listed[-1] == {"type": "tool_search_tool_bm25_20251119", "name": "tool_search_tool_bm25"}
    conforms(ToolSearchToolBm25_20251119Param, listed[-1])
    # The shared definition is untouched: the deferred one is a copy.
    assert "defer_loading" not in catalog.get_definitions(["write_file"], format="anthropic")[0]


def test_anthropic_client_offers_toolregs_search_tool(catalog: ToolRegistry) -> None:
    listed = catalog.get_definitions(format="anthropic", defer=True, search="client")
    for definition in listed:
        conforms(ToolUnionParam, definition)
    search = listed[-1]
    assert search["name"] == TOOL_SEARCH and "defer_loading" not in search
    assert search["input_schema"]["required"] == ["query"]
    assert all(d.get("defer_loading") for d in listed[:-1])


def test_openai_responses_server_groups_deferred_tools_by_toolset(catalog: ToolRegistry) -> None:
    listed = catalog.get_definitions(
        format="openai-responses", defer=True, always_loaded=["get_weather"]
    )
    for definition in listed:
        conforms(ToolParam, definition)
    assert listed[0]["name"] == "get_weather" and "defer_loading" not in listed[0]
    namespaces = [d for d in listed if d["type"] == "namespace"]
    for namespace in namespaces:
        conforms(NamespaceToolParam, namespace)
    assert [(n["name"], [t["name"] for t in n["tools"]]) for n in namespaces] == [
        ("files", ["read_file", "write_file"])
    ]
    assert all(t["defer_loading"] is True for t in namespaces[0]["tools"])
    assert listed[-1] == {"type": "tool_search"}
    conforms(ToolSearchToolParam, listed[-1])


def test_openai_responses_client_sends_only_pinned_and_the_search(catalog: ToolRegistry) -> None:
    listed = catalog.get_definitions(
        format="openai-responses", defer=True, always_loaded=["toolset:files"], search="client"
    )
    for definition in listed:
        conforms(ToolParam, definition)
    assert [d["name"] for d in listed[:-1]] == ["read_file", "write_file"]
    conforms(FunctionToolParam, listed[0])
    search = listed[-1]
    conforms(ToolSearchToolParam, search)
    assert search["type"] == "tool_search" and search["execution"] == "client"
    assert search["parameters"]["properties"]["query"]["type"] == "string"


@pytest.mark.parametrize("search", ["server", "client"])
def test_chat_completions_has_no_deferred_form_so_a_function_stands_in(
    catalog: ToolRegistry, search: Any
) -> None:
    listed = catalog.get_definitions(
        format="openai", defer=True, always_loaded=["read_file"], search=search
    )
    for definition in listed:
        conforms(ChatCompletionToolParam, definition)
    assert names(listed) == ["read_file", TOOL_SEARCH]


def test_gemini_gets_the_function_and_genai_parses_it(catalog: ToolRegistry) -> None:
    for fmt in ("gemini", "gemini-json-schema"):
        listed = catalog.get_definitions(format=fmt, defer=True, always_loaded=["read_file"])
        assert names(listed) == ["read_file", TOOL_SEARCH]
        for definition in listed:
            if fmt == "gemini-json-schema":  # the enums of gemini's Schema parse to Type members
                conforms(genai_types.FunctionDeclarationDict, definition)
            genai_types.FunctionDeclaration.model_validate(definition)
    parsed = genai_types.FunctionDeclaration.model_validate(listed[-1])
    assert parsed.name == TOOL_SEARCH


def test_mcp_gets_the_function(catalog: ToolRegistry) -> None:
    listed = catalog.get_definitions(format="mcp", defer=True)
    assert names(listed) == [TOOL_SEARCH]
    tool = mcp_types.Tool.model_validate(listed[0])
    assert tool.input_schema["properties"]["limit"]["maximum"] == 20


def test_a_hidden_tool_can_still_be_always_loaded(catalog: ToolRegistry) -> None:
    for fmt in FORMATS:
        listed = catalog.get_definitions(format=fmt, defer=True, always_loaded=["admin_reset"])
        assert "admin_reset" in names(listed), fmt


def test_unavailable_and_unknown_tools_are_not_offered(catalog: ToolRegistry) -> None:
    needs = schema("needs_key", "Uses a key.")
    catalog.register("needs_key", "files", needs, handler, requires_env=["NO_SUCH_VAR_X"])
    for fmt in FORMATS:
        listed = catalog.get_definitions(
            format=fmt, defer=True, always_loaded=["needs_key", "ghost"], search="server"
        )
        text = json.dumps(listed)
        assert "needs_key" not in text and "ghost" not in text, fmt


def test_a_registered_tool_search_gives_way_to_the_search_tool(catalog: ToolRegistry) -> None:
    catalog.register(TOOL_SEARCH, "mine", schema(TOOL_SEARCH, "My own search."), handler)
    listed = catalog.get_definitions(format="openai", defer=True, always_loaded=[TOOL_SEARCH])
    assert names(listed) == [TOOL_SEARCH]
    assert "My own search" not in json.dumps(listed)


def test_bad_arguments_are_refused(catalog: ToolRegistry) -> None:
    with pytest.raises(ValueError, match="search must be"):
        catalog.get_definitions(format="anthropic", defer=True, search="both")  # type: ignore[call-overload]
    with pytest.raises(TypeError, match="always_loaded"):
        catalog.get_definitions(format="anthropic", defer=True, always_loaded=[3])  # type: ignore[list-item]


def test_one_name_is_not_read_as_its_letters(catalog: ToolRegistry) -> None:
    listed = catalog.get_definitions(format="mcp", defer=True, always_loaded="read_file")
    assert names(listed) == ["read_file", TOOL_SEARCH]


def test_without_defer_the_options_change_nothing(catalog: ToolRegistry) -> None:
    assert catalog.get_definitions(format="anthropic") == catalog.get_definitions(
        format="anthropic", defer=False
    )
