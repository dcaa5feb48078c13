"""``toolreg permissions TOOL [ARGS]``: which of the operator's rules decides a call, and why.

Runs nothing: the call is judged with the matcher dispatch uses
(``_core.permissions.explain``), against the rules of the config as loaded.
"""

from __future__ import annotations

import argparse
from typing import Any

from toolreg import registry

from .._contract.escaping import escape
from .._core.permissions import DEFAULT_WHERE, explain
from . import _render
from ._commands import _require_tool, _where_shown, parse_call_args
from ._errors import EXIT_OK

#: A value longer than this is cut in the text (``--json`` has it whole).
_SHOWN_CHARS = 120


def cmd_permissions(args: argparse.Namespace) -> int:
    tool_args = parse_call_args(args.args)
    source, cached = _where_shown(args.name)
    entry = source.get_entry(args.name) if cached else _require_tool(args.name)
    assert entry is not None
    report = permission_report(
        entry.name,
        entry.toolset,
        source.get_owner(entry.name),
        tool_args,
        entry.annotations.get("readOnlyHint"),
    )
    if args.json:
        print(_render.to_json(report))
    else:
        print("\n".join(_text(report)))
    return EXIT_OK


def permission_report(
    name: str,
    toolset: str,
    owner: str | None,
    arguments: dict[str, Any],
    read_only: Any = None,
) -> dict[str, Any]:
    """What ``permissions --json`` prints for one call (``read_only``: the tool's
    ``readOnlyHint``, which ``ask_unless_read_only`` reads)."""
    report: dict[str, Any] = {
        "tool": name,
        "toolset": toolset,
        "owner": owner,
        "arguments": arguments,
    }
    permissions = registry.permissions
    if permissions is None:
        return {
            **report,
            "checked": False,
            "verdict": "allow",
            "rule": None,
            "where": None,
            "matched": None,
            "arguments_matched": [],
            "passed_over": [],
        }
    found = explain(permissions, name, toolset, owner, arguments, read_only)
    rule = found.rule
    return {
        **report,
        "checked": True,
        "verdict": found.verdict,
        "rule": None if rule is None else rule.text,
        "where": DEFAULT_WHERE if rule is None else rule.where,
        "matched": None
        if rule is None
        else {"scope": rule.scope, "glob": rule.glob, "subject": found.subject},
        "arguments_matched": [
            {"argument": arg, "glob": glob, "value": value} for arg, glob, value in found.arguments
        ],
        "passed_over": [
            {"rule": r.text, "where": r.where, "argument": arg, "value": value}
            for r, arg, value in found.passed_over
        ],
    }


def _shown(text: str | None) -> str:
    text = "" if text is None else text
    if len(text) > _SHOWN_CHARS:
        text = f"{text[:_SHOWN_CHARS]}…(+{len(text) - _SHOWN_CHARS} chars)"
    return escape(repr(text))


_SCOPE_WORDS = {"tool": "the tool's name", "toolset": "its toolset", "pack": "its owner"}


def _text(report: dict[str, Any]) -> list[str]:
    owner = report["owner"] or "unknown owner"
    head = f"{report['tool']} (toolset {report['toolset']}, owner {owner}): {report['verdict']}"
    if not report["checked"]:
        return [head, "  no [permissions] table in the config: every call runs, none is checked"]
    lines = [head]
    if report["rule"] is None:
        lines.append(
            f"  decided by {DEFAULT_WHERE} ({report['verdict']!r}): no rule matches this call"
        )
    else:
        matched = report["matched"]
        lines.append(f"  decided by {report['where']}: {_shown(report['rule'])}")
        lines.append(
            f"  {_SCOPE_WORDS[matched['scope']]} {_shown(matched['subject'])} "
            f"matches {_shown(matched['glob'])}"
        )
        lines += [
            f"  argument {escape(a['argument'])}={_shown(a['value'])} matches {_shown(a['glob'])}"
            for a in report["arguments_matched"]
        ]
    if report["passed_over"]:
        lines.append("  consulted first, matching this tool but not these arguments:")
        for passed in report["passed_over"]:
            arg, value = passed["argument"], passed["value"]
            if arg is None:
                why = "the arguments are not an object"
            elif value is None:
                why = f"no argument {escape(arg)}"
            else:
                why = f"{escape(arg)}={_shown(value)} does not match"
            lines.append(f"    {passed['where']}: {_shown(passed['rule'])}: {why}")
    return lines
