"""The ``toolreg`` command line: ``list``, ``show``, ``call``, ``serve`` and the rest.

``main`` returns the exit code instead of exiting, so tests and hosts can run it
in-process; the console script and ``python -m toolreg`` call :func:`run`,
which also pauses the garbage collector for start-up.
"""

from __future__ import annotations

import contextlib
import gc
import os
import sys
from typing import TYPE_CHECKING, Any, NoReturn

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

    Start-up runs with the garbage collector paused (``_pause_collector``). MCP
    servers are stopped here, within their own time limits, and the process
    then ends without joining leftover threads: a library thread stuck on a
    server that never answers, or a tool abandoned at its deadline, must not
    keep a finished command alive.
    """
    _pause_collector()
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


# Starting a command imports over a hundred modules and registers the tools:
# tens of thousands of objects that live as long as the process. While they are
# made, the collector walks them again and again and finds nothing to free
# (about a tenth of ``toolreg list``). ``main`` called in-process never pauses:
# a host's objects are not toolreg's to freeze.
_paused = False


def _pause_collector() -> None:
    """Switch the garbage collector off until :func:`_resume_collector`, if it is on."""
    global _paused
    if gc.isenabled():
        gc.disable()
        _paused = True


def _resume_collector() -> None:
    """Set aside what start-up made (``gc.freeze``) and switch the collector back on.

    Nothing unless :func:`_pause_collector` paused it; a long command (``call``,
    ``serve``) then collects its own garbage as usual.
    """
    global _paused
    if _paused:
        _paused = False
        gc.freeze()
        gc.enable()
