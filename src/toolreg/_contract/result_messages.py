"""The return leg: a dispatch result as each provider's tool-result message.

``tool_result_message`` builds plain dicts (JSON types only) that the SDKs take as
they are; what each format can carry, and what stands in for the rest: docs/hosts.md.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, Literal, overload

from .names import DefinitionFormat
from .result_blocks import Block, Media, Resource, Text, read_blocks
from .result_message_types import (
    AnthropicToolResult,
    GeminiFunctionResponsePart,
    McpToolResult,
    OpenAIFunctionCallOutput,
    OpenAIToolMessage,
)
from .results import is_multimodal, is_tool_error

# Anthropic's image blocks take these types only.
_ANTHROPIC_IMAGES = frozenset({"image/jpeg", "image/png", "image/gif", "image/webp"})


class _Result:
    """A dispatch result read once: its blocks, whether it is an error, its structured data."""

    def __init__(self, result: Any) -> None:
        if isinstance(result, str):
            self.text: str | None = result
            self.blocks: list[Block] = [Text(result)]
            self.is_error = is_tool_error(result)
            self.structured: dict[str, Any] | None = None
        elif is_multimodal(result):
            self.text = None
            self.blocks = read_blocks(result["content"])
            self.is_error = False
            structured = result.get("structured")
            self.structured = structured if isinstance(structured, dict) else None
        else:
            raise TypeError(
                "tool_result_message: result must be what dispatch returns, a str or a "
                '{"_multimodal": True, "content": [...]} dict, '
                f"not {type(result).__name__}"
            )

    def text_or_parts(self, part: Callable[[Block], dict[str, Any]]) -> str | list[dict[str, Any]]:
        """A text result as it is; a multimodal one as the provider's parts."""
        if self.text is not None:
            return self.text
        return [part(block) for block in self.blocks]

    def joined_text(self, media: Callable[[Media], str] = lambda m: m.placeholder) -> str:
        if self.text is not None:
            return self.text
        return "\n".join(_as_text(block, media) for block in self.blocks)


def _as_text(block: Block, media: Callable[[Media], str]) -> str:
    if isinstance(block, Media):
        return media(block)
    return block.text


def _required(value: str | None, what: str, format: str) -> str:
    if not isinstance(value, str) or not value:
        raise ValueError(f"tool_result_message(format={format!r}) needs {what}")
    return value


def _openai(result: _Result, call_id: str | None, name: str | None) -> OpenAIToolMessage:
    # Chat Completions tool messages carry text parts only.
    return {
        "role": "tool",
        "tool_call_id": _required(call_id, "call_id, the tool call's id", "openai"),
        "content": result.joined_text(),
    }


def _openai_responses(
    result: _Result, call_id: str | None, name: str | None
) -> OpenAIFunctionCallOutput:
    call_id = _required(call_id, "call_id, the function call's call_id", "openai-responses")
    output = result.text_or_parts(_responses_part)
    return {"type": "function_call_output", "call_id": call_id, "output": output}


def _responses_part(block: Block) -> dict[str, Any]:
    if isinstance(block, Media) and block.kind == "image":
        return {"type": "input_image", "image_url": block.data_url}
    return {"type": "input_text", "text": _as_text(block, lambda m: m.placeholder)}


def _anthropic(result: _Result, call_id: str | None, name: str | None) -> AnthropicToolResult:
    call_id = _required(call_id, "call_id, the tool_use block's id", "anthropic")
    return {
        "type": "tool_result",
        "tool_use_id": call_id,
        "content": result.text_or_parts(_anthropic_part),
        "is_error": result.is_error,
    }


def _anthropic_part(block: Block) -> dict[str, Any]:
    if isinstance(block, Media) and block.kind == "image" and block.mime in _ANTHROPIC_IMAGES:
        source = {"type": "base64", "media_type": block.mime, "data": block.data}
        return {"type": "image", "source": source}
    return {"type": "text", "text": _as_text(block, lambda m: m.placeholder)}


