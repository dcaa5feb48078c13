"""Many tool calls at once: the parallel tool calls of one model turn.

Each call goes through ``dispatch`` (so nothing raises), several at a time, results in
call order; how a batch runs: docs/registry.md, "Parallel calls".
"""

from __future__ import annotations

import concurrent.futures
import contextvars
import threading
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from .._contract.results import clip, printable, tool_error
from .._contract.tool_context import ProgressCallback

Result = "str | dict[str, Any]"
#: One call: ``(name, args)`` or ``(name, args, call_id)``.
Call = Sequence[Any]
#: ``dispatch_one(name, args, call_id, progress)``: a dispatch that knows the call's id.
DispatchOne = Callable[[Any, Any, "str | None", "ProgressCallback | None"], Any]
ADispatchOne = Callable[[Any, Any, "str | None", "ProgressCallback | None"], Awaitable[Any]]
#: ``progress(index, progress, total, message)``: what ``dispatch_many``'s ``progress=`` hears.
BatchProgressCallback = Callable[[int, float, "float | None", "str | None"], None]

#: Seconds under which a tool's calls run on the caller's thread: handing such a
#: call to another thread would cost more than the call.
INLINE_BELOW = 200e-6
#: Calls of each tool whose duration is remembered (the slowest of them decides).
_REMEMBERED = 8
#: One batch of inline calls in this many times its first call.
_SAMPLE_EVERY = 16
#: Tools whose durations are remembered; past that the memory starts again.
_MAX_TOOLS = 4096
DEFAULT_MAX_CONCURRENCY = 8
#: Threads of the shared pool; a batch uses at most ``max_concurrency`` of them.
POOL_THREADS = 64

_pool: concurrent.futures.ThreadPoolExecutor | None = None
_pool_lock = threading.Lock()


def _shared_pool() -> concurrent.futures.ThreadPoolExecutor:
    global _pool
    with _pool_lock:
        if _pool is None:
            _pool = concurrent.futures.ThreadPoolExecutor(POOL_THREADS, "toolreg-many")
        return _pool


def _unpacked(index: int, call: Any) -> tuple[Any, Any, str | None] | str:
    """``(name, args, call_id)`` of a call, or the tool_error that takes its place."""
    if isinstance(call, (tuple, list)) and len(call) in (2, 3):
        call_id = call[2] if len(call) == 3 else None
        if call_id is None or type(call_id) is str:
            return call[0], call[1], call_id
    return tool_error(
        clip(
            f"Call {index} of the batch is not (name, args) or (name, args, call_id) "
            f"with a str call_id: {printable(call)}"
        ),
        error_type="invalid_call",
    )


def _check_concurrency(max_concurrency: int) -> None:
    if type(max_concurrency) is not int or max_concurrency < 1:
        raise ValueError(f"max_concurrency must be an int of at least 1, got {max_concurrency!r}")


class BatchProgress:
    """A batch's ``progress=`` callback, given each call's index, one report at a time."""

    __slots__ = ("_callback", "_lock")

    def __init__(self, callback: BatchProgressCallback) -> None:
        if not callable(callback):
            raise TypeError(f"progress must be callable, got {type(callback).__name__}")
        self._callback = callback
        # Reentrant: a callback that makes a call of its own must not deadlock.
        self._lock = threading.RLock()

    def for_call(self, index: int) -> ProgressCallback:
        """The ``progress`` callback of dispatching call ``index``."""
        callback, lock = self._callback, self._lock

        def report(progress: float, total: float | None, message: str | None) -> None:
            with lock:
                callback(index, progress, total, message)

        return report


