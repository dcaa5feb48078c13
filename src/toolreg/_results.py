"""The result contract: what a handler may return and how errors look."""

from __future__ import annotations

import json
from typing import Any

#: Longest error text a failing handler may put in front of the model.
MAX_ERROR_CHARS = 2048


def tool_error(message: str, **extra: Any) -> str:
    """Return the JSON string ``{"error": message, **extra}``."""
    return json.dumps({"error": message, **extra}, ensure_ascii=False, default=str)


def tool_result(data: Any = None, **kwargs: Any) -> str:
    """Return the JSON of ``data``, or of the keyword arguments when ``data`` is None."""
    payload = kwargs if data is None else data
    return json.dumps(payload, ensure_ascii=False, default=str)


def is_tool_error(result: Any) -> bool:
    """True when ``result`` is a ``tool_error`` JSON string."""
    if not isinstance(result, str) or not result.startswith('{"error"'):
        return False
    try:
        return "error" in json.loads(result)
    except ValueError:
        return False


def truncate(text: str, limit: int) -> str:
    """Keep the first ``limit`` characters and say how many were cut."""
    cut = len(text) - limit
    return f"{text[:limit]}\n…[truncated {cut} of {len(text)} characters]"


def describe_exception(exc: BaseException) -> str:
    """``TYPE: MSG``, even for an exception whose ``__str__`` itself raises."""
    try:
        message = str(exc)
    except Exception:
        message = f"<unprintable {type(exc).__name__} object>"
    return f"{type(exc).__name__}: {message}"


def failure_message(exc: BaseException) -> str:
    """The tool_error for a handler that raised, bounded to MAX_ERROR_CHARS."""
    text = f"Tool execution failed: {describe_exception(exc)}"
    if len(text) > MAX_ERROR_CHARS:
        # The marker's length depends on the count it reports; sizing it with
        # the full length first keeps the total within the bound.
        keep = MAX_ERROR_CHARS - len(f"…[truncated {len(text)} characters]")
        text = f"{text[:keep]}…[truncated {len(text) - keep} characters]"
    return tool_error(text)


def is_multimodal(result: Any) -> bool:
    """True for the one structured result shape: ``{"_multimodal": True, "content": [...]}``."""
    return (
        isinstance(result, dict)
        and result.get("_multimodal") is True
        and isinstance(result.get("content"), list)
    )
