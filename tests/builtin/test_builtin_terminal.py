"""The terminal tool: real shell commands in a temporary workspace (POSIX only)."""

from __future__ import annotations

import json
import os
import signal
import time
from pathlib import Path
from typing import Any

import pytest

from conftest import builtin_registry, registered_strictly
from toolreg.builtin_tools import terminal_tool
from toolreg.builtin_tools.terminal_tool import MAX_STREAM_BYTES, terminal

pytestmark = pytest.mark.skipif(os.name != "posix", reason="commands use POSIX sh syntax")


def run(command: str, **extra: Any) -> dict[str, Any]:
    data = json.loads(terminal({"command": command, **extra}))
    assert "error" not in data, data
    return data


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    stat = Path(f"/proc/{pid}/stat")
    try:
        # A zombie still answers kill(0) but has finished; field 3 is its state.
        return stat.read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return True


def wait_gone(pid: int, seconds: float = 5.0) -> bool:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if not alive(pid):
            return True
        time.sleep(0.05)
    return not alive(pid)


def test_stdout_and_exit_code(workspace: Path) -> None:
    assert run("echo hello") == {
        "exit_code": 0,
        "stdout": "hello\n",
        "stderr": "",
        "timed_out": False,
    }


def test_nonzero_exit_and_stderr(workspace: Path) -> None:
    data = run("echo oops >&2; exit 3")
    assert data["exit_code"] == 3
    assert data["stderr"] == "oops\n"
    assert data["stdout"] == ""


def test_runs_in_workspace_root(workspace: Path) -> None:
    assert run("pwd -P")["stdout"].strip() == str(workspace)
    run("echo made > created.txt")
    assert (workspace / "created.txt").read_text() == "made\n"


def test_stdin_is_empty_so_prompts_do_not_hang(workspace: Path) -> None:
    data = run("read answer; echo got:$answer", timeout=10)
    assert data["timed_out"] is False
    assert data["stdout"] == "got:\n"


def test_timeout_kills_the_command(workspace: Path) -> None:
    data = run("sleep 300", timeout=1)
    assert data["timed_out"] is True
    assert data["exit_code"] == -signal.SIGKILL, "killed, not waited for"


def test_timeout_kills_child_processes(workspace: Path) -> None:
    data = run("sleep 30 & echo $! > child.pid; wait", timeout=1)
    assert data["timed_out"] is True
    child = int((workspace / "child.pid").read_text())
    assert wait_gone(child), f"child {child} survived the timeout"


def test_background_job_holding_output_is_killed_at_timeout(workspace: Path) -> None:
    data = run("echo started; sleep 300 & echo $! > bg.pid", timeout=1)
    assert data["timed_out"] is True
    assert data["stdout"] == "started\n"
    assert wait_gone(int((workspace / "bg.pid").read_text()))


def test_background_job_with_redirected_output_keeps_running(workspace: Path) -> None:
    data = run("sleep 30 > /dev/null 2>&1 & echo $! > bg.pid", timeout=10)
    pid = int((workspace / "bg.pid").read_text())
    try:
        assert data["timed_out"] is False
        assert data["exit_code"] == 0
        assert alive(pid)
    finally:
        os.kill(pid, signal.SIGKILL)


def test_output_is_bounded_keeping_head_and_tail(workspace: Path) -> None:
    data = run("printf 'HEAD'; head -c 300000 /dev/zero | tr '\\0' x; printf 'TAIL'")
    out = data["stdout"]
    assert len(out) < MAX_STREAM_BYTES + 200
    assert out.startswith("HEAD")
    assert out.endswith("TAIL")
    assert "bytes omitted; output was 300008 bytes" in out


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        ({}, "command"),
        ({"command": "   "}, "empty"),
        ({"command": "echo a\0b"}, "NUL"),
        ({"command": "true", "timeout": 0}, "timeout"),
        ({"command": "true", "timeout": 601}, "timeout"),
        ({"command": "true", "timeout": "soon"}, "timeout"),
    ],
)
def test_bad_arguments_are_tool_errors(workspace: Path, args: dict[str, Any], needle: str) -> None:
    assert needle in json.loads(terminal(args))["error"]


def test_registered_with_a_strict_schema() -> None:
    registered_strictly(terminal_tool, "terminal", "terminal", ["command"])


def test_dispatch_through_registry(workspace: Path) -> None:
    reg = builtin_registry(terminal_tool)
    data = json.loads(reg.dispatch("terminal", {"command": "echo via-registry"}))
    assert data["stdout"] == "via-registry\n"
    assert data["exit_code"] == 0


def test_annotations_warn_that_a_command_can_do_anything() -> None:
    entry = builtin_registry(terminal_tool).get_entry("terminal")
    assert dict(entry.annotations) == {
        "title": "Terminal command",
        "readOnlyHint": False,
        "destructiveHint": True,
        "idempotentHint": False,
        "openWorldHint": True,
    }
