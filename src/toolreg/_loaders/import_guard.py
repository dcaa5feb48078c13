"""Pack imports with a deadline, and without the power to end the process quietly.

A pack's module runs arbitrary code when it is imported. One that hangs would
hang every command; one that calls ``os._exit(0)`` would end the host with
exit code 0 and no word, skipping every ``finally`` and ``atexit``. So each
import runs on the import worker pool (``_workers``), and the loader stops
waiting at ``[plugins] import_timeout``; and ``os._exit`` called on an import
worker raises ExitRefused instead of exiting.

The limits, plainly: a hung import keeps running on its daemon thread (it is
counted as stuck); and code that ends the process another way (``ctypes``, a
signal to itself) still can. Process isolation is the boundary for packs that
are not trusted. Imports run on a worker thread, so a pack that must touch the
main thread (``signal.signal``) does so in its ``toolreg_configure`` hook.
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Callable
from typing import Any, NoReturn, TypeVar

from .._dispatch.workers import IMPORT_POOL, DeadlineExceeded

T = TypeVar("T")

_real_exit = os._exit
_guard_lock = threading.Lock()
_guarded_pid: int | None = None


class ImportTimeout(Exception):
    """A pack's import did not finish within ``[plugins] import_timeout``."""


class ExitRefused(Exception):
    """A pack called ``os._exit`` while toolreg was importing it."""


def import_with_deadline(timeout: float, load: Callable[[T], Any], target: T) -> Any:
    """``load(target)`` on an import worker; ImportTimeout past ``timeout`` (0: no limit)."""
    _guard_exit()
    try:
        return IMPORT_POOL.run(timeout or None, load, target)
    except DeadlineExceeded:
        raise ImportTimeout(
            f"its import did not finish within {timeout:g} s ([plugins] import_timeout); "
            "it may still be running"
        ) from None


def _refusing_exit(status: int) -> NoReturn:
    # Only the importing process's import workers are guarded: a forked child,
    # or any other thread of the host, exits as it asked.
    if os.getpid() == _guarded_pid and threading.current_thread().name.startswith(
        IMPORT_POOL.thread_prefix
    ):
        raise ExitRefused(f"called os._exit({status}) while being imported")
    _real_exit(status)


def _guard_exit() -> None:
    global _guarded_pid
    with _guard_lock:
        if _guarded_pid == os.getpid():
            return
        _guarded_pid = os.getpid()
        os._exit = _refusing_exit
        posix = sys.modules.get(os.name)  # ``posix`` or ``nt``: the same function, reached directly
        if posix is not None and getattr(posix, "_exit", None) is _real_exit:
            posix._exit = _refusing_exit
