"""Run coroutines to completion from synchronous code.

Async handlers run on one long-lived event loop in a daemon thread. That works
from plain threads and from inside a running event loop alike (blocking the
caller's thread, never its loop's other tasks' correctness), and it lets
handlers keep loop-bound resources (clients, sessions) across calls.
"""

from __future__ import annotations

import threading
from collections.abc import Coroutine
from typing import TYPE_CHECKING, Any, TypeVar

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
    """Carries a handler's SystemExit across the loop, which would otherwise die of it."""


async def _contained(coro: Coroutine[Any, Any, T]) -> T:
    try:
        return await coro
    except SystemExit as exc:
        raise _HandlerExit() from exc


def _run_in_fresh_thread(coro: Coroutine[Any, Any, T]) -> T:
    import asyncio

    box: dict[str, Any] = {}

    def run() -> None:
        try:
            box["value"] = asyncio.run(coro)
        except BaseException as exc:  # re-raised in the caller's thread
            box["error"] = exc

    worker = threading.Thread(target=run, name="toolreg-async-nested", daemon=True)
    worker.start()
    worker.join()
    if "error" in box:
        raise box["error"]
    return box["value"]


def run_coroutine(coro: Coroutine[Any, Any, T]) -> T:
    """Run ``coro`` to completion and return its result (or raise its exception)."""
    import asyncio  # deferred: only a registry with async tools pays for it

    try:
        if asyncio._get_running_loop() is not None:
            # Called synchronously from async code (a handler dispatching
            # another tool, or a host inside its loop): that loop is blocked on
            # us, so waiting on any shared loop could deadlock. A loop of its
            # own is always safe.
            return _run_in_fresh_thread(_contained(coro))
        loop = _background_loop()
        return asyncio.run_coroutine_threadsafe(_contained(coro), loop).result()
    except _HandlerExit as exc:
        raise exc.__cause__ from None  # type: ignore[misc]
