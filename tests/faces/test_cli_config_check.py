"""``toolreg config check``: names that match nothing are errors; ``--json`` shows what applies."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pack_cli import EXAMPLES, assert_one_line_error, run, write_config

TYPOS = """
[plugins]
enabled = ["toolreg-sqlte", "toolreg-audit"]
[plugins.entries.toolreg-audit]
hooks = ["pre_tool_cal", "post_tool_call"]
[toolsets]
disabled = ["tiem"]
"""

SETTINGS = """
[plugins.entries.toolreg-sandbox]
allow_tool_override = true
isolation = "process"
env = ["SANDBOX_KEY"]
[plugins.entries.toolreg-audit]
hooks = ["post_tool_call"]
settings = { block = ["http_request"] }
[dispatch]
validate = false
[tracing]
enabled = true
[toolsets]
disabled = ["web"]
[mcp.servers.docs]
command = "python3"
args = ["-m", "docs_server", "--root", "/srv/my docs"]
env = { DOCS_TOKEN = "s3cret-value" }
[mcp.servers.remote]
url = "https://tools.example/mcp"
headers = { Authorization = "Bearer s3cret-value" }
"""


@pytest.fixture
def cli_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TOOLREG_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("TOOLREG_PLUGINS", "")
    monkeypatch.delenv("TOOLREG_CONFIG", raising=False)
    monkeypatch.chdir(tmp_path)


def test_names_that_match_nothing_are_errors_with_the_closest(pack_venv, tmp_path):
    config = write_config(tmp_path, TYPOS)
    done = pack_venv.run("config", "check", str(config), TOOLREG_PLUGINS=EXAMPLES)
    assert done.returncode == 1
    assert done.stdout.splitlines()[0] == f"{config}: 3 error(s)"
    assert done.stderr.splitlines() == [
        f"toolreg: error: {config}: {message}"
        for message in (
            "plugins.enabled: 'toolreg-sqlte' matches nothing known; "
            "did you mean 'toolreg-sqlite'?",
            "toolsets.disabled: 'tiem' matches nothing known; did you mean 'time'?",
            "plugins.entries.toolreg-audit.hooks[0]: 'pre_tool_cal' is not a dispatch hook; "
            "did you mean 'pre_tool_call'?",
        )
    ]
    # Loading with the same file only warns: the command does its work and exits 0.
    listed = pack_venv.run("--config", str(config), "list", "--json", TOOLREG_PLUGINS=EXAMPLES)
    assert listed.returncode == 0
    assert "'tiem' matches nothing known" in listed.stderr
    assert "'pre_tool_cal' is not a dispatch hook" in listed.stderr


def test_a_good_file_naming_installed_packs_is_ok(pack_venv):
    demo = Path(__file__).resolve().parents[2] / "example_plugins" / "demo.toml"
    done = pack_venv.run("config", "check", str(demo), TOOLREG_PLUGINS=EXAMPLES)
    assert (done.returncode, done.stderr) == (0, "")
    assert done.stdout.splitlines()[0] == f"{demo}: ok"
    assert "  plugins.entries.toolreg-sandbox: allow_tool_override=true" in done.stdout


def test_json_shows_the_effective_settings(pack_venv, tmp_path):
    config = write_config(tmp_path, SETTINGS)
    done = pack_venv.run("config", "check", "--json", str(config), TOOLREG_PLUGINS=EXAMPLES)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert (report["source"], report["ok"], report["errors"]) == (str(config), True, [])
    packs = {pack["id"]: pack for pack in report["plugins"]["packs"]}
    sandbox, audit = packs["toolreg-sandbox"], packs["toolreg-audit"]
    assert (sandbox["allow_tool_override"], sandbox["isolation"]) == (True, "process")
    assert sandbox["env"] == ["SANDBOX_KEY"]
    assert audit["hooks_allowed"] == ["toolreg_post_tool_call"]
    assert audit["hooks_withheld"] == ["toolreg_pre_tool_call"]
    assert "toolreg_post_tool_call" in audit["hooks"] and audit["settings"] == ["block"]
    assert packs["toolreg-sqlite"]["status"] == "loaded"
    assert packs["toolreg-exit"]["status"] == "disabled"  # known, though not loaded
    assert report["dispatch"] == {"validate": False}
    assert report["toolsets"] == {"enabled": None, "disabled": ["web"], "aliases": {}}
    assert report["tracing"] == {"enabled": True}
    docs, remote = report["mcp_servers"]
    assert docs["argv"] == ["python3", "-m", "docs_server", "--root", "/srv/my docs"]
    assert docs["executable"] and docs["executable"].endswith("python3")
    assert docs["env"] == ["DOCS_TOKEN"]
    assert (remote["url"], remote["headers"]) == ("https://tools.example/mcp", ["Authorization"])
    assert "s3cret-value" not in done.stdout  # env and header values may be secrets


def test_text_says_the_security_relevant_settings_first(capsys, cli_env, tmp_path):
    text = SETTINGS.replace("[plugins.entries.toolreg-sandbox]", "[plugins.entries.x]")
    text = text.replace("[plugins.entries.toolreg-audit]", '[plugins.entries."local:y"]')
    text = text.replace('isolation = "process"\nenv = ["SANDBOX_KEY"]\n', "")
    config = write_config(tmp_path, text)
    code, out, err = run(capsys, "config", "check", str(config))
    assert code == 1  # x and local:y are nowhere to be found
    lines = out.splitlines()
    assert lines[1:5] == [
        "  dispatch.validate = false: tool arguments are NOT checked against schemas",
        "  toolsets.disabled: web",
        "  mcp.servers.docs: runs python3 -m docs_server --root '/srv/my docs'",
        "  mcp.servers.remote: connects to https://tools.example/mcp",
    ]
    assert "s3cret-value" not in out + err
    assert "'x' matches nothing known" in err


def test_check_starts_no_mcp_server(capsys, cli_env, tmp_path):
    marker = tmp_path / "started"
    server = f"[mcp.servers.probe]\ncommand = 'touch'\nargs = ['{marker}']\n"
    code, out, err = run(capsys, "config", "check", str(write_config(tmp_path, server)))
    assert (code, err) == (0, "")
    assert f"  mcp.servers.probe: runs touch {marker}" in out
    assert not marker.exists()


def test_without_a_file_the_defaults_apply(capsys, cli_env):
    code, out, _ = run(capsys, "config", "check")
    assert code == 0
    assert "No config file found; the defaults apply" in out
    code, out, _ = run(capsys, "config", "check", "--json")
    assert code == 0
    report = json.loads(out)
    assert report["source"] is None and report["dispatch"] == {"validate": True}


@pytest.mark.parametrize("use_option", [False, True])
def test_a_bad_file_exits_2_with_one_line_and_loads_nothing(capsys, cli_env, tmp_path, use_option):
    source = str(write_config(tmp_path, '[plugins.entries.x]\nversion = "banana"\n'))
    argv = ["--config", source, "config", "check"] if use_option else ["config", "check", source]
    code, out, err = run(capsys, *argv)
    assert (code, out) == (2, "")
    assert_one_line_error(err, f"{source}: plugins.entries.x.version: expected")


@pytest.mark.parametrize(
    ("text", "key", "problem"),
    [
        (None, None, "cannot read the file"),
        ("x = [\n", None, "not valid TOML"),
        ("[plugins]\nfoo = 1\n", "plugins.foo", "unknown key"),
    ],
    ids=["missing", "invalid-toml", "unknown-key"],
)
def test_json_is_printed_for_a_file_that_does_not_parse(
    capsys, cli_env, tmp_path, text, key, problem
):
    source = tmp_path / "toolreg.toml"
    if text is not None:
        source.write_text(text)
    code, out, _ = run(capsys, "config", "check", "--json", str(source))
    assert code == 2
    report = json.loads(out)
    assert (report["source"], report["ok"]) == (str(source), False)
    assert len(report["errors"]) == 1 and problem in report["errors"][0]
    [found] = report["problems"]
    assert found["key"] == key and found["problem"].startswith(problem)


def test_an_isolated_packs_toolset_is_known_though_turned_off(pack_venv, tmp_path):
    # The host never registers a switched-off toolset's tools from an isolated
    # pack's process; the check must know the toolset all the same.
    config = write_config(
        tmp_path,
        '[plugins.entries.toolreg-sqlite]\nisolation = "process"\n'
        '[toolsets]\ndisabled = ["sqlite", "sqlte"]\n',
    )
    done = pack_venv.run("config", "check", str(config), TOOLREG_PLUGINS=EXAMPLES)
    assert done.returncode == 1
    assert done.stderr.splitlines() == [
        f"toolreg: error: {config}: toolsets.disabled: 'sqlte' matches nothing known; "
        "did you mean 'sqlite'?"
    ]


RULES = """
[permissions]
deny = ["terminl", "write_file(pth=/etc/*)", "mcp__docs__delete_*"]
ask = ["write_*", "write_*"]
allow = ["write_file"]
[mcp.servers.docs]
command = "true"
"""


def test_rules_that_never_fire_are_errors_and_warnings(capsys, cli_env, tmp_path):
    config = write_config(tmp_path, RULES)
    code, out, err = run(capsys, "config", "check", str(config))
    assert code == 1
    assert out.splitlines()[0] == f"{config}: 3 error(s), 2 warning(s)"
    prefix = f"toolreg: error: {config}: "
    assert err.splitlines() == [
        prefix + "permissions.deny[0]: 'terminl': matches no known tool; did you mean 'terminal'?",
        prefix + "permissions.deny[1]: 'write_file(pth=/etc/*)': argument 'pth' is not a "
        "parameter of the tool write_file it matches (parameters: content, path); "
        "did you mean 'path'?",
        prefix + "permissions.allow[0]: 'write_file': shadowed by permissions.ask[0] "
        "'write_*': every call it matches is asked about first, so it never allows a call",
        f"toolreg: warning: {config}: permissions.deny[2]: 'mcp__docs__delete_*': matches no "
        "known tool; unknown until connected (MCP server 'docs' is not connected, and config "
        "check connects no server)",
        f"toolreg: warning: {config}: permissions.ask[1]: 'write_*': shadowed by "
        "permissions.ask[0] 'write_*', which matches every call it does first (same verdict): "
        "it is never the rule named",
    ]


def test_json_gives_the_rule_problems_and_warnings_alone_exit_0(capsys, cli_env, tmp_path):
    config = write_config(tmp_path, RULES)
    code, out, _ = run(capsys, "config", "check", "--json", str(config))
    assert code == 1
    report = json.loads(out)
    assert report["ok"] is False
    assert [e.split(": ", 1)[0] for e in report["errors"]] == [
        "permissions.deny[0]",
        "permissions.deny[1]",
        "permissions.allow[0]",
    ]
    assert [w.split(": ", 1)[0] for w in report["warnings"]] == [
        "permissions.deny[2]",
        "permissions.ask[1]",
    ]
    warnings_only = RULES.replace('"terminl", "write_file(pth=/etc/*)", ', "")
    config = write_config(tmp_path, warnings_only.replace('allow = ["write_file"]\n', ""))
    code, out, _ = run(capsys, "config", "check", "--json", str(config))
    assert code == 0
    report = json.loads(out)
    assert (report["ok"], report["errors"], len(report["warnings"])) == (True, [], 2)
    code, out, err = run(capsys, "config", "check", str(config))
    assert code == 0 and out.splitlines()[0] == f"{config}: ok, 2 warning(s)"
    assert err.count("toolreg: warning:") == 2


def test_a_lock_that_cannot_be_read_is_an_error_and_one_others_can_write_a_warning(
    capsys, cli_env, tmp_path
):
    config = write_config(tmp_path, "")
    lock = tmp_path / "toolreg.lock"
    lock.write_text("format = 1\n[packs.toolreg-sqlite]\nversion = 3\n")
    lock.chmod(0o644)
    code, out, err = run(capsys, "config", "check", str(config))
    assert code == 1
    assert "the lock cannot be read, so no pack would load" in err
    assert f"{lock}: packs.toolreg-sqlite.distribution" in err
    lock.write_text("format = 1\n")
    lock.chmod(0o666)
    code, out, err = run(capsys, "config", "check", str(config))
    assert code == 0
    assert f"lock {lock} is ignored (writable by group or others" in err
