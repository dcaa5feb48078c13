"""The decision log: every registration verdict, kept for the CLI and reports."""

from __future__ import annotations

import dataclasses
import itertools
import time
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, field, fields
from typing import Any, Literal

from .._contract.entry import ToolEntry

_now = time.time

Action = Literal["registered", "replaced", "overridden", "rejected", "deregistered", "restored"]


#: What a write logs: seq, time, action, entry, owner, reason, previous entry,
#: previous owner, generation. A Decision is made of it only when someone reads it.
_Raw = tuple[int, float, Action, ToolEntry, str, str, "ToolEntry | None", "str | None", int]


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
    #: Position in the log, increasing; ``decisions(since=seq)`` reads what came after.
    seq: int = 0
    #: The entry this decision displaced, so an unload can restore it.
    replaced: ToolEntry | None = field(default=None, repr=False, compare=False)

    def to_dict(self) -> dict[str, Any]:
        return {f.name: getattr(self, f.name) for f in fields(self) if f.name != "replaced"}


def decision_of(raw: _Raw) -> Decision:
    """The Decision a raw log record (``DecisionLog.record``'s tuple) stands for."""
    seq, timestamp, action, entry, owner, reason, previous, previous_owner, generation = raw
    return Decision(
        action=action,
        tool=entry.name,
        toolset=entry.toolset,
        owner=owner,
        reason=reason,
        previous_toolset=previous.toolset if previous is not None else None,
        previous_owner=previous_owner,
        generation=generation,
        timestamp=timestamp,
        seq=seq,
        replaced=previous,
    )


class DecisionLog:
    """A bounded, append-only record of decisions.

    Writers hold the registry's writer lock, which orders them; readers take
    no lock, so a writer never waits for one (a reader holding a lock while
    it builds its list would make each write wait a switch interval).
    """

    def __init__(self, maxlen: int = 1000) -> None:
        self._items: deque[Decision | _Raw] = deque(maxlen=maxlen)
        self._seq = 0

    @property
    def last_seq(self) -> int:
        return self._seq

    def append(self, decision: Decision) -> None:
        self._seq = seq = self._seq + 1
        self._items.append(dataclasses.replace(decision, seq=seq))

    def record(
        self,
        action: Action,
        entry: ToolEntry,
        owner: str,
        reason: str,
        previous: ToolEntry | None,
        previous_owner: str | None,
        generation: int,
    ) -> None:
        """Log the decision ``action`` about ``entry``; cheap, since every write does it."""
        self._seq = seq = self._seq + 1
        self._items.append(
            (seq, _now(), action, entry, owner, reason, previous, previous_owner, generation)
        )

    def record_many(
        self,
        decisions: Sequence[tuple[Action, ToolEntry, str, ToolEntry | None, str | None]],
        generation: int,
    ) -> None:
        """``record`` for each (action, entry, owner, previous, previous owner) of one write."""
        now = time.time()
        seq = self._seq
        kept = self._items.maxlen
        if kept is not None and len(decisions) > kept:
            # Only the newest fit: the rest would be pushed out as they came in.
            seq += len(decisions) - kept
            decisions = decisions[-kept:]
        append = self._items.append
        for action, entry, owner, previous, previous_owner in decisions:
            seq += 1
            append((seq, now, action, entry, owner, "", previous, previous_owner, generation))
        self._seq = seq

    def snapshot(self, since: int = 0) -> list[Decision]:
        # One C call, so no write lands half-way through the copy; then, newest
        # last and seq increasing, read back only as far as ``since``.
        copied = list(self._items)
        items = list(
            itertools.takewhile(
                lambda i: (i.seq if type(i) is Decision else i[0]) > since, reversed(copied)
            )
        )
        items.reverse()
        return [item if type(item) is Decision else decision_of(item) for item in items]
