"""Run one program (no shell) with bounded output and a hard deadline.

Each output stream is drained by a thread that keeps only its beginning, so a
program that prints gigabytes costs bounded memory and never blocks on a full
pipe. On timeout the program's whole process group is killed, so anything it
started dies with it.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import threading
import time
from pathlib import Path
from typing import IO, Any

#: Characters kept per stream, including the truncation marker.
MAX_STREAM_CHARS = 8_000
# UTF-8 needs at most 4 bytes a character, so this many bytes always decode to
# at least MAX_STREAM_CHARS characters when there is that much output.
_KEEP_BYTES = MAX_STREAM_CHARS * 4
_POSIX = os.name == "posix"


class _Capture:
    """Drain one pipe in a thread, keeping its first bytes and counting the rest."""

    def __init__(self, stream: IO[bytes]) -> None:
        self._stream = stream
        self.kept = bytearray()
        self.total = 0
        # text() may run while a reader held open by an escaped child still appends.
        self._lock = threading.Lock()
        self.thread = threading.Thread(target=self._pump, daemon=True)
        self.thread.start()

    def _pump(self) -> None:
        fd = self._stream.fileno()
        try:
            while chunk := os.read(fd, 65536):
                with self._lock:
                    self.total += len(chunk)
                    room = _KEEP_BYTES - len(self.kept)
                    if room > 0:
                        self.kept += chunk[:room]
        except OSError:
            pass  # pipe closed under us; keep what was read
        finally:
            self._stream.close()

    def text(self) -> str:
        """The output, at most MAX_STREAM_CHARS characters including the marker."""
        with self._lock:
            text = self.kept.decode("utf-8", errors="replace")
            complete = self.total == len(self.kept)
            total = self.total
        if complete and len(text) <= MAX_STREAM_CHARS:
            return text
        marker = f"\n…[output truncated; the stream was {total} bytes]"
        return text[: MAX_STREAM_CHARS - len(marker)] + marker


def _kill(proc: subprocess.Popen[bytes]) -> None:
    if _POSIX:
        # start_new_session made the program a group leader: its pid is the group
        # id, and killing the group reaches children that proc.kill() would orphan.
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)
    else:
        proc.kill()


def run_program(
    argv: list[str], executable: str, *, cwd: Path, env: dict[str, str], timeout: float
) -> dict[str, Any]:
    """Run ``argv`` without a shell; return ``{exit_code, stdout, stderr, timed_out}``."""
    proc = subprocess.Popen(
        argv,
        executable=executable,
        cwd=cwd,
        env=env,
        # No stdin: a program that reads it (cat with no file) gets EOF, not a hang.
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=_POSIX,
    )
    assert proc.stdout is not None and proc.stderr is not None
    deadline = time.monotonic() + timeout
    out, err = _Capture(proc.stdout), _Capture(proc.stderr)
    timed_out = False
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        timed_out = True
        _kill(proc)
        proc.wait()
    # A child that outlived the program may still hold the pipes; give it the same
    # deadline, then kill the group so the readers finish.
    for capture in (out, err):
        capture.thread.join(max(0.0, deadline - time.monotonic()))
        if capture.thread.is_alive() and not timed_out:
            timed_out = True
            _kill(proc)
    for capture in (out, err):
        capture.thread.join(timeout=2)
    return {
        "exit_code": proc.returncode,
        "stdout": out.text(),
        "stderr": err.text(),
        "timed_out": timed_out,
    }
