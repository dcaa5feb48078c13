"""What each override displaced, so unloading the overrider can put it back.

Per tool name, a stack of (displaced row, label of who displaced it), recorded
by the table on every accepted override.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

#: (entry, owner, options): the unit the table stores per name.
Row = tuple[Any, Any, Any]


class OverrideHistory:
    """Displaced rows per tool name; the table holds its lock around every call."""

    def __init__(self) -> None:
        self._shadowed: dict[str, list[tuple[Row, str]]] = {}

    def record(self, name: str, displaced: Row, by: str) -> None:
        """``by`` overrode ``name``, displacing ``displaced``."""
        self._shadowed.setdefault(name, []).append((displaced, by))

    def forget_owner(self, label: str, owned: Iterable[str]) -> dict[str, Row]:
        """``label`` is going, with the tools in ``owned``: what comes back, per name.

        A tool it overrode comes back, but only while its entry is still the
        current one (``owned``): if someone replaced it since, that one stays,
        and what ``label`` displaced comes back when that one goes instead.
        """
        owned = set(owned)
        restored: dict[str, Row] = {}
        for name in list(self._shadowed):
            records = self._shadowed[name]
            mine = [row for row, by in records if by == label]
            # The earliest record it made holds what stood before it.
            below = mine[0] if mine else None
            if below is not None and name in owned:
                restored[name] = below
            kept: list[tuple[Row, str]] = []
            for row, by in records:
                if by == label:
                    continue
                if row[1].label == label:
                    # Its entry, displaced by a later overrider: when that one
                    # goes, what this owner displaced comes back, never this
                    # owner's own (soon stale) entry.
                    if below is not None and name not in owned:
                        kept.append((below, by))
                    continue
                kept.append((row, by))
            if kept:
                self._shadowed[name] = kept
            else:
                del self._shadowed[name]
        return restored
