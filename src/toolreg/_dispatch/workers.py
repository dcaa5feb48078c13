"""Bounded pools of daemon threads, for calls that have a deadline.

Python cannot stop a thread, so a call that ignores its deadline keeps its worker:
it is *stuck*, and counted. Once every worker of a pool is stuck the next call is
refused at once; daemon threads never keep the process alive.
"""

from __future__ import annotations

import concurrent.futures
import contextvars
import math
import queue
import threading
import time
from collections.abc import Callable
from typing import Any

from .._contract.results import INTERRUPTS, WorkerInterrupt


class DeadlineExceeded(Exception):
    """The call did not finish within its deadline (``started``: whether it ran at all)."""

    def __init__(self, started: bool = True) -> None:
        super().__init__("started" if started else "never started")
        self.started = started


class NoCapacity(Exception):
    """Every worker of the pool is held by a call that ran past its deadline."""


def contained(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """Call ``fn``; SystemExit, KeyboardInterrupt and GeneratorExit come back as WorkerInterrupt."""
    try:
        return fn(*args, **kwargs)
    except INTERRUPTS as exc:
        raise WorkerInterrupt(exc) from None


class WorkerPool:
    """At most ``size`` daemon threads, started on demand, for calls with deadlines."""

    def __init__(self, name: str, size: int) -> None:
        self.name = name
        self.size = size
        #: Every worker thread's name starts with it.
        self.thread_prefix = f"toolreg-{name}-"
        self._lock = threading.Lock()
        self._jobs: queue.SimpleQueue[tuple[Any, ...]] = queue.SimpleQueue()
        self._threads = 0
        self._idle = 0
        self._pending = 0
        self._stuck = 0
        self._abandoned = 0

    def stats(self) -> dict[str, int]:
        """Workers started, the bound, calls stuck now, and calls abandoned so far."""
        with self._lock:
            return {
                "workers": self._threads,
                "size": self.size,
                "stuck": self._stuck,
                "abandoned": self._abandoned,
            }

    def run(self, timeout: float | None, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        """``fn(*args, **kwargs)`` on a worker; DeadlineExceeded past ``timeout`` (None: none)."""
        future = self.submit(timeout, fn, *args, **kwargs)
        try:
            return future.result(timeout)
        except concurrent.futures.CancelledError:
            raise DeadlineExceeded(started=False) from None
        except concurrent.futures.TimeoutError:
            if future.done():
                raise  # fn's own TimeoutError, re-raised by result()
            raise self.abandon(future) from None

    async def arun(self, timeout: float, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        """The async twin of ``run``: the caller's event loop waits, never blocks."""
        import asyncio

        future = self.submit(timeout, fn, *args, **kwargs)
        try:
            return await asyncio.wait_for(asyncio.wrap_future(future), timeout)
        except (asyncio.CancelledError, concurrent.futures.CancelledError):
            if not future.cancelled():
                raise  # our own task is being cancelled: let the host's cancellation through
            raise DeadlineExceeded(started=False) from None
        except (asyncio.TimeoutError, TimeoutError):
            if future.done() and not future.cancelled():
                return future.result()  # fn's own TimeoutError, or a result just in time
            raise self.abandon(future) from None

    def submit(
        self, timeout: float | None, fn: Callable[..., Any], *args: Any, **kwargs: Any
    ) -> concurrent.futures.Future[Any]:
        """Queue a call that must start within ``timeout`` seconds, or never."""
        future: concurrent.futures.Future[Any] = concurrent.futures.Future()
        deadline = math.inf if timeout is None else time.monotonic() + timeout
        with self._lock:
            if self._stuck >= self.size:
                raise NoCapacity(
                    f"all {self.size} {self.name} workers are held by calls that ran past "
                    "their deadline"
                )
            self._pending += 1
            # The caller's context goes along (as with asyncio.to_thread), so what it
            # bound for the call (the client a tool logs to) holds in the worker.
            run_in_context = contextvars.copy_context().run
            self._jobs.put((future, deadline, run_in_context, (fn, *args), kwargs))
            if self._pending > self._idle and self._threads < self.size:
                self._threads += 1
                threading.Thread(
                    target=self._work, name=f"{self.thread_prefix}{self._threads}", daemon=True
                ).start()
        return future

    def abandon(self, future: concurrent.futures.Future[Any]) -> DeadlineExceeded:
        """The caller gives up: a queued call never starts, a running one counts as stuck."""
        if future.cancel():
            return DeadlineExceeded(started=False)
        with self._lock:
            self._stuck += 1
            self._abandoned += 1
        future.add_done_callback(self._unstick)
        return DeadlineExceeded(started=True)

    def _unstick(self, _: concurrent.futures.Future[Any]) -> None:
        with self._lock:
            self._stuck -= 1

    def _work(self) -> None:
        while True:
            with self._lock:
                self._idle += 1
            future, deadline, fn, args, kwargs = self._jobs.get()
            with self._lock:
                self._idle -= 1
                self._pending -= 1
            # A call whose deadline passed while it waited never starts.
            if time.monotonic() < deadline and future.set_running_or_notify_cancel():
                try:
                    future.set_result(fn(*args, **kwargs))
                except INTERRUPTS as exc:
                    future.set_exception(WorkerInterrupt(exc))
                except BaseException as exc:  # re-raised in the caller's thread
                    future.set_exception(exc)
            elif not future.cancelled():
                future.cancel()
            del future, fn, args, kwargs  # drop references while idle


# A pool each, so stuck tools never starve the hooks (fail-closed would become
# fail-everything).
#: Tool handlers with a ``timeout``.
TOOL_POOL = WorkerPool("tool", 32)
#: Dispatch hooks, under ``[plugins] hook_timeout``.
HOOK_POOL = WorkerPool("hook", 16)
#: Pack and local-plugin imports, under ``[plugins] import_timeout``.
IMPORT_POOL = WorkerPool("import", 4)

POOLS = (TOOL_POOL, HOOK_POOL, IMPORT_POOL)


def worker_stats() -> dict[str, dict[str, int]]:
    """Per pool (tool, hook, import): workers, size, stuck now, abandoned so far."""
    return {pool.name: pool.stats() for pool in POOLS}
