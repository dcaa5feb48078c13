"""``toolreg permissions TOOL [ARGS]``: which rule decides a call, and why; nothing runs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pack_cli import assert_one_line_error, run, write_config
from toolreg import registry

RULES = """
[permissions]
deny = ["terminal", "write_file(path=/etc/*)"]
ask = ["toolset:file(path=secret*)", "write_*"]
"""


@pytest.fixture
def rules(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("TOOLREG_WORKSPACE", str(tmp_path))
    config = write_config(tmp_path, RULES)
    yield str(config)
    registry.set_permissions(None)  # the in-process run installed them on the shared one


def test_it_names_the_deciding_rule_where_it_is_and_what_matched(capsys, rules, tmp_path):
    code, out, err = run(
        capsys, "--config", rules, "permissions", "write_file", '{"path": "/etc/passwd"}'
    )
    assert (code, err) == (0, "")
    assert out.splitlines() == [
        "write_file (toolset file, owner builtin): deny",
        "  decided by permissions.deny[1]: 'write_file(path=/etc/*)'",
        "  the tool's name 'write_file' matches 'write_file'",
        "  argument path='/etc/passwd' matches '/etc/*'",
    ]
    assert not (tmp_path / "etc").exists()


def test_it_says_which_earlier_rules_did_not_match_and_why(capsys, rules):
    code, out, _ = run(
        capsys, "--config", rules, "permissions", "write_file", "path=a.txt", "content=x"
    )
    assert code == 0
    assert out.splitlines() == [
        "write_file (toolset file, owner builtin): ask",
        "  decided by permissions.ask[1]: 'write_*'",
        "  the tool's name 'write_file' matches 'write_*'",
        "  consulted first, matching this tool but not these arguments:",
        "    permissions.deny[1]: 'write_file(path=/etc/*)': path='a.txt' does not match",
        "    permissions.ask[0]: 'toolset:file(path=secret*)': path='a.txt' does not match",
    ]
    assert not (Path.cwd() / "a.txt").exists()  # nothing ran


def test_json_gives_the_verdict_and_its_reasons(capsys, rules):
    code, out, _ = run(
        capsys, "--config", rules, "permissions", "--json", "read_file", '{"path": "secret.md"}'
    )
    assert code == 0
    report = json.loads(out)
    assert {k: report[k] for k in ("tool", "toolset", "owner", "checked", "verdict")} == {
        "tool": "read_file",
        "toolset": "file",
        "owner": "builtin",
        "checked": True,
        "verdict": "ask",
    }
    assert (report["rule"], report["where"]) == ("toolset:file(path=secret*)", "permissions.ask[0]")
    assert report["matched"] == {"scope": "toolset", "glob": "file", "subject": "file"}
    assert report["arguments_matched"] == [
        {"argument": "path", "glob": "secret*", "value": "secret.md"}
    ]
    code, out, _ = run(capsys, "--config", rules, "permissions", "--json", "read_file")
    report = json.loads(out)
    assert (report["verdict"], report["rule"], report["where"]) == (
        "allow",
        None,
        "permissions.default",
    )
    assert report["passed_over"] == [
        {
            "rule": "toolset:file(path=secret*)",
            "where": "permissions.ask[0]",
            "argument": "path",
            "value": None,
        }
    ]


def test_without_a_permissions_table_nothing_is_checked(capsys, tmp_path):
    config = write_config(tmp_path, "[dispatch]\nvalidate = true\n")
    code, out, _ = run(capsys, "--config", str(config), "permissions", "terminal")
    assert code == 0
    assert "no [permissions] table in the config: every call runs" in out


def test_an_unknown_tool_gets_a_did_you_mean(capsys, rules):
    code, out, err = run(capsys, "--config", rules, "permissions", "writ_file")
    assert (code, out) == (1, "")
    assert_one_line_error(err, "unknown tool 'writ_file'", "did you mean: write_file")


def test_a_hostile_value_is_escaped_and_cut(capsys, rules):
    value = "\x1b[2K" + "x" * 1000
    args = json.dumps({"path": "/etc/" + value})
    code, out, _ = run(capsys, "--config", rules, "permissions", "write_file", args)
    assert code == 0
    assert "\x1b" not in out and "\\x1b[2K" in out
    assert "…(+" in out and len(out) < 1_000
