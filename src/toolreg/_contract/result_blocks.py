"""The blocks of a multimodal dispatch result, read into three plain kinds.

A handler's ``content`` list may hold MCP content blocks, bare strings or the provider
shapes handlers borrow; the provider mappers of ``result_messages`` see only these kinds.
"""

from __future__ import annotations

import base64
import binascii
import json
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Text:
    text: str


@dataclass(frozen=True)
class Media:
    """An image or audio clip: base64 ``data`` of MIME type ``mime``."""

    kind: str  # "image" or "audio"
    data: str
    mime: str

    @property
    def data_url(self) -> str:
        return f"data:{self.mime};base64,{self.data}"

    @property
    def placeholder(self) -> str:
        """What a provider that cannot carry this media shows instead."""
        return f"[{self.mime} {self.kind} not shown: this API takes no {self.kind} here]"


@dataclass(frozen=True)
class Resource:
    """An MCP ``resource`` or ``resource_link`` block, and its text for other providers."""

    block: dict[str, Any]
    text: str


Block = Text | Media | Resource


def read_blocks(content: list[Any]) -> list[Block]:
    return [read_block(raw) for raw in content]


def read_block(raw: Any) -> Block:
    """One raw block; anything unrecognised becomes its JSON as text, never lost."""
    if isinstance(raw, str):
        return Text(raw)
    if isinstance(raw, dict):
        kind = raw.get("type")
        if kind == "text" and isinstance(raw.get("text"), str):
            return Text(raw["text"])
        if kind in ("image", "audio"):
            media = _media(kind, raw)
            if media is not None:
                return media
        if kind == "image_url":
            url = raw.get("image_url")
            media = _data_url(url.get("url") if isinstance(url, dict) else url)
            if media is not None:
                return media
        if kind == "input_audio" and isinstance(raw.get("input_audio"), dict):
            audio = raw["input_audio"]
            if isinstance(audio.get("data"), str) and isinstance(audio.get("format"), str):
                return _checked("audio", audio["data"], f"audio/{audio['format']}")
        resource = _resource(kind, raw)
        if resource is not None:
            return resource
    return Text(json.dumps(raw, ensure_ascii=False, default=str))


def _media(kind: str, raw: dict[str, Any]) -> Block | None:
    source = raw.get("source")
    if isinstance(source, dict):  # Anthropic's shape
        if source.get("type") != "base64":
            return None
        raw = source
    data = raw.get("data")
    mime = raw.get("mimeType") or raw.get("mime_type") or raw.get("media_type")
    if isinstance(data, (bytes, bytearray)):
        data = base64.b64encode(data).decode("ascii")
    if isinstance(data, str) and isinstance(mime, str) and mime:
        return _checked(kind, data, mime)
    return None


def _data_url(url: Any) -> Block | None:
    """``data:<mime>;base64,<data>``; other URLs are not media we can inline."""
    if not isinstance(url, str) or not url.startswith("data:"):
        return None
    header, sep, data = url[5:].partition(",")
    mime, _, encoding = header.partition(";")
    if not sep or encoding != "base64" or not mime:
        return None
    return _checked("image", data, mime)


def _checked(kind: str, data: str, mime: str) -> Block:
    # A provider answers bad base64 with a 400 for the whole request; the
    # model is better served by a line saying what was wrong.
    try:
        base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        return Text(f"[{mime} {kind} not shown: its data is not valid base64]")
    return Media(kind, data, mime)


def _resource(kind: Any, raw: dict[str, Any]) -> Resource | None:
    if kind == "resource" and isinstance(raw.get("resource"), dict):
        inner = raw["resource"]
        if not isinstance(inner.get("uri"), str):
            return None
        if isinstance(inner.get("text"), str):
            return Resource(raw, inner["text"])
        mime = inner.get("mimeType") or "binary"
        return Resource(raw, f"[resource {inner['uri']} ({mime}, not shown)]")
    if kind == "resource_link" and isinstance(raw.get("uri"), str):
        name = raw.get("name")
        label = f"{name} {raw['uri']}" if isinstance(name, str) and name else raw["uri"]
        return Resource(raw, f"[resource {label}]")
    return None
