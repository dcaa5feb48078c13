"""MCP shapes in the registry's terms: a listed tool's schema, a call's result.

Pure functions over the JSON form (``model_dump(by_alias=True, mode="json")``)
of the SDK's models, so they are testable without a server.

Results follow the dispatch contract:

- ``isError: true``: ``tool_error`` of the text parts (or of the structured
  content when there is no text);
- any image or audio part: the multimodal envelope
  ``{"_multimodal": True, "content": [<MCP content blocks as dicts>]}``, plus
  ``"structured": <structuredContent>`` when the server sent one;
- otherwise a string: the text parts joined with ``"\\n"`` (embedded
  resources contribute their text, links a ``[resource ...]`` line). When
  there is no text at all, the JSON of ``structuredContent``; servers that
  send both put the same data in the text, per the MCP spec.
"""

from __future__ import annotations

from typing import Any

from .._results import tool_error, tool_result

_MEDIA = frozenset({"image", "audio"})


def description(server: str, tool: dict[str, Any]) -> str:
    """The tool's description, prefixed with its server: ``[server NAME] ...``."""
    text = tool.get("description") or tool.get("title") or ""
    text = text.strip() if isinstance(text, str) else ""
    return f"[server {server}] {text}" if text else f"[server {server}]"


def parameters(tool: dict[str, Any]) -> dict[str, Any]:
    """The tool's input schema, kept as the server wrote it.

    MCP requires ``"type": "object"``; a server that leaves it out gets it
    filled in rather than losing the tool.
    """
    schema = tool.get("inputSchema")
    if not isinstance(schema, dict):
        return {"type": "object", "properties": {}}
    if "type" not in schema:
        return {"type": "object", **schema}
    return schema


def to_result(payload: dict[str, Any]) -> str | dict[str, Any]:
    """A ``CallToolResult`` (as JSON) → what the registry's handler returns."""
    blocks = [block for block in payload.get("content") or () if isinstance(block, dict)]
    structured = payload.get("structuredContent")
    texts = [text for text in map(_text_of, blocks) if text is not None]
    if payload.get("isError"):
        if texts:
            return tool_error("\n".join(texts))
        if structured is not None:
            return tool_error(tool_result(structured))
        return tool_error("The MCP tool reported an error without a message")
    if any(block.get("type") in _MEDIA for block in blocks):
        envelope: dict[str, Any] = {"_multimodal": True, "content": blocks}
        if structured is not None:
            envelope["structured"] = structured
        return envelope
    if texts:
        return "\n".join(texts)
    if structured is not None:
        return tool_result(structured)
    return ""


def _text_of(block: dict[str, Any]) -> str | None:
    kind = block.get("type")
    if kind == "text":
        text = block.get("text")
        return text if isinstance(text, str) else None
    if kind == "resource":
        resource = block.get("resource") or {}
        if isinstance(resource.get("text"), str):
            return resource["text"]
        mime = resource.get("mimeType") or "binary"
        return f"[resource {resource.get('uri', '?')} ({mime}, not shown)]"
    if kind == "resource_link":
        return f"[resource {block.get('name') or ''} {block.get('uri', '?')}]".replace("  ", " ")
    return None
