"""Terminal tool (toolset ``terminal``): run one shell command in the workspace root.

Output is captured by reader threads that keep only the head and tail of each
stream, so a command that prints gigabytes costs bounded memory. On timeout the
command's whole process group is killed, so pipelines and children die with it.
subprocess is imported by the first command, not when the tool registers.
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
from typing import IO, TYPE_CHECKING, Annotated

from toolreg import registry, tool_error, tool_result
from toolreg.workspace import workspace_root

from ._common import UNBOUNDED_HINTS, check_range, handler_of, reports_errors

if TYPE_CHECKING:
    import subprocess

DEFAULT_TIMEOUT = 60.0
MAX_TIMEOUT = 600.0
MAX_STREAM_BYTES = 50_000  # per stream: first half and last half are kept
_POSIX = os.name == "posix"


class _Capture:
    """Drain one pipe in a thread, remembering only its first and last bytes."""

    def __init__(self, stream: IO[bytes], limit: int = MAX_STREAM_BYTES) -> None:
        self._fd = stream.fileno()
        self._stream = stream
        self._head_limit = limit // 2
        self._tail_limit = limit - self._head_limit
        self.head = bytearray()
        self.tail = bytearray()
        self.total = 0
        # text() may run while an abandoned reader (held open by an escaped
        # process) is still appending; the lock keeps the buffers consistent.
        self._lock = threading.Lock()
        self.thread = threading.Thread(target=self._pump, daemon=True)
        self.thread.start()

    def _pump(self) -> None:
        try:
            while chunk := os.read(self._fd, 65536):
                with self._lock:
                    self._keep(chunk)
        except OSError:
            pass  # pipe closed under us; keep what was read
        finally:
            self._stream.close()

    def _keep(self, chunk: bytes) -> None:
        self.total += len(chunk)
        room = self._head_limit - len(self.head)
        if room > 0:
            self.head += chunk[:room]
            chunk = chunk[room:]
        if chunk:
            self.tail += chunk
            del self.tail[: -self._tail_limit]

    def text(self) -> str:
        with self._lock:
            head = self.head.decode("utf-8", errors="replace")
            tail = self.tail.decode("utf-8", errors="replace")
            cut = self.total - len(self.head) - len(self.tail)
        if cut <= 0:
            return head + tail
        return f"{head}\n…[{cut} bytes omitted; output was {self.total} bytes]\n{tail}"


def _kill(proc: subprocess.Popen[bytes]) -> None:
    if _POSIX:
        import signal

        # start_new_session made the shell a group leader, so its pid is the group
        # id; this reaches grandchildren that proc.kill() would orphan. The group
        # may already be gone.
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)
    else:
        proc.kill()


@registry.tool(
    name="terminal",
    toolset="terminal",
    emoji="💻",
    # A shell command can do anything the user can, network included.
    annotations={"title": "Terminal command", **UNBOUNDED_HINTS},
)
@reports_errors
def run_command(
    command: Annotated[str, "The shell command line to run."],
    timeout: Annotated[
        float,
        {"exclusiveMinimum": 0, "maximum": MAX_TIMEOUT},
        "Seconds to wait before killing the command (max 600).",
    ] = DEFAULT_TIMEOUT,
) -> str:
    """Run a shell command (/bin/sh on POSIX, cmd.exe on Windows) in the workspace root.

    Waits for it to finish; stdin is empty. Returns JSON `{exit_code, stdout, stderr,
    timed_out}`; each stream keeps its first and last 25,000 bytes with a marker for what was
    cut. On timeout the command and all its child processes are killed, timed_out is true and
    exit_code is usually negative (minus the signal number). To leave a server running, start
    it in the background with its output redirected, e.g. `nohup cmd > server.log 2>&1 &`; a
    background job still writing to the captured output is waited for and killed at the
    timeout like the command itself.
    """
    check_range("timeout", timeout, minimum=0, maximum=MAX_TIMEOUT, exclusive_minimum=True)
    if not command.strip():
        return tool_error("command must not be empty")
    if "\0" in command:
        return tool_error("command must not contain NUL bytes")
    import subprocess

    proc = subprocess.Popen(
        command,
        shell=True,
        cwd=workspace_root(),
        # No stdin: a command that prompts gets EOF instead of hanging until timeout.
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
    # A background job (`cmd &`) that inherited the pipes keeps them open after the
    # shell exits; allow it the same deadline, then kill the group so the readers end.
    for capture in (out, err):
        capture.thread.join(max(0.0, deadline - time.monotonic()))
        if capture.thread.is_alive() and not timed_out:
            timed_out = True
            _kill(proc)
    for capture in (out, err):
        capture.thread.join(timeout=5)  # a process that left the group may still hold it
    return tool_result(
        exit_code=proc.returncode,
        stdout=out.text(),
        stderr=err.text(),
        timed_out=timed_out,
    )


#: The registered handler, for callers holding the model's JSON arguments.
terminal = handler_of(run_command)
