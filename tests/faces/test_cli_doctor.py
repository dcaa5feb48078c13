"""``toolreg doctor``: import failures, unavailable tools, rejections, caches, stuck calls."""

from __future__ import annotations

import json
import os
import subprocess

import pytest

from pack_cli import run
from toolreg import registry

PARAMS = {"type": "object", "properties": {}}


def test_doctor_json_shape(capsys):
    code, out, _ = run(capsys, "doctor", "--json")
    assert code == 0
    report = json.loads(out)
    assert set(report) == {
        "summary",
        "import_failures",
        "unavailable",
        "rejected",
        "plugin_failures",
        "hook_failures",
        "mcp_servers",
        "caches",
        "lock",
        "warnings",
        "stuck_calls",
        "permissions",
    }
    assert report["mcp_servers"] == []  # no [mcp.servers] configured
    assert report["permissions"] == []  # no [permissions] table
    assert report["summary"]["tools"] == len(registry.get_all_tool_names())
    assert 0 <= report["summary"]["available"] <= report["summary"]["tools"]
    for tool in report["unavailable"]:
        assert set(tool) == {"name", "toolset", "reason"}
        assert tool["reason"]


def test_doctor_reports_rejected_registration(capsys, host_tool):
    host_tool("cli_contested", lambda args, **kw: "first", toolset="cli-test-a")
    # Same name, different toolset, no override: the registry refuses it.
    rejected = registry.register(
        name="cli_contested",
        toolset="cli-test-b",
        schema={
            "name": "cli_contested",
            "description": "second",
            "parameters": {"type": "object", "properties": {}},
        },
        handler=lambda args, **kw: "second",
    )
    assert rejected is None

    code, out, _ = run(capsys, "doctor", "--json")
    assert code == 0
    mine = [d for d in json.loads(out)["rejected"] if d["tool"] == "cli_contested"]
    assert mine, "the rejected registration is missing from doctor --json"
    assert mine[-1]["toolset"] == "cli-test-b"
    assert mine[-1]["previous_toolset"] == "cli-test-a"
    assert mine[-1]["action"] == "rejected"

    code, out, _ = run(capsys, "doctor")
    assert code == 0
    assert "Rejected registrations" in out
    assert "cli_contested (toolset cli-test-b, from host)" in out


def test_doctor_lists_unavailable_tool(capsys, host_tool):
    host_tool("cli_doctor_env", lambda args, **kw: "ok", requires_env=["TOOLREG_CLI_TEST_UNSET"])
    code, out, _ = run(capsys, "doctor")
    assert code == 0
    assert "Unavailable tools" in out
    row = next(line for line in out.splitlines() if "cli_doctor_env" in line)
    assert "TOOLREG_CLI_TEST_UNSET" in row


@pytest.mark.skipif(os.name == "nt", reason="POSIX permission bits")
def test_doctor_names_a_distrusted_cache_and_the_rule(
    capsys, tmp_path, monkeypatch, cache_problems
):
    shared = tmp_path / "shared-cache"
    shared.mkdir()
    shared.chmod(0o777)  # anyone could plant verdicts or pack lists here
    monkeypatch.setenv("TOOLREG_CACHE_DIR", str(shared))

    code, out, _ = run(capsys, "doctor", "--json")
    assert code == 0
    (problem,) = json.loads(out)["caches"]
    assert problem["file"] == str(shared) and problem["rule"] == "mode"
    assert "0o777" in problem["reason"]
    assert list(shared.iterdir()) == [], "nothing is written into a distrusted folder"

    code, out, _ = run(capsys, "doctor")
    assert "No problems found" not in out
    assert f"{shared} [mode]: writable by group or others" in out


def test_forged_scan_cache_hides_no_builtin_and_doctor_says_so(pack_venv, tmp_path):
    """Every built-in tool module marked "registers nothing": all load, and doctor tells."""
    cache = tmp_path / "private-cache"
    env = {"TOOLREG_CACHE_DIR": str(cache), "TOOLREG_PLUGINS": ""}

    def forge_and_run(*command: str) -> subprocess.CompletedProcess:
        scan_cache = cache / "scan-v1.json"
        verdicts = json.loads(scan_cache.read_text())
        scan_cache.write_text(json.dumps({k: [*v[:2], False] for k, v in verdicts.items()}))
        done = pack_venv.run(*command, **env)
        assert done.returncode == 0, done.stderr
        return done

    honest = json.loads(pack_venv.run("list", "--json", **env).stdout)
    assert {t["name"] for t in honest} >= {"read_file", "terminal", "current_time"}

    assert json.loads(forge_and_run("list", "--json").stdout) == honest
    report = json.loads(forge_and_run("doctor", "--json").stdout)
    (problem,) = report["caches"]
    assert (problem["file"], problem["rule"]) == (str(cache / "scan-v1.json"), "verdict")
    assert "file_tools.py" in problem["reason"]
    out = forge_and_run("doctor").stdout
    assert "No problems found" not in out and "[verdict]" in out


