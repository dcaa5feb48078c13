"""tool_result_message: dispatch results as each provider's tool-result message.

Every message is checked against the provider SDK's own types, offline:
openai's and anthropic's TypedDicts (through pydantic, with unknown keys
caught by a round trip), google-genai's ``types.Part`` (which forbids unknown
fields) and the MCP SDK's ``CallToolResult``.
"""

from __future__ import annotations

import base64
import json
from typing import Any

import mcp_types
import pytest
from anthropic.types import ToolResultBlockParam
from google.genai import types as genai_types
from openai.types.chat import ChatCompletionToolMessageParam
from openai.types.responses import ResponseInputItemParam

from conftest import conforms
from toolreg import ToolRegistry, tool_error, tool_result, tool_result_message

PNG = base64.b64encode(b"\x89PNG\r\n\x1a\n fake png").decode()
WAV = base64.b64encode(b"RIFF fake wav").decode()
FORMATS = ["openai", "openai-responses", "anthropic", "gemini", "mcp"]


def check(message: dict[str, Any], format: str) -> None:
    if format == "openai":
        conforms(ChatCompletionToolMessageParam, message)
    elif format == "openai-responses":
        conforms(ResponseInputItemParam, message)
    elif format == "anthropic":
        conforms(ToolResultBlockParam, message)
    elif format == "gemini":
        genai_types.Part.model_validate(message)  # extra="forbid"
        json.dumps(message)
    else:
        model = mcp_types.CallToolResult.model_validate(message)
        assert model.model_dump(by_alias=True, mode="json", exclude_unset=True) == message


def message(result: Any, format: str) -> dict[str, Any]:
    built = tool_result_message(result, format, call_id="call_1", name="snap")
    check(built, format)
    return built


MULTIMODAL = {
    "_multimodal": True,
    "content": [
        {"type": "text", "text": "Here is the screen."},
        {"type": "image", "data": PNG, "mimeType": "image/png"},
        {"type": "audio", "data": WAV, "mimeType": "audio/wav"},
        {"type": "resource_link", "uri": "file:///tmp/a.txt", "name": "a.txt"},
    ],
}


def test_a_json_text_result_in_every_format() -> None:
    text = tool_result(rows=[1, 2])
    assert message(text, "openai") == {"role": "tool", "tool_call_id": "call_1", "content": text}
    assert message(text, "openai-responses") == {
        "type": "function_call_output",
        "call_id": "call_1",
        "output": text,
    }
    assert message(text, "anthropic") == {
        "type": "tool_result",
        "tool_use_id": "call_1",
        "content": text,
        "is_error": False,
    }
    # Gemini's response is a dict: a JSON object is parsed, not wrapped.
    assert message(text, "gemini") == {
        "function_response": {"name": "snap", "response": {"rows": [1, 2]}, "id": "call_1"}
    }
    assert message(text, "mcp") == {"content": [{"type": "text", "text": text}], "isError": False}


@pytest.mark.parametrize(
    ("text", "response"),
    [
        ("plain words", {"output": "plain words"}),
        ("[1, 2]", {"output": [1, 2]}),
        ("42", {"output": 42}),
        ("", {"output": ""}),
    ],
)
def test_gemini_wraps_what_is_not_a_json_object(text: str, response: dict) -> None:
    assert message(text, "gemini")["function_response"]["response"] == response


def test_tool_errors_are_marked_as_errors_where_the_provider_can_say_so() -> None:
    error = tool_error("Unknown tool: nope")
    assert message(error, "anthropic")["is_error"] is True
    assert message(error, "mcp")["isError"] is True
    assert message(error, "gemini")["function_response"]["response"] == {
        "error": "Unknown tool: nope"
    }
    assert message(error, "openai")["content"] == error
    assert message(error, "openai-responses")["output"] == error


def test_multimodal_images_become_image_parts_where_the_provider_takes_them() -> None:
    responses = message(MULTIMODAL, "openai-responses")["output"]
    assert responses[0] == {"type": "input_text", "text": "Here is the screen."}
    assert responses[1] == {"type": "input_image", "image_url": f"data:image/png;base64,{PNG}"}
    assert "audio/wav audio not shown" in responses[2]["text"]
    assert responses[3] == {"type": "input_text", "text": "[resource a.txt file:///tmp/a.txt]"}

    anthropic = message(MULTIMODAL, "anthropic")
    assert anthropic["is_error"] is False
    assert anthropic["content"][1] == {
        "type": "image",
        "source": {"type": "base64", "media_type": "image/png", "data": PNG},
    }
    assert anthropic["content"][2]["type"] == "text"

    gemini = message(MULTIMODAL, "gemini")["function_response"]
    assert gemini["parts"] == [
        {"inline_data": {"mime_type": "image/png", "data": PNG}},
        {"inline_data": {"mime_type": "audio/wav", "data": WAV}},
    ]
    assert "[image/png image: see parts]" in gemini["response"]["output"]
    part = genai_types.Part.model_validate(message(MULTIMODAL, "gemini"))
    assert part.function_response.parts[0].inline_data.data.startswith(b"\x89PNG")

    mcp = message(MULTIMODAL, "mcp")
    kinds = [block["type"] for block in mcp["content"]]
    assert kinds == ["text", "image", "audio", "resource_link"]
    assert mcp["content"][1] == {"type": "image", "data": PNG, "mimeType": "image/png"}


