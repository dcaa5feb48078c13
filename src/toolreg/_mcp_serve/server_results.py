"""Dispatch results as MCP ``CallToolResult``s, for ``toolreg serve``.

Strings become text blocks and multimodal results MCP content;
:class:`StructuredResults` sends a structured tool's value as ``structuredContent``.
"""

from __future__ import annotations

import json
from typing import Any

import mcp_types as types
from pydantic import ValidationError

from .._contract.entry import ToolEntry
from .._contract.result_blocks import Media, Resource, read_block
from .._contract.results import is_multimodal, is_tool_error, tool_error
from .._schemas.validation import ResultChecker, compile_result_checker


def call_result(result: str | dict[str, Any]) -> types.CallToolResult:
    """A dispatch result as an MCP ``CallToolResult``; tool_errors set ``isError``."""
    if isinstance(result, str):
        return types.CallToolResult(
            content=[types.TextContent(text=result)], is_error=is_tool_error(result)
        )
    if is_multimodal(result):
        # A proxied MCP tool's envelope may carry the server's structuredContent.
        structured = result.get("structured")
        return types.CallToolResult(
            content=[content_block(block) for block in result["content"]],
            structured_content=structured if isinstance(structured, dict) else None,
        )
    # dispatch never returns anything else; say so rather than crash the request.
    return types.CallToolResult(
        content=[types.TextContent(text=tool_error("Tool returned an unsupported result"))],
        is_error=True,
    )


def content_block(block: Any) -> types.ContentBlock:
    """One multimodal block as MCP content; anything unrecognised becomes its JSON text.

    The block is read by :func:`toolreg._contract.result_blocks.read_block`, which knows
    MCP's own shapes and the provider shapes handlers borrow.
    """
    read = read_block(block)
    if isinstance(read, Media):
        model = types.ImageContent if read.kind == "image" else types.AudioContent
        return model(data=read.data, mime_type=read.mime)
    if isinstance(read, Resource):
        model_for = {"resource": types.EmbeddedResource, "resource_link": types.ResourceLink}
        try:
            return model_for[read.block["type"]].model_validate(read.block, by_name=False)
        except ValidationError:
            return types.TextContent(text=json.dumps(block, ensure_ascii=False, default=str))
    return types.TextContent(text=read.text)


class StructuredResults:
    """``call_result`` that adds ``structuredContent`` for tools with an output schema.

    Each output schema is compiled once, and again only when its tool's entry
    is replaced.
    """

    def __init__(self) -> None:
        self._checks: dict[str, tuple[ToolEntry, ResultChecker | None]] = {}

    def call_result(
        self, entry: ToolEntry | None, result: str | dict[str, Any]
    ) -> types.CallToolResult:
        schema = entry.output_schema if entry is not None else None
        if entry is None or schema is None or is_tool_error(result):
            return call_result(result)
        value, problem = _structured_value(result, entry.max_result_size_chars)
        if problem is None:
            check = self._check_for(entry, schema)
            problem = check(value) if check is not None else None
        if problem is not None:
            message = (
                f"Tool {entry.name!r} returned a result that does not match its output "
                f"schema: {problem}"
            )
            # An isError answer saying why: MCP clients refuse a structured tool's answer
            # without structuredContent.
            return types.CallToolResult(
                content=[types.TextContent(text=tool_error(message, tool=entry.name))],
                is_error=True,
            )
        plain = call_result(result)
        return types.CallToolResult(content=plain.content, structured_content=value)

    def _check_for(self, entry: ToolEntry, schema: dict[str, Any]) -> ResultChecker | None:
        held = self._checks.get(entry.name)
        if held is None or held[0] is not entry:
            held = (entry, compile_result_checker(entry.name, schema))
            self._checks[entry.name] = held
        return held[1]


def _structured_value(result: str | dict[str, Any], limit: int | None) -> tuple[Any, str | None]:
    """(the object a structured tool returned, None) or (None, why there is none)."""
    if isinstance(result, dict):
        structured = result.get("structured") if is_multimodal(result) else None
        if isinstance(structured, dict):
            return structured, None
        return None, "its multimodal result carries no structured object"
    if limit is not None and len(result) > limit:  # dispatch cut it, marker included
        return None, f"its text was cut at its max_result_size_chars ({limit})"
    try:
        value = json.loads(result)
    except ValueError:
        return None, "its text is not JSON"
    except RecursionError:
        return None, "its text is nested too deeply to read"
    if not isinstance(value, dict):
        return None, f"its text is JSON {type(value).__name__}, not an object"
    return value, None