def test_doctor_warns_when_the_workspace_fell_back_to_home(capsys, tmp_path, monkeypatch):
    monkeypatch.delenv("TOOLREG_WORKSPACE", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.chdir(tmp_path)
    code, out, _ = run(capsys, "doctor", "--json")
    assert code == 0
    assert ["TOOLREG_WORKSPACE is not set" in w for w in json.loads(out)["warnings"]] == [True]
    code, out, _ = run(capsys, "doctor")
    assert "Warnings (1):" in out and "TOOLREG_WORKSPACE is not set" in out
    monkeypatch.setenv("TOOLREG_WORKSPACE", str(tmp_path))
    code, out, _ = run(capsys, "doctor", "--json")
    assert json.loads(out)["warnings"] == []


def test_doctor_counts_stuck_calls_per_pool(capsys):
    from toolreg.cli import _render

    code, out, _ = run(capsys, "doctor", "--json")
    assert code == 0
    stuck = json.loads(out)["stuck_calls"]
    assert set(stuck) == {"tool", "hook", "import"}
    assert all(set(pool) == {"workers", "size", "stuck", "abandoned"} for pool in stuck.values())
    report = json.loads(out)
    report["stuck_calls"]["tool"].update(stuck=3, size=32)
    text = _render.doctor_report(report)
    assert "Calls still running past their deadline" in text and "tool: 3 of 32 workers" in text


def test_doctor_lists_the_operator_rules_with_their_counts(capsys, tmp_path):
    config = tmp_path / "toolreg.toml"
    config.write_text('[permissions]\ndeny = ["terminal"]\nask = ["write_*"]\n')
    try:
        code, out, _ = run(capsys, "--config", str(config), "doctor", "--json")
    finally:
        registry.set_permissions(None)  # the in-process run installed them on the shared one
    assert code == 0
    rows = json.loads(out)["permissions"]
    assert [(r["where"], r["rule"], r["verdict"]) for r in rows] == [
        ("permissions.deny[0]", "terminal", "deny"),
        ("permissions.ask[0]", "write_*", "ask"),
        ("permissions.default", None, "allow"),
    ]
    assert {(r["allowed"], r["denied"], r["asked"]) for r in rows} == {(0, 0, 0)}


def test_doctor_text_lists_the_operator_rules_with_their_counts(capsys, tmp_path):
    from toolreg.cli import _render

    config = tmp_path / "toolreg.toml"
    config.write_text('[permissions]\ndeny = ["terminal"]\nask = ["write_*"]\n')
    try:
        code, out, _ = run(capsys, "--config", str(config), "doctor")
        _, json_out, _ = run(capsys, "--config", str(config), "doctor", "--json")
    finally:
        registry.set_permissions(None)  # the in-process run installed them on the shared one
    assert code == 0
    lines = out.splitlines()
    start = lines.index("Permissions (2 rule(s), then the default; this process made no calls):")
    assert [line.split() for line in lines[start + 1 : start + 5]] == [
        ["WHERE", "RULE", "VERDICT", "ALLOWED", "DENIED", "ASKED"],
        ["permissions.deny[0]", "'terminal'", "deny", "0", "0", "0"],
        ["permissions.ask[0]", "'write_*'", "ask", "0", "0", "0"],
        ["permissions.default", "(default)", "allow", "0", "0", "0"],
    ]
    report = json.loads(json_out)
    report["permissions"][1].update(asked=3, allowed=2, denied=1)  # as a host's process has it
    text = _render.doctor_report(report)
    assert "calls this process made" in text
    assert ["permissions.ask[0]", "'write_*'", "ask", "2", "1", "3"] in [
        line.split() for line in text.splitlines()
    ]
