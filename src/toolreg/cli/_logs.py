"""Logging for one CLI run: everything to stderr, so stdout stays machine-readable."""

from __future__ import annotations

import logging
import sys
from collections.abc import Iterator
from contextlib import contextmanager

_FORMAT = "%(levelname)s %(name)s: %(message)s"


class _StderrHandler(logging.StreamHandler):
    """Writes to whatever ``sys.stderr`` is *now* (pytest's capsys swaps it per test)."""

    def __init__(self) -> None:
        super().__init__()

    @property
    def stream(self):  # type: ignore[override]
        return sys.stderr

    @stream.setter
    def stream(self, _value) -> None:  # StreamHandler.__init__ assigns; ignore it
        pass


class _QuietFormatter(logging.Formatter):
    """Drops tracebacks attached to log records; ``-v`` uses the plain formatter."""

    def formatException(self, ei) -> str:
        return ""

    def formatStack(self, stack_info: str) -> str:
        return ""


@contextmanager
def cli_logging(verbose: bool) -> Iterator[None]:
    """Route root logging to stderr at WARNING (DEBUG when verbose), then restore.

    Restoring matters because ``main`` also runs in-process (tests, hosts), and a
    handler left on the root logger would duplicate every later record.
    """
    root = logging.getLogger()
    handler = _StderrHandler()
    # A library logging a warning with exc_info (a failing check_fn, say) would
    # otherwise put a traceback in front of a user who did not ask for one.
    handler.setFormatter(logging.Formatter(_FORMAT) if verbose else _QuietFormatter(_FORMAT))
    old_level = root.level
    root.addHandler(handler)
    root.setLevel(logging.DEBUG if verbose else logging.WARNING)
    try:
        yield
    finally:
        root.removeHandler(handler)
        root.setLevel(old_level)


@contextmanager
def quiet_loading(verbose: bool) -> Iterator[None]:
    """Hush the per-plugin log lines while loading, unless verbose.

    Each refused or failed pack is summed up in one warning line afterwards, and
    ``toolreg plugins`` and ``toolreg doctor`` give the details; repeating them
    on every command would bury the command's own output.
    """
    if verbose:
        yield
        return
    loggers = [logging.getLogger(name) for name in ("toolreg.plugins", "toolreg.registry")]
    levels = [logger.level for logger in loggers]
    for logger in loggers:
        logger.setLevel(logging.CRITICAL)
    try:
        yield
    finally:
        for logger, level in zip(loggers, levels, strict=True):
            logger.setLevel(level)
