"""The operator's permission rules, pure: reading them, precedence, globs, argument values."""

from __future__ import annotations

import pytest

from toolreg._core.permissions import Permissions, RuleError, parse_rule, stringify


def decide(table, name, args=None, toolset="t", pack="host"):
    verdict, rule = Permissions.from_table(table).decide(name, toolset, pack, args or {})
    return verdict, None if rule is None else rule.text


def test_deny_beats_ask_beats_allow_beats_the_default():
    table = {"default": "deny", "deny": ["t*"], "ask": ["te*"], "allow": ["terminal", "x"]}
    assert decide(table, "terminal") == ("deny", "t*")
    assert decide({**table, "deny": []}, "terminal") == ("ask", "te*")
    assert decide({**table, "deny": [], "ask": []}, "terminal") == ("allow", "terminal")
    assert decide(table, "other") == ("deny", None)
    assert decide({"default": "ask"}, "other") == ("ask", None)
    assert decide({}, "other") == ("allow", None)


def test_the_first_matching_rule_of_a_level_is_the_one_named():
    table = {"deny": ["nomatch", "te*", "terminal", "*"]}
    assert decide(table, "terminal") == ("deny", "te*")


def test_globs_are_anchored_and_case_sensitive():
    table = {"deny": ["mcp__*", "read"]}
    assert decide(table, "mcp__github__x")[0] == "deny"
    assert decide(table, "xmcp__github")[0] == "allow", "anchored at the start"
    assert decide(table, "read_file")[0] == "allow", "anchored at the end"
    assert decide(table, "READ")[0] == "allow", "case-sensitive"
    assert decide({"deny": ["read_[fd]ile", "w?ite"]}, "read_dile")[0] == "deny"
    assert decide({"deny": ["w?ite"]}, "write")[0] == "deny"


def test_argument_globs_match_the_value_as_a_string():
    table = {"ask": ["http_request(url=https://*.internal/*)"], "deny": ["run(cmd=rm *, n=3)"]}
    assert decide(table, "http_request", {"url": "https://a.internal/x"})[0] == "ask"
    assert decide(table, "http_request", {"url": "https://a.example/x"})[0] == "allow"
    assert decide(table, "http_request", {})[0] == "allow", "an absent argument never matches"
    assert decide(table, "run", {"cmd": "rm -rf /", "n": 3})[0] == "deny"
    assert decide(table, "run", {"cmd": "rm -rf /", "n": 4})[0] == "allow", "every glob must match"
    assert decide(table, "run", {"cmd": "rm a\nb", "n": 3})[0] == "deny", "* spans lines"


@pytest.mark.parametrize(
    ("value", "text"),
    [
        ("a b", "a b"),
        (3, "3"),
        (2.5, "2.5"),
        (True, "true"),
        (None, "null"),
        (["a", "b"], '["a","b"]'),
        ({"b": 1, "a": "é"}, '{"a":"é","b":1}'),
    ],
)
def test_values_stringify_as_written_for_strings_and_compact_json_otherwise(value, text):
    assert stringify(value) == text
    glob = text.replace("[", "[[]")  # a [ in the value is a literal in the glob
    assert decide({"deny": [f"f(v={glob})"]}, "f", {"v": value})[0] == "deny"


def test_arguments_that_are_no_object_match_no_argument_rule():
    assert decide({"deny": ["f(a=*)"]}, "f", ["not", "an", "object"])[0] == "allow"


def test_scopes_match_the_toolset_and_the_pack():
    table = {"deny": ["toolset:mcp-git*"], "ask": ["pack:toolreg-sql*"]}
    assert decide(table, "x", toolset="mcp-github") == ("deny", "toolset:mcp-git*")
    assert decide(table, "x", pack="toolreg-sqlite") == ("ask", "pack:toolreg-sql*")
    assert decide(table, "x", pack="mcp:github")[0] == "allow"
    assert decide({"deny": ["pack:mcp:git*"]}, "x", pack="mcp:github")[0] == "deny"
    assert (
        decide({"deny": ["toolset:web(url=*evil*)"]}, "x", {"url": "evil"}, toolset="web")[0]
        == "deny"
    )


