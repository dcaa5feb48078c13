"""ToolSession: search, then the found tools offered and called; hostile searches."""

from __future__ import annotations

import asyncio
import json
import threading
from typing import Any

import pytest
from anthropic.types import ToolResultBlockParam, ToolUnionParam
from openai.types.responses import ResponseInputItemParam, ToolParam
from openai.types.responses.response_tool_search_output_item_param_param import (
    ResponseToolSearchOutputItemParamParam,
)

from conftest import conforms
from toolreg import ToolRegistry, ToolSession, is_tool_error
from toolreg._definitions.deferred import TOOL_SEARCH, definition_name


def schema(name: str, description: str) -> dict[str, Any]:
    properties = {"city": {"type": "string", "description": "A city."}}
    parameters = {"type": "object", "properties": properties}
    return {"name": name, "description": description, "parameters": parameters}


def echo(name: str) -> Any:
    return lambda args: json.dumps({"tool": name, **args})


@pytest.fixture
def catalog(reg: ToolRegistry) -> ToolRegistry:
    tools = {
        "read_file": ("files", "Read a text file from the workspace."),
        "get_weather": ("weather", "Current weather conditions for a city."),
        "send_email": ("mail", "Send an email message to a recipient."),
        "convert_currency": ("money", "Convert an amount between currencies."),
    }
    for name, (toolset, description) in tools.items():
        reg.register(name, toolset, schema(name, description), echo(name))
    reg.register(
        "admin_reset", "admin", schema("admin_reset", "Reset the weather station."), echo("x"),
        searchable=False,
    )  # fmt: skip
    return reg


def offered(session: ToolSession, fmt: Any = "openai") -> list[str]:
    listed = session.definitions(fmt)
    return [definition_name(d) for d in listed if d.get("type") != "tool_search"]


def test_walk_search_then_the_found_tool_is_offered_and_called(catalog: ToolRegistry) -> None:
    session = catalog.session(always_loaded=["read_file"])
    assert offered(session) == ["read_file", TOOL_SEARCH]

    answer = json.loads(str(session.dispatch(TOOL_SEARCH, {"query": "weather in Paris"})))
    assert [t["name"] for t in answer["tools"]] == ["get_weather"]
    assert answer["tools"][0] == {
        "name": "get_weather",
        "toolset": "weather",
        "description": "Current weather conditions for a city.",
    }
    assert session.found == ("get_weather",)
    assert offered(session) == ["read_file", "get_weather", TOOL_SEARCH]

    result = session.dispatch("get_weather", {"city": "Paris"})
    assert json.loads(str(result)) == {"tool": "get_weather", "city": "Paris"}


def test_arguments_as_json_text_and_async(catalog: ToolRegistry) -> None:
    session = catalog.session()
    answer = asyncio.run(session.adispatch(TOOL_SEARCH, '{"query": "send an email", "limit": 1}'))
    assert [t["name"] for t in json.loads(str(answer))["tools"]] == ["send_email"]
    result = asyncio.run(session.adispatch("send_email", {"city": "x"}))
    assert json.loads(str(result))["tool"] == "send_email"


def test_a_tool_not_offered_yet_is_still_dispatched(catalog: ToolRegistry) -> None:
    session = catalog.session()
    assert json.loads(str(session.dispatch("convert_currency", {})))["tool"] == "convert_currency"
    assert is_tool_error(session.dispatch("no_such_tool", {}))
    assert session.found == ()  # calling is not finding


def test_hidden_tools_are_never_found_but_may_be_always_loaded(catalog: ToolRegistry) -> None:
    session = catalog.session()
    session.dispatch(TOOL_SEARCH, {"query": "reset the weather station"})
    assert "admin_reset" not in session.found
    pinned = catalog.session(always_loaded=["admin_reset"])
    assert "admin_reset" in offered(pinned)


def test_nothing_found_says_so(catalog: ToolRegistry) -> None:
    session = catalog.session()
    answer = json.loads(str(session.dispatch(TOOL_SEARCH, {"query": "quantum chromodynamics"})))
    assert answer["tools"] == [] and "try other words" in answer["message"]
    assert session.found == ()


def test_deregistered_tools_drop_out(catalog: ToolRegistry) -> None:
    session = catalog.session()
    session.dispatch(TOOL_SEARCH, {"query": "weather in Paris"})
    assert "get_weather" in offered(session)
    catalog.deregister("get_weather")
    assert "get_weather" not in offered(session)
    assert session.found == ()


def test_unavailable_tools_are_neither_found_nor_offered(catalog: ToolRegistry) -> None:
    catalog.register(
        "stock_quote", "money", schema("stock_quote", "Stock price quote for a ticker."),
        echo("q"), requires_env=["TOOLREG_TEST_NO_SUCH_KEY"],
    )  # fmt: skip
    session = catalog.session(always_loaded=["stock_quote"])
    session.dispatch(TOOL_SEARCH, {"query": "stock price quote for a ticker"})
    assert "stock_quote" not in session.found
    assert "stock_quote" not in offered(session)


