"""The ``toolreg`` command line: ``list``, ``show``, ``call`` and ``doctor``.

``main`` returns the exit code instead of exiting, so tests and hosts can run it
in-process; the console script and ``python -m toolreg`` call :func:`run`.
"""

from __future__ import annotations

import contextlib
import logging
import os
import sys
from typing import NoReturn

from ._app import main

__all__ = ["main", "run"]


def run() -> NoReturn:
    """``main()``, then a bounded exit: the ``toolreg`` command and ``python -m toolreg``.

    MCP servers are stopped here, within their own time limits, and the process
    then ends without joining leftover threads: a library thread stuck on a
    server that never answers, or a tool abandoned at its deadline, must not
    keep a finished command alive.
    """
    code = main()
    try:
        from toolreg import stop_mcp

        stop_mcp()
    except BaseException as exc:  # leaving anyway; say why the servers may linger
        print(f"toolreg: warning: stopping MCP servers failed: {exc!r}", file=sys.stderr)
    logging.shutdown()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):  # a reader that left, a closed stream
            stream.flush()
    os._exit(code)
