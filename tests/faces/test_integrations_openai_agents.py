"""toolreg.integrations.openai_agents: real FunctionTools, invoked as the Runner does."""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any

import pytest
from agents import FunctionTool, ItemHelpers
from agents.tool_context import ToolContext
from openai.types.responses import ResponseFunctionToolCall

from conftest import PNG_BASE64
from toolreg import ToolRegistry
from toolreg.integrations import openai_agents


def invoke(tool: FunctionTool, arguments: dict[str, Any] | str) -> Any:
    raw = arguments if isinstance(arguments, str) else json.dumps(arguments)
    ctx = ToolContext(context=None, tool_name=tool.name, tool_call_id="call_1", tool_arguments=raw)
    return asyncio.run(tool.on_invoke_tool(ctx, raw))


def by_name(tools: list[FunctionTool]) -> dict[str, FunctionTool]:
    return {tool.name: tool for tool in tools}


def test_available_tools_become_strict_function_tools(host_registry: ToolRegistry) -> None:
    tools = by_name(openai_agents.tools(host_registry))
    assert sorted(tools) == ["clock", "greet", "snap"]  # secret is unavailable
    assert all(isinstance(t, FunctionTool) and t.strict_json_schema for t in tools.values())
    greet = tools["greet"]
    assert greet.description == "Greet someone."
    params = greet.params_json_schema
    assert params["required"] == ["name", "punctuation"]
    assert params["properties"]["punctuation"]["enum"] == ["!", ".", None]
    assert "default" not in json.dumps(params)


def test_the_models_null_for_an_optional_argument_lets_the_default_apply(
    host_registry: ToolRegistry,
) -> None:
    greet = by_name(openai_agents.tools(host_registry))["greet"]
    # Strict mode makes the model send every field; null means "not given".
    assert invoke(greet, {"name": "Ada", "punctuation": None}) == "Hello, Ada!"
    assert invoke(greet, {"name": "Ada", "punctuation": "."}) == "Hello, Ada."


def test_calls_go_through_validation_and_hooks(host_registry: ToolRegistry) -> None:
    greet = by_name(openai_agents.tools(host_registry))["greet"]
    invalid = json.loads(invoke(greet, {"name": 7, "punctuation": None}))
    assert invalid["error_type"] == "invalid_arguments"
    assert "greeting Mallory is not allowed" in invoke(greet, {"name": "Mallory"})
    assert json.loads(invoke(greet, '{"name": '))["error_type"] == "invalid_arguments"


def test_async_handlers_and_selection(host_registry: ToolRegistry) -> None:
    tools = openai_agents.tools(host_registry, toolsets=["media"], names=["clock"])
    assert sorted(t.name for t in tools) == ["clock", "snap"]
    assert invoke(by_name(tools)["clock"], {}) == "tick"


def test_a_multimodal_result_becomes_text_and_image_outputs(host_registry: ToolRegistry) -> None:
    snap = by_name(openai_agents.tools(host_registry))["snap"]
    output = invoke(snap, {})
    item = ItemHelpers.tool_call_output_item(
        ResponseFunctionToolCall(
            type="function_call", call_id="call_1", name="snap", arguments="{}"
        ),
        output,
    )
    assert item["output"] == [
        {"type": "input_text", "text": "the screen"},
        {"type": "input_image", "image_url": f"data:image/png;base64,{PNG_BASE64}"},
    ]


def test_a_schema_strict_mode_cannot_hold_falls_back_and_says_why(
    reg: ToolRegistry, caplog: pytest.LogCaptureFixture
) -> None:
    free_form = {
        "type": "object",
        "properties": {"metadata": {"type": "object", "description": "Anything."}},
    }
    reg.register("tag", "t", {"parameters": free_form}, lambda args: json.dumps(args))
    with caplog.at_level(logging.WARNING, logger="toolreg.integrations"):
        (tool,) = openai_agents.tools(reg)
    assert tool.strict_json_schema is False
    assert tool.params_json_schema == free_form
    assert "Tool tag is offered without strict mode" in caplog.text
    assert "parameters.metadata: a free-form object" in caplog.text
    assert json.loads(invoke(tool, {"metadata": {"a": 1}})) == {"metadata": {"a": 1}}


def test_strict_false_offers_the_schemas_as_registered(host_registry: ToolRegistry) -> None:
    greet = by_name(openai_agents.tools(host_registry, strict=False))["greet"]
    assert greet.strict_json_schema is False
    assert greet.params_json_schema["required"] == ["name"]
    assert invoke(greet, {"name": "Ada"}) == "Hello, Ada!"
