"""toolreg-sandbox: the stricter terminal called directly, then loaded over the built-in."""

from __future__ import annotations

import importlib
import json
import os
import time
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

import toolreg
from toolreg import ToolRegistry, unload_plugin
from toolreg.testing import assert_no_override_without_consent, assert_valid_schema

pytestmark = pytest.mark.skipif(os.name != "posix", reason="uses POSIX programs")

PACK = "toolreg_sandbox"
PLUGIN_ID = "toolreg-sandbox"


def import_isolated(name: str) -> ModuleType:
    """Import a pack the way the loader does: with ``toolreg.registry`` pointing elsewhere.

    The pack registers at import; a scratch registry keeps that out of the
    process-wide one, where it would replace the built-in terminal.
    """
    previous, toolreg.registry = toolreg.registry, ToolRegistry()
    try:
        return importlib.import_module(name)
    finally:
        toolreg.registry = previous


sandbox = import_isolated(PACK)
terminal = sandbox.terminal
toolreg_configure = sandbox.toolreg_configure
DEFAULT_ALLOW = sandbox.DEFAULT_ALLOW
MAX_STREAM_CHARS = sandbox.MAX_STREAM_CHARS


@pytest.fixture(autouse=True)
def default_settings() -> Iterator[None]:
    toolreg_configure({})
    yield
    toolreg_configure({})


@pytest.fixture
def workspace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    monkeypatch.setenv("TOOLREG_WORKSPACE", str(root))
    return root.resolve()


def run(command: str, **extra: Any) -> dict[str, Any]:
    data = json.loads(terminal({"command": command, **extra}))
    assert "error" not in data, data
    return data


def error(command: str, **extra: Any) -> str:
    data = json.loads(terminal({"command": command, **extra}))
    assert set(data) == {"error"}, data
    return data["error"]


def test_allowed_program_runs(workspace: Path) -> None:
    assert run("echo hi") == {"exit_code": 0, "stdout": "hi\n", "stderr": "", "timed_out": False}
    assert run("pwd")["stdout"] == f"{workspace}\n"
    assert run("false")["exit_code"] == 1


def test_quotes_group_words(workspace: Path) -> None:
    (workspace / "notes.txt").write_text("one fish\ntwo fish\n")
    assert run("grep -n 'two fish' notes.txt")["stdout"] == "2:two fish\n"


def test_program_not_on_the_allowlist(workspace: Path) -> None:
    (workspace / "x").write_text("keep me")
    message = error("rm x")
    assert message.startswith("Program 'rm' is not allowed in the sandbox terminal")
    assert "cat, date, echo" in message
    assert (workspace / "x").exists()


def test_program_given_by_path_is_refused(workspace: Path) -> None:
    assert "not allowed" in error("/bin/echo hi")
    assert "not allowed" in error("./echo hi")


def test_no_shell_semicolon(workspace: Path) -> None:
    (workspace / "x").mkdir()
    # The ';' reaches echo as text; rm never runs.
    assert run("echo hi; rm -rf x")["stdout"] == "hi; rm -rf x\n"
    assert (workspace / "x").is_dir()


@pytest.mark.parametrize(
    ("command", "stdout"),
    [
        ("echo a | wc -l", "a | wc -l\n"),
        ("echo a && echo b", "a && echo b\n"),
        ("echo $HOME ~ *", "$HOME ~ *\n"),
        ("echo $(date)", "$(date)\n"),
    ],
)
def test_no_shell_syntax(workspace: Path, command: str, stdout: str) -> None:
    (workspace / "some-file").touch()  # so that a glob would have matched something
    assert run(command)["stdout"] == stdout


def test_no_redirect(workspace: Path) -> None:
    result = run("echo secret > out.txt")
    assert result["stdout"] == "secret > out.txt\n"
    assert not (workspace / "out.txt").exists()


def test_unparseable_or_empty_command(workspace: Path) -> None:
    assert "No closing quotation" in error("echo 'unclosed")
    assert error("   ") == "command must not be empty"
    assert "NUL" in error("echo a\0b")
    assert "must be a string" in json.loads(terminal({"command": 5}))["error"]
    assert "must be a JSON object" in json.loads(terminal(["echo"]))["error"]  # type: ignore[arg-type]


def test_timeout_is_capped(workspace: Path) -> None:
    for timeout in (11, 600, 0, -1, "soon", True):
        assert "argument 'timeout'" in error("echo hi", timeout=timeout)
    assert run("echo hi", timeout=10)["exit_code"] == 0
    entry = sandbox.registry.get_entry("terminal")  # the scratch registry it was imported into
    assert entry.schema["parameters"]["properties"]["timeout"]["maximum"] == 10


def test_timeout_kills_the_program(workspace: Path) -> None:
    (workspace / "log").write_text("first line\n")
    start = time.monotonic()
    result = run("tail -f log", timeout=0.5)
    assert time.monotonic() - start < 4
    assert result["timed_out"] is True and result["exit_code"] < 0
    assert result["stdout"] == "first line\n"


def test_output_is_capped(workspace: Path) -> None:
    (workspace / "big.txt").write_text("é" * 50_000 + "END")
    result = run("cat big.txt")
    assert len(result["stdout"]) <= MAX_STREAM_CHARS
    assert result["stdout"].startswith("é" * 1000)
    assert result["stdout"].endswith("[output truncated; the stream was 100003 bytes]")
    assert "END" not in result["stdout"]


