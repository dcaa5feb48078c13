"""``tools/list`` pages for ``toolreg serve``: the cursor, and the page it points at.

A cursor names the last tool of the page it came with: the next page is the
offered tools whose names sort after it, so a list that changes between two
pages continues where the client was, without a duplicate or a gap among the
tools that did not change. Its form is ``1.<name, base64url>.<check>``, where
the check is a truncated HMAC-SHA256 of the name under a key derived from the
server's ``--toolset`` filter: a truncated, edited or made-up cursor, or one
from a server that offers another set, is refused. The key is no secret (a
replica with the same filter accepts the cursor, so stateless HTTP works behind
a balancer); what keeps hidden tools hidden is that every page is cut from the
offered list, whatever the cursor says. No ``mcp`` import: the CLI and tests
use it without the SDK.
"""

from __future__ import annotations

import base64
import binascii
import bisect
import hashlib
import hmac
from collections.abc import Callable, Iterable, Sequence
from typing import Generic, TypeVar

from .._contract.names import TOOL_NAME_RE

#: The longest cursor read at all; a tool name of 128 characters makes one of 186.
MAX_CURSOR_CHARS = 256
#: The format's version, the cursor's first field.
VERSION = "1"
_CHECK_BYTES = 9  # 12 base64url characters

T = TypeVar("T")


class BadCursor(ValueError):
    """A cursor this server did not issue, or cannot read; the message is safe to send."""


def _key(toolsets: Iterable[str] | None) -> bytes:
    offer = "\0".join(sorted(set(toolsets))) if toolsets is not None else "*"
    return hashlib.sha256(f"toolreg tools/list cursor {VERSION}\0{offer}".encode()).digest()


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


class Cursors:
    """Makes and reads the cursors of one offer (a server's ``--toolset`` filter, or all)."""

    def __init__(self, toolsets: Iterable[str] | None = None) -> None:
        self._key = _key(toolsets)

    def _check(self, name: bytes) -> str:
        return _b64(hmac.new(self._key, name, hashlib.sha256).digest()[:_CHECK_BYTES])

    def make(self, last_name: str) -> str:
        """The cursor of the page that ends with ``last_name``."""
        raw = last_name.encode()
        return f"{VERSION}.{_b64(raw)}.{self._check(raw)}"

    def read(self, cursor: object) -> str:
        """The name a cursor continues after; BadCursor for anything this server did not issue."""
        if not isinstance(cursor, str):
            raise BadCursor("Invalid cursor: not a string")
        if len(cursor) > MAX_CURSOR_CHARS:
            raise BadCursor(f"Invalid cursor: longer than {MAX_CURSOR_CHARS} characters")
        version, _, rest = cursor.partition(".")
        encoded, _, check = rest.partition(".")
        if version != VERSION or not encoded or not check:
            raise BadCursor("Invalid cursor: not one this server issued")
        try:
            raw = _unb64(encoded)
            name = raw.decode("ascii")
        except (binascii.Error, ValueError):
            raise BadCursor("Invalid cursor: not one this server issued") from None
        if not hmac.compare_digest(check, self._check(raw)) or not TOOL_NAME_RE.match(name):
            raise BadCursor(
                "Invalid cursor: not one this server issued, or issued for another set of tools"
            )
        return name


class Pages(Generic[T]):
    """The offered items in name order, rebuilt only when the list itself is a new one.

    ``listed`` is the server's memoised list (the same object while nothing
    changed), ``name_of`` an item's name.
    """

    def __init__(self, name_of: Callable[[T], str]) -> None:
        self._name_of = name_of
        # (the list sorted, its names, the items in name order): one tuple, swapped whole,
        # so two threads listing at once never see one list's names with another's items.
        self._memo: tuple[Sequence[T] | None, list[str], list[T]] = (None, [], [])

    def _sorted(self, listed: Sequence[T]) -> tuple[list[str], list[T]]:
        source, names, items = self._memo
        if listed is not source:
            items = sorted(listed, key=self._name_of)
            names = [self._name_of(item) for item in items]
            self._memo = (listed, names, items)
        return names, items

    def page(
        self, listed: Sequence[T], after: str | None, size: int | None
    ) -> tuple[list[T], str | None]:
        """The items whose names sort after ``after`` (all: None), at most ``size`` (None: all).

        Returns the page and the name of its last item when more follow (None: the end).
        """
        names, items = self._sorted(listed)
        start = 0 if after is None else bisect.bisect_right(names, after)
        end = len(items) if size is None else min(len(items), start + size)
        page = items[start:end]
        return page, (names[end - 1] if end < len(items) and page else None)
