"""Permission rules that never fire: no match, a missing parameter, shadowed, MCP unknowns."""

from __future__ import annotations

import pytest

from toolreg._core.permissions import Permissions
from toolreg._policy.rule_reach import KnownTool, _glob_covers, parameters_of, rule_problems

TOOLS = [
    KnownTool("write_file", "file", "builtin", frozenset({"path", "content"})),
    KnownTool("read_file", "file", "builtin", frozenset({"path"})),
    KnownTool("query", "sqlite", "toolreg-sqlite", frozenset({"sql"})),
    KnownTool("free", "misc", "host", None),
]


def problems(table, servers=None, packs=("toolreg-sqlite",)):
    found = rule_problems(Permissions.from_table(table), TOOLS, packs, servers or {})
    return found.errors, found.warnings


@pytest.mark.parametrize(
    ("first", "later", "covers"),
    [
        ("write_file", "write_file", True),
        ("write_*", "write_file", True),
        ("w?ite_file", "write_file", True),
        ("write_*", "write_f*", True),
        ("*", "anything*", True),
        ("write_*", "writ*", False),
        ("write_file", "write_*", False),
        ("a*b", "a*bc", False),  # covered, but not detected: documented
    ],
)
def test_which_globs_are_detected_as_covering(first, later, covers):
    assert _glob_covers(first, later) is covers


def test_a_misspelt_name_is_an_error_with_the_closest():
    errors, warnings = problems(
        {"deny": ["writ_file", "toolset:sqlte", "pack:toolreg-sqlte", "read_file", "pack:host"]}
    )
    assert errors == [
        "permissions.deny[0]: 'writ_file': matches no known tool; did you mean 'write_file'?",
        "permissions.deny[1]: 'toolset:sqlte': matches no known toolset; did you mean 'sqlite'?",
        "permissions.deny[2]: 'pack:toolreg-sqlte': matches no known pack or owner; "
        "did you mean 'toolreg-sqlite'?",
    ]
    assert warnings == []


def test_a_rule_an_unconnected_mcp_server_may_fire_is_a_warning():
    servers = {"git-hub": True, "off": False}
    errors, warnings = problems(
        {"ask": ["mcp__git_hub__delete_*", "mcp__*", "toolset:mcp-off", "pack:mcp:git-hub"]},
        servers,
    )
    assert errors == []
    assert [w.split(": ", 1)[0] for w in warnings] == [
        "permissions.ask[0]",
        "permissions.ask[1]",
        "permissions.ask[2]",
        "permissions.ask[3]",
    ]
    assert "unknown until connected (MCP server 'git-hub' is not connected" in warnings[0]
    assert "MCP server 'off' is disabled" in warnings[2]
    errors, _ = problems({"ask": ["mcp__gitlab__x"]}, servers)
    assert errors == ["permissions.ask[0]: 'mcp__gitlab__x': matches no known tool"]


def test_an_argument_no_matched_tool_has_is_an_error():
    errors, _ = problems(
        {"deny": ["write_file(pth=/etc/*)", "*_file(content=x)", "free(anything=1)"]}
    )
    assert errors == [
        "permissions.deny[0]: 'write_file(pth=/etc/*)': argument 'pth' is not a parameter of "
        "the tool write_file it matches (parameters: content, path); did you mean 'path'?"
    ]  # read_file lacks content, write_file has it; free takes any argument


def test_shadowed_rules_across_levels_are_errors_within_a_level_warnings():
    errors, warnings = problems(
        {
            "deny": ["write_*", "write_file(path=/etc/*)", "write_file"],
            "ask": ["toolset:file", "read_file(path=/x*)"],
            "allow": ["read_file", "query(sql=select *)"],
        }
    )
    assert errors == [
        "permissions.allow[0]: 'read_file': shadowed by permissions.ask[0] 'toolset:file': "
        "every call it matches is asked about first, so it never allows a call",
    ]
    same = "which matches every call it does first (same verdict): it is never the rule named"
    assert warnings == [
        f"permissions.deny[1]: 'write_file(path=/etc/*)': shadowed by permissions.deny[0] "
        f"'write_*', {same}",
        f"permissions.deny[2]: 'write_file': shadowed by permissions.deny[0] 'write_*', {same}",
        f"permissions.ask[1]: 'read_file(path=/x*)': shadowed by permissions.ask[0] "
        f"'toolset:file', {same}",
    ]


def test_an_earlier_argument_rule_covers_only_a_narrower_later_one():
    errors, warnings = problems(
        {
            "deny": ["write_file(path=/etc/*)"],
            "ask": ["write_file(path=/etc/passwd, content=*)", "write_file(content=x)"],
        }
    )
    assert [e.split(": ", 1)[0] for e in errors] == ["permissions.ask[0]"]
    assert warnings == []


def test_parameters_of_a_schema():
    assert parameters_of({"parameters": {"type": "object", "properties": {"a": {}}}}) == {"a"}
    assert parameters_of({"parameters": {"type": "object"}}) is None
    closed = {"type": "object", "additionalProperties": False}
    assert parameters_of({"parameters": closed}) == frozenset()