def test_a_conditional_rule_does_not_stop_the_search_for_the_next():
    table = {"deny": ["f(a=x)"], "ask": ["f"], "allow": ["*"]}
    assert decide(table, "f", {"a": "x"}) == ("deny", "f(a=x)")
    assert decide(table, "f", {"a": "y"}) == ("ask", "f")


def test_the_per_tool_permit_keeps_only_the_rules_that_can_match():
    perms = Permissions.from_table(
        {"deny": [f"tool_{i}" for i in range(200)] + ["f(a=x)", "g"], "allow": ["f", "*"]}
    )
    permit = perms.for_tool("f", "t", "host")
    assert [r.text for r in permit.candidates] == ["f(a=x)", "f"]
    assert [r.text for r in perms.for_tool("tool_150", "t", "host").candidates] == ["tool_150"]
    assert perms.for_tool("zzz", "t", "host").candidates[0].text == "*"


@pytest.mark.parametrize(
    ("rule", "problem"),
    [
        ("", "non-empty"),
        (" terminal", "surrounding spaces"),
        ("terminal(", "must end the rule with ')'"),
        ("terminal(cmd=x", "must end the rule with ')'"),
        ("terminal)", "')' without '('"),
        ("terminal()", "empty argument list"),
        ("terminal(cmd)", "expected arg=glob"),
        ("terminal(=x)", "expected arg=glob"),
        ("terminal(a=1, a=2)", "named twice"),
        ("server:x", "unknown scope 'server'"),
        ("toolset:", "expected a toolset glob"),
        ("read file", "expected a tool name glob without spaces"),
        (3, "a rule is a string"),
    ],
)
def test_a_malformed_rule_is_an_error_naming_it(rule, problem):
    with pytest.raises(RuleError) as info:
        parse_rule(rule, "deny", 2)
    assert str(info.value).startswith(f"permissions.deny[2]: {rule!r}: ")
    assert problem in info.value.problem


def test_from_table_refuses_unknown_keys_and_defaults():
    with pytest.raises(ValueError, match="unknown key"):
        Permissions.from_table({"denny": ["x"]})
    with pytest.raises(ValueError, match="default must be"):
        Permissions.from_table({"default": "maybe"})
    with pytest.raises(ValueError, match="list of rule strings"):
        Permissions.from_table({"deny": "terminal"})


def test_consecutive_rules_on_one_argument_still_name_the_first_that_matches():
    table = {
        "deny": ["f(p=/a/*)", "f(p=/b/*)", "f(p=*x*)", "f(q=1)", "f(p=/c/*)", "f(p=3, q=4)"],
        "ask": ["f(p=/d/*)", "f(p=/e/*)"],
    }
    assert decide(table, "f", {"p": "/b/x"}) == ("deny", "f(p=/b/*)")
    assert decide(table, "f", {"p": "/a/x"}) == ("deny", "f(p=/a/*)")
    assert decide(table, "f", {"p": "/z/x"}) == ("deny", "f(p=*x*)")
    assert decide(table, "f", {"p": "/c/y", "q": 1}) == ("deny", "f(q=1)")
    assert decide(table, "f", {"p": "/c/y"}) == ("deny", "f(p=/c/*)")
    assert decide(table, "f", {"p": 3, "q": 4}) == ("deny", "f(p=3, q=4)")
    assert decide(table, "f", {"p": "/e/y"}) == ("ask", "f(p=/e/*)")
    assert decide(table, "f", {"p": "/y"}) == ("allow", None)
    assert decide(table, "f", {"q": "/d/"}) == ("allow", None)
    assert decide(table, "f", ["/a/x"]) == ("allow", None)
