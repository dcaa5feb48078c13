"""Regular expressions from outside (a model, a tool's schema), matched within a time budget.

Compiled with ``regex``, which releases the GIL and can stop a match (docs/security.md);
each match inside ``time_budget(seconds)`` draws on it, else gets ``DEFAULT_SECONDS``.
"""

from __future__ import annotations

import threading
import time
from typing import Any

DEFAULT_SECONDS = 1.0

_current = threading.local()


class RegexTimeout(Exception):
    """A match ran past its time budget. Deliberately not a TimeoutError (an OSError)."""

    def __init__(self, pattern: str, seconds: float) -> None:
        super().__init__(f"matching {pattern!r} took longer than {seconds:g} s")
        self.pattern = pattern
        self.seconds = seconds


class _Budget:
    __slots__ = ("seconds", "end", "per_match")

    def __init__(self, seconds: float, per_match: float | None = None) -> None:
        self.seconds = seconds
        self.end = time.monotonic() + seconds
        self.per_match = per_match


class time_budget:  # noqa: N801 (used as a function: `with time_budget(2):`)
    """Let every bounded match in this thread, until the block ends, share ``seconds``.

    ``per_match`` caps any one match further, so a pattern that backtracks is
    stopped soon even when the budget is sized for a long, honest task. A class
    rather than a generator context manager: validation opens one on every call.
    """

    __slots__ = ("_budget", "_outer")

    def __init__(self, seconds: float, *, per_match: float | None = None) -> None:
        self._budget = _Budget(seconds, per_match)

    def __enter__(self) -> None:
        self._outer = getattr(_current, "budget", None)
        _current.budget = self._budget

    def __exit__(self, *exc: object) -> None:
        _current.budget = self._outer


class BoundedPattern:
    """A compiled pattern whose ``search`` and ``match`` stop when the budget runs out.

    Raises ``regex.error`` for a pattern the engine cannot compile, and
    ``RegexTimeout`` from a match that outlives the budget. ``label`` is how the
    timeout names the pattern, when that is not the text compiled.
    """

    __slots__ = ("pattern", "_compiled")

    def __init__(self, pattern: str, flags: int = 0, *, label: str | None = None) -> None:
        import regex  # here, not at import: only a call that matches pays for it

        self.pattern = pattern if label is None else label
        self._compiled = regex.compile(pattern, flags)

    def search(self, string: str, pos: int = 0, endpos: int | None = None) -> Any:
        return self._run(self._compiled.search, string, pos, endpos)

    def match(self, string: str, pos: int = 0, endpos: int | None = None) -> Any:
        return self._run(self._compiled.match, string, pos, endpos)

    def _run(self, method: Any, string: str, pos: int, endpos: int | None) -> Any:
        budget = getattr(_current, "budget", None)
        if budget is None:
            left = limit = DEFAULT_SECONDS
        else:
            left, limit = budget.end - time.monotonic(), budget.seconds
            if budget.per_match is not None and budget.per_match < left:
                left = limit = budget.per_match
        # regex reads a negative timeout as "none", so an exhausted budget stops here.
        if left <= 0:
            raise RegexTimeout(self.pattern, limit)
        try:
            # The engine measures process CPU time, never less than this thread's:
            # a match stops no later than `left` seconds of its own work.
            return method(string, pos, endpos, timeout=left)
        except TimeoutError:
            raise RegexTimeout(self.pattern, limit) from None
