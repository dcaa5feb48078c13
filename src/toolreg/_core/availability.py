"""Availability: ``requires_env`` and cached ``check_fn`` probes.

Probe results are cached for 30 s, and a failure soon after a success counts as
a flake, so a tool does not blink out of the definitions mid-conversation.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import os
import threading
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from .._contract.entry import CheckFn, ToolEntry
from .._contract.results import clip, describe_exception
from .callers import run_made_by

if TYPE_CHECKING:
    from .plugin_policy import PluginPolicy

logger = logging.getLogger("toolreg.availability")

CACHE_TTL_SECONDS = 30.0
# A failure this soon after the last success is a flake: the tool stays
# available, the failure is not cached, and the probe runs again next time.
GRACE_SECONDS = 60.0

# A probe's failure reason, as stored and as logged, is cut to this many
# characters: a probe that raises a 200 KB message must not store or log one.
MAX_REASON_CHARS = 500

Verdict = tuple[bool, str]
_AVAILABLE: Verdict = (True, "")


def missing_env(entry: ToolEntry) -> list[str]:
    return [var for var in entry.requires_env if not os.environ.get(var)]


def _describe(fn: Callable[..., Any]) -> str:
    return getattr(fn, "__qualname__", None) or repr(fn)


class Availability:
    """Decides whether a tool can be offered now, and why not."""

    def __init__(
        self,
        clock: Callable[[], float],
        live: Callable[[], tuple[int, Iterable[ToolEntry]]],
        maker_of: Callable[[str], PluginPolicy | None],
    ) -> None:
        self._clock = clock
        #: The table's generation and entries: which probes are still in use.
        self._live = live
        #: The pack whose code a tool's check_fn is: a probe runs as that pack's code.
        self._maker_of = maker_of
        self._pruned_at = -1
        self._lock = threading.Lock()
        self._verdicts: dict[CheckFn, tuple[bool, str, float]] = {}
        self._last_success: dict[CheckFn, float] = {}
        #: The success time whose grace window already logged its flake.
        self._flake_logged: dict[CheckFn, float] = {}

    def invalidate(self) -> None:
        """Forget every cached probe result and success time."""
        with self._lock:
            self._verdicts.clear()
            self._last_success.clear()
            self._flake_logged.clear()

    def checker(self) -> Callable[[ToolEntry], Verdict]:
        """``check`` for one read: each probe runs at most once in it."""
        return functools.partial(self.check, seen={})

    def check(self, entry: ToolEntry, seen: dict[CheckFn, Verdict] | None = None) -> Verdict:
        """(available, reason): the reason names what is missing or failed."""
        if entry.requires_env:
            missing = missing_env(entry)
            if missing:
                return False, "missing environment variable(s): " + ", ".join(missing)
        if entry.check_fn is None:
            return _AVAILABLE
        if seen is None:
            return self.probe(entry.check_fn, entry.name)
        try:
            verdict = seen.get(entry.check_fn)
        except TypeError:  # unhashable: it cannot be shared
            return self.probe(entry.check_fn, entry.name)
        if verdict is None:
            verdict = seen[entry.check_fn] = self.probe(entry.check_fn, entry.name)
        return verdict

    def probe(self, fn: CheckFn, tool: str) -> Verdict:
        now = self._clock()
        try:
            cached = self._verdicts.get(fn)
        except TypeError:  # an unhashable check_fn cannot be cached
            ok, reason, raised = self._run(fn, tool)
            if raised:
                logger.warning("%s (tool %s)", reason, tool)
            return ok, reason
        if cached is not None and now < cached[2]:
            return cached[0], cached[1]
        ok, reason, raised = self._run(fn, tool)
        with self._lock:
            self._prune()
            if ok:
                self._verdicts[fn] = (True, "", now + CACHE_TTL_SECONDS)
                self._last_success[fn] = now
                return _AVAILABLE
            last = self._last_success.get(fn)
            if last is not None and now - last <= GRACE_SECONDS:
                # Once per grace window: a flake is not cached, so every read
                # inside the window probes (and fails) again.
                if self._flake_logged.get(fn) != last:
                    self._flake_logged[fn] = last
                    logger.warning(
                        "check_fn %s for tool %s failed %.0fs after its last success; "
                        "treating it as a flake until %.0fs after that success (%s)",
                        _describe(fn),
                        tool,
                        now - last,
                        GRACE_SECONDS,
                        reason,
                    )
                return _AVAILABLE
            self._verdicts[fn] = (False, reason, now + CACHE_TTL_SECONDS)
        if raised:  # logged once per cached failure, not on every read
            logger.warning("%s (tool %s)", reason, tool)
        return False, reason

    def _prune(self) -> None:
        """Forget probes no tool uses any more; at most once per table generation.

        A server whose every state change brings a new probe would otherwise
        grow the cache without end.
        """
        generation, entries = self._live()
        if generation == self._pruned_at:
            return
        self._pruned_at = generation
        live: set[CheckFn] = set()
        for entry in entries:
            if entry.check_fn is not None:
                with contextlib.suppress(TypeError):
                    live.add(entry.check_fn)
        for cache in (self._verdicts, self._last_success, self._flake_logged):
            for fn in [fn for fn in cache if fn not in live]:
                del cache[fn]

    def _run(self, fn: CheckFn, tool: str) -> tuple[bool, str, bool]:
        """Run a probe; it may return a bool, or (bool, reason). Also: did it raise.

        The reason is bounded to MAX_REASON_CHARS, the cut said at its end. An
        exception is logged (by the caller, as the failure or the flake) with
        its reason; its traceback only at DEBUG, and bounded too.
        """
        try:
            result = run_made_by(self._maker_of(tool), fn)
            if isinstance(result, tuple) and len(result) == 2:
                ok, reason = bool(result[0]), str(result[1] or "")
            else:
                ok, reason = bool(result), ""
        except Exception as exc:
            if logger.isEnabledFor(logging.DEBUG):
                import traceback

                try:
                    trace = "".join(traceback.format_tb(exc.__traceback__))
                except Exception:
                    trace = "(traceback unavailable)"
                logger.debug(
                    "check_fn %s for tool %s raised; traceback:\n%s",
                    _describe(fn),
                    tool,
                    clip(trace, 8 * MAX_REASON_CHARS),
                )
            reason = f"check {_describe(fn)} raised {describe_exception(exc)}"
            return False, clip(reason, MAX_REASON_CHARS), True
        if ok:
            return True, "", False
        return False, clip(reason, MAX_REASON_CHARS) or f"check {_describe(fn)} failed", False
