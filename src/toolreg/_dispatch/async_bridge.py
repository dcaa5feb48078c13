"""Run coroutines to completion from synchronous code.

Async handlers run on one long-lived event loop in a daemon thread, from plain threads
and running loops alike, so they keep loop-bound resources across calls.
"""

from __future__ import annotations

import concurrent.futures
import threading
from collections.abc import Coroutine
from typing import TYPE_CHECKING, Any, TypeVar

from .workers import DeadlineExceeded, WorkerInterrupt

if TYPE_CHECKING:
    import asyncio

T = TypeVar("T")

_loop: asyncio.AbstractEventLoop | None = None
_thread: threading.Thread | None = None
_lock = threading.Lock()


def _background_loop() -> asyncio.AbstractEventLoop:
    global _loop, _thread
    import asyncio  # deferred: a registry without async tools never loads it

    with _lock:
        if _loop is None or not _thread or not _thread.is_alive():
            loop = asyncio.new_event_loop()
            thread = threading.Thread(target=loop.run_forever, name="toolreg-async", daemon=True)
            thread.start()
            _loop, _thread = loop, thread
        return _loop


class _HandlerExit(Exception):
    """Carries a handler's SystemExit or KeyboardInterrupt across the loop.

    Either one escaping a task stops the loop running it, and every later
    call would wait on that dead loop for ever.
    """


async def _contained(coro: Coroutine[Any, Any, T]) -> T:
    try:
        return await coro
    except (SystemExit, KeyboardInterrupt) as exc:
        raise _HandlerExit() from exc


def _run_in_fresh_thread(coro: Coroutine[Any, Any, T], timeout: float | None) -> T:
    import asyncio

    box: dict[str, Any] = {}

    def run() -> None:
        try:
            box["value"] = asyncio.run(coro)
        except BaseException as exc:  # re-raised in the caller's thread
            box["error"] = exc

    import contextvars

    # The caller's context goes along, as it does to the shared loop's task.
    context = contextvars.copy_context()
    worker = threading.Thread(
        target=context.run, args=(run,), name="toolreg-async-nested", daemon=True
    )
    worker.start()
    worker.join(timeout)
    if worker.is_alive():
        raise DeadlineExceeded()  # its loop runs on, in a daemon thread, until it ends
    if "error" in box:
        raise box["error"]
    return box["value"]


def run_coroutine(coro: Coroutine[Any, Any, T], timeout: float | None = None) -> T:
    """Run ``coro`` to completion and return its result (or raise its exception).

    With ``timeout``, DeadlineExceeded once that many seconds have passed; the
    coroutine is cancelled. That holds even when it blocks its loop or ignores
    its cancellation. A SystemExit or KeyboardInterrupt it raises comes back as
    WorkerInterrupt: it ran on another thread, so it is never the user's Ctrl-C.
    """
    import asyncio  # deferred: only a registry with async tools pays for it

    try:
        if asyncio._get_running_loop() is not None:
            # Called synchronously from async code (a handler dispatching
            # another tool, or a host inside its loop): that loop is blocked on
            # us, so waiting on any shared loop could deadlock. A loop of its
            # own is always safe.
            return _run_in_fresh_thread(_contained(coro), timeout)
        future = asyncio.run_coroutine_threadsafe(_contained(coro), _background_loop())
        try:
            return future.result(timeout)
        except concurrent.futures.TimeoutError:
            if future.done():
                raise  # the coroutine's own TimeoutError
            future.cancel()  # cancels the task on the loop
            raise DeadlineExceeded() from None
    except _HandlerExit as exc:
        raise WorkerInterrupt(exc.__cause__) from None  # type: ignore[arg-type]
