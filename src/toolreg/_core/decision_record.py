"""One registration decision, as ``registry.decisions()`` gives it.

Its own module so that a process that never reads a decision (``toolreg
list``) never defines the class: the log keeps raw tuples, and a
``Decision`` is made of one only when someone reads it.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field, fields
from typing import Any

from .._contract.entry import ToolEntry
from .decisions import Action, _Raw


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
