"""``[permissions]`` in the operator config: read strictly, installed only by the host."""

from __future__ import annotations

import json

import pytest

from toolreg import ToolRegistry, apply_config, parse_config
from toolreg._policy.config_reader import ConfigError

TABLE = """
[permissions]
default = "ask"
deny  = ["terminal", "mcp__github__delete_*"]
ask   = ["write_file", "http_request(url=https://*.internal/*)"]
allow = ["read_file", "toolset:web", "pack:toolreg-sqlite"]
"""


def test_the_table_is_read_into_compiled_rules():
    permissions = parse_config(TABLE).permissions
    assert permissions is not None and permissions.default == "ask"
    assert [(r.where, r.text) for r in permissions.all_rules()] == [
        ("permissions.deny[0]", "terminal"),
        ("permissions.deny[1]", "mcp__github__delete_*"),
        ("permissions.ask[0]", "write_file"),
        ("permissions.ask[1]", "http_request(url=https://*.internal/*)"),
        ("permissions.allow[0]", "read_file"),
        ("permissions.allow[1]", "toolset:web"),
        ("permissions.allow[2]", "pack:toolreg-sqlite"),
    ]


def test_no_table_means_no_permissions_and_an_empty_one_allows_everything():
    assert parse_config("").permissions is None
    empty = parse_config("[permissions]\n").permissions
    assert empty is not None and empty.default == "allow" and empty.all_rules() == []


@pytest.mark.parametrize(
    ("text", "key", "fragment"),
    [
        ('[permissions]\ndefault = "maybe"', "permissions.default", '"allow", "ask" or "deny"'),
        ("[permissions]\ndefault = true", "permissions.default", "got a boolean"),
        ('[permissions]\ndenny = ["x"]', "permissions.denny", "did you mean 'deny'?"),
        ('[permissions]\ndeny = "terminal"', "permissions.deny", "an array of strings"),
        ('[permissions]\ndeny = ["a", 3]', "permissions.deny[1]", "a non-empty string"),
        ('[permissions]\ndeny = ["a", "b", "terminal("]', "permissions.deny[2]", "'terminal('"),
        ('[permissions]\nask = ["f(x)"]', "permissions.ask[0]", "expected arg=glob"),
        ('[permissions]\nallow = ["server:x"]', "permissions.allow[0]", "unknown scope"),
        ("permissions = 3", "permissions", "expected a table"),
    ],
)
def test_a_malformed_table_names_the_rule_and_key(text, key, fragment):
    with pytest.raises(ConfigError) as info:
        parse_config(text)
    assert info.value.key == key
    assert fragment in info.value.problem


def tool(reg, name, toolset="t"):
    ran = []

    def handler(args):
        ran.append(args)
        return "ran"

    schema = {"name": name, "description": "d", "parameters": {"type": "object"}}
    reg.register(name, toolset, schema, handler)
    return ran


def test_apply_config_installs_the_rules_and_a_config_without_them_removes_them():
    reg = ToolRegistry()
    ran = tool(reg, "terminal")
    apply_config(parse_config(TABLE), reg)
    assert json.loads(reg.dispatch("terminal", {}))["code"] == "denied"
    assert ran == []
    apply_config(parse_config(""), reg)
    assert reg.permissions is None
    assert reg.dispatch("terminal", {}) == "ran" and ran == [{}]


def test_a_config_without_permissions_makes_no_dispatcher():
    reg = ToolRegistry()
    apply_config(parse_config(""), reg)
    assert reg._dispatch.made is None, "nothing to install: the dispatch layer stays unmade"


@pytest.mark.parametrize("page", ["permissions.md", "operators.md"])
def test_the_documented_tables_parse(page):
    import re
    from pathlib import Path

    text = (Path(__file__).parents[2] / "docs" / page).read_text(encoding="utf-8")
    blocks = [b for b in re.findall(r"```toml\n(.*?)```", text, re.S) if "[permissions]" in b]
    assert blocks
    for block in blocks:
        assert parse_config(block).permissions is not None
