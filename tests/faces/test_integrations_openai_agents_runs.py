"""toolreg.integrations.openai_agents in the SDK's own Runner, driven by a scripted model.

A tool error takes the SDK's failure path: the model reads the tool's
``failure_error_function`` text, and the tool's span is an error in the trace.
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
    RunConfig,
    Runner,
    Usage,
    UserError,
    default_tool_error_function,
    set_trace_processors,
)
from agents.models.interface import Model
from agents.tracing import TracingProcessor
from agents.tracing.processors import default_processor
from openai.types.responses import (
    ResponseFunctionToolCall,
    ResponseOutputMessage,
    ResponseOutputText,
)

from toolreg import ToolRegistry
from toolreg.integrations import openai_agents


class Scripted(Model):
    """Calls ``tool`` with ``arguments`` once, then answers "done"; keeps what it read
    (``seen``) and the tools it was offered at each turn (``offered``)."""

    def __init__(self, tool: str, arguments: dict[str, Any]) -> None:
        self.tool, self.arguments = tool, arguments
        self.seen: list[Any] = []
        self.offered: list[list[str]] = []

    async def get_response(self, system_instructions, input, *args: Any, **kwargs: Any):
        tools = kwargs["tools"] if "tools" in kwargs else args[1]
        self.offered.append(sorted(tool.name for tool in tools))
        outputs = [
            i for i in input if isinstance(i, dict) and i.get("type") == "function_call_output"
        ]
        if not outputs:
            call = ResponseFunctionToolCall(
                type="function_call", call_id="call_1", name=self.tool,
                arguments=json.dumps(self.arguments),
            )  # fmt: skip
            return ModelResponse(output=[call], usage=Usage(), response_id=None)
        self.seen.extend(o["output"] for o in outputs)
        text = ResponseOutputText(type="output_text", text="done", annotations=[])
        message = ResponseOutputMessage(
            id="m1", type="message", role="assistant", status="completed", content=[text]
        )
        return ModelResponse(output=[message], usage=Usage(), response_id=None)

    def stream_response(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError


class Spans(TracingProcessor):
    def __init__(self) -> None:
        self.ended: list[Any] = []

    def on_trace_start(self, trace: Any) -> None: ...
    def on_trace_end(self, trace: Any) -> None: ...
    def on_span_start(self, span: Any) -> None: ...
    def on_span_end(self, span: Any) -> None:
        self.ended.append(span)

    def shutdown(self) -> None: ...
    def force_flush(self) -> None: ...

    def tool_span(self, name: str) -> Any:
        """The span of the last call of tool ``name``."""
        return [
            s for s in self.ended
            if s.span_data.type == "function" and s.span_data.name == name
        ][-1]  # fmt: skip


@pytest.fixture(autouse=True, scope="module")
def no_trace_export() -> Iterator[None]:
    """The SDK's default processor would export these runs' traces from a thread of
    its own, long after, and warn there is no API key into whatever runs then."""
    set_trace_processors([])
    yield
    set_trace_processors([default_processor()])


@pytest.fixture
def spans() -> Iterator[Spans]:
    processor = Spans()
    set_trace_processors([processor])
    yield processor
    set_trace_processors([])


def run(tools: list[FunctionTool], tool: str, arguments: dict[str, Any]) -> Scripted:
    model = Scripted(tool, arguments)
    agent = Agent(name="helper", model=model, tools=tools)
    result = Runner.run_sync(agent, "go", run_config=RunConfig(tracing_disabled=False))
    assert result.final_output == "done"
    return model


def test_a_tool_error_tells_the_model_and_marks_the_tools_span(
    host_registry: ToolRegistry, spans: Spans
) -> None:
    model = run(openai_agents.tools(host_registry), "greet", {"name": 7, "punctuation": None})
    (output,) = model.seen
    assert json.loads(output)["error_type"] == "invalid_arguments"
    error = spans.tool_span("greet").error
    assert error is not None, "the tool's span is not marked as an error"
    assert error["data"]["tool_name"] == "greet"
    assert error["data"]["error_type"] == "invalid_arguments"
    # A success leaves its span clean.
    model = run(openai_agents.tools(host_registry), "greet", {"name": "Ada", "punctuation": None})
    assert model.seen == ["Hello, Ada!"]
    assert spans.tool_span("greet").error is None


def test_the_sdks_failure_error_function_decides_what_the_model_reads(
    host_registry: ToolRegistry, spans: Spans
) -> None:
    tools = openai_agents.tools(host_registry, failure_error_function=default_tool_error_function)
    model = run(tools, "greet", {"name": "Mallory", "punctuation": None})
    assert model.seen == ["An error occurred while running the tool. Please try again."]
    error = spans.tool_span("greet").error
    assert error["data"]["error"] == "Error details are redacted."
    assert error["data"]["error_type"] == "blocked"


def test_no_failure_error_function_fails_the_run(host_registry: ToolRegistry) -> None:
    tools = openai_agents.tools(host_registry, failure_error_function=None)
    with pytest.raises(UserError, match="greeting Mallory is not allowed") as failed:
        run(tools, "greet", {"name": "Mallory", "punctuation": None})
    assert isinstance(failed.value.__cause__, openai_agents.ToolCallFailed)
    assert failed.value.__cause__.error_type == "blocked"


def test_availability_changes_show_up_without_rebuilding(
    host_registry: ToolRegistry, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TOOLREG_TEST_UNSET", "1")
    tools = openai_agents.tools(host_registry)  # secret is available now
    assert "secret" in [tool.name for tool in tools]
    monkeypatch.delenv("TOOLREG_TEST_UNSET")
    model = run(tools, "greet", {"name": "Ada", "punctuation": None})
    assert model.offered == [["clock", "greet", "snap"]] * 2  # is_enabled asked each turn
