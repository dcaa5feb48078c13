"""``toolreg plugins``: what happened to every tool pack and local plugin."""

from __future__ import annotations

import argparse

from toolreg import PluginReport

from . import _render
from ._errors import EXIT_OK
from ._state import state


def cmd_plugins(args: argparse.Namespace) -> int:
    """Print the plugin report; it is a report, so it exits 0 whatever the statuses."""
    report = state.report or PluginReport()
    if args.json:
        print(report.to_json(indent=2))
    else:
        # With -v, the load step already logged the tracebacks.
        print(plugin_table(report, _render.terminal_width()))
    return EXIT_OK


def plugin_table(report: PluginReport, width: int | None = None) -> str:
    if not len(report):
        return "No tool packs found (entry-point group toolreg.tools), and no local plugins."
    rows = []
    for o in report:
        tools = ", ".join(o.tools_added) or "-"
        if o.tools_overridden:
            tools += f" (overrides: {', '.join(o.tools_overridden)})"
        # The table drops the common prefix: "pre_tool_call" for toolreg_pre_tool_call.
        hooks = ", ".join(h.removeprefix("toolreg_") for h in o.hooks) or "-"
        rows.append((o.id, o.version or "-", o.status, o.isolation, tools, hooks, o.reason))
    headers = ("PLUGIN", "VERSION", "STATUS", "ISOLATION", "TOOLS", "HOOKS", "REASON")
    text = _render.table(headers, rows, width=width, cut={"TOOLS", "HOOKS", "REASON"})
    refused = [(o.id, r) for o in report for r in o.refused]
    if refused:
        text += "\n\nRefused registrations and actions:\n"
        text += "\n".join(f"  {pid}: {r['tool'] or '-'}: {r['reason']}" for pid, r in refused)
    return text
