"""``toolreg call`` answers an ``ask`` rule: a y/N prompt on a real terminal, or ``--yes``.

The prompts run ``toolreg`` as a real process on a pseudo-terminal, as a person
at a terminal would have it; without one the call is denied with ``approval_required``.
"""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(os.name == "nt", reason="POSIX pseudo-terminals")

ASK = '[permissions]\nask = ["write_*"]\ndeny = ["terminal"]\n'
ESCAPE = "\x1b[2K"  # erases the terminal's line: a way to rewrite the prompt
# Run toolreg with the pseudo-terminal as its controlling terminal (as a login shell
# has it: /dev/tty opens), or, with "stdin", only as its standard streams.
_ON_TTY = """\
import fcntl, os, sys, termios
if sys.argv[1] == "ctty":
    fcntl.ioctl(0, termios.TIOCSCTTY, 0)
os.execv(sys.executable, [sys.executable, "-m", "toolreg", *sys.argv[2:]])
"""


def _env(tmp_path: Path) -> dict[str, str]:
    return {
        **os.environ,
        "TOOLREG_WORKSPACE": str(tmp_path),
        "TOOLREG_PLUGINS": "",
        "TOOLREG_CACHE_DIR": str(tmp_path / "cache"),
    }


def _config(tmp_path: Path, text: str = ASK) -> str:
    path = tmp_path / "toolreg.toml"
    path.write_text(text)
    return str(path)


def on_terminal(tmp_path: Path, answer: str, *argv: str, ctty: bool = True) -> tuple[int, str, str]:
    """Run ``toolreg argv`` on a pseudo-terminal, type ``answer`` at the prompt.

    Returns (exit code, what the terminal showed, the prompt as shown before the answer).
    """
    master, slave = os.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-c", _ON_TTY, "ctty" if ctty else "stdin", *argv],
        stdin=slave,
        stdout=slave,
        stderr=slave,
        env=_env(tmp_path),
        cwd=tmp_path,
        start_new_session=True,
    )
    os.close(slave)
    shown, prompt = b"", b""
    deadline = time.monotonic() + 60
    try:
        while True:
            ready, _, _ = select.select([master], [], [], max(0.0, deadline - time.monotonic()))
            if not ready:
                pytest.fail(f"no end of output in time: {shown!r}")
            try:
                chunk = os.read(master, 4096)
            except OSError:  # EIO: the process closed the terminal's last end
                break
            if not chunk:
                break
            shown += chunk
            if not prompt and b"[y/N] " in shown:
                prompt = shown
                os.write(master, answer.encode() + b"\n")
        code = proc.wait(timeout=60)
    finally:
        os.close(master)
        if proc.poll() is None:
            proc.kill()
    return code, shown.decode("utf-8", "replace"), prompt.decode("utf-8", "replace")


def without_terminal(tmp_path: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    """``toolreg argv`` on pipes, in a session of its own: no terminal to ask on."""
    return subprocess.run(
        [sys.executable, "-m", "toolreg", *argv],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        env=_env(tmp_path),
        cwd=tmp_path,
        start_new_session=True,
        timeout=60,
        check=False,
    )


def _write(tmp_path: Path, content: str = f"{ESCAPE}owned") -> list[str]:
    args = json.dumps({"path": "a.txt", "content": content})
    return ["--config", _config(tmp_path), "call", "write_file", args]


def test_yes_at_the_prompt_runs_the_call_after_showing_tool_arguments_and_rule(tmp_path):
    code, shown, prompt = on_terminal(tmp_path, "y", *_write(tmp_path))
    assert code == 0, shown
    assert "tool write_file needs approval" in prompt
    assert "rule 'write_*' (permissions.ask[0])" in prompt
    assert '"path": "a.txt"' in prompt
    # The escape reaches the terminal as text, never as the sequence itself.
    assert '"content": "\\u001b[2Kowned"' in prompt
    assert ESCAPE not in shown
    assert prompt.rstrip().endswith("Run write_file? [y/N]")
    assert (tmp_path / "a.txt").read_text() == f"{ESCAPE}owned"
    assert '"bytes_written"' in shown.removeprefix(prompt)


def test_no_at_the_prompt_denies_the_call(tmp_path):
    code, shown, prompt = on_terminal(tmp_path, "n", *_write(tmp_path))
    assert code == 1
    assert "Run write_file? [y/N]" in prompt
    result = json.loads(shown.removeprefix(prompt).splitlines()[-1])
    assert (result["code"], result["rule"]) == ("denied", "write_*")
    assert "the operator answered no" in result["error"]
    assert not (tmp_path / "a.txt").exists()


def test_a_terminal_on_stdin_alone_is_asked_too(tmp_path):
    code, shown, prompt = on_terminal(tmp_path, "yes", *_write(tmp_path), ctty=False)
    assert code == 0, shown
    assert "rule 'write_*' (permissions.ask[0])" in prompt
    assert (tmp_path / "a.txt").exists()


def test_a_long_argument_is_cut_with_a_note_in_the_prompt(tmp_path):
    code, shown, prompt = on_terminal(tmp_path, "n", *_write(tmp_path, "x" * 100_000))
    assert code == 1
    assert "(1 value(s) longer than 300 characters cut)" in prompt
    assert len(prompt) < 2_000
    assert prompt.rstrip().endswith("Run write_file? [y/N]")


def test_without_a_terminal_an_ask_is_denied_as_approval_required(tmp_path):
    done = without_terminal(tmp_path, *_write(tmp_path))
    assert done.returncode == 1
    result = json.loads(done.stdout)
    assert (result["code"], result["rule"]) == ("approval_required", "write_*")
    assert "pass --yes" in done.stderr
    assert not (tmp_path / "a.txt").exists()


def test_yes_approves_an_ask_without_a_terminal(tmp_path):
    argv = _write(tmp_path)
    done = without_terminal(tmp_path, *argv[:3], "--yes", *argv[3:])
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["created"] is True
    assert "--yes approves write_file (rule 'write_*' asks)" in done.stderr
    assert (tmp_path / "a.txt").exists()


def test_yes_never_turns_a_deny_into_an_allow(tmp_path):
    config = _config(tmp_path, '[permissions]\ndeny = ["write_file"]\nask = ["write_*"]\n')
    args = json.dumps({"path": "a.txt", "content": "x"})
    done = without_terminal(tmp_path, "--config", config, "call", "--yes", "write_file", args)
    assert done.returncode == 1
    result = json.loads(done.stdout)
    assert (result["code"], result["rule"]) == ("denied", "write_file")
    assert not (tmp_path / "a.txt").exists()


# -- the prompt's text, in-process ---------------------------------------------------------


def test_every_character_a_terminal_acts_on_is_escaped():
    from toolreg.cli._approval import escape, show_arguments

    hostile = "a\x1b]0;title\x07\x9b2K\u202eevil\u200b\x7fz"
    assert escape(hostile) == "a\\u001b]0;title\\u0007\\u009b2K\\u202eevil\\u200b\\u007fz"
    lines = show_arguments({hostile: [hostile], "ok": "héllo wörld"})
    assert all(ch.isprintable() for line in lines for ch in line)
    assert '  "ok": "héllo wörld"' in lines  # printable text stays as written


def test_a_long_listing_is_cut_with_a_note():
    from toolreg.cli._approval import MAX_LINES, show_arguments

    lines = show_arguments({"items": list(range(500))})
    assert len(lines) == MAX_LINES + 1
    assert lines[-1] == f"({504 - MAX_LINES} more line(s) of arguments not shown)"
