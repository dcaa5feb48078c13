"""toolreg.integrations.llm with a session: ``tool_search`` in a host's loop over llm's own
conversation, reading ``tools(session=...)`` again for each prompt, with scripted models.

llm has no deferred loading and a chain keeps its first tools, so the host runs the
loop (``execute_tool_calls``, then a prompt with the results and the tools now).
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import llm
import pytest
from test_integrations_llm_chains import llm_models

from conftest import schema
from toolreg import ToolRegistry, ToolSession
from toolreg.integrations import llm as toolreg_llm


class Scripted:
    """Searches with ``query``, calls the first tool found with ``args``, then says done;
    records the tools offered at each prompt."""

    def __init__(self, query: str, args: dict[str, Any]) -> None:
        self.query, self.args = query, args
        self.offered: list[list[str]] = []
        self.results: list[llm.ToolResult] = []

    def reply(self, prompt: llm.Prompt, response: Any) -> str:
        offered = [tool.name for tool in prompt.tools]
        self.offered.append(offered)
        if not prompt.tool_results:
            search = llm.ToolCall(name="tool_search", arguments={"query": self.query})
            response.add_tool_call(search)
            return ""
        self.results.extend(prompt.tool_results)
        (last,) = prompt.tool_results
        if last.name != "tool_search":
            return "done"
        found = json.loads(last.output)["tools"][0]["name"]
        assert found in offered, "the tool found is offered with this prompt"
        response.add_tool_call(llm.ToolCall(name=found, arguments=self.args, tool_call_id="c1"))
        return ""


SyncModel, AsyncModel = llm_models(Scripted)


def registry_with_a_hidden_tool(host_registry: ToolRegistry) -> ToolSession:
    host_registry.register(
        "hidden_greet", "text", schema("hidden_greet"), lambda a: "x", searchable=False
    )
    return host_registry.session(always_loaded=["clock"])


def check(model: Scripted) -> None:
    assert model.offered[0] == ["clock", "tool_search"]
    assert model.offered[1] == ["clock", "greet", "tool_search"]
    assert not any("hidden_greet" in offered for offered in model.offered)
    search, greeted = model.results
    assert "hidden_greet" not in search.output
    assert (greeted.name, greeted.output, greeted.exception) == ("greet", "Hello, Ada!", None)


def test_the_model_searches_then_calls_the_tool_found(host_registry: ToolRegistry) -> None:
    session = registry_with_a_hidden_tool(host_registry)
    model = SyncModel("greet someone", {"name": "Ada"})
    conversation = model.conversation()
    response = conversation.prompt("go", tools=toolreg_llm.tools(session=session))
    while results := response.execute_tool_calls():
        tools = toolreg_llm.tools(session=session)
        response = conversation.prompt("", tools=tools, tool_results=results)
    assert response.text() == "done"
    check(model)


def test_the_same_with_async_tools(host_registry: ToolRegistry) -> None:
    session = registry_with_a_hidden_tool(host_registry)
    model = AsyncModel("greet someone", {"name": "Ada"})

    async def main() -> str:
        conversation = model.conversation()
        response = conversation.prompt("go", tools=toolreg_llm.async_tools(session=session))
        while results := await response.execute_tool_calls():
            tools = toolreg_llm.async_tools(session=session)
            response = conversation.prompt("", tools=tools, tool_results=results)
        return await response.text()

    assert asyncio.run(main()) == "done"
    check(model)


def test_a_chain_keeps_its_first_tools(host_registry: ToolRegistry) -> None:
    """Why the loop: within one chain the tool found is not there to call."""
    session = registry_with_a_hidden_tool(host_registry)
    model = SyncModel("greet someone", {"name": "Ada"})
    with pytest.raises(AssertionError, match="offered with this prompt"):
        model.chain("go", tools=toolreg_llm.tools(session=session)).text()