def _gemini(result: _Result, call_id: str | None, name: str | None) -> GeminiFunctionResponsePart:
    name = _required(name, "name, the function call's name", "gemini")
    response: dict[str, Any]
    if result.text is not None:
        response = _gemini_response(result.text)
    elif result.structured is not None:
        response = result.structured
    else:
        # The images and audio travel as parts; the text says where they are.
        response = {"output": result.joined_text(lambda m: f"[{m.mime} {m.kind}: see parts]")}
    function_response: dict[str, Any] = {"name": name, "response": response}
    if call_id:
        function_response["id"] = call_id
    parts = [
        {"inline_data": {"mime_type": block.mime, "data": block.data}}
        for block in result.blocks
        if isinstance(block, Media)
    ]
    if parts:
        function_response["parts"] = parts
    return {"function_response": function_response}


def _gemini_response(text: str) -> dict[str, Any]:
    """A JSON object as it is (a tool_error already reads ``{"error": ...}``); else ``output``."""
    try:
        value = json.loads(text)
    except ValueError:
        return {"output": text}
    return value if isinstance(value, dict) else {"output": value}


def _mcp(result: _Result, call_id: str | None, name: str | None) -> McpToolResult:
    message: McpToolResult = {
        "content": [_mcp_block(block) for block in result.blocks],
        "isError": result.is_error,
    }
    if result.structured is not None:
        message["structuredContent"] = result.structured
    return message


def _mcp_block(block: Block) -> dict[str, Any]:
    if isinstance(block, Media):
        return {"type": block.kind, "data": block.data, "mimeType": block.mime}
    if isinstance(block, Resource):
        return block.block
    return {"type": "text", "text": block.text}


_MESSAGES: dict[str, _Message] = {
    "openai": _openai,
    "openai-responses": _openai_responses,
    "anthropic": _anthropic,
    "gemini": _gemini,
    "gemini-json-schema": _gemini,  # the same API: only the declarations differ
    "mcp": _mcp,
}


_Message = Callable[[_Result, "str | None", "str | None"], Any]
_Gemini = Literal["gemini", "gemini-json-schema"]


@overload
def tool_result_message(
    result: str | dict[str, Any],
    format: Literal["openai"],
    *,
    call_id: str | None = ...,
    name: str | None = ...,
) -> OpenAIToolMessage: ...
@overload
def tool_result_message(
    result: str | dict[str, Any],
    format: Literal["openai-responses"],
    *,
    call_id: str | None = ...,
    name: str | None = ...,
) -> OpenAIFunctionCallOutput: ...
@overload
def tool_result_message(
    result: str | dict[str, Any],
    format: Literal["anthropic"],
    *,
    call_id: str | None = ...,
    name: str | None = ...,
) -> AnthropicToolResult: ...
@overload
def tool_result_message(
    result: str | dict[str, Any],
    format: _Gemini,
    *,
    call_id: str | None = ...,
    name: str | None = ...,
) -> GeminiFunctionResponsePart: ...
@overload
def tool_result_message(
    result: str | dict[str, Any],
    format: Literal["mcp"],
    *,
    call_id: str | None = ...,
    name: str | None = ...,
) -> McpToolResult: ...
@overload
def tool_result_message(
    result: str | dict[str, Any],
    format: DefinitionFormat,
    *,
    call_id: str | None = ...,
    name: str | None = ...,
) -> Any: ...


def tool_result_message(
    result: str | dict[str, Any],
    format: DefinitionFormat,
    *,
    call_id: str | None = None,
    name: str | None = None,
) -> Any:
    """A dispatch result as ``format``'s tool-result message or part, as a plain dict.

    ``call_id`` is the model's id for the call (required for ``openai``,
    ``openai-responses`` and ``anthropic``); ``name`` is the tool's name
    (required for ``gemini`` and ``gemini-json-schema``). Raises ValueError for
    an unknown format or a missing id or name, TypeError for a result dispatch
    never returns.
    """
    build = _MESSAGES.get(format) if isinstance(format, str) else None
    if build is None:
        known = ", ".join(sorted(_MESSAGES))
        raise ValueError(f"Unknown tool result format {format!r}; expected one of: {known}")
    return build(_Result(result), call_id, name)
