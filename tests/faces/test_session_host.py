"""A host's deferred loop through public names only, each turn's request built from the SDKs'
own types: search, see the tool offered, call it, send the result back."""

from __future__ import annotations

import json
from typing import Any

from anthropic.types import ToolResultBlockParam, ToolUnionParam
from google.genai import types

import toolreg
from conftest import conforms
from toolreg import ToolRegistry, tool_result_message


def make_registry() -> ToolRegistry:
    reg = ToolRegistry()
    for index in range(200):  # a catalog the model should not see whole
        name = f"filler_{index}"
        schema = {"description": f"Filler tool number {index} for ledger row {index}."}
        reg.register(name, "filler", {**schema, "parameters": {"type": "object"}}, lambda a: "")
    parameters = {"type": "object", "properties": {"city": {"type": "string"}}}
    reg.register(
        "get_weather",
        "weather",
        {"description": "Current weather conditions for a city.", "parameters": parameters},
        lambda args: json.dumps({"city": args["city"], "sky": "clear"}),
    )
    return reg


def declarations(session: toolreg.ToolSession) -> list[types.FunctionDeclaration]:
    return [types.FunctionDeclaration.model_validate(d) for d in session.definitions("gemini")]


def test_a_gemini_host_searches_then_calls_what_it_found() -> None:
    session = make_registry().session()
    assert [d.name for d in declarations(session)] == ["tool_search"]

    # Turn 1: the model asks for a search.
    call = types.FunctionCall(name="tool_search", args={"query": "weather in Lima"}, id="c1")
    answer = session.dispatch(call.name or "", call.args or {})
    part = types.Part.model_validate(
        tool_result_message(answer, "gemini", call_id=call.id, name=call.name)
    )
    assert part.function_response is not None and part.function_response.response is not None
    assert part.function_response.response["tools"][0]["name"] == "get_weather"

    # Turn 2: the tool found is offered, and its call runs.
    assert [d.name for d in declarations(session)] == ["get_weather", "tool_search"]
    result = session.dispatch("get_weather", {"city": "Lima"})
    assert json.loads(str(result)) == {"city": "Lima", "sky": "clear"}


def test_an_anthropic_host_loads_the_found_tool_by_reference() -> None:
    session = make_registry().session()
    first: list[Any] = session.definitions("anthropic", native=True)
    for definition in first:
        conforms(ToolUnionParam, definition)
    loaded = [d["name"] for d in first if not d.get("defer_loading")]
    assert loaded == ["tool_search"]  # 201 tools deferred, one read

    block = session.search_result({"query": "weather in Lima"}, "anthropic", call_id="toolu_1")
    conforms(ToolResultBlockParam, block)
    assert {"type": "tool_reference", "tool_name": "get_weather"} in block["content"]
    after = session.definitions("anthropic", native=True)
    loaded = [d["name"] for d in after if not d.get("defer_loading")]
    assert loaded == ["get_weather", "tool_search"]
