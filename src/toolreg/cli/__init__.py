"""The ``toolreg`` command line: ``list``, ``show``, ``call`` and ``doctor``.

``main`` returns the exit code instead of exiting, so tests and hosts can run it
in-process; the console script and ``python -m toolreg`` pass it to ``SystemExit``.
"""

from __future__ import annotations

from ._app import main

__all__ = ["main"]
