"""toolreg.integrations.llm: real llm.Tools, called as llm's chain calls them."""

from __future__ import annotations

import base64
import json

import llm
import pytest

from conftest import PNG_BASE64
from toolreg import ToolRegistry
from toolreg.integrations import llm as toolreg_llm


def by_name(registry: ToolRegistry, **selection) -> dict[str, llm.Tool]:
    return {tool.name: tool for tool in toolreg_llm.tools(registry, **selection)}


def test_available_tools_become_llm_tools(host_registry: ToolRegistry) -> None:
    tools = by_name(host_registry)
    assert sorted(tools) == ["clock", "greet", "snap"]
    greet = tools["greet"]
    assert greet.input_schema["required"] == ["name"]
    assert greet.plugin == "toolreg"
    assert greet.implementation(name="Ada") == "Hello, Ada!"
    assert tools["clock"].implementation() == "tick"  # async handler, sync call


def test_calls_go_through_validation_and_hooks(host_registry: ToolRegistry) -> None:
    greet = by_name(host_registry, names=["greet"])["greet"]
    with pytest.raises(toolreg_llm.ToolCallFailed) as invalid:
        greet.implementation(name=["not", "a", "string"])
    assert json.loads(str(invalid.value))["error_type"] == "invalid_arguments"
    assert invalid.value.error_type == "invalid_arguments"
    with pytest.raises(toolreg_llm.ToolCallFailed, match="greeting Mallory is not allowed"):
        greet.implementation(name="Mallory")


def test_a_multimodal_result_becomes_tool_output_with_attachments(
    host_registry: ToolRegistry,
) -> None:
    output = by_name(host_registry)["snap"].implementation()
    assert isinstance(output, llm.ToolOutput)
    assert output.output == "the screen"
    (attachment,) = output.attachments
    assert attachment.resolve_type() == "image/png"
    assert attachment.content_bytes() == base64.b64decode(PNG_BASE64)
