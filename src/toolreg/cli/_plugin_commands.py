"""``toolreg plugins`` and ``toolreg config check``: what the operator's config did."""

from __future__ import annotations

import argparse
from typing import Any

from toolreg import ConfigError, PluginReport, load_config

from . import _render
from ._errors import EXIT_OK, EXIT_USAGE, CliError
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


def cmd_config_check(args: argparse.Namespace) -> int:
    """Validate a config file (or the one toolreg would use) and say what it holds."""
    path = args.path or args.config
    try:
        config = load_config(path)
    except ConfigError as exc:
        raise CliError(str(exc), EXIT_USAGE) from None
    if config.source is None:
        print("No config file found; the defaults apply (every installed pack loads).")
        return EXIT_OK
    print(f"{config.source}: ok")
    for line in _config_summary(config):
        print(f"  {line}")
    return EXIT_OK


def _config_summary(config: Any) -> list[str]:
    plugins = config.plugins
    lines = []
    if plugins.enabled is not None:
        lines.append(f"plugins.enabled: {', '.join(plugins.enabled) or '(none)'}")
    if plugins.disabled:
        lines.append(f"plugins.disabled: {', '.join(plugins.disabled)}")
    lines += [f"plugins.paths: {p}" for p in plugins.paths]
    if plugins.isolation != "none":
        lines.append(f"plugins.isolation: {plugins.isolation}")
    for plugin_id, entry in sorted(plugins.entries.items()):
        details = [f"allow_tool_override={str(entry.allow_tool_override).lower()}"]
        if entry.version is not None:
            details.append(f"version={entry.version}")
        if entry.tools is not None:
            details.append(f"tools={list(entry.tools)}")
        if entry.isolation is not None:
            details.append(f"isolation={entry.isolation}")
        if entry.env:
            details.append(f"env={list(entry.env)}")
        if entry.settings:
            details.append(f"settings: {', '.join(sorted(entry.settings))}")
        lines.append(f"plugins.entries.{plugin_id}: {', '.join(details)}")
    if config.toolsets.aliases:
        aliases = ", ".join(f"{a}={t}" for a, t in sorted(config.toolsets.aliases.items()))
        lines.append(f"toolsets.aliases: {aliases}")
    return lines
