"""``explain``: the verdict dispatch would give a call, the rule that gives it, and why."""

from __future__ import annotations

import pytest

from toolreg._core.permissions import Permissions, explain

TABLE = {
    "deny": ["write_file(path=/etc/*)", "write_file(content=*rm -rf*, mode=x)"],
    "ask": ["toolset:file(path=secret*)", "write_*"],
    "allow": ["pack:builtin"],
    "default": "deny",
}
CALLS = [
    ("write_file", {"path": "/etc/passwd"}),
    ("write_file", {"path": "a.txt", "content": "rm -rf /", "mode": "y"}),
    ("write_file", {"path": "a.txt"}),
    ("read_file", {"path": "secret.txt"}),
    ("read_file", {"path": "a.txt"}),
    ("read_file", "not an object"),
]


@pytest.mark.parametrize(("name", "args"), CALLS)
def test_explain_agrees_with_decide(name, args):
    permissions = Permissions.from_table(TABLE)
    found = explain(permissions, name, "file", "builtin", args)
    assert (found.verdict, found.rule) == permissions.decide(name, "file", "builtin", args)


def test_it_names_what_matched_and_what_was_passed_over():
    permissions = Permissions.from_table(TABLE)
    found = explain(permissions, "write_file", "file", "builtin", {"path": "a", "mode": "y"})
    assert (found.verdict, found.rule.where, found.subject) == (
        "ask",
        "permissions.ask[1]",
        "write_file",
    )
    assert [(r.where, arg, value) for r, arg, value in found.passed_over] == [
        ("permissions.deny[0]", "path", "a"),
        ("permissions.deny[1]", "content", None),  # absent
        ("permissions.ask[0]", "path", "a"),
    ]
    found = explain(permissions, "read_file", "file", "builtin", {"path": "secret", "n": 3})
    assert (found.rule.where, found.subject) == ("permissions.ask[0]", "file")
    assert found.arguments == (("path", "secret*", "secret"),)
    found = explain(permissions, "other", "web", "toolreg-x", {})
    assert (found.verdict, found.rule, found.passed_over) == ("deny", None, ())


@pytest.mark.parametrize("read_only", [True, False, None])
def test_explain_reads_the_read_only_hint_as_dispatch_does(read_only):
    table = {"default": "allow", "ask_unless_read_only": True, "trust_hints": ["acme"]}
    permissions = Permissions.from_table(table)
    found = explain(permissions, "peek", "acme", "acme", {}, read_only)
    decided = permissions.decide("peek", "acme", "acme", {}, read_only)
    assert (found.verdict, found.rule) == decided
    assert found.verdict == ("allow" if read_only else "ask")
