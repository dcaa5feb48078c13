"""Dispatch results as MCP ``CallToolResult``s, for ``toolreg serve``.

A string is one text block (``isError`` when it is a tool_error); a multimodal
result's blocks become MCP text, image, audio and resource content, and the
``structured`` object a proxied MCP tool's envelope carries its
``structuredContent``.
"""

from __future__ import annotations

import json
from typing import Any

import mcp_types as types
from pydantic import ValidationError

from toolreg._contract.result_blocks import Media, Resource, read_block
from toolreg._contract.results import is_multimodal

from .._contract.results import is_tool_error, tool_error


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
