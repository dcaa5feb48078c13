"""Per-tool execution deadlines.

At the deadline the caller stops waiting: a sync handler (on the tool worker pool) that
runs on counts as stuck, and an async handler is cancelled.
"""

from __future__ import annotations

import time
from types import CoroutineType
from typing import Any

from .._contract.entry import Handler
from .._contract.results import INTERRUPTS
from .async_bridge import run_coroutine
from .workers import TOOL_POOL, DeadlineExceeded, WorkerInterrupt

__all__ = ["DeadlineExceeded", "await_with_deadline", "call_with_deadline"]


def call_with_deadline(
    handler: Handler, is_async: bool, args: Any, kwargs: dict[str, Any], timeout: float
) -> Any:
    """Run the handler; raise DeadlineExceeded if it takes longer than ``timeout``."""
    started = time.monotonic()
    if is_async:
        return run_coroutine(handler(args, **kwargs), timeout)
    result = TOOL_POOL.run(timeout, handler, args, **kwargs)
    if type(result) is CoroutineType:
        # An ``async def`` handler registered without is_async=True: its
        # coroutine gets what is left of the deadline.
        return run_coroutine(result, max(timeout - (time.monotonic() - started), 0.0))
    return result


async def await_with_deadline(
    handler: Handler, is_async: bool, args: Any, kwargs: dict[str, Any], timeout: float
) -> Any:
    """The async twin: sync handlers go to the tool worker pool."""
    started = time.monotonic()
    if is_async:
        result = await _cancel_after(handler(args, **kwargs), timeout, started)
    else:
        result = await TOOL_POOL.arun(timeout, handler, args, **kwargs)
    if type(result) is CoroutineType:  # an ``async def`` handler without is_async
        left = max(timeout - (time.monotonic() - started), 0.0)
        result = await _cancel_after(result, left, time.monotonic())
    return result


async def _cancel_after(coro: Any, timeout: float, started: float) -> Any:
    import asyncio

    try:
        return await asyncio.wait_for(_contained(coro), timeout)
    except (asyncio.TimeoutError, TimeoutError):
        # A handler may raise TimeoutError of its own: only ours is a deadline.
        if time.monotonic() - started >= timeout:
            raise DeadlineExceeded() from None
        raise


async def _contained(coro: Any) -> Any:
    """SystemExit or KeyboardInterrupt escaping wait_for's task would stop the host's loop."""
    try:
        return await coro
    except INTERRUPTS as exc:
        raise WorkerInterrupt(exc) from None
