"""Permission rules that never fire: ``toolreg config check`` reports them.

Pure: the compiled rules and what is known (tools, packs, configured MCP
servers) in, messages out. A rule never fires when

- its glob matches no known tool, toolset or pack (an error, with the closest
  name), unless a configured MCP server that is not connected might bring what it
  names (a warning: unknown until connected);
- it names an argument that no tool it matches has as a parameter (an error);
- an earlier rule covers every call it matches (shadowed): one of a higher
  level is an error (the rule's verdict is never given), one of its own level a
  warning (the earlier one is named instead, with the same verdict).

"Covers" is decided from the text of the rules, for rules of the same scope: the
earlier glob is the same as the later one, or the later is a literal the earlier
matches, or the earlier is a literal prefix and one final ``*`` and the later's
literal prefix starts with it; each argument glob of the earlier rule must cover
one of the later rule's the same way (the later may test more arguments). Across
scopes, a rule naming one tool literally is shadowed by an earlier rule without
arguments matching that tool's toolset or owner. Other overlaps are not reported.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Collection, Iterable, Sequence
from typing import NamedTuple

from .._contract.names import sanitise
from .._core.permissions import Permissions, Rule
from .config_reader import did_you_mean

_WILD = frozenset("*?[")


class KnownTool(NamedTuple):
    """A tool as the rules see it; ``parameters`` None when its schema takes any argument."""

    name: str
    toolset: str
    owner: str | None
    parameters: frozenset[str] | None


class RuleProblems(NamedTuple):
    errors: list[str]
    warnings: list[str]


def parameters_of(schema: object) -> frozenset[str] | None:
    """The parameter names a tool's schema declares; None when it declares none and is open."""
    params = schema.get("parameters") if isinstance(schema, dict) else None
    if not isinstance(params, dict):
        return None
    properties = params.get("properties")
    names = frozenset(properties) if isinstance(properties, dict) else frozenset()
    if not names and params.get("additionalProperties", True) is not False:
        return None  # a free-form object: any argument may come
    return names


def rule_problems(
    permissions: Permissions,
    tools: Sequence[KnownTool],
    packs: Iterable[str],
    mcp_servers: dict[str, bool],
) -> RuleProblems:
    """What never fires in ``permissions``; ``mcp_servers`` maps a configured, not connected
    server's name to whether it is enabled."""
    problems = RuleProblems([], [])
    owners = {t.owner for t in tools if t.owner is not None} | set(packs) | {"builtin", "host"}
    subjects = {
        "tool": sorted({t.name for t in tools}),
        "toolset": sorted({t.toolset for t in tools}),
        "pack": sorted(owners),
    }
    earlier: list[Rule] = []
    for rule in permissions.all_rules():
        _check(rule, tools, subjects, mcp_servers, earlier, problems)
        earlier.append(rule)
    return problems


def _check(
    rule: Rule,
    tools: Sequence[KnownTool],
    subjects: dict[str, list[str]],
    mcp_servers: dict[str, bool],
    earlier: list[Rule],
    problems: RuleProblems,
) -> None:
    head = f"{rule.where}: {rule.text!r}"
    matched = [t for t in tools if _subject_matches(rule, t)]
    if not matched and not any(rule.matcher.match(s) for s in subjects[rule.scope]):
        server = _mcp_server_of(rule, mcp_servers)
        if server is not None:
            state = "is not connected" if mcp_servers[server] else "is disabled"
            problems.warnings.append(
                f"{head}: matches no known {_what(rule)}; unknown until connected "
                f"(MCP server {server!r} {state}, and config check connects no server)"
            )
        else:
            hint = did_you_mean(rule.glob, subjects[rule.scope])
            problems.errors.append(f"{head}: matches no known {_what(rule)}{hint}")
        return
    for arg, _, _ in rule.args:
        if matched and all(t.parameters is not None and arg not in t.parameters for t in matched):
            names = sorted({p for t in matched for p in t.parameters or ()})
            which = f"tool {matched[0].name}" if len(matched) == 1 else f"{len(matched)} tools"
            shown = ", ".join(names[:8]) + (", ..." if len(names) > 8 else "")
            problems.errors.append(
                f"{head}: argument {arg!r} is not a parameter of the {which} it matches "
                f"(parameters: {shown or 'none'}){did_you_mean(arg, names)}"
            )
    for first in earlier:
        if _covers(first, rule, tools):
            if first.level == rule.level:
                problems.warnings.append(
                    f"{head}: shadowed by {first.where} {first.text!r}, which matches every "
                    "call it does first (same verdict): it is never the rule named"
                )
            else:
                problems.errors.append(
                    f"{head}: shadowed by {first.where} {first.text!r}: every call it matches "
                    f"is {_PAST[first.level]} first, so it never {_GIVES[rule.level]} a call"
                )
            return


def _what(rule: Rule) -> str:
    return {"tool": "tool", "toolset": "toolset", "pack": "pack or owner"}[rule.scope]


_PAST = {"deny": "denied", "ask": "asked about", "allow": "allowed"}
_GIVES = {"deny": "denies", "ask": "asks about", "allow": "allows"}


def _subject_matches(rule: Rule, tool: KnownTool) -> bool:
    if rule.scope == "tool":
        subject: str | None = tool.name
    else:
        subject = tool.toolset if rule.scope == "toolset" else tool.owner
    return subject is not None and rule.matcher.match(subject) is not None


def _mcp_server_of(rule: Rule, servers: Collection[str]) -> str | None:
    """A configured server whose tools the rule might name once it is connected."""
    for server in sorted(servers):
        if rule.scope == "tool":
            prefix = _literal_prefix(rule.glob)
            names = f"mcp__{sanitise(server)}__"
            if names.startswith(prefix) or prefix.startswith(names):
                return server
        elif rule.matcher.match(f"mcp-{server}" if rule.scope == "toolset" else f"mcp:{server}"):
            return server
    return None


def _literal_prefix(glob: str) -> str:
    for index, char in enumerate(glob):
        if char in _WILD:
            return glob[:index]
    return glob


def _glob_covers(first: str, later: str) -> bool:
    """Whether every string glob ``later`` matches is matched by glob ``first`` (as detected)."""
    if first == later:
        return True
    if not _WILD & set(later):
        return fnmatch.fnmatchcase(later, first)
    stem = first[:-1]
    return first.endswith("*") and not _WILD & set(stem) and _literal_prefix(later).startswith(stem)


def _covers(first: Rule, later: Rule, tools: Sequence[KnownTool]) -> bool:
    if not all(
        any(name == n and _glob_covers(glob, g) for n, g, _ in later.args)
        for name, glob, _ in first.args
    ):
        return False
    if first.scope == later.scope:
        return _glob_covers(first.glob, later.glob)
    if later.scope != "tool" or first.args or _WILD & set(later.glob):
        return False
    named = [t for t in tools if t.name == later.glob]
    return bool(named) and all(_subject_matches(first, t) for t in named)
