"""toolreg.integrations.langchain with a session: ``tool_search`` in a host's loop around a
real LangChain chat model (scripted), which binds ``tools(session=...)`` before each call.

LangChain has no deferred loading: the tools found are offered from the next model
call on, because the host reads the session's tools again.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.utils.function_calling import convert_to_openai_tool

from conftest import schema
from toolreg import ToolRegistry
from toolreg.integrations import langchain


class Scripted(BaseChatModel):
    """Searches with ``query``, then calls the first tool found with ``args`` once it
    is bound, then says done; records the tools bound at each call."""

    query: str
    args: dict[str, Any]
    offered: list[list[str]] = []

    @property
    def _llm_type(self) -> str:
        return "scripted"

    def bind_tools(self, tools: Any, **kwargs: Any) -> Any:
        return self.bind(tools=[convert_to_openai_tool(t) for t in tools], **kwargs)

    def _generate(self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None,
                  **kwargs: Any) -> ChatResult:  # fmt: skip
        offered = [t["function"]["name"] for t in kwargs.get("tools", [])]
        self.offered.append(offered)
        last = messages[-1]
        if isinstance(last, HumanMessage):
            call = {"name": "tool_search", "args": {"query": self.query}, "id": "s1"}
            message = AIMessage(content="", tool_calls=[call])
        elif isinstance(last, ToolMessage) and last.name == "tool_search":
            (found, *_) = [t["name"] for t in json.loads(str(last.content))["tools"]]
            assert found in offered, "the tool found is bound for this call"
            message = AIMessage(
                content="", tool_calls=[{"name": found, "args": self.args, "id": "c1"}]
            )
        else:
            message = AIMessage(content="done")
        return ChatResult(generations=[ChatGeneration(message=message)])


def converse(model: Scripted, session: Any) -> list[BaseMessage]:
    """A host's loop: bind the session's tools, call the model, run its tool calls."""
    messages: list[BaseMessage] = [HumanMessage("go")]
    for _ in range(5):
        tools = {t.name: t for t in langchain.tools(session=session)}
        reply = model.bind_tools(list(tools.values())).invoke(messages)
        messages.append(reply)
        if not reply.tool_calls:
            return messages
        messages.extend(tools[call["name"]].invoke({**call, "type": "tool_call"})
                        for call in reply.tool_calls)  # fmt: skip
    raise AssertionError("the loop did not end")


def test_the_model_searches_then_calls_the_tool_found(host_registry: ToolRegistry) -> None:
    host_registry.register(
        "hidden_greet", "text", schema("hidden_greet"), lambda a: "x", searchable=False
    )
    session = host_registry.session(always_loaded=["clock"])
    model = Scripted(query="greet someone", args={"name": "Ada"}, offered=[])
    messages = converse(model, session)

    assert model.offered[0] == ["clock", "tool_search"]
    assert model.offered[1] == ["clock", "greet", "tool_search"]
    assert not any("hidden_greet" in offered for offered in model.offered)
    search, result = [m for m in messages if isinstance(m, ToolMessage)]
    assert "hidden_greet" not in str(search.content)
    assert (result.name, result.content, result.status) == ("greet", "Hello, Ada!", "success")
    assert messages[-1].content == "done"


def test_session_and_a_selection_do_not_mix(host_registry: ToolRegistry) -> None:
    session = host_registry.session()
    with pytest.raises(TypeError, match="registry.session"):
        langchain.tools(session=session, toolsets=["text"])
