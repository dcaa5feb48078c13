"""The ``toolreg`` command line: ``list``, ``show``, ``call`` and ``doctor``.

``main`` returns the exit code instead of exiting, so tests and hosts can run it
in-process; the console script and ``python -m toolreg`` call :func:`run`.
"""

from __future__ import annotations

import contextlib
import os
import sys
from typing import TYPE_CHECKING, Any, NoReturn

from . import _gc_pause

if TYPE_CHECKING:
    from ._app import main

__all__ = ["main", "run"]


def __getattr__(name: str) -> Any:
    # ``main`` is imported on first use, so that ``run`` imports it (and all it
    # imports) with the collector paused.
    if name == "main":
        from ._app import main

        return main
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def run() -> NoReturn:
    """``main()``, then a bounded exit: the ``toolreg`` command and ``python -m toolreg``.

    Start-up runs with the garbage collector paused (see ``_gc_pause``). MCP
    servers are stopped here, within their own time limits, and the process
    then ends without joining leftover threads: a library thread stuck on a
    server that never answers, or a tool abandoned at its deadline, must not
    keep a finished command alive.
    """
    _gc_pause.pause()
    from ._app import main

    code = main()
    try:
        from toolreg import stop_mcp

        stop_mcp()
    except BaseException as exc:  # leaving anyway; say why the servers may linger
        print(f"toolreg: warning: stopping MCP servers failed: {exc!r}", file=sys.stderr)
    import logging

    logging.shutdown()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):  # a reader that left, a closed stream
            stream.flush()
    os._exit(code)
