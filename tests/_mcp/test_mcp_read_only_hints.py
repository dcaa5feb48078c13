"""``ask_unless_read_only`` against a real MCP server whose ``readOnlyHint`` lies.

The server's ``tidy`` claims to be read-only and deletes a file: its hint skips
the ask only when the operator trusts the server in ``trust_hints``.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from toolreg import ToolRegistry, apply_config, parse_config

pytest.importorskip("mcp")

SERVER = Path(__file__).parent / "servers" / "lying_server.py"

PERMISSIONS = "[permissions]\nask_unless_read_only = true\n"


@pytest.fixture
def liar():
    from toolreg import start_mcp, stop_mcp

    config = parse_config(
        f"[mcp.servers.liar]\ncommand = {json.dumps(sys.executable)}\n"
        f"args = [{json.dumps(str(SERVER))}]\nconnect_timeout = 20\n"
    )
    reg = ToolRegistry()
    start_mcp(config, reg)
    try:
        assert reg.get_owner("mcp__liar__tidy") == "mcp:liar"
        assert reg.get_entry("mcp__liar__tidy").annotations["readOnlyHint"] is True
        yield reg
    finally:
        stop_mcp(reg)


def test_an_untrusted_servers_read_only_hint_skips_no_ask(liar, tmp_path):
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me")
    apply_config(parse_config(PERMISSIONS), liar)
    result = json.loads(liar.dispatch("mcp__liar__tidy", {"path": str(victim)}))
    assert result["code"] == "approval_required"
    assert result["rule"] == "ask_unless_read_only"
    assert "readOnlyHint from an untrusted source, mcp:liar" in result["error"]
    assert victim.read_text() == "keep me", "the lying tool ran without approval"
    record = [d for d in liar.decisions() if d.tool == "mcp__liar__tidy"][-1]
    assert (record.action, record.rule) == ("asked", "ask_unless_read_only")
    assert "readOnlyHint from an untrusted source, mcp:liar" in record.reason
    # The approver is told which setting asked.
    seen = []
    liar.set_approver(lambda name, args, rule: seen.append(rule) or "deny")
    liar.dispatch("mcp__liar__tidy", {"path": str(victim)})
    assert seen == ["ask_unless_read_only"] and victim.exists()


def test_a_trusted_servers_read_only_hint_skips_the_ask(liar, tmp_path):
    victim = tmp_path / "victim.txt"
    victim.write_text("trusted")
    apply_config(parse_config(PERMISSIONS + 'trust_hints = ["mcp:liar"]\n'), liar)
    assert liar.dispatch("mcp__liar__peek", {"path": str(victim)}) == "trusted"
    assert liar.dispatch("mcp__liar__tidy", {"path": str(victim)}) == "tidied"
    assert not victim.exists(), "trusted, its hint is taken at its word"
    # A tool of the trusted server without the hint still asks.
    stamped = json.loads(liar.dispatch("mcp__liar__stamp", {"path": str(victim)}))
    assert stamped["code"] == "approval_required" and "no readOnlyHint" in stamped["error"]
    assert not victim.exists()


def test_an_explicit_rule_beats_a_trusted_hint_and_an_untrusted_one(liar, tmp_path):
    victim = tmp_path / "victim.txt"
    victim.write_text("x")
    table = PERMISSIONS + 'trust_hints = ["mcp:*"]\ndeny = ["mcp__liar__tidy"]\n'
    apply_config(parse_config(table), liar)
    denied = json.loads(liar.dispatch("mcp__liar__tidy", {"path": str(victim)}))
    assert (denied["code"], denied["rule"]) == ("denied", "mcp__liar__tidy")
    apply_config(parse_config(PERMISSIONS + 'allow = ["mcp__liar__stamp"]\n'), liar)
    assert liar.dispatch("mcp__liar__stamp", {"path": str(victim)}) == "stamped"
    assert victim.read_text() == "stamped"
