"""Per-tool execution deadlines.

A sync handler with a deadline runs in a worker thread, and the caller stops
waiting when the deadline passes; Python cannot stop the thread itself, so a
handler that ignores time keeps running in the background until it returns.
An async handler is cancelled properly with ``asyncio.wait_for``.
"""

from __future__ import annotations

import concurrent.futures
import inspect
import threading
import time
from collections.abc import Callable
from typing import Any

from ._async_bridge import run_coroutine
from ._entry import ToolEntry

_pool: concurrent.futures.ThreadPoolExecutor | None = None
_pool_lock = threading.Lock()


class DeadlineExceeded(Exception):
    """The handler did not finish within its tool's timeout."""


def _executor() -> concurrent.futures.ThreadPoolExecutor:
    global _pool
    with _pool_lock:
        if _pool is None:
            _pool = concurrent.futures.ThreadPoolExecutor(
                max_workers=32, thread_name_prefix="toolreg-worker"
            )
        return _pool


def run_with_deadline(timeout: float, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """Run ``fn`` in the shared worker pool; raise DeadlineExceeded past ``timeout``."""
    future = _executor().submit(fn, *args, **kwargs)
    try:
        return future.result(timeout)
    except concurrent.futures.TimeoutError:
        if future.done():
            raise  # fn's own TimeoutError, re-raised by result()
        raise DeadlineExceeded from None


def call_with_deadline(entry: ToolEntry, args: Any, kwargs: dict[str, Any], timeout: float) -> Any:
    """Run the handler; raise DeadlineExceeded if it takes longer than ``timeout``."""
    started = time.monotonic()
    if entry.is_async:
        return _run_async(entry.handler(args, **kwargs), started, timeout)
    result = run_with_deadline(timeout, entry.handler, args, **kwargs)
    if inspect.iscoroutine(result):
        # An ``async def`` handler registered without is_async=True: its
        # coroutine gets what is left of the deadline.
        return _run_async(result, started, timeout)
    return result


def _run_async(coro: Any, started: float, timeout: float) -> Any:
    import asyncio  # deferred, like every asyncio use on the sync path

    left = max(timeout - (time.monotonic() - started), 0.0)
    try:
        return run_coroutine(asyncio.wait_for(coro, left))
    except (asyncio.TimeoutError, TimeoutError):
        # A handler may raise TimeoutError of its own: only ours is a deadline.
        if time.monotonic() - started >= timeout:
            raise DeadlineExceeded from None
        raise


async def await_with_deadline(
    entry: ToolEntry, args: Any, kwargs: dict[str, Any], timeout: float
) -> Any:
    """The async twin: sync handlers go to a worker thread."""
    import asyncio

    if entry.is_async:
        call = entry.handler(args, **kwargs)
    else:
        call = asyncio.to_thread(entry.handler, args, **kwargs)
    started = time.monotonic()
    try:
        result = await asyncio.wait_for(call, timeout)
        if inspect.iscoroutine(result):  # an ``async def`` handler without is_async
            left = max(timeout - (time.monotonic() - started), 0.0)
            result = await asyncio.wait_for(result, left)
        return result
    except (asyncio.TimeoutError, TimeoutError):
        if time.monotonic() - started >= timeout:
            raise DeadlineExceeded from None
        raise
