"""toolreg.integrations.pydantic_ai with ``defer=True``: pydantic-ai's own ``defer_loading``
and tool search in a real Agent run, driven by a scripted model.

The scripted model is a ``FunctionModel`` without native tools (a plain
``FunctionModel`` claims them all), as most providers are, so pydantic-ai offers its
local ``search_tools`` function: the model calls it, the tool found is offered from
the next request on, and the model calls it.
"""

from __future__ import annotations

from typing import Any

from pydantic_ai import Agent
from pydantic_ai.capabilities import ToolSearch, keywords_search
from pydantic_ai.messages import (
    ModelMessage,
    ModelResponse,
    NativeToolSearchCallPart,
    NativeToolSearchReturnPart,
    TextPart,
    ToolCallPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.native_tools import AbstractNativeTool

from conftest import schema
from toolreg import ToolRegistry
from toolreg.integrations import pydantic_ai

SEARCH = "search_tools"  # pydantic-ai's local search function


class NoNativeSearch(FunctionModel):
    """A model without native tool search, as most providers are."""

    @classmethod
    def supported_native_tools(cls) -> frozenset[type[AbstractNativeTool]]:
        return frozenset()


class Scripted:
    """Searches with ``query``, calls ``tool`` with ``args`` once it is offered, then
    answers with what it returned; records the tools offered at each request."""

    def __init__(self, query: str, tool: str, args: dict[str, Any]) -> None:
        self.query, self.tool, self.args = query, tool, args
        self.offered: list[list[str]] = []
        self.returned: list[Any] = []

    def __call__(self, messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        offered = sorted(t.name for t in info.function_tools)
        self.offered.append(offered)
        if len(self.offered) == 1:
            call = ToolCallPart(SEARCH, {"queries": [self.query]}, tool_call_id="s1")
            return ModelResponse(parts=[call])
        if len(self.offered) == 2 and self.tool in offered:
            return ModelResponse(parts=[ToolCallPart(self.tool, self.args, tool_call_id="c1")])
        self.returned = [p for p in messages[-1].parts if p.part_kind == "tool-return"]
        return ModelResponse(parts=[TextPart("done")])


def run(tools: list[Any], model: Scripted, **agent: Any) -> None:
    assert Agent(NoNativeSearch(model), tools=tools, **agent).run_sync("go").output == "done"


def test_the_model_searches_then_calls_the_tool_found(host_registry: ToolRegistry) -> None:
    host_registry.register(
        "hidden_greet", "text", schema("hidden_greet"), lambda a: "x", searchable=False
    )
    tools = pydantic_ai.tools(host_registry, defer=True, always_loaded=["clock"])
    assert sorted(t.name for t in tools if t.defer_loading) == ["greet", "snap"]
    model = Scripted("greet", "greet", {"name": "Ada"})
    run(tools, model)

    assert model.offered[0] == ["clock", SEARCH]  # deferred tools are hidden
    assert "greet" in model.offered[1]
    assert "snap" not in model.offered[1]  # not found, still hidden
    (returned,) = model.returned
    assert (returned.tool_name, returned.content) == ("greet", "Hello, Ada!")
    assert not any("hidden_greet" in offered for offered in model.offered)


def test_toolregs_search_as_the_strategy(host_registry: ToolRegistry) -> None:
    host_registry.register(
        "hidden_greet", "text", schema("hidden_greet"), lambda a: "x", searchable=False
    )
    tools = pydantic_ai.tools(host_registry, defer=True, always_loaded=["clock"])
    # A word pydantic-ai's keyword match does not meet ("greet" is not "greetings").
    deferred = [t.tool_def for t in tools if t.defer_loading]
    assert keywords_search(None, ["greetings"], deferred) == []  # type: ignore[arg-type]
    model = Scripted("greetings", "greet", {"name": "Ada"})
    strategy = ToolSearch(strategy=pydantic_ai.tool_search(host_registry))
    run(tools, model, capabilities=[strategy])

    assert model.offered[0] == ["clock", SEARCH]
    (returned,) = model.returned
    assert returned.content == "Hello, Ada!"
    assert not any("hidden_greet" in offered for offered in model.offered)


def test_the_strategy_finds_only_what_pydantic_ai_deferred(host_registry: ToolRegistry) -> None:
    search = pydantic_ai.tool_search(host_registry)
    deferred = [t.tool_def for t in pydantic_ai.tools(host_registry, names=["snap"])]
    assert search(None, ["greet someone"], deferred) == []  # type: ignore[arg-type]
    assert search(None, ["screen snapshot", "snap"], deferred) == ["snap"]  # type: ignore[arg-type]


def test_a_searchable_false_tool_always_loaded_is_offered(host_registry: ToolRegistry) -> None:
    host_registry.register(
        "hidden_greet", "text", schema("hidden_greet"), lambda a: "x", searchable=False
    )
    tools = pydantic_ai.tools(host_registry, defer=True, always_loaded=["hidden_greet"])
    assert sorted((t.name, t.defer_loading) for t in tools) == [
        ("clock", True), ("greet", True), ("hidden_greet", False), ("snap", True)
    ]  # fmt: skip


def test_native_search_the_provider_runs(host_registry: ToolRegistry) -> None:
    """A model with native tool search (a plain ``FunctionModel`` claims it): the deferred
    tools go out withheld, the provider's search reveals one, the model calls it."""
    host_registry.register(
        "hidden_greet", "text", schema("hidden_greet"), lambda a: "x", searchable=False
    )
    visibility: list[dict[str, str]] = []
    returned: list[Any] = []

    def provider(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        request = info.model_request_parameters
        visibility.append(dict(request.tool_visibility))
        if len(visibility) > 1:
            returned.extend(p for p in messages[-1].parts if p.part_kind == "tool-return")
            return ModelResponse(parts=[TextPart("done")])
        # The provider's own search over the withheld tools, then the call.
        withheld = [name for name, seen in request.tool_visibility.items() if seen == "withheld"]
        found = [name for name in withheld if "greet" in name]
        return ModelResponse(
            parts=[
                NativeToolSearchCallPart(args={"queries": ["greet"]}, tool_call_id="ts1"),
                NativeToolSearchReturnPart(
                    content={"discovered_tools": [{"name": n} for n in found]},
                    tool_call_id="ts1",
                ),
                ToolCallPart("greet", {"name": "Ada"}, tool_call_id="c1"),
            ]
        )

    tools = pydantic_ai.tools(host_registry, defer=True, always_loaded=["clock"])
    assert Agent(FunctionModel(provider), tools=tools).run_sync("go").output == "done"
    assert visibility[0] == {"clock": "visible", "greet": "withheld", "snap": "withheld"}
    assert visibility[1]["greet"] != "withheld"
    assert [(r.tool_name, r.content) for r in returned] == [("greet", "Hello, Ada!")]