def test_environment_is_scrubbed(workspace: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SANDBOX_TEST_SECRET", "hunter2")
    monkeypatch.setenv("LANG", "C.UTF-8")
    assert "not allowed" in error("env")  # not on the default list
    toolreg_configure({"allow": ["env"]})
    lines = run("env")["stdout"].splitlines()
    names = {line.partition("=")[0] for line in lines}
    assert names <= {"PATH", "HOME", "LANG", "LC_ALL", "TOOLREG_WORKSPACE"}
    assert f"TOOLREG_WORKSPACE={workspace}" in lines and "LANG=C.UTF-8" in lines
    assert not any("hunter2" in line for line in lines)


def test_operator_allowlist(workspace: Path) -> None:
    toolreg_configure({"allow": ["echo"]})
    assert sandbox.allowed_programs() == ["echo"]
    assert run("echo ok")["stdout"] == "ok\n"
    assert "(allowed: echo)" in error("ls")
    # The model reads the live list, not the one from import time.
    assert "Allowed programs: echo." in sandbox._schema_overrides()["description"]
    toolreg_configure({})
    assert sandbox.allowed_programs() == sorted(DEFAULT_ALLOW)


def test_allowed_but_missing_program(workspace: Path) -> None:
    toolreg_configure({"allow": ["no-such-program-toolreg"]})
    assert "was not found on PATH" in error("no-such-program-toolreg")


@pytest.mark.parametrize(
    "settings",
    [
        {"allow": "ls"},
        {"allow": ["/bin/ls"]},
        {"allow": ["ls -l"]},
        {"allow": [""]},
        {"allowed": []},
    ],
)
def test_bad_settings_raise(settings: dict[str, Any]) -> None:
    with pytest.raises(ValueError, match="plugins.entries.toolreg-sandbox.settings"):
        toolreg_configure(settings)
    assert sandbox.allowed_programs() == sorted(DEFAULT_ALLOW)  # unchanged


# -- end to end: the real loader, over the built-in terminal --------------------------
# load_pack and tool_registry are fixtures of toolreg's pytest plugin; builtins=True
# registers the real built-in tools first, so the pack has a terminal to replace.

CONSENT = f"[plugins.entries.{PLUGIN_ID}]\nallow_tool_override = true\n"


def dispatch(reg: ToolRegistry, command: str) -> dict[str, Any]:
    return json.loads(reg.dispatch("terminal", {"command": command}))


def test_override_with_consent(tool_registry: ToolRegistry, load_pack, workspace: Path) -> None:
    settings = f'[plugins.entries.{PLUGIN_ID}.settings]\nallow = ["echo", "pwd"]\n'
    outcome = load_pack(PLUGIN_ID, config=CONSENT + settings, builtins=True)[PLUGIN_ID]
    assert (outcome.status, outcome.reason) == ("loaded", "")
    assert outcome.tools_added == ["terminal"] and outcome.tools_overridden == ["terminal"]
    assert tool_registry.get_toolset_for_tool("terminal") == "sandbox"
    assert tool_registry.get_owner("terminal") == PLUGIN_ID
    assert_valid_schema(tool_registry, "terminal")

    assert dispatch(tool_registry, "echo a; echo b")["stdout"] == "a; echo b\n"
    assert "(allowed: echo, pwd)" in dispatch(tool_registry, "ls")["error"]  # settings arrived
    definition = tool_registry.get_definition("terminal", format="openai")
    description = definition["function"]["description"]
    assert "WITHOUT a shell" in description and "Allowed programs: echo, pwd." in description

    # Unloading the pack brings the built-in back.
    assert unload_plugin(PLUGIN_ID, registry=tool_registry)
    assert tool_registry.get_owner("terminal") == "builtin"
    assert dispatch(tool_registry, "echo a; echo b")["stdout"] == "a\nb\n"


def test_override_without_consent_is_refused() -> None:
    outcome = assert_no_override_without_consent(PLUGIN_ID)[PLUGIN_ID]
    assert outcome.status == "refused"
    assert f"plugins.entries.{PLUGIN_ID}.allow_tool_override" in outcome.reason
    assert outcome.tools_added == [] and outcome.tools_overridden == []


def test_refused_pack_leaves_the_shell(
    tool_registry: ToolRegistry, load_pack, workspace: Path
) -> None:
    assert load_pack(PLUGIN_ID, builtins=True)[PLUGIN_ID].status == "refused"
    assert dispatch(tool_registry, "echo a; echo b")["stdout"] == "a\nb\n"


def test_bad_settings_fail_the_pack(
    tool_registry: ToolRegistry, load_pack, workspace: Path
) -> None:
    settings = f'[plugins.entries.{PLUGIN_ID}.settings]\nallow = ["/bin/sh"]\n'
    outcome = load_pack(PLUGIN_ID, config=CONSENT + settings, builtins=True)[PLUGIN_ID]
    assert outcome.status == "failed" and "settings.allow" in outcome.reason
    assert tool_registry.get_owner("terminal") == "builtin"  # rolled back