class Batches:
    """``dispatch_many`` and ``adispatch_many`` of one dispatcher; knows which tools are quick."""

    def __init__(
        self,
        dispatch: Callable[[Any, Any], Any],
        dispatch_one: DispatchOne,
        adispatch_one: ADispatchOne,
        traced: Callable[[], bool],
    ) -> None:
        self._dispatch = dispatch
        self._traced = traced
        self._dispatch_one = dispatch_one
        self._adispatch_one = adispatch_one
        #: Tool name → its last calls' durations in seconds (at most _REMEMBERED).
        self._durations: dict[str, list[float]] = {}
        #: The tools each of whose remembered calls (two at least) took under INLINE_BELOW.
        self._quick: set[str] = set()
        #: Inline calls go untimed but for a sample (_SAMPLE_EVERY), which keeps a verdict fresh.
        self._inline_calls = 0

    def is_quick(self, name: Any) -> bool:
        """Whether each of ``name``'s remembered calls took under INLINE_BELOW."""
        return name in self._quick if type(name) is str else False

    def forget(self, names: Any) -> None:
        """A tool a write changed is judged again from its next calls."""
        if not self._durations and not self._quick:
            return  # nothing timed yet: the usual case for a host that never batches
        for name in names:
            self._durations.pop(name, None)
            self._quick.discard(name)

    def _timed(self, name: Any, args: Any, call_id: str | None) -> Any:
        started = time.perf_counter()
        result = self._dispatch_one(name, args, call_id, None)
        took = time.perf_counter() - started
        if type(name) is str:
            durations = self._durations.get(name)
            if durations is None:
                if len(self._durations) >= _MAX_TOOLS:
                    self._durations.clear()  # made-up names must not grow it for ever
                durations = self._durations[name] = []
            durations.append(took)
            if len(durations) > _REMEMBERED:
                del durations[0]
            if len(durations) >= 2 and max(durations) < INLINE_BELOW:
                self._quick.add(name)
            else:
                self._quick.discard(name)
        return result

    def _run_inline(
        self, quick: list[tuple[int, Any, Any, str | None]], results: list[Any], sample: bool
    ) -> None:
        """Run quick calls on the caller's thread; with ``sample``, time the first."""
        if sample:
            index, name, args, call_id = quick[0]
            results[index] = self._timed(name, args, call_id)
            quick = quick[1:]
        if not self._traced():  # a call id matters only to a trace: skip a frame
            dispatch = self._dispatch
            for index, name, args, _ in quick:
                results[index] = dispatch(name, args)
            return
        dispatch_one = self._dispatch_one
        for index, name, args, call_id in quick:
            results[index] = dispatch_one(name, args, call_id, None)

    def dispatch_many(
        self,
        calls: Sequence[Call],
        max_concurrency: int = DEFAULT_MAX_CONCURRENCY,
        *,
        progress: BatchProgressCallback | None = None,
    ) -> list[Any]:
        _check_concurrency(max_concurrency)
        if progress is not None:
            return self._dispatch_many_listened(calls, max_concurrency, BatchProgress(progress))
        results: list[Any] = [None] * len(calls)
        self._inline_calls += 1
        sample = self._inline_calls % _SAMPLE_EVERY == 0  # one batch in 16 times a quick call
        start = 0
        if not sample and not self._traced():
            # The common batch, (name, args) pairs of quick tools, runs here as it is
            # read; from the first other call on, the rest goes the general way.
            dispatch, known_quick = self._dispatch, self._quick
            for call in calls:
                if type(call) is not tuple or len(call) != 2:
                    break
                name, args = call
                if type(name) is not str or name not in known_quick:
                    break
                results[start] = dispatch(name, args)
                start += 1
            if start == len(calls):
                return results
        self._dispatch_rest(calls, start, results, max_concurrency, sample)
        return results

    def _dispatch_rest(
        self,
        calls: Sequence[Call],
        start: int,
        results: list[Any],
        max_concurrency: int,
        sample: bool,
    ) -> None:
        """Calls ``start`` on: slow ones on the threads first, then quick ones on this thread."""
        queued: list[tuple[int, Any, Any, str | None]] = []
        quick: list[tuple[int, Any, Any, str | None]] = []
        known_quick = self._quick
        for index in range(start, len(calls)):
            call = calls[index]
            if type(call) is tuple and len(call) == 2:  # the common shape, unpacked fast
                name, args = call
                call_id = None
            else:
                unpacked = _unpacked(index, call)
                if type(unpacked) is str:
                    results[index] = unpacked
                    continue
                name, args, call_id = unpacked
            item = (index, name, args, call_id)
            (quick if type(name) is str and name in known_quick else queued).append(item)
        if queued:
            self._run_queued(queued, results, max_concurrency)
        if quick:
            self._run_inline(quick, results, sample)

    def _dispatch_many_listened(
        self, calls: Sequence[Call], max_concurrency: int, progress: BatchProgress
    ) -> list[Any]:
        """``dispatch_many`` with a progress listener: every call on the threads, each scoped."""
        results: list[Any] = [None] * len(calls)
        queued: list[tuple[int, Any, Any, str | None]] = []
        for index, call in enumerate(calls):
            unpacked = _unpacked(index, call)
            if type(unpacked) is str:
                results[index] = unpacked
            else:
                queued.append((index, *unpacked))
        dispatch_one = self._dispatch_one

        def run(index: int, name: Any, args: Any, call_id: str | None) -> Any:
            return dispatch_one(name, args, call_id, progress.for_call(index))

        if queued:
            self._run_queued(queued, results, max_concurrency, run)
        return results

    def _run_queued(
        self,
        queued: list[tuple[int, Any, Any, str | None]],
        results: list[Any],
        max_concurrency: int,
        run: Callable[[int, Any, Any, str | None], Any] | None = None,
    ) -> None:
        """Run ``queued`` on ``min(max_concurrency, len(queued))`` threads, the caller's one.

        ``run(index, name, args, call_id)`` runs one call; by default a timed dispatch.
        """
        lock = threading.Lock()
        pending = iter(queued)
        timed = self._timed

        def runner() -> None:
            while True:
                with lock:
                    item = next(pending, None)
                if item is None:
                    return
                index, name, args, call_id = item
                if run is None:
                    results[index] = timed(name, args, call_id)
                else:
                    results[index] = run(index, name, args, call_id)

        helpers = min(max_concurrency, len(queued)) - 1
        # Each helper runs in a copy of the caller's context, so what the caller bound
        # (a serve client's log, a trace's parent span) holds in every call.
        futures = [
            _shared_pool().submit(contextvars.copy_context().run, runner) for _ in range(helpers)
        ]
        runner()
        for future in futures:
            future.result()  # runner never raises: dispatch does not

    async def adispatch_many(
        self,
        calls: Sequence[Call],
        max_concurrency: int = DEFAULT_MAX_CONCURRENCY,
        *,
        progress: BatchProgressCallback | None = None,
    ) -> list[Any]:
        import asyncio

        _check_concurrency(max_concurrency)
        listener = None if progress is None else BatchProgress(progress)
        results: list[Any] = [None] * len(calls)
        slots = asyncio.Semaphore(max_concurrency)

        async def one(index: int, name: Any, args: Any, call_id: str | None) -> None:
            reports = None if listener is None else listener.for_call(index)
            async with slots:
                results[index] = await self._adispatch_one(name, args, call_id, reports)

        tasks = []
        for index, call in enumerate(calls):
            unpacked = _unpacked(index, call)
            if type(unpacked) is str:
                results[index] = unpacked
            else:
                tasks.append(asyncio.ensure_future(one(index, *unpacked)))
        if tasks:
            try:
                await asyncio.gather(*tasks)
            except BaseException:
                for task in tasks:  # the host cancelled the batch: cancel every call
                    task.cancel()
                raise
        return results