def test_the_toolsets_bound_the_search(catalog: ToolRegistry) -> None:
    session = catalog.session(toolsets=["mail"])
    answer = json.loads(str(session.dispatch(TOOL_SEARCH, {"query": "weather in Paris"})))
    assert answer["tools"] == []


@pytest.mark.parametrize(
    ("arguments", "says"),
    [
        ({"query": "weather " * 20_000}, "at most 2000"),
        ("x" * 100_000, "too long"),
        ({"query": "weather", "limit": 10**9}, "from 1 to 20"),
        ({"query": "weather", "limit": 0}, "from 1 to 20"),
        ({"query": "weather", "limit": True}, "from 1 to 20"),
        ({"query": "weather", "limit": "5"}, "from 1 to 20"),
        (["weather"], "expected an object, got list"),
        (42, "expected an object, got int"),
        ("not json", "not valid JSON"),
        ({}, "'query' must be"),
        ({"query": "   "}, "'query' must be"),
        ({"query": 5}, "'query' must be"),
        ({"query": "weather", "x" * 10_000: 1}, "unknown argument"),
    ],
)
def test_hostile_searches_are_clear_tool_errors(
    catalog: ToolRegistry, arguments: Any, says: str
) -> None:
    session = catalog.session()
    result = session.dispatch(TOOL_SEARCH, arguments)
    assert is_tool_error(result)
    error = json.loads(str(result))
    assert error["error_type"] == "invalid_arguments" and says in error["error"]
    assert len(str(result)) < 500  # the hostile input is not echoed back
    assert session.found == ()


def test_the_session_cannot_outgrow_the_registry(catalog: ToolRegistry) -> None:
    session = catalog.session()
    for _ in range(50):
        for query in ("weather", "email", "file", "currency"):
            session.dispatch(TOOL_SEARCH, {"query": query, "limit": 20})
    assert len(session.found) <= len(catalog.get_all_tool_names())


def test_threads_of_one_conversation_share_it(catalog: ToolRegistry) -> None:
    session = catalog.session()
    queries = ["weather", "email", "file", "currency"] * 25

    def run(query: str) -> None:
        session.dispatch(TOOL_SEARCH, {"query": query})
        session.definitions("anthropic")

    threads = [threading.Thread(target=run, args=(q,)) for q in queries]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    expected = {"get_weather", "send_email", "read_file", "convert_currency"}
    assert set(session.found) == expected


def test_anthropic_native_search_returns_tool_references(catalog: ToolRegistry) -> None:
    session = catalog.session(always_loaded=["read_file"])
    listed = session.definitions("anthropic", native=True)
    for definition in listed:
        conforms(ToolUnionParam, definition)
    deferred = {d["name"] for d in listed if d.get("defer_loading")}
    assert deferred == {"get_weather", "send_email", "convert_currency"}
    block = session.search_result({"query": "weather in Paris"}, "anthropic", call_id="toolu_1")
    conforms(ToolResultBlockParam, block)
    assert block["content"] == [{"type": "tool_reference", "tool_name": "get_weather"}]
    # Found: offered in full from now on.
    listed = session.definitions("anthropic", native=True)
    assert not any(d.get("defer_loading") for d in listed if d["name"] == "get_weather")
    empty = session.search_result({"query": "quantum chromodynamics"}, "anthropic", call_id="t2")
    conforms(ToolResultBlockParam, empty)
    assert empty["content"][0]["type"] == "text"
    bad = session.search_result({"limit": 3}, "anthropic", call_id="t3")
    conforms(ToolResultBlockParam, bad)
    assert bad["is_error"] is True


def test_openai_responses_native_search_returns_a_tool_search_output(
    catalog: ToolRegistry,
) -> None:
    session = catalog.session()
    listed = session.definitions("openai-responses", native=True)
    for definition in listed:
        conforms(ToolParam, definition)
    assert listed == [listed[-1]] and listed[-1]["execution"] == "client"
    item = session.search_result({"query": "send an email"}, "openai-responses", call_id="c1")
    conforms(ResponseToolSearchOutputItemParamParam, item)
    conforms(ResponseInputItemParam, item)
    assert [t["name"] for t in item["tools"]] == ["send_email"]


def test_other_formats_answer_with_their_tool_result(catalog: ToolRegistry) -> None:
    session = catalog.session()
    part = session.search_result({"query": "weather"}, "gemini", call_id="g1")
    response = part["function_response"]
    assert response["name"] == TOOL_SEARCH
    assert [t["name"] for t in response["response"]["tools"]] == ["get_weather"]


def test_bad_always_loaded_fails_when_made(catalog: ToolRegistry) -> None:
    with pytest.raises(TypeError, match="always_loaded"):
        catalog.session(always_loaded=[None])  # type: ignore[list-item]


def test_a_session_names_its_registry_and_it_cannot_be_swapped():
    from toolreg import ToolRegistry

    reg = ToolRegistry()
    session = reg.session()
    assert session.registry is reg
    with pytest.raises(AttributeError):
        session.registry = ToolRegistry()  # type: ignore[misc]
