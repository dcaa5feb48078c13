"""A pack's modules: imported under a deadline while ``toolreg.registry`` names the
registry being loaded, and forgotten again so that a reload executes them afresh.

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

import contextlib
import importlib
import os
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, NoReturn, TypeVar

from .._dispatch.workers import IMPORT_POOL, DeadlineExceeded

if TYPE_CHECKING:
    from .._registry.registry import ToolRegistry

T = TypeVar("T")

# Packs register into ``toolreg.registry`` at import; loading into another
# registry swaps that name for the duration, one load at a time.
_singleton_lock = threading.RLock()


@contextlib.contextmanager
def registry_as_singleton(registry: ToolRegistry) -> Iterator[None]:
    import toolreg

    with _singleton_lock:
        previous = toolreg.registry
        toolreg.registry = registry
        try:
            yield
        finally:
            toolreg.registry = previous


def import_target(value: str) -> Any:
    """``module`` or ``module:attr.path`` → the object to hand to pluggy."""
    module_name, _, attr = value.partition(":")
    obj: Any = importlib.import_module(module_name.strip())
    for part in filter(None, attr.strip().split(".")):
        obj = getattr(obj, part)
    return obj


def purge_modules(namespaces: Sequence[str]) -> None:
    """Forget a plugin's modules, so loading it again executes them again."""
    # Runs before every pack's import. Mostly none of its modules is loaded:
    # one substring search over all the names (in C) finds that out.
    try:
        loaded = "\n" + "\n".join(sys.modules) + "\n"
    except TypeError:  # a key that is not a str: look at each name
        loaded = None
    if loaded is not None and not any(
        f"\n{ns}\n" in loaded or f"\n{ns}." in loaded for ns in namespaces
    ):
        return
    exact, prefixes = frozenset(namespaces), tuple(ns + "." for ns in namespaces)
    for name in list(sys.modules):
        if name in exact or (isinstance(name, str) and name.startswith(prefixes)):
            sys.modules.pop(name, None)


# -- the deadline and the exit guard ------------------------------------------------

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
