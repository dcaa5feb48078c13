"""A pack's modules: imported under a deadline while ``toolreg.registry`` names the
registry being loaded, and forgotten again so that a reload executes them afresh.

Imports run on a worker thread, where ``os._exit`` is refused; installed packs
are loaded by an :class:`ImportLoop`.
"""

from __future__ import annotations

import contextlib
import contextvars
import importlib
import os
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, NoReturn, TypeVar

from .._dispatch.workers import IMPORT_POOL, DeadlineExceeded, NoCapacity

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


def entry_module(value: str) -> str:
    """The module an entry point's value names: ``"a.b:c [extra]"`` -> ``"a.b"``."""
    return value.partition(":")[0].partition("[")[0].strip()


def locate_module(module: str) -> list[tuple[str, str, str]]:
    """Where importing ``module`` finds it and each package above it, with none of
    their code run: ``(name, kind, file)``, outermost first.

    ``kind`` is ``"file"`` (``file`` is its code), ``"namespace"`` (a folder,
    no code), ``"elsewhere"`` (built into the interpreter, frozen, or a loader
    with no file: ``file`` is its origin) or ``"missing"`` (the import will
    fail, or the package above makes it). Asked of ``sys.meta_path`` as the
    import system asks it, a package's own folders passed down, so no
    package's ``__init__`` runs. ``sys.modules`` is not read: the pack's
    namespace is forgotten before it is imported (:func:`purge_modules`).
    """
    found: list[tuple[str, str, str]] = []
    path: list[str] | None = None
    parts = module.split(".")
    for depth in range(1, len(parts) + 1):
        name = ".".join(parts[:depth])
        spec = None
        for finder in sys.meta_path:
            find = getattr(finder, "find_spec", None)
            spec = find(name, path, None) if find is not None else None
            if spec is not None:
                break
        if spec is None:
            found.append((name, "missing", ""))
            break
        locations = spec.submodule_search_locations
        if spec.has_location and isinstance(spec.origin, str):
            found.append((name, "file", spec.origin))
        elif locations is not None and spec.origin in (None, "namespace"):
            found.append((name, "namespace", ""))
        else:
            found.append((name, "elsewhere", str(spec.origin)))
        if locations is None:
            if depth < len(parts):
                found.append((".".join(parts[: depth + 1]), "missing", ""))
            break
        path = list(locations)
    return found


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
        raise _timed_out(timeout) from None


def refuse_late_registrations(
    registry: ToolRegistry, plugin_id: str, bindings: Sequence[tuple[str, Any, Any]]
) -> None:
    """Bind a timed-out pack to no tool names: its import runs on, and what it registers
    later stays its own, and is refused. ``bindings``: (namespace, files, paths) as bound.
    """
    for namespace, files, paths in bindings:
        registry.register_plugin_override_policy(
            namespace, False, plugin_id=plugin_id, paths=paths, tool_patterns=(), files=files
        )


def _timed_out(timeout: float) -> ImportTimeout:
    return ImportTimeout(
        f"its import did not finish within {timeout:g} s ([plugins] import_timeout); "
        "it may still be running"
    )


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


# -- one worker for a whole pack loop ---------------------------------------------


class _Abandoned(BaseException):
    """Raised on a loop worker whose caller gave up on it: it touches nothing more.

    Not an Exception, so no ``except Exception`` on the way out catches it.
    """


# The number of the loop a thread works for, while it does (see ImportLoop.run).
_loop_worker = threading.local()


