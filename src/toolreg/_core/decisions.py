"""The decision log: every registration verdict and permission decision, kept for reports."""

from __future__ import annotations

import dataclasses
import itertools
import threading
import time
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, field, fields
from typing import Any, Literal

from .._contract.entry import ToolEntry

_now = time.time

Action = Literal[
    "registered",
    "replaced",
    "overridden",
    "rejected",
    "deregistered",
    "restored",
    # A call, judged by the operator's [permissions]: let through by a rule or the
    # default, stopped, or put to an approver (its answer is in the reason).
    "allowed",
    "denied",
    "asked",
]
#: The actions of calls judged by the operator's permissions.
CALL_ACTIONS = frozenset({"allowed", "denied", "asked"})


#: What a write logs: seq, time, action, entry, owner, reason, previous entry,
#: previous owner, generation. A Decision is made of it only when someone reads it.
_Raw = tuple[int, float, Action, ToolEntry, str, str, "ToolEntry | None", "str | None", int]
#: What a judged call logs: seq, time, action, tool, toolset, owner, reason, rule.
_CallRaw = tuple[int, float, Action, str, str, str, str, "str | None"]


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
    #: For a call (allowed, denied, asked): the operator's rule that decided it, as
    #: written; None when the default did (and for registrations).
    rule: str | None = None

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


def _call_decision(raw: _CallRaw) -> Decision:
    seq, timestamp, action, tool, toolset, owner, reason, rule = raw
    return Decision(action, tool, toolset, owner, reason, timestamp=timestamp, seq=seq, rule=rule)


def _seq_of(item: Decision | _Raw | _CallRaw) -> int:
    return item.seq if isinstance(item, Decision) else item[0]


class DecisionLog:
    """A bounded, append-only record of decisions.

    Registrations and judged calls are kept apart, each as many as ``maxlen``,
    so a busy agent's calls never push the registrations out; both number from
    one sequence and read back merged. Writers take a small lock that only
    orders the sequence (calls come from any thread, without the registry's
    writer lock); readers take none, so a writer never waits for one.
    """

    def __init__(self, maxlen: int = 1000) -> None:
        self._items: deque[Decision | _Raw] = deque(maxlen=maxlen)
        self._calls: deque[_CallRaw] = deque(maxlen=maxlen)
        self._seq = 0
        self._seq_lock = lock = threading.Lock()
        # A judged call takes the lock through these, bound once: half what ``with``
        # costs, on the path every judged call takes.
        self._acquire, self._release = lock.acquire, lock.release

    @property
    def last_seq(self) -> int:
        return self._seq

    def append(self, decision: Decision) -> None:
        with self._seq_lock:
            self._seq = seq = self._seq + 1
            self._items.append(dataclasses.replace(decision, seq=seq))

    def record_call(
        self,
        action: Action,
        tool: str,
        toolset: str,
        owner: str,
        reason: str,
        rule: str | None,
        tally: list[int],
        slot: int,
    ) -> None:
        """Log a call the operator's permissions judged, and add one to ``tally[slot]``
        under the same lock; any thread, every judged call."""
        now = _now()
        self._acquire()
        try:
            self._seq = seq = self._seq + 1
            tally[slot] += 1
            self._calls.append((seq, now, action, tool, toolset, owner, reason, rule))
        finally:
            self._release()

    def add_to_tally(self, tally: list[int], slot: int) -> None:
        """``tally[slot] += 1`` under the log's lock, as ``record_call`` counts."""
        with self._seq_lock:
            tally[slot] += 1

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
        with self._seq_lock:
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
        with self._seq_lock:
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
        # One C call each, so no write lands half-way through a copy; then, newest
        # last and seq increasing, read back only as far as ``since``.
        copied = list(self._items)
        calls = list(self._calls)
        items = list(itertools.takewhile(lambda i: _seq_of(i) > since, reversed(copied)))
        items.reverse()
        decisions = [item if type(item) is Decision else decision_of(item) for item in items]
        if not calls:
            return decisions
        judged = list(itertools.takewhile(lambda i: i[0] > since, reversed(calls)))
        judged.reverse()
        import heapq  # here: a log without judged calls never merges

        merged = heapq.merge(decisions, map(_call_decision, judged), key=lambda d: d.seq)
        return list(merged)
