"""Progress on stderr for a person at a terminal, redrawn in place and erased when done.

Two lines: ``connecting to 2 MCP servers… fs ✓ web …`` while MCP servers
connect, and ``toolreg call``'s bar for a tool's progress reports. Nothing is
written when stderr is not a terminal: a pipe or a log file gets no carriage
returns and no escape codes, so scripts read stderr as before.
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TextIO

#: How often the line is redrawn, in seconds.
_INTERVAL = 0.1
_ERASE = "\r\x1b[K"


def on_terminal(stream: TextIO) -> bool:
    """Whether ``stream`` is a terminal that takes a line redrawn in place."""
    try:
        return stream.isatty() and os.environ.get("TERM") != "dumb"
    except (AttributeError, ValueError):
        return False


@contextmanager
def connecting(
    names: list[str], statuses: Callable[[], list[dict[str, Any]]], stream: TextIO | None = None
) -> Iterator[None]:
    """Show the servers' progress on ``stream`` (stderr) while the body connects them."""
    stream = stream if stream is not None else sys.stderr
    if not names or not on_terminal(stream):
        yield
        return
    marks = _marks(stream)
    done = threading.Event()

    def draw() -> None:
        try:
            states = {s["name"]: s.get("state") for s in statuses()}
        except Exception:  # asked mid-start (the MCP client still importing): not yet known
            states = {}
        parts = [
            f"{name} {marks.get(states.get(name, 'connecting'), marks['failed'])}" for name in names
        ]
        plural = "s" if len(names) > 1 else ""
        stream.write(
            f"{_ERASE}connecting to {len(names)} MCP server{plural}{marks['dots']} "
            + " ".join(parts)
        )
        stream.flush()

    def run() -> None:
        while not done.wait(_INTERVAL):
            draw()

    thread = threading.Thread(target=run, name="toolreg-mcp-progress", daemon=True)
    draw()
    thread.start()
    try:
        yield
    finally:
        done.set()
        thread.join()
        draw()  # the settled states, for anyone recording the terminal
        stream.write(_ERASE)
        stream.flush()


def _marks(stream: TextIO) -> dict[str, str]:
    fancy = {"connecting": "\u2026", "connected": "\u2713", "failed": "\u2717", "dots": "\u2026"}
    fancy["disabled"] = "off"  # turned off by [toolsets]: never started
    try:
        "".join(fancy.values()).encode(getattr(stream, "encoding", None) or "ascii")
    except (UnicodeError, LookupError):
        return {
            "connecting": "...",
            "connected": "ok",
            "failed": "failed",
            "dots": "...",
            "disabled": "off",
        }
    return fancy


# -- toolreg call's bar -------------------------------------------------------------

#: The bar's width, in characters.
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