class ImportLoop:
    """A load's pack loop on one import worker, its caller watching each import's deadline.

    A thread hand-off per import cost more than many an import: two thread
    switches, with the pack's data moving between CPUs. Here the caller hands
    the whole loop over once. The worker publishes when each import starts; the
    caller sleeps until that import's deadline, until the worker asks it to run
    something on its own thread (setup hooks, a process-isolated pack), or until
    the loop is done. Past a deadline the caller gives that worker up (it stops,
    touching nothing, once its import returns), fails the pack and continues the
    loop on a new worker. Off a loop worker (local plugins; every import worker
    stuck), ``load`` hands each import to a worker of its own and ``on_caller``
    calls at once.
    """

    def __init__(self, timeout: float) -> None:
        self.timeout = timeout
        self._cond = threading.Condition(threading.Lock())
        # Everything below is read and written under _cond's lock.
        self._worker = 0  # the live worker's number: a worker with any other is given up
        self._since: float | None = None  # when the running import started
        self._recover: Callable[[ImportTimeout], Any] | None = None
        self._request: tuple[Callable[..., Any], tuple[Any, ...]] | None = None
        self._reply: tuple[bool, Any] | None = None
        self._done = False
        self._error: BaseException | None = None  # the job's own, raised on the caller

    def run(self, job: Callable[[], None], recovered: Callable[[Any], Any]) -> None:
        """Run ``job`` on import workers; past a deadline, on a new one.

        ``recovered`` gets what the timed-out import's ``recover`` returned;
        then ``job`` runs again and must pick up after that pack.
        """
        _guard_exit()
        while True:
            with self._cond:
                self._worker += 1
                number = self._worker
                self._since = self._recover = self._request = self._reply = self._error = None
                self._done = False
            try:
                future = IMPORT_POOL.submit(None, self._work, number, job)
            except NoCapacity:
                # Every import worker is stuck: per import, each pack fails as it would.
                return job()
            recover = self._watch()
            if recover is None:
                return
            IMPORT_POOL.abandon(future)
            recovered(recover(_timed_out(self.timeout)))

    def load(self, load: Callable[[T], Any], target: T, recover: Callable[[Any], Any]) -> Any:
        """``load(target)`` under the deadline; ``recover`` fails the pack if it passes."""
        number = getattr(_loop_worker, "number", None)
        if number is None:
            return import_with_deadline(self.timeout, load, target)
        with self._cond:
            if self._worker != number:
                raise _Abandoned
            self._since, self._recover = time.monotonic(), recover
        try:
            # Each import gets its own copy of the context, as a hand-off gives it.
            return contextvars.copy_context().run(load, target)
        finally:
            with self._cond:
                if self._worker != number:
                    raise _Abandoned  # noqa: B012 - given up: the result is no longer ours
                self._since = self._recover = None

    def on_caller(self, fn: Callable[..., T], *args: Any) -> T:
        """``fn(*args)`` on the caller's thread; its exception is raised here."""
        number = getattr(_loop_worker, "number", None)
        if number is None:
            return fn(*args)
        with self._cond:
            if self._worker != number:
                raise _Abandoned
            self._request = (fn, args)
            self._cond.notify_all()
            while self._reply is None and self._worker == number:
                self._cond.wait()
            if self._worker != number:
                raise _Abandoned
            ok, value = self._reply
            self._reply = None
        if ok:
            return value  # type: ignore[no-any-return]
        raise value

    def registry_swapped(self, registry: ToolRegistry) -> contextlib.AbstractContextManager[None]:
        """``registry_as_singleton``, unless the caller of this loop worker holds it."""
        if getattr(_loop_worker, "number", None) is None:
            return registry_as_singleton(registry)
        return contextlib.nullcontext()

    def _work(self, number: int, job: Callable[[], None]) -> None:
        _loop_worker.number = number
        error = None
        try:
            job()
        except _Abandoned:
            return
        except BaseException as exc:  # raised again on the caller's thread
            error = exc
        finally:
            _loop_worker.number = None
        with self._cond:
            if self._worker == number:
                self._done, self._error = True, error
                self._cond.notify_all()

    def _watch(self) -> Callable[[ImportTimeout], Any] | None:
        """Serve the worker until the loop ends (None) or an import passes its deadline."""
        cond = self._cond
        with cond:
            try:
                while True:
                    if self._done:
                        if self._error is not None:
                            raise self._error
                        return None
                    if self._request is not None:
                        self._reply = self._serve()
                        cond.notify_all()
                        continue
                    wait = None  # no deadline: until the worker calls
                    if self.timeout and self._since is None:
                        wait = self.timeout  # then look again: an import may be running
                    elif self.timeout:
                        wait = self._since + self.timeout - time.monotonic()
                        if wait <= 0:
                            self._worker += 1  # given up
                            return self._recover
                    cond.wait(wait)
            except BaseException:
                self._worker += 1  # the caller is leaving (an interrupt): the worker stops
                cond.notify_all()
                raise

    def _serve(self) -> tuple[bool, Any]:
        """Run the worker's request, without the lock; called with it held."""
        assert self._request is not None
        fn, args = self._request
        self._request = None
        self._cond.release()
        try:
            return True, fn(*args)
        except (Exception, SystemExit) as exc:  # the pack's, handled where it loads
            return False, exc
        finally:
            self._cond.acquire()
