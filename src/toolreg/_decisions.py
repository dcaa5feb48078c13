"""The decision log: every registration verdict, kept for the CLI and reports."""

from __future__ import annotations

import threading
import time
from collections import deque
from dataclasses import dataclass, field, fields
from typing import Any, Literal

from ._entry import ToolEntry

Action = Literal["registered", "replaced", "overridden", "rejected", "deregistered", "restored"]


@dataclass(frozen=True)
class Decision:
    """One registration decision: what happened to which tool, and why."""

    action: Action
    tool: str
    toolset: str
    owner: str
    reason: str = ""
    previous_toolset: str | None = None
    previous_owner: str | None = None
    generation: int = 0
    timestamp: float = field(default_factory=time.time)
    #: The entry this decision displaced, so an unload can restore it.
    replaced: ToolEntry | None = field(default=None, repr=False, compare=False)

    def to_dict(self) -> dict[str, Any]:
        return {f.name: getattr(self, f.name) for f in fields(self) if f.name != "replaced"}


class DecisionLog:
    """A bounded, thread-safe, append-only record of decisions."""

    def __init__(self, maxlen: int = 1000) -> None:
        self._items: deque[Decision] = deque(maxlen=maxlen)
        self._lock = threading.Lock()

    def append(self, decision: Decision) -> None:
        with self._lock:
            self._items.append(decision)

    def snapshot(self) -> list[Decision]:
        with self._lock:
            return list(self._items)
