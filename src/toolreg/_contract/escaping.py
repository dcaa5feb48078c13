"""Model-written text shown to a person: bounded, with what a terminal or UI acts on escaped.

A tool's arguments are the model's words. Where they are shown to someone who
decides on them (``toolreg call``'s prompt, ``toolreg serve``'s elicitation), a
control character, an ANSI escape or a bidirectional override must not rewrite
or hide the rest of the text, and a long value must not push it out of sight.
"""

from __future__ import annotations

import unicodedata
from typing import Any

_ELLIPSIS = "…"


def escape(text: str, *, keep_newlines: bool = True) -> str:
    """``text`` with every character a terminal would act on written as ``\\uXXXX``.

    Control characters (C0, DEL, C1), format characters (bidirectional overrides,
    zero-width ones) and line or paragraph separators; inside a JSON string the
    escape is what JSON itself would write. A newline is kept unless
    ``keep_newlines`` is false.
    """
    out = []
    for char in text:
        if (char == "\n" and keep_newlines) or not _acts(char):
            out.append(char)
        else:
            code = ord(char)
            out.append(f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}")
    return "".join(out)


def _acts(char: str) -> bool:
    return unicodedata.category(char) in ("Cc", "Cf", "Zl", "Zp", "Cs", "Co", "Cn")


def shorten(value: Any, limit: int, cut: list[int]) -> Any:
    """``value`` with every string (and key) over ``limit`` characters cut; ``cut`` counts them."""
    if isinstance(value, str):
        if len(value) <= limit:
            return value
        cut[0] += 1
        return f"{value[:limit]}{_ELLIPSIS}(+{len(value) - limit} chars)"
    if isinstance(value, dict):
        return {shorten(str(k), limit, cut): shorten(v, limit, cut) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [shorten(v, limit, cut) for v in value]
    return value
