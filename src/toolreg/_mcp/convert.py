"""MCP shapes in the registry's terms: a listed tool's schema, a call's result.

Pure functions over the SDK models' JSON form, testable without a server.
Results follow the dispatch contract; listed annotations and output schemas
are read as untrusted.
"""

from __future__ import annotations

import json
from contextvars import ContextVar
from typing import Any

from .._contract.annotations import Annotations, received_annotations
from .._contract.results import MAX_ERROR_CHARS, tool_error, tool_result, truncate
from .._contract.schema_checks import check_output_schema

_MEDIA = frozenset({"image", "audio"})

#: Set by ``toolreg serve`` around its dispatch: it can pass a structured result on.
KEEP_STRUCTURED: ContextVar[bool] = ContextVar("toolreg_keep_structured", default=False)


def description(server: str, tool: dict[str, Any], *, title: bool = True) -> str:
    """The tool's description, prefixed with its server: ``[server NAME] ...``.

    Without one, its ``title`` stands in, unless ``title`` is false: a lock
    records no title, so a locked server's model text must not come from one.
    """
    text = tool.get("description") or (tool.get("title") if title else None) or ""
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


def annotations(tool: dict[str, Any]) -> Annotations:
    """The tool's annotations: MCP's keys with values of the right type, nothing else."""
    return received_annotations(tool.get("annotations"))


def output_schema(name: str, tool: dict[str, Any]) -> tuple[dict[str, Any] | None, str]:
    """(the tool's output schema or None, why it was left out or "")."""
    schema = tool.get("outputSchema")
    if schema is None:
        return None, ""
    try:
        check_output_schema(name, schema)
    except ValueError as exc:
        return None, str(exc)
    return schema, ""


def to_result(
    payload: dict[str, Any], limit: int | None = None, *, keep_structured: bool = False
) -> str | dict[str, Any]:
    """A ``CallToolResult`` (as JSON) → what the registry's handler returns.

    ``limit`` bounds a multimodal result's size in characters (its text, its
    base64 data, its other blocks' JSON); strings are left to dispatch's cap.
    ``keep_structured``: a ``structuredContent`` object is kept, in the
    envelope, even when every block is text.
    """
    blocks = [block for block in payload.get("content") or () if isinstance(block, dict)]
    structured = payload.get("structuredContent")
    texts = [text for text in map(_text_of, blocks) if text is not None]
    if payload.get("isError"):
        if texts:
            return tool_error(_bounded("\n".join(texts)))
        if structured is not None:
            return tool_error(_bounded(tool_result(structured)))
        return tool_error("The MCP tool reported an error without a message")
    kept = keep_structured and isinstance(structured, dict)
    if kept or any(block.get("type") in _MEDIA for block in blocks):
        envelope: dict[str, Any] = {"_multimodal": True, "content": blocks}
        if structured is not None:
            envelope["structured"] = structured
        return envelope if limit is None else _capped(envelope, limit)
    if texts:
        return "\n".join(texts)
    if structured is not None:
        return tool_result(structured)
    return ""


def _bounded(message: str) -> str:
    return message if len(message) <= MAX_ERROR_CHARS else truncate(message, MAX_ERROR_CHARS)


def _size(block: dict[str, Any]) -> int:
    """What a block costs against the limit: its text, its data, or its JSON."""
    for key in ("text", "data"):
        if isinstance(block.get(key), str):
            return len(block[key])
    return len(json.dumps(block, ensure_ascii=False, default=str))


def _capped(envelope: dict[str, Any], limit: int) -> dict[str, Any]:
    """The envelope with what does not fit in ``limit`` characters left out, and said so.

    Blocks are kept in order while they fit; a text block that does not is cut
    to the room left, and everything after it is left out.
    """
    budget = limit
    kept: list[dict[str, Any]] = []
    left_out: list[tuple[str, int]] = []  # (kind, characters)
    for block in envelope["content"]:
        size = _size(block)
        if not left_out and size <= budget:
            kept.append(block)
            budget -= size
            continue
        if not left_out and block.get("type") == "text" and budget > 0:
            kept.append({**block, "text": block["text"][:budget]})
            size, budget = size - budget, 0
        left_out.append((str(block.get("type")), size))
    capped: dict[str, Any] = {"_multimodal": True, "content": kept}
    structured = envelope.get("structured")
    if structured is not None:
        size = len(tool_result(structured))
        if size <= budget:
            capped["structured"] = structured
        else:
            left_out.append(("structuredContent", size))
    if left_out:
        kinds = ", ".join(kind for kind, _ in left_out)
        total = sum(size for _, size in left_out)
        note = f"…[truncated: {kinds} ({total} characters) left out past {limit} characters]"
        kept.append({"type": "text", "text": note})
    return capped


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
