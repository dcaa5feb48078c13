"""``toolreg call`` draws a tool's progress on stderr when stderr is a terminal, and only then.

The ``count_up`` tool of ``serve_harness``'s plugin reports ``1..steps`` of
``steps``; the command runs as a real process, its stderr a pipe or a pty.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from serve_harness import ServeSetup


def call(setup: ServeSetup, stderr: int) -> subprocess.CompletedProcess[str]:
    argv = [sys.executable, "-m", "toolreg", "call", "count_up", '{"steps": 4}']
    argv[3:3] = ["--config", str(setup.config)]
    return subprocess.run(
        argv,
        env=setup.env,
        cwd=setup.tmp,
        stdout=subprocess.PIPE,
        stderr=stderr,
        text=True,
        timeout=60,
        check=False,
    )


def test_on_a_pipe_stderr_gets_no_bar(serve_setup: ServeSetup) -> None:
    done = call(serve_setup, subprocess.PIPE)
    assert (done.returncode, done.stdout.strip()) == (0, "counted 4"), done.stderr
    assert "\r" not in done.stderr and "step" not in done.stderr


@pytest.mark.skipif(sys.platform == "win32", reason="needs a pty")
def test_on_a_terminal_stderr_shows_the_bar_and_clears_it(serve_setup: ServeSetup) -> None:
    import pty

    leader, follower = pty.openpty()
    try:
        done = call(serve_setup, follower)
        os.close(follower)
        chunks = []
        while True:
            try:
                chunk = os.read(leader, 4096)
            except OSError:
                break
            if not chunk:
                break
            chunks.append(chunk)
    finally:
        os.close(leader)
    drawn = b"".join(chunks).decode()
    assert done.returncode == 0 and done.stdout.strip() == "counted 4"
    assert "[##############################] 100% step 4 of 4" in drawn
    assert "step 1 of 4" in drawn
    assert drawn.rstrip("\n").endswith("\r\x1b[2K")  # the line is cleared before the answer
