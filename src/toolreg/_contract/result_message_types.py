"""Static types of ``tool_result_message``'s messages, one TypedDict per format.

Each has every key of its SDK's own type, so a type checker accepts it where the SDK asks
(which type: docs/hosts.md, "The return leg"). The SDKs are never imported.
"""

from __future__ import annotations

from typing import Any, Literal, TypedDict


class OpenAIToolMessage(TypedDict):
    """An ``openai`` tool result: a Chat Completions ``tool`` message."""

    role: Literal["tool"]
    tool_call_id: str
    content: Any


class _OpenAIFunctionCallOutputRequired(TypedDict):
    type: Literal["function_call_output"]
    output: Any


class OpenAIFunctionCallOutput(_OpenAIFunctionCallOutputRequired, total=False):
    """An ``openai-responses`` tool result: a ``function_call_output`` input item.

    toolreg always sets ``call_id``; the SDK types it as optional.
    """

    call_id: str | None
    id: str | None
    caller: Any
    name: str | None
    namespace: str | None
    status: Any


class _AnthropicToolResultRequired(TypedDict):
    type: Literal["tool_result"]
    tool_use_id: str


class AnthropicToolResult(_AnthropicToolResultRequired, total=False):
    """An ``anthropic`` tool result: a ``tool_result`` block of a user message."""

    content: Any
    is_error: bool
    cache_control: Any
    toolset_name: str | None


class GeminiFunctionResponsePart(TypedDict, total=False):
    """A ``gemini`` or ``gemini-json-schema`` tool result: a ``Part`` with a ``function_response``.

    toolreg sets ``function_response`` only; the other keys are the SDK's.
    """

    function_response: Any
    audio_metadata: Any
    audio_transcription: Any
    code_execution_result: Any
    document_metadata: Any
    executable_code: Any
    file_data: Any
    function_call: Any
    inline_data: Any
    media_processing: Any
    media_resolution: Any
    part_metadata: Any
    speech_metadata: Any
    spreadsheet_metadata: Any
    text: Any
    thought: Any
    thought_signature: Any
    tool_call: Any
    tool_response: Any
    video_metadata: Any


class _McpToolResultRequired(TypedDict):
    content: list[dict[str, Any]]
    isError: bool


class McpToolResult(_McpToolResultRequired, total=False):
    """An ``mcp`` tool result: a ``tools/call`` result, with ``structuredContent`` if any."""

    structuredContent: dict[str, Any]
