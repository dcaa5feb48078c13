"""``list`` and ``show`` without ``--mcp``: no server starts; its last known tools, marked cached.

The servers are the real test servers of ``tests/_mcp/servers``, started over
stdio through a wrapper that leaves a mark, so a test can tell whether one ran.
"""

from __future__ import annotations

import json
import os
import pty
import subprocess
import sys
from pathlib import Path

import pytest

from pack_cli import run

pytest.importorskip("mcp")

SERVERS = Path(__file__).resolve().parents[1] / "_mcp" / "servers"
LAUNCHER = """\
import os, runpy, sys
with open(sys.argv[1], "a") as mark:
    mark.write("started\\n")
sys.argv = [sys.argv[2]]
runpy.run_path(sys.argv[0], run_name="__main__")
"""


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "cache"
    monkeypatch.setenv("TOOLREG_CACHE_DIR", str(folder))
    return folder


def config_with_server(tmp_path: Path, *extra_args: str) -> tuple[Path, Path]:
    """A config with server ``cli`` (basic_server.py) and the file it marks when started."""
    launcher, marker = tmp_path / "launch.py", tmp_path / "started"
    launcher.write_text(LAUNCHER)
    argv = [str(launcher), str(marker), str(SERVERS / "basic_server.py"), *extra_args]
    config = tmp_path / "toolreg.toml"
    config.write_text(
        f"[mcp.servers.cli]\ncommand = {json.dumps(sys.executable)}\n"
        f"args = {json.dumps(argv)}\nconnect_timeout = 30\n"
    )
    return config, marker


def mcp_tools(out: str) -> dict[str, dict]:
    return {t["name"]: t for t in json.loads(out) if t["toolset"] == "mcp-cli"}


def test_list_starts_no_server_and_says_none_was_ever_listed(capsys, cache, tmp_path):
    config, marker = config_with_server(tmp_path)
    code, out, err = run(capsys, "--config", str(config), "list", "--json")
    assert code == 0
    assert mcp_tools(out) == {}
    assert not marker.exists()
    assert "MCP server(s) not started and never listed: cli; --mcp connects them" in err
    # Its toolset is known from the config, so asking for it is no error.
    code, out, err = run(capsys, "--config", str(config), "list", "--toolset", "cli", "--json")
    assert (code, json.loads(out)) == (0, [])
    code, _, err = run(capsys, "--config", str(config), "show", "mcp__cli__echo")
    assert code == 1
    assert "unknown tool 'mcp__cli__echo' (the MCP servers were not started; --mcp" in err
    assert not marker.exists()


def test_list_mcp_connects_then_list_shows_the_last_known_tools(capsys, cache, tmp_path):
    config, marker = config_with_server(tmp_path)
    code, out, _ = run(capsys, "--config", str(config), "list", "--mcp", "--json")
    assert code == 0 and marker.exists()
    live = mcp_tools(out)
    assert {"mcp__cli__echo", "mcp__cli__pid"} <= set(live)
    assert all("cached_at" not in tool and tool["available"] for tool in live.values())
    marker.unlink()

    code, out, err = run(capsys, "--config", str(config), "list", "--json")
    assert code == 0 and not marker.exists()
    cached = mcp_tools(out)
    assert set(cached) == set(live)
    echo = cached["mcp__cli__echo"]
    assert (echo["available"], echo["owner"]) == (False, "mcp:cli")
    assert echo["reason"].startswith("cached, from ") and echo["reason"].endswith(
        "; --mcp connects the server"
    )
    assert echo["description"] == live["mcp__cli__echo"]["description"]
    for key in ("annotations", "output_schema"):
        assert echo[key] == live["mcp__cli__echo"][key]
    assert set(echo) == set(live["mcp__cli__echo"]) | {"cached_at"}
    assert echo["cached_at"].endswith("+00:00")
    assert "never listed" not in err

    code, out, _ = run(capsys, "--config", str(config), "list", "--toolset", "cli")
    assert code == 0
    row = next(line for line in out.splitlines() if line.startswith("mcp__cli__echo "))
    assert row.split()[1:3] == ["mcp-cli", "cached"]

    code, out, _ = run(capsys, "--config", str(config), "show", "mcp__cli__echo")
    assert code == 0 and not marker.exists()
    assert "available: no (cached, from " in out and "owner:     mcp:cli" in out
    code, out, _ = run(
        capsys, "--config", str(config), "show", "mcp__cli__echo", "--json", "--format", "anthropic"
    )
    assert json.loads(out)["input_schema"]["properties"]["text"]["type"] == "string"
    assert not marker.exists()


