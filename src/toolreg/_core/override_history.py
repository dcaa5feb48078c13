"""What each override displaced, so unloading the overrider can put it back.

Per tool name, a stack of (displaced slot, label of who displaced it). The
table records an entry on every accepted override and asks, when an owner
goes, what comes back.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

#: (entry, owner, options): the unit the table stores per name.
Slot = tuple[Any, Any, Any]


class OverrideHistory:
    """Displaced slots per tool name; the table holds its lock around every call."""

    def __init__(self) -> None:
        self._shadowed: dict[str, list[tuple[Slot, str]]] = {}

    def record(self, name: str, displaced: Slot, by: str) -> None:
        """``by`` overrode ``name``, displacing ``displaced``."""
        self._shadowed.setdefault(name, []).append((displaced, by))

    def forget_owner(self, label: str, owned: Iterable[str]) -> dict[str, Slot]:
        """``label`` is going, with the tools in ``owned``: what comes back, per name.

        A tool it overrode comes back, but only while its entry is still the
        current one (``owned``): if someone replaced it since, that one stays,
        and what ``label`` displaced comes back when that one goes instead.
        """
        owned = set(owned)
        restored: dict[str, Slot] = {}
        for name in list(self._shadowed):
            records = self._shadowed[name]
            mine = [slot for slot, by in records if by == label]
            # The earliest record it made holds what stood before it.
            below = mine[0] if mine else None
            if below is not None and name in owned:
                restored[name] = below
            kept: list[tuple[Slot, str]] = []
            for slot, by in records:
                if by == label:
                    continue
                if slot[1].label == label:
                    # Its entry, displaced by a later overrider: when that one
                    # goes, what this owner displaced comes back, never this
                    # owner's own (soon stale) entry.
                    if below is not None and name not in owned:
                        kept.append((below, by))
                    continue
                kept.append((slot, by))
            if kept:
                self._shadowed[name] = kept
            else:
                del self._shadowed[name]
        return restored
