"""Dispatch results as MCP ``CallToolResult``s, for ``toolreg serve``.

A string is one text block (``isError`` when it is a tool_error); a multimodal
result's blocks become MCP text, image, audio and resource content, and the
``structured`` object a proxied MCP tool's envelope carries its
``structuredContent``.
"""

from __future__ import annotations

import base64
import binascii
import json
from typing import Any

import mcp_types as types
from pydantic import ValidationError

from toolreg import is_tool_error, tool_error
from toolreg._results import is_multimodal


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

    Understands MCP's own shapes (``text``, ``image``/``audio`` with ``data`` and
    ``mimeType``, ``resource``, ``resource_link``) and the common provider shapes
    handlers borrow: Anthropic's ``source`` object, ``image_url`` data URLs and
    ``input_audio``.
    """
    if isinstance(block, str):
        return types.TextContent(text=block)
    if isinstance(block, dict):
        kind = block.get("type")
        if kind == "text" and isinstance(block.get("text"), str):
            return types.TextContent(text=block["text"])
        if kind in ("image", "audio"):
            media = _media(block)
            if media is not None:
                data, mime = media
                model = types.ImageContent if kind == "image" else types.AudioContent
                return model(data=data, mime_type=mime)
        if kind == "image_url":
            url = block.get("image_url")
            media = _data_url(url.get("url") if isinstance(url, dict) else url)
            if media is not None:
                return types.ImageContent(data=media[0], mime_type=media[1])
        if kind == "input_audio" and isinstance(block.get("input_audio"), dict):
            audio = block["input_audio"]
            if isinstance(audio.get("data"), str) and isinstance(audio.get("format"), str):
                return types.AudioContent(data=audio["data"], mime_type=f"audio/{audio['format']}")
        model_for = {"resource": types.EmbeddedResource, "resource_link": types.ResourceLink}
        if kind in model_for:
            try:
                return model_for[kind].model_validate(block, by_name=False)
            except ValidationError:
                pass
    return types.TextContent(text=json.dumps(block, ensure_ascii=False, default=str))


def _media(block: dict[str, Any]) -> tuple[str, str] | None:
    """(base64 data, MIME type) from an MCP-style or Anthropic-style block."""
    source = block.get("source")
    if isinstance(source, dict):
        if source.get("type") == "url":
            return None
        block = {**source, "mimeType": source.get("media_type")}
    data = block.get("data")
    mime = block.get("mimeType") or block.get("mime_type") or block.get("media_type")
    if isinstance(data, (bytes, bytearray)):
        data = base64.b64encode(data).decode("ascii")
    if isinstance(data, str) and isinstance(mime, str):
        return data, mime
    return None


def _data_url(url: Any) -> tuple[str, str] | None:
    """(base64 data, MIME type) from ``data:<mime>;base64,<data>``."""
    if not isinstance(url, str) or not url.startswith("data:"):
        return None
    header, sep, data = url[5:].partition(",")
    mime, _, encoding = header.partition(";")
    if not sep or encoding != "base64" or not mime:
        return None
    try:
        base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        return None
    return data, mime
