"""Availability: ``requires_env`` and cached ``check_fn`` probes.

Probes (is Docker up? is the browser installed?) are slow and flaky, and a
tool that blinks out of the definitions mid-conversation makes the model say
"tool does not exist". So results are cached for 30 s, and a failure within
60 s of the last success is treated as a flake: the tool stays available, the
failure is not cached, and the probe runs again next time.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Callable
from typing import Any

from ._entry import CheckFn, ToolEntry
from ._results import describe_exception

logger = logging.getLogger("toolreg.availability")

CACHE_TTL_SECONDS = 30.0
GRACE_SECONDS = 60.0

Verdict = tuple[bool, str]
_AVAILABLE: Verdict = (True, "")


def missing_env(entry: ToolEntry) -> list[str]:
    return [var for var in entry.requires_env if not os.environ.get(var)]


def _describe(fn: Callable[..., Any]) -> str:
    return getattr(fn, "__qualname__", None) or repr(fn)


class Availability:
    """Decides whether a tool can be offered now, and why not."""

    def __init__(self, clock: Callable[[], float]) -> None:
        self._clock = clock
        self._lock = threading.Lock()
        self._verdicts: dict[CheckFn, tuple[bool, str, float]] = {}
        self._last_success: dict[CheckFn, float] = {}

    def invalidate(self) -> None:
        """Forget every cached probe result and success time."""
        with self._lock:
            self._verdicts.clear()
            self._last_success.clear()

    def check(self, entry: ToolEntry) -> Verdict:
        """(available, reason): the reason names what is missing or failed."""
        if entry.requires_env:
            missing = missing_env(entry)
            if missing:
                return False, "missing environment variable(s): " + ", ".join(missing)
        if entry.check_fn is None:
            return _AVAILABLE
        return self.probe(entry.check_fn, entry.name)

    def probe(self, fn: CheckFn, tool: str) -> Verdict:
        now = self._clock()
        try:
            cached = self._verdicts.get(fn)
        except TypeError:  # an unhashable check_fn cannot be cached
            return self._run(fn, tool)
        if cached is not None and now < cached[2]:
            return cached[0], cached[1]
        ok, reason = self._run(fn, tool)
        with self._lock:
            if ok:
                self._verdicts[fn] = (True, "", now + CACHE_TTL_SECONDS)
                self._last_success[fn] = now
                return _AVAILABLE
            last = self._last_success.get(fn)
            if last is not None and now - last <= GRACE_SECONDS:
                logger.warning(
                    "check_fn %s for tool %s failed %.0fs after its last success; "
                    "treating it as a flake (%s)",
                    _describe(fn),
                    tool,
                    now - last,
                    reason,
                )
                return _AVAILABLE
            self._verdicts[fn] = (False, reason, now + CACHE_TTL_SECONDS)
            return False, reason

    @staticmethod
    def _run(fn: CheckFn, tool: str) -> Verdict:
        """Run a probe; it may return a bool, or (bool, reason)."""
        try:
            result = fn()
            if isinstance(result, tuple) and len(result) == 2:
                ok, reason = bool(result[0]), str(result[1] or "")
            else:
                ok, reason = bool(result), ""
        except Exception as exc:
            logger.warning("check_fn %s for tool %s raised", _describe(fn), tool, exc_info=True)
            return False, f"check {_describe(fn)} raised {describe_exception(exc)}"
        if ok:
            return _AVAILABLE
        return False, reason or f"check {_describe(fn)} failed"
