"""toolreg.integrations.langchain: real StructuredTools, invoked with a model's ToolCall."""

from __future__ import annotations

import asyncio
import json

import pytest
from langchain_core.messages import ToolMessage
from langchain_core.tools import StructuredTool

from conftest import PNG_BASE64
from toolreg import ToolRegistry
from toolreg.integrations import langchain


def call(name: str, args: dict) -> dict:
    return {"type": "tool_call", "id": "call_1", "name": name, "args": args}


def by_name(registry: ToolRegistry, **selection) -> dict[str, StructuredTool]:
    return {tool.name: tool for tool in langchain.tools(registry, **selection)}


def test_available_tools_become_structured_tools(host_registry: ToolRegistry) -> None:
    tools = by_name(host_registry)
    assert sorted(tools) == ["clock", "greet", "snap"]
    greet = tools["greet"]
    assert greet.description == "Greet someone."
    assert greet.tool_call_schema["properties"]["name"]["description"] == "Who to greet."
    message = greet.invoke(call("greet", {"name": "Ada"}))
    assert isinstance(message, ToolMessage)
    assert (message.content, message.tool_call_id) == ("Hello, Ada!", "call_1")


def test_calls_go_through_validation_and_hooks(host_registry: ToolRegistry) -> None:
    greet = by_name(host_registry)["greet"]
    invalid = json.loads(greet.invoke({"name": "Ada", "shout": True}))
    assert invalid["error_type"] == "invalid_arguments"
    assert "greeting Mallory is not allowed" in greet.invoke({"name": "Mallory"})


def test_ainvoke_uses_adispatch(host_registry: ToolRegistry) -> None:
    tools = by_name(host_registry, toolsets=["text"])
    assert sorted(tools) == ["clock", "greet"]
    assert asyncio.run(tools["clock"].ainvoke({})) == "tick"
    assert asyncio.run(tools["greet"].ainvoke({"name": "Ada"})) == "Hello, Ada!"


def test_a_multimodal_result_becomes_standard_content_blocks(host_registry: ToolRegistry) -> None:
    message = by_name(host_registry)["snap"].invoke(call("snap", {}))
    assert message.content == [
        {"type": "text", "text": "the screen"},
        {"type": "image", "base64": PNG_BASE64, "mime_type": "image/png"},
    ]
    assert [block["type"] for block in message.content_blocks] == ["text", "image"]


@pytest.mark.parametrize("use_async", [False, True])
def test_a_tool_error_is_a_tool_message_with_status_error(
    host_registry: ToolRegistry, use_async: bool
) -> None:
    greet = by_name(host_registry)["greet"]

    def run(args: dict) -> ToolMessage:
        if use_async:
            return asyncio.run(greet.ainvoke(call("greet", args)))
        return greet.invoke(call("greet", args))

    invalid = run({"name": 7})
    assert isinstance(invalid, ToolMessage)
    assert invalid.status == "error"
    assert json.loads(invalid.content)["error_type"] == "invalid_arguments"
    blocked = run({"name": "Mallory"})
    assert blocked.status == "error"
    assert "greeting Mallory is not allowed" in blocked.content
    assert run({"name": "Ada"}).status == "success"
