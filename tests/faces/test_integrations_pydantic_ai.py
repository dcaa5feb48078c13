"""toolreg.integrations.pydantic_ai: real Tools in a real Agent run, driven by a scripted model."""

from __future__ import annotations

import base64
import json
from typing import Any

from pydantic_ai import Agent, BinaryContent
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from conftest import PNG_BASE64
from toolreg import ToolRegistry
from toolreg.integrations import pydantic_ai


def run(registry: ToolRegistry, tool: str, args: dict[str, Any]) -> tuple[list[Any], AgentInfo]:
    """One agent run whose model calls ``tool`` once; returns what the tool gave back."""
    seen: dict[str, Any] = {}

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        seen["info"] = info
        if len(messages) == 1:
            return ModelResponse(parts=[ToolCallPart(tool, args, tool_call_id="call_1")])
        seen["returned"] = [part for part in messages[-1].parts]
        return ModelResponse(parts=[TextPart("done")])

    agent = Agent(FunctionModel(model), tools=pydantic_ai.tools(registry))
    assert agent.run_sync("go").output == "done"
    return seen["returned"], seen["info"]


def tool_return(parts: list[Any], outcome: str = "success") -> Any:
    (returned,) = [p for p in parts if p.part_kind == "tool-return"]
    assert returned.outcome == outcome, returned
    return returned.content


def test_the_model_sees_the_available_tools_with_their_schemas(host_registry) -> None:
    _, info = run(host_registry, "clock", {})
    tools = {t.name: t for t in info.function_tools}
    assert sorted(tools) == ["clock", "greet", "snap"]
    assert tools["greet"].description == "Greet someone."
    assert tools["greet"].parameters_json_schema["required"] == ["name"]


def test_tool_calls_dispatch_through_validation_and_hooks(host_registry) -> None:
    assert tool_return(run(host_registry, "greet", {"name": "Ada"})[0]) == "Hello, Ada!"
    assert tool_return(run(host_registry, "clock", {})[0]) == "tick"
    blocked = tool_return(run(host_registry, "greet", {"name": "Mallory"})[0], "failed")
    assert "greeting Mallory is not allowed" in blocked


def test_invalid_arguments_ask_the_model_to_retry(host_registry) -> None:
    # ModelRetry: pydantic-ai sends the error back as a retry, within the tool's retry budget.
    retry = tool_return(run(host_registry, "greet", {"name": 1})[0], "retried")
    assert json.loads(retry)["error_type"] == "invalid_arguments"


def test_any_other_tool_error_is_a_failed_tool_result(reg) -> None:
    # ToolFailed: the model sees a failed result (its provider's error channel), not a retry.
    reg.register("boom", "t", {"parameters": {"type": "object"}}, lambda args: 1 / 0)
    failed = json.loads(tool_return(run(reg, "boom", {})[0], "failed"))
    assert failed["error"] == "Tool execution failed: ZeroDivisionError: division by zero"


def test_a_multimodal_result_reaches_the_model_as_binary_content(host_registry) -> None:
    parts = run(host_registry, "snap", {})[0]
    images = [
        item
        for part in parts
        for item in (part.content if isinstance(part.content, list) else [part.content])
        if isinstance(item, BinaryContent)
    ]
    assert [(i.media_type, i.data) for i in images] == [("image/png", base64.b64decode(PNG_BASE64))]
    assert "the screen" in json.dumps([str(p.content) for p in parts])


def test_availability_changes_show_up_without_rebuilding(host_registry, monkeypatch) -> None:
    monkeypatch.setenv("TOOLREG_TEST_UNSET", "1")
    tools = pydantic_ai.tools(host_registry)  # secret is available now
    seen: list[list[str]] = []

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        seen.append(sorted(t.name for t in info.function_tools))
        return ModelResponse(parts=[TextPart("done")])

    agent = Agent(FunctionModel(model), tools=tools)
    agent.run_sync("go")
    monkeypatch.delenv("TOOLREG_TEST_UNSET")
    agent.run_sync("go")
    assert seen == [["clock", "greet", "secret", "snap"], ["clock", "greet", "snap"]]
