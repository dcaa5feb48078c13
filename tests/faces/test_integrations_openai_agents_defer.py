"""toolreg.integrations.openai_agents with ``defer=True``: the Responses API's hosted tool
search (``ToolSearchTool``, ``tool_namespace``, ``defer_loading``) in the SDK's own Runner.

The scripted model stands in for the Responses API: it reads the request as the SDK
writes it (``Converter.convert_tools``), answers the search itself from the deferred
definitions in that request, as the hosted search does, and then calls the tool found
in its namespace; the Runner runs that call.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from agents import (
    Agent,
    FunctionTool,
    ModelResponse,
    Runner,
    ToolSearchTool,
    Usage,
    set_trace_processors,
)
from agents.models.interface import Model
from agents.models.openai_responses import Converter
from openai.types.responses import (
    ResponseFunctionToolCall,
    ResponseOutputMessage,
    ResponseOutputText,
    ResponseToolSearchCall,
    ResponseToolSearchOutputItem,
)
from openai.types.responses.tool import NamespaceTool

from conftest import schema
from toolreg import ToolRegistry
from toolreg.integrations import openai_agents


class HostedSearch(Model):
    """Searches for ``wanted`` among the deferred tools it was sent, calls it with
    ``arguments``, then answers with what the tool returned."""

    def __init__(self, wanted: str, arguments: dict[str, Any]) -> None:
        self.wanted, self.arguments = wanted, arguments
        self.requests: list[list[dict[str, Any]]] = []
        self.outputs: list[str] = []

    async def get_response(self, system_instructions, input, *args: Any, **kwargs: Any):
        tools = kwargs["tools"] if "tools" in kwargs else args[1]
        wire = [dict(t) for t in Converter.convert_tools(tools, []).tools]
        self.requests.append(wire)
        outputs = [
            i for i in input if isinstance(i, dict) and i.get("type") == "function_call_output"
        ]
        if outputs:
            self.outputs.extend(o["output"] for o in outputs)
            text = ResponseOutputText(type="output_text", text="done", annotations=[])
            message = ResponseOutputMessage(
                id="m1", type="message", role="assistant", status="completed", content=[text]
            )
            return ModelResponse(output=[message], usage=Usage(), response_id=None)
        # The hosted search: the namespace whose deferred function is the one wanted.
        (namespace,) = [
            t for t in wire
            if t["type"] == "namespace"
            and any(f["name"] == self.wanted for f in t["tools"])
        ]  # fmt: skip
        found = {**namespace, "tools": [f for f in namespace["tools"] if f["name"] == self.wanted]}
        search = ResponseToolSearchCall(
            id="ts_1", type="tool_search_call", execution="server", status="completed",
            arguments={"query": self.wanted},
        )  # fmt: skip
        loaded = ResponseToolSearchOutputItem(
            id="tso_1", type="tool_search_output", execution="server", status="completed",
            tools=[NamespaceTool.model_validate(found)],
        )  # fmt: skip
        call = ResponseFunctionToolCall(
            type="function_call", call_id="call_1", name=self.wanted,
            namespace=namespace["name"], arguments=json.dumps(self.arguments),
        )  # fmt: skip
        return ModelResponse(output=[search, loaded, call], usage=Usage(), response_id=None)

    def stream_response(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError


@pytest.fixture(autouse=True, scope="module")
def no_trace_export() -> Iterator[None]:
    set_trace_processors([])
    yield


def visible(wire: list[dict[str, Any]]) -> list[str]:
    """What the model reads before a search: every tool not marked ``defer_loading``."""
    names = []
    for tool in wire:
        if tool["type"] == "namespace":
            names += [f["name"] for f in tool["tools"] if not f.get("defer_loading")]
        else:
            names.append(tool.get("name", tool["type"]))
    return names


def test_the_model_finds_a_deferred_tool_and_calls_it(host_registry: ToolRegistry) -> None:
    host_registry.register(
        "hidden_greet", "text", schema("hidden_greet"), lambda a: "x", searchable=False
    )
    tools = openai_agents.tools(host_registry, defer=True, always_loaded=["clock"])
    assert isinstance(tools[-1], ToolSearchTool)
    model = HostedSearch("greet", {"name": "Ada", "punctuation": None})
    result = Runner.run_sync(Agent(name="helper", model=model, tools=tools), "greet Ada")

    assert result.final_output == "done"
    assert model.outputs == ["Hello, Ada!"]
    first = model.requests[0]
    assert visible(first) == ["clock", "tool_search"]
    namespaces = {t["name"]: [f["name"] for f in t["tools"]] for t in first if "tools" in t}
    assert namespaces == {"text": ["greet"], "media": ["snap"]}
    assert "hidden_greet" not in json.dumps(model.requests)  # searchable=False never surfaces
    assert "secret" not in json.dumps(model.requests)  # unavailable


def test_always_loaded_toolsets_and_a_searchable_false_tool_named_there(
    host_registry: ToolRegistry,
) -> None:
    host_registry.register(
        "hidden_greet", "text", schema("hidden_greet"), lambda a: "x", searchable=False
    )
    tools = openai_agents.tools(
        host_registry, defer=True, always_loaded=["toolset:media", "hidden_greet"]
    )
    plain = [t for t in tools if isinstance(t, FunctionTool) and not t.defer_loading]
    assert sorted(t.name for t in plain) == ["hidden_greet", "snap"]
    deferred = sorted(t.name for t in tools if isinstance(t, FunctionTool) and t.defer_loading)
    assert deferred == ["clock", "greet"]


def test_nothing_deferred_means_no_search_tool(host_registry: ToolRegistry) -> None:
    tools = openai_agents.tools(host_registry, defer=True, always_loaded=["toolset:text", "snap"])
    assert all(isinstance(t, FunctionTool) and not t.defer_loading for t in tools)
    assert sorted(t.name for t in tools) == ["clock", "greet", "snap"]


def test_a_tool_named_as_its_toolset_is_deferred_at_the_top_level(reg: ToolRegistry) -> None:
    reg.register("weather", "weather", schema("weather"), lambda a: "sunny")
    reg.register("clock", "time", schema("clock"), lambda a: "tick")
    tools = openai_agents.tools(reg, defer=True)
    model = HostedSearch("clock", {})
    Runner.run_sync(Agent(name="helper", model=model, tools=tools), "what time is it")
    assert model.outputs == ["tick"]
    wire = model.requests[0]
    assert {"type": "function", "name": "weather"}.items() <= wire[0].items()
    assert wire[0]["defer_loading"] is True


def test_a_run_survives_every_deferred_tool_becoming_unavailable(
    reg: ToolRegistry, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TOOLREG_TEST_DEFER", "1")
    reg.register("clock", "time", schema("clock"), lambda a: "tick")
    for name in ("greet", "wave"):
        reg.register(name, "text", schema(name), lambda a: "hi", requires_env="TOOLREG_TEST_DEFER")
    tools = openai_agents.tools(reg, defer=True, always_loaded=["clock"])
    monkeypatch.delenv("TOOLREG_TEST_DEFER")
    model = HostedSearch("greet", {})
    # The SDK refuses a ToolSearchTool with nothing to search: the first deferred tool
    # stays listed, and a call to it fails.
    result = Runner.run_sync(Agent(name="helper", model=model, tools=tools), "greet")
    assert result.final_output == "done"
    namespaces = [t for t in model.requests[0] if t["type"] == "namespace"]
    assert [[f["name"] for f in t["tools"]] for t in namespaces] == [["greet"]]
    (output,) = model.outputs
    assert json.loads(output)["error_type"] == "unavailable"
    assert "TOOLREG_TEST_DEFER" in json.loads(output)["error"]


def test_an_ask_on_a_deferred_tool_pauses_and_runs_once_approved(
    host_registry: ToolRegistry,
) -> None:
    host_registry.set_permissions({"ask": ["greet"]})
    tools = openai_agents.tools(host_registry, defer=True, always_loaded=["clock"])
    model = HostedSearch("greet", {"name": "Ada", "punctuation": None})
    agent = Agent(name="helper", model=model, tools=tools)
    result = Runner.run_sync(agent, "greet Ada")
    [item] = result.interruptions
    assert (item.tool_name, item.tool_namespace) == ("greet", "text")
    assert model.outputs == []
    state = result.to_state()
    state.approve(item)
    resumed = Runner.run_sync(agent, state)
    assert model.outputs == ["Hello, Ada!"]
    assert resumed.final_output == "done"
