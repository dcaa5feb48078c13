"""``toolreg doctor``: what failed, what is unavailable, what was refused, and why."""

from __future__ import annotations

import argparse
from typing import Any

from toolreg import (
    get_cache_problems,
    get_discovery_failures,
    get_plugin_host,
    registry,
    worker_stats,
)

from ..workspace import workspace_warning
from . import _render
from ._commands import _mcp_servers, _tool_record
from ._errors import EXIT_OK
from ._state import state


def cmd_doctor(args: argparse.Namespace) -> int:
    """Report import failures, unavailable tools, rejections, distrusted caches. Always exits 0."""
    report = doctor_report()
    if args.json:
        print(_render.to_json(report))
    else:
        print(_render.doctor_report(report, _render.terminal_width()))
    return EXIT_OK


def doctor_report() -> dict[str, Any]:
    """Everything ``doctor`` knows, as the dict ``doctor --json`` prints."""
    names = registry.get_all_tool_names()
    tools = [_tool_record(n) for n in names]
    failures = get_discovery_failures()
    return {
        "summary": {
            "tools": len(tools),
            "available": sum(t["available"] for t in tools),
        },
        "import_failures": [
            {"module": module, "error": error} for module, error in sorted(failures.items())
        ],
        "unavailable": [
            {"name": t["name"], "toolset": t["toolset"], "reason": t["reason"]}
            for t in tools
            if not t["available"]
        ],
        "rejected": [d.to_dict() for d in registry.decisions() if d.action == "rejected"],
        "plugin_failures": [
            o.to_dict()
            for o in (state.report or [])
            if o.status in ("failed", "refused", "incompatible")
        ],
        "hook_failures": [f.to_dict() for f in _hook_failures()],
        "mcp_servers": _mcp_servers(),
        "caches": get_cache_problems(),
        "warnings": workspace_warnings(),
        # Calls abandoned at their deadline and still running, per worker pool.
        "stuck_calls": worker_stats(),
    }


def workspace_warnings() -> list[str]:
    """The built-in file and terminal tools' warning about a root nobody chose, if loaded."""
    if not any(registry.get_tool_names_for_toolset(ts) for ts in ("file", "terminal")):
        return []
    warning = workspace_warning()
    return [warning] if warning else []


def _hook_failures() -> list[Any]:
    host = get_plugin_host()
    return host.hook_failures() if host is not None else []
