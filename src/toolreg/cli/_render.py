"""Human-readable output: plain-text tables and reports (JSON output is printed as is)."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Collection, Mapping, Sequence
from typing import Any

from ._help import terminal_columns


def to_json(data: Any) -> str:
    """Pretty JSON; ``default=str`` so an odd value in a schema cannot crash output."""
    return json.dumps(data, indent=2, ensure_ascii=False, default=str)


def terminal_width() -> int | None:
    """The width tables must fit: $COLUMNS, else the terminal's; None when stdout is no terminal.

    Output to a pipe or a file is not cut: a script reading the table gets every
    character (and ``--json`` is never cut at all).
    """
    columns = os.environ.get("COLUMNS", "")
    if columns.isdigit() and int(columns) > 0:
        return int(columns)
    try:
        if not sys.stdout.isatty():
            return None
    except (AttributeError, ValueError):  # no stdout, or a closed one
        return None
    return terminal_columns()


def table(
    headers: Sequence[str],
    rows: Sequence[Sequence[str]],
    *,
    width: int | None = None,
    cut: Collection[str] = (),
) -> str:
    """Left-aligned columns separated by two spaces; the last column is not padded.

    With ``width``, the columns named in ``cut`` (long free text: reasons, tool
    lists) give up characters, the widest first, until each line fits; a cell
    cut short ends with an ellipsis. Names are never cut: when the columns
    cannot fit even so, each row becomes a block of ``header: value`` lines
    instead (:func:`_blocks`).
    """
    widths = [len(h) for h in headers]
    for row in rows:
        for i, cell in enumerate(row):
            widths[i] = max(widths[i], len(cell))
    if width is not None:
        _shrink(widths, [i for i, h in enumerate(headers) if h in cut], headers, width)
        if sum(widths) + 2 * (len(widths) - 1) > width:
            return _blocks(headers, rows, width)
    wrapped = {i for i, h in enumerate(headers) if h in cut} if width is not None else set()
    lines = []
    for row in [headers, *rows]:
        cells = [_wrap(cell, widths[i]) if i in wrapped else [cell] for i, cell in enumerate(row)]
        for n in range(max(map(len, cells))):
            parts = [_fit(c[n] if n < len(c) else "", widths[i]) for i, c in enumerate(cells)]
            padded = [part.ljust(widths[i]) for i, part in enumerate(parts[:-1])]
            lines.append("  ".join([*padded, parts[-1]]).rstrip())
    return "\n".join(lines)


def _blocks(headers: Sequence[str], rows: Sequence[Sequence[str]], width: int) -> str:
    """One block per row, for a terminal too narrow for the columns: the first cell
    alone, then ``header: value`` for each other cell, wrapped between words."""
    lines = []
    for row in rows:
        lines.append(_fit(row[0], width))
        for header, cell in zip(headers[1:], row[1:], strict=True):
            if cell and cell != "-":
                field = f"  {header.lower()}: {cell}"
                lines += [_fit(line, width) for line in wrap_line(field, width)]
    return "\n".join(lines)


def _wrap(cell: str, width: int) -> list[str]:
    """``cell`` on lines of ``width``, broken between words; a longer word is cut with ``…``."""
    if len(cell) <= width:
        return [cell]
    import textwrap  # only a table too wide for the terminal gets here

    wrapped = textwrap.wrap(cell, width, break_long_words=False, break_on_hyphens=False)
    return [_fit(line, width) for line in wrapped] or [""]


def wrap_line(line: str, width: int | None, indent: str = "    ") -> list[str]:
    """One report line within ``width``: broken between words, continued under ``indent``."""
    if width is None or len(line) <= width:
        return [line]
    import textwrap

    lead = line[: len(line) - len(line.lstrip(" "))]
    return textwrap.wrap(
        line,
        width,
        initial_indent="",
        subsequent_indent=lead + indent,
        break_long_words=False,
        break_on_hyphens=False,
    ) or [line]


# A column cut down keeps room for its header and a few characters of its text.
_MIN_CUT_WIDTH = 12


def _shrink(widths: list[int], cuttable: list[int], headers: Sequence[str], width: int) -> None:
    excess = sum(widths) + 2 * (len(widths) - 1) - width
    floors = {i: max(len(headers[i]), _MIN_CUT_WIDTH) for i in cuttable}
    while excess > 0:
        room = [i for i in cuttable if widths[i] > floors[i]]
        if not room:
            return
        widest = max(room, key=lambda i: widths[i])
        widths[widest] -= 1
        excess -= 1


def _fit(cell: str, width: int) -> str:
    if len(cell) <= width:
        return cell
    return cell[: width - len(_ELLIPSIS)] + _ELLIPSIS


def _ellipsis() -> str:
    encoding = getattr(sys.stdout, "encoding", None) or "ascii"
    try:
        "\u2026".encode(encoding)
    except (UnicodeError, LookupError):
        return "..."
    return "\u2026"


_ELLIPSIS = _ellipsis()


def tool_table(tools: Sequence[dict[str, Any]], width: int | None = None) -> str:
    """The ``list`` table: one row per tool, reason only for unavailable ones."""
    rows = [(t["name"], t["toolset"], _availability(t), t["reason"] or "") for t in tools]
    return table(("NAME", "TOOLSET", "AVAILABLE", "REASON"), rows, width=width, cut={"REASON"})


def search_table(hits: Sequence[dict[str, Any]], width: int | None = None) -> str:
    """The ``search`` table: best first, the description cut to fit."""
    rows = [
        (h["name"], h["toolset"], f"{h['score']:.2f}", _first_line(h["description"])) for h in hits
    ]
    return table(
        ("NAME", "TOOLSET", "SCORE", "DESCRIPTION"), rows, width=width, cut={"DESCRIPTION"}
    )


def _first_line(text: str) -> str:
    return text.strip().split("\n", 1)[0] if text else ""


def _availability(tool: dict[str, Any]) -> str:
    if "cached_at" in tool:  # an MCP server's tool as last listed: not connected now
        return "cached"
    return "yes" if tool["available"] else "no"


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


def doctor_report(report: dict[str, Any], width: int | None = None) -> str:
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
    locking = _lock_lines(report.get("mcp_servers", []))
    stuck = {pool: s for pool, s in report.get("stuck_calls", {}).items() if s["stuck"]}
    caches = report.get("caches", [])
    warnings = report.get("warnings", [])
    lock = report.get("lock") or {}
    locks = [*lock.get("problems", [])]
    if lock.get("error"):
        locks.append({"file": lock["file"], "rule": "unreadable", "reason": lock["error"]})
    problems = (failures, unavailable, rejected, plugins, hooks, mcp, locking, caches, locks)
    problems += (warnings, stuck)
    if lock.get("in_use"):
        lines.append(f"Lock file in use: {lock['file']}")
    fitted: set[str] = set()
    if not any(problems) and not stuck:
        lines.append("No problems found.")
        lines += _permission_lines(report.get("permissions", []), width, fitted)
        return "\n".join(
            wrapped
            for line in lines
            for wrapped in ([line] if line in fitted else wrap_line(line, width))
        )

    if failures:
        lines += ["", f"Modules that failed to import ({len(failures)}):"]
        lines += [f"  {f['module']}: {f['error']}" for f in failures]
    if unavailable:
        lines += ["", f"Unavailable tools ({len(unavailable)}):"]
        rows = [(t["name"], t["toolset"], t["reason"] or "") for t in unavailable]
        inner = None if width is None else width - 2
        text = table(("NAME", "TOOLSET", "REASON"), rows, width=inner, cut={"REASON"})
        rows_text = ["  " + line for line in text.splitlines()]
        fitted.update(rows_text)  # the table fits itself; its lines are not wrapped again
        lines += rows_text
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
    if locking:
        lines += ["", f"MCP servers and toolreg.lock ({len(locking)}):", *locking]
    if caches:
        lines += ["", f"Caches not trusted, rescanned instead ({len(caches)}):"]
        lines += [f"  {c['cache']} {c['file']} [{c['rule']}]: {c['reason']}" for c in caches]
    if locks:
        lines += ["", f"Lock files not used ({len(locks)}):"]
        lines += [
            f"  {c['file']} [{c['rule']}]: {c['reason']}; "
            + (
                "packs are held back until it is fixed"
                if c["rule"] == "unreadable"
                else "ignored: packs and MCP tools load unlocked"
            )
            for c in locks
        ]
    if warnings:
        lines += ["", f"Warnings ({len(warnings)}):"]
        lines += [f"  {w}" for w in warnings]
    if stuck:
        lines += ["", "Calls still running past their deadline (abandoned, holding a worker):"]
        lines += [f"  {pool}: {s['stuck']} of {s['size']} workers" for pool, s in stuck.items()]
    lines += _permission_lines(report.get("permissions", []), width, fitted)
    return "\n".join(
        wrapped
        for line in lines
        for wrapped in ([line] if line in fitted else wrap_line(line, width))
    )


def _permission_lines(rows: list[dict[str, Any]], width: int | None, fitted: set[str]) -> list[str]:
    """The operator's rules, in precedence order, with the calls each decided."""
    if not rows:
        return []
    table_rows = [
        (
            r["where"],
            "(default)" if r["rule"] is None else repr(r["rule"]),
            r["verdict"],
            str(r["allowed"]),
            str(r["denied"]),
            str(r["asked"]),
        )
        for r in rows
    ]
    headers = ("WHERE", "RULE", "VERDICT", "ALLOWED", "DENIED", "ASKED")
    inner = None if width is None else width - 2
    text = table(headers, table_rows, width=inner, cut={"RULE"})
    rows_text = ["  " + line for line in text.splitlines()]
    fitted.update(rows_text)
    calls = (
        "this process made no calls"
        if not any(r["allowed"] or r["denied"] or r["asked"] for r in rows)
        else "calls this process made"
    )
    return ["", f"Permissions ({len(rows) - 1} rule(s), then the default; {calls}):", *rows_text]


def _lock_lines(servers: list[dict[str, Any]]) -> list[str]:
    """Each MCP server the lock leaves unchecked, and each tool that differs from it."""
    lines = []
    for server in servers:
        name, state = server["name"], server.get("lock")
        if state == "unlocked":
            lines.append(f"  {name}: unlocked: the lock does not name it; its tools load unchecked")
        elif state == "unreadable":
            lines.append(f"  {name}: the lock cannot be read; every tool is withheld")
            continue
        for issue in server.get("lock_issues", []):
            fate = ", withheld" if issue["withheld"] else ""
            lines.append(
                f"  {name}: {issue['status']} tool {issue['tool']!r}{fate}: {issue['reason']}"
            )
    return lines


def _rejection_line(decision: dict[str, Any]) -> str:
    who = decision.get("owner") or "unknown owner"
    toolset = decision.get("toolset") or "?"
    reason = decision.get("reason") or "no reason given"
    return f"  {decision.get('tool')} (toolset {toolset}, from {who}): {reason}"
