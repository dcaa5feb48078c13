"""The host examples in docs/examples, run offline so docs/hosts.md and the README cannot rot.

Each loop gets a stand-in client whose model turns are the SDK's own response
types: first a call to ``current_time``, then an answer built from the tool
result the loop sent back. Every request the loop makes is checked against the
SDK's request types and must be plain JSON, as the real client would send it.
"""

from __future__ import annotations

import copy
import importlib.util
import json
import os
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType, SimpleNamespace
from typing import Any

import pytest
from anthropic.types import Message, MessageParam, ToolParam
from google.genai import types as genai_types
from openai.types.chat import ChatCompletion, ChatCompletionMessageParam, ChatCompletionToolParam
from openai.types.responses import FunctionToolParam, Response, ResponseInputItemParam

from conftest import conforms
from dists import REPO
from toolreg import discover_builtin_tools

ARGS = {"timezone": "Asia/Tokyo"}
Turn = Callable[[dict[str, Any]], Any]


def example(name: str) -> ModuleType:
    path = REPO / "docs" / "examples" / f"{name}.py"
    spec = importlib.util.spec_from_file_location(f"docs_example_{name}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class Endpoint:
    """One SDK method (``create``, ``generate_content``) answering with scripted turns."""

    def __init__(self, *turns: Turn) -> None:
        self.turns = list(turns)
        self.requests: list[dict[str, Any]] = []

    def __call__(self, **request: Any) -> Any:
        self.requests.append(copy.deepcopy(request))
        return self.turns[len(self.requests) - 1](request)


@pytest.fixture(autouse=True)
def builtins() -> None:
    discover_builtin_tools()


def check_requests(endpoint: Endpoint, conversation: str, item_type: Any, tool_type: Any) -> None:
    """Every request: plain JSON, each conversation item and tool of the SDK's request types."""
    assert len(endpoint.requests) == 2
    for request in endpoint.requests:
        json.dumps(request)
        for item in request[conversation]:
            conforms(item_type, item)
        for tool in request["tools"]:
            conforms(tool_type, tool)


def answer_from(tool_output: str) -> str:
    return f"It is {json.loads(tool_output)['abbreviation']} there."


def test_openai_chat_loop() -> None:
    def call_tool(request: dict) -> ChatCompletion:
        call = {"id": "call_1", "type": "function",
                "function": {"name": "current_time", "arguments": json.dumps(ARGS)}}  # fmt: skip
        return chat_completion({"role": "assistant", "tool_calls": [call]}, "tool_calls")

    def answer(request: dict) -> ChatCompletion:
        tool_message = request["messages"][-1]
        assert tool_message["role"] == "tool" and tool_message["tool_call_id"] == "call_1"
        return chat_completion(
            {"role": "assistant", "content": answer_from(tool_message["content"])}
        )

    create = Endpoint(call_tool, answer)
    client = SimpleNamespace(chat=SimpleNamespace(completions=SimpleNamespace(create=create)))
    assert example("openai_chat_loop").run(client, "Time in Tokyo?") == "It is JST there."
    check_requests(create, "messages", ChatCompletionMessageParam, ChatCompletionToolParam)


def chat_completion(message: dict, finish: str = "stop") -> ChatCompletion:
    return ChatCompletion.model_validate({
        "id": "chatcmpl-1", "object": "chat.completion", "created": 0, "model": "m",
        "choices": [{"index": 0, "finish_reason": finish, "message": message}],
    })  # fmt: skip


def test_openai_responses_loop() -> None:
    def call_tool(request: dict) -> Response:
        return response([{"type": "function_call", "id": "fc_1", "call_id": "call_1",
                          "name": "current_time", "arguments": json.dumps(ARGS),
                          "status": "completed"}])  # fmt: skip

    def answer(request: dict) -> Response:
        output = request["input"][-1]
        assert output["type"] == "function_call_output" and output["call_id"] == "call_1"
        text = {"type": "output_text", "text": answer_from(output["output"]), "annotations": []}
        return response([{"type": "message", "id": "msg_1", "role": "assistant",
                          "status": "completed", "content": [text]}])  # fmt: skip

    create = Endpoint(call_tool, answer)
    client = SimpleNamespace(responses=SimpleNamespace(create=create))
    assert example("openai_responses_loop").run(client, "Time in Tokyo?") == "It is JST there."
    check_requests(create, "input", ResponseInputItemParam, FunctionToolParam)


def response(output: list[dict]) -> Response:
    return Response.model_validate({
        "id": "resp_1", "object": "response", "created_at": 0, "model": "m", "output": output,
        "parallel_tool_calls": True, "tool_choice": "auto", "tools": [],
    })  # fmt: skip


def test_anthropic_loop() -> None:
    def call_tool(request: dict) -> Message:
        use = {"type": "tool_use", "id": "toolu_1", "name": "current_time", "input": ARGS}
        return message([use], "tool_use")

    def answer(request: dict) -> Message:
        (result,) = request["messages"][-1]["content"]
        assert result["tool_use_id"] == "toolu_1" and result["is_error"] is False
        return message([{"type": "text", "text": answer_from(result["content"])}], "end_turn")

    create = Endpoint(call_tool, answer)
    client = SimpleNamespace(messages=SimpleNamespace(create=create))
    assert example("anthropic_loop").run(client, "Time in Tokyo?") == "It is JST there."
    check_requests(create, "messages", MessageParam, ToolParam)


def message(content: list[dict], stop_reason: str) -> Message:
    return Message.model_validate({
        "id": "msg_1", "type": "message", "role": "assistant", "model": "m", "content": content,
        "stop_reason": stop_reason, "usage": {"input_tokens": 1, "output_tokens": 1},
    })  # fmt: skip


def test_gemini_loop() -> None:
    def call_tool(request: dict) -> genai_types.GenerateContentResponse:
        call = {"function_call": {"name": "current_time", "args": ARGS, "id": "fc_1"}}
        return gemini_response(call)

    def answer(request: dict) -> genai_types.GenerateContentResponse:
        (part,) = request["contents"][-1].parts
        reply = part.function_response
        assert (reply.name, reply.id) == ("current_time", "fc_1")
        return gemini_response({"text": answer_from(json.dumps(reply.response))})

    generate = Endpoint(call_tool, answer)
    client = SimpleNamespace(models=SimpleNamespace(generate_content=generate))
    assert example("gemini_loop").run(client, "Time in Tokyo?") == "It is JST there."
    for request in generate.requests:
        for content in request["contents"]:
            json.dumps(content.model_dump(mode="json", exclude_none=True))
        declarations = request["config"].tools[0].function_declarations
        assert "current_time" in [d.name for d in declarations]


def gemini_response(part: dict) -> genai_types.GenerateContentResponse:
    return genai_types.GenerateContentResponse.model_validate(
        {"candidates": [{"content": {"role": "model", "parts": [part]}}]}
    )


def test_the_loops_in_hosts_md_are_the_tested_files() -> None:
    text = (REPO / "docs" / "hosts.md").read_text()
    blocks = re.findall(r"```python\n# (docs/examples/\S+\.py)\n(.*?)```", text, re.S)
    assert len(blocks) == 4
    for path, code in blocks:
        assert code in (REPO / path).read_text(), f"docs/hosts.md differs from {path}"


def test_the_readme_host_example_is_the_type_checked_file() -> None:
    readme = (REPO / "README.md").read_text()
    (block,) = re.findall(r"## Embedding it in a host\n\n```python\n(.*?)```", readme, re.S)
    checked = (REPO / "docs" / "examples" / "embedding_host.py").read_text()
    assert checked.endswith("\n" + block), "README.md differs from docs/examples/embedding_host.py"


def test_the_readme_host_example_runs(tmp_path: Path) -> None:
    # A fresh process in an empty directory: no operator config, no caches of this one.
    env = {k: v for k, v in os.environ.items() if not k.startswith("TOOLREG_")}
    env.update(HOME=str(tmp_path), XDG_CONFIG_HOME=str(tmp_path), XDG_CACHE_HOME=str(tmp_path))
    script = (
        "import json, runpy, sys; "
        "found = runpy.run_path(sys.argv[1]); "
        "print(json.dumps([[d['function']['name'] for d in found['defs']], found['result']]))"
    )
    path = REPO / "docs" / "examples" / "embedding_host.py"
    done = subprocess.run(
        [sys.executable, "-c", script, str(path)],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    *printed, found = done.stdout.splitlines()
    names, result = json.loads(found)
    assert "current_time" in names and "read_file" in names
    assert json.loads(result)["timezone"] == "UTC"
    # What the example itself prints, as the README shows it running.
    assert printed[-2:] == [f"{len(names)} tool definitions for the model", result]
