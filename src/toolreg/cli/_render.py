"""Human-readable output: plain-text tables and reports (JSON output is printed as is)."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any


def to_json(data: Any) -> str:
    """Pretty JSON; ``default=str`` so an odd value in a schema cannot crash output."""
    return json.dumps(data, indent=2, ensure_ascii=False, default=str)


def table(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """Left-aligned columns separated by two spaces; the last column is not padded."""
    widths = [len(h) for h in headers]
    for row in rows:
        for i, cell in enumerate(row):
            widths[i] = max(widths[i], len(cell))
    lines = []
    for row in [headers, *rows]:
        cells = [cell.ljust(widths[i]) for i, cell in enumerate(row[:-1])]
        lines.append("  ".join([*cells, row[-1]]).rstrip())
    return "\n".join(lines)


def tool_table(tools: Sequence[dict[str, Any]]) -> str:
    """The ``list`` table: one row per tool, reason only for unavailable ones."""
    rows = [
        (t["name"], t["toolset"], "yes" if t["available"] else "no", t["reason"] or "")
        for t in tools
    ]
    return table(("NAME", "TOOLSET", "AVAILABLE", "REASON"), rows)


def tool_summary(name: str, toolset: str, owner: str | None, available: bool, reason: str) -> str:
    """The header ``show`` prints above a definition."""
    status = "yes" if available else f"no ({reason})" if reason else "no"
    return "\n".join(
        [
            f"tool:      {name}",
            f"toolset:   {toolset}",
            f"owner:     {owner or 'unknown'}",
            f"available: {status}",
        ]
    )


def tool_hints(annotations: Mapping[str, Any], structured: bool) -> str:
    """``show``'s lines for MCP's annotations and a structured result, below the summary."""
    title = annotations.get("title")
    hints = [f"{key}={json.dumps(value)}" for key, value in annotations.items() if key != "title"]
    lines = [f"title:     {title}"] if title is not None else []
    lines.append(f"hints:     {' '.join(hints) or 'none declared'}")
    if structured:
        lines.append("output:    structured (outputSchema in the mcp format)")
    return "\n".join(lines)


def doctor_report(report: dict[str, Any]) -> str:
    """The ``doctor`` text: one section per kind of problem, or a single all-clear line."""
    summary = report["summary"]
    lines = [
        f"{summary['tools']} tools registered, {summary['available']} available.",
    ]
    failures = report["import_failures"]
    unavailable = report["unavailable"]
    rejected = report["rejected"]
    plugins = report.get("plugin_failures", [])
    hooks = report.get("hook_failures", [])
    mcp = [s for s in report.get("mcp_servers", []) if s["state"] not in ("connected", "disabled")]
    stuck = {pool: s for pool, s in report.get("stuck_calls", {}).items() if s["stuck"]}
    caches = report.get("caches", [])
    warnings = report.get("warnings", [])
    problems = (failures, unavailable, rejected, plugins, hooks, mcp, caches, warnings, stuck)
    if not any(problems):
        lines.append("No problems found.")
        return "\n".join(lines)

    if failures:
        lines += ["", f"Modules that failed to import ({len(failures)}):"]
        lines += [f"  {f['module']}: {f['error']}" for f in failures]
    if unavailable:
        lines += ["", f"Unavailable tools ({len(unavailable)}):"]
        rows = [(t["name"], t["toolset"], t["reason"] or "") for t in unavailable]
        lines += ["  " + line for line in table(("NAME", "TOOLSET", "REASON"), rows).splitlines()]
    if rejected:
        lines += ["", f"Rejected registrations ({len(rejected)}):"]
        lines += [_rejection_line(d) for d in rejected]
    if plugins:
        lines += ["", f"Plugins that did not load ({len(plugins)}):"]
        lines += [f"  {p['id']}: {p['status']}: {p['reason']}" for p in plugins]
    if hooks:
        lines += ["", f"Hook failures that blocked calls ({len(hooks)}):"]
        lines += [f"  {h['plugin']} {h['hook']} on {h['tool']}: {h['error']}" for h in hooks]
    if mcp:
        lines += ["", f"MCP servers not connected ({len(mcp)}):"]
        lines += [
            f"  {s['name']}: {s['state']} after {s.get('failures', 0)} failed attempt(s): "
            f"{s.get('last_error') or 'no error recorded'}"
            for s in mcp
        ]
    if caches:
        lines += ["", f"Caches not trusted, rescanned instead ({len(caches)}):"]
        lines += [f"  {c['cache']} {c['file']} [{c['rule']}]: {c['reason']}" for c in caches]
    if warnings:
        lines += ["", f"Warnings ({len(warnings)}):"]
        lines += [f"  {w}" for w in warnings]
    if stuck:
        lines += ["", "Calls still running past their deadline (abandoned, holding a worker):"]
        lines += [f"  {pool}: {s['stuck']} of {s['size']} workers" for pool, s in stuck.items()]
    return "\n".join(lines)


def _rejection_line(decision: dict[str, Any]) -> str:
    who = decision.get("owner") or "unknown owner"
    toolset = decision.get("toolset") or "?"
    reason = decision.get("reason") or "no reason given"
    return f"  {decision.get('tool')} (toolset {toolset}, from {who}): {reason}"
