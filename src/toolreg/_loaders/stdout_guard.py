"""Keep stdout for the program's own output while other people's code runs.

Loading packs and calling tools runs code that may print; a command whose
stdout is JSON, or a protocol stream (``toolreg serve`` over stdio, an
isolated pack's process), must not carry it.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager, redirect_stdout, suppress


@contextmanager
def fd1_to_stderr() -> Iterator[None]:
    """Point fd 1 at stderr, for writes Python's redirect_stdout cannot catch (C, children)."""
    try:
        sys.stdout.flush()
        saved = os.dup(1)
        os.dup2(2, 1)
    except (OSError, ValueError, AttributeError):  # no real fds (embedded, tests)
        yield
        return
    try:
        yield
    finally:
        with suppress(OSError, ValueError):
            sys.stdout.flush()
        os.dup2(saved, 1)
        os.close(saved)


@contextmanager
def stdout_to_stderr() -> Iterator[None]:
    """Everything written to stdout goes to stderr: Python prints and raw fd 1 alike.

    For the steps that run other people's code (loading, calling a tool), so
    that only the command's own output reaches stdout.
    """
    with fd1_to_stderr(), redirect_stdout(sys.stderr):
        yield
