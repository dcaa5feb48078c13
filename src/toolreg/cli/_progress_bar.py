"""``toolreg call``'s progress bar: a tool's reports on stderr, redrawn in place on a TTY.

On a pipe or a file nothing is drawn, so scripts read stderr as before.
"""

from __future__ import annotations

import sys
import threading
from typing import TextIO

from .._contract.tool_context import ProgressCallback

WIDTH = 30


class ProgressBar:
    """The ``progress=`` callback of one call; :meth:`close` clears the line."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream
        self._lock = threading.Lock()
        self._drawn = False

    def __call__(self, progress: float, total: float | None, message: str | None) -> None:
        if total is not None and total > 0:
            done = max(0.0, min(1.0, progress / total))
            filled = round(done * WIDTH)
            line = f"[{'#' * filled}{'.' * (WIDTH - filled)}] {done:4.0%}"
        else:
            line = f"[{progress:g}]"
        if message:
            line += f" {message}"
        with self._lock:
            self._stream.write("\r\x1b[2K" + line[:200])
            self._stream.flush()
            self._drawn = True

    def close(self) -> None:
        with self._lock:
            if self._drawn:
                self._stream.write("\r\x1b[2K")
                self._stream.flush()


def progress_bar(stream: TextIO | None = None) -> ProgressBar | None:
    """A bar on ``stream`` (stderr) when it is a terminal; None on a pipe or a file."""
    stream = stream if stream is not None else sys.stderr
    isatty = getattr(stream, "isatty", None)
    return ProgressBar(stream) if isatty is not None and isatty() else None


__all__ = ["ProgressBar", "ProgressCallback", "progress_bar"]