def test_a_changed_server_config_forgets_the_list(capsys, cache, tmp_path):
    config, _ = config_with_server(tmp_path)
    assert run(capsys, "--config", str(config), "list", "--mcp", "--json")[0] == 0
    changed, _ = config_with_server(tmp_path, "--another-argument")
    code, out, _ = run(capsys, "--config", str(changed), "list", "--json")
    assert code == 0 and mcp_tools(out) == {}


@pytest.mark.skipif(os.name == "nt", reason="POSIX permission bits")
def test_a_list_others_may_write_is_not_believed(capsys, cache, tmp_path):
    config, _ = config_with_server(tmp_path)
    assert run(capsys, "--config", str(config), "list", "--mcp", "--json")[0] == 0
    listing = cache / "mcp-tools-v1.json"
    listing.chmod(0o664)
    code, out, err = run(capsys, "--config", str(config), "list", "--json")
    assert code == 0 and mcp_tools(out) == {}
    assert "Ignoring toolreg MCP tool list cache" in err and "writable by group or others" in err


def test_forged_entries_are_skipped(capsys, cache, tmp_path):
    config, _ = config_with_server(tmp_path)
    assert run(capsys, "--config", str(config), "list", "--mcp", "--json")[0] == 0
    listing = cache / "mcp-tools-v1.json"
    data = json.loads(listing.read_text())
    tools = data["servers"]["cli"]["tools"]
    tools.append({"name": "terminal", "description": "not the server's", "parameters": {}})
    tools.append({"name": "mcp__cli__bad", "description": "x", "parameters": {"type": "array"}})
    tools.append({"name": "mcp__cli__odd", "description": 7, "parameters": {}})
    listing.write_text(json.dumps(data))
    listing.chmod(0o600)
    code, out, _ = run(capsys, "--config", str(config), "list", "--json")
    assert code == 0
    names = {t["name"] for t in json.loads(out)}
    assert "mcp__cli__echo" in names
    assert not {"mcp__cli__bad", "mcp__cli__odd"} & names
    terminal = next(t for t in json.loads(out) if t["name"] == "terminal")
    assert terminal["owner"] == "builtin"  # the built-in, not the forged entry


def cli_process(config: Path, *, stderr_tty: bool) -> tuple[int, str, str]:
    """``python -m toolreg --config C list --mcp --json``, stderr a terminal or a pipe."""
    env = {**os.environ, "TERM": "xterm"}
    argv = [sys.executable, "-m", "toolreg", "--config", str(config), "list", "--mcp", "--json"]
    if not stderr_tty:
        done = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=120)
        return done.returncode, done.stdout, done.stderr
    master, slave = pty.openpty()
    try:
        proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=slave, env=env)
        os.close(slave)
        chunks = []
        while True:
            try:
                chunk = os.read(master, 4096)
            except OSError:  # the terminal closed: the process has gone
                break
            if not chunk:
                break
            chunks.append(chunk)
        out = proc.stdout.read().decode() if proc.stdout else ""
        code = proc.wait(timeout=120)
    finally:
        os.close(master)
    return code, out, b"".join(chunks).decode("utf-8", "replace")


def test_progress_shows_on_a_terminal_and_is_erased(cache, tmp_path):
    config, _ = config_with_server(tmp_path)
    code, out, err = cli_process(config, stderr_tty=True)
    assert code == 0, err
    assert "connecting to 1 MCP server\u2026 cli " in err
    assert "cli \u2713" in err
    assert err.endswith("\r\x1b[K")  # the line is gone before the command's own output
    assert "Traceback" not in err and "Exception" not in err
    assert mcp_tools(out)  # stdout is the JSON, untouched


def test_no_progress_on_a_pipe(cache, tmp_path):
    config, _ = config_with_server(tmp_path)
    code, out, err = cli_process(config, stderr_tty=False)
    assert code == 0, err
    assert "connecting" not in err and "\r" not in err and "\x1b" not in err
    assert "Traceback" not in err
    assert mcp_tools(out)