def test_chat_completions_tool_messages_get_text_with_placeholders() -> None:
    content = message(MULTIMODAL, "openai")["content"]
    assert isinstance(content, str)
    assert content.splitlines() == [
        "Here is the screen.",
        "[image/png image not shown: this API takes no image here]",
        "[audio/wav audio not shown: this API takes no audio here]",
        "[resource a.txt file:///tmp/a.txt]",
    ]


@pytest.mark.parametrize(
    "block",
    [
        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PNG}},
        {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{PNG}"}},
        {"type": "image", "data": base64.b64decode(PNG), "mime_type": "image/png"},
    ],
    ids=["anthropic-source", "openai-data-url", "raw-bytes"],
)
def test_borrowed_image_shapes_are_understood(block: dict) -> None:
    result = {"_multimodal": True, "content": [block]}
    assert message(result, "mcp")["content"] == [
        {"type": "image", "data": PNG, "mimeType": "image/png"}
    ]


def test_bad_or_unknown_blocks_become_text_and_lose_nothing_else() -> None:
    result = {
        "_multimodal": True,
        "content": [
            "a bare string",
            {"type": "image", "data": "not base64!", "mimeType": "image/png"},
            {"type": "chart", "series": [1, 2]},
            {"type": "image", "data": PNG, "mimeType": "image/svg+xml"},
        ],
    }
    texts = [block["text"] for block in message(result, "mcp")["content"][:3]]
    assert texts == [
        "a bare string",
        "[image/png image not shown: its data is not valid base64]",
        '{"type": "chart", "series": [1, 2]}',
    ]
    # Anthropic's image blocks take jpeg, png, gif and webp only.
    assert message(result, "anthropic")["content"][3]["type"] == "text"


def test_a_proxied_mcp_tools_structured_content_is_kept() -> None:
    result = {**MULTIMODAL, "structured": {"width": 640}}
    assert message(result, "mcp")["structuredContent"] == {"width": 640}
    assert message(result, "gemini")["function_response"]["response"] == {"width": 640}


def test_embedded_resources_pass_to_mcp_and_show_their_text_elsewhere() -> None:
    block = {"type": "resource", "resource": {"uri": "file:///n.md", "text": "# Notes"}}
    result = {"_multimodal": True, "content": [block]}
    assert message(result, "mcp")["content"] == [block]
    assert message(result, "openai")["content"] == "# Notes"


@pytest.mark.parametrize(
    ("format", "missing"),
    [("openai", "call_id"), ("openai-responses", "call_id"), ("anthropic", "call_id")],
)
def test_a_missing_call_id_is_named(format: str, missing: str) -> None:
    with pytest.raises(ValueError, match=f"format='{format}'.* needs {missing}"):
        tool_result_message("ok", format)


def test_gemini_needs_the_name_but_not_the_id() -> None:
    with pytest.raises(ValueError, match="needs name"):
        tool_result_message("ok", "gemini", call_id="c")
    built = tool_result_message("ok", "gemini", name="snap")
    assert built == {"function_response": {"name": "snap", "response": {"output": "ok"}}}


def test_unknown_format_and_foreign_results_are_refused_clearly() -> None:
    with pytest.raises(ValueError, match="Unknown tool result format 'claude'.*anthropic"):
        tool_result_message("ok", "claude", call_id="c")
    with pytest.raises(TypeError, match="not int"):
        tool_result_message(42, "mcp")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="not dict"):
        tool_result_message({"content": []}, "mcp")


@pytest.mark.parametrize("format", FORMATS)
def test_what_dispatch_returns_goes_straight_in(reg: ToolRegistry, format: str) -> None:
    schema = {"name": "snap", "parameters": {"type": "object", "properties": {}}}
    reg.register("snap", "screen", schema, lambda args: MULTIMODAL)
    reg.register("boom", "screen", {**schema, "name": "boom"}, lambda args: 1 / 0)
    check(tool_result_message(reg.dispatch("snap", {}), format, call_id="c1", name="snap"), format)
    failed = tool_result_message(reg.dispatch("boom", {}), format, call_id="c2", name="boom")
    check(failed, format)
    assert "ZeroDivisionError" in json.dumps(failed)
