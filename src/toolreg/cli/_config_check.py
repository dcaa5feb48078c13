"""``toolreg config check``: is the config valid, does every name in it match, what will it do.

Parses the file (exit 2 if bad), loads tools and packs as any command does (not
MCP servers; every toolset on, so an isolated pack's are all known), and makes
each name that matches nothing an error (exit 1).
"""

from __future__ import annotations

import argparse
import logging
import shlex
import shutil
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from toolreg import (
    Config,
    ConfigError,
    PluginReport,
    discover_builtin_tools,
    load_config,
    load_plugins,
    registry,
)

from .._loaders.stdout_guard import stdout_to_stderr
from .._policy.config import ToolsetsConfig
from .._policy.rule_reach import KnownTool, RuleProblems, parameters_of, rule_problems
from .._policy.unknown_names import (
    plugin_ids_written,
    unknown_hooks,
    unknown_names,
    unknown_toolsets,
)
from . import _render
from ._errors import EXIT_FAILURE, EXIT_OK, EXIT_USAGE, CliError
from ._logs import quiet_loading


def cmd_config_check(args: argparse.Namespace) -> int:
    """Validate a config file (or the one toolreg would use) and say what it will do."""
    try:
        config = load_config(args.path or args.config)
    except ConfigError as exc:
        if not args.json:
            raise CliError(str(exc), EXIT_USAGE) from None
        # Scripts read stdout: a file that does not parse is JSON too, same exit code.
        print(_render.to_json(unreadable(exc)))
        return EXIT_USAGE
    report = _load(config, getattr(args, "verbose", False))
    errors = name_errors(config, report)
    rules = permission_problems(config, report)
    errors += rules.errors
    lock_errors, lock_warnings = lock_problems(config)
    errors += lock_errors
    warnings = [*rules.warnings, *lock_warnings]
    if args.json:
        settings = effective_settings(config, report, errors)
        print(_render.to_json({**settings, "warnings": warnings}))
    else:
        _print_text(config, report, errors, warnings)
    return EXIT_FAILURE if errors else EXIT_OK


def unreadable(exc: ConfigError) -> dict[str, Any]:
    """What ``config check --json`` prints for a file that cannot be read or parsed."""
    return {
        "source": str(exc.source) if exc.source is not None else None,
        "ok": False,
        "errors": [str(exc)],
        "problems": [{"key": exc.key or None, "problem": exc.problem}],
    }


def name_errors(config: Config, report: PluginReport) -> list[str]:
    """Every plugin id, toolset and hook name in ``config`` that matches nothing."""
    known_ids = {outcome.id for outcome in report}
    toolsets = set(registry.get_toolsets()) | set(registry.get_toolset_aliases())
    return [
        *unknown_names(plugin_ids_written(config), known_ids),
        *unknown_toolsets(config, toolsets),
        *unknown_hooks(config),
    ]


def permission_problems(config: Config, report: PluginReport) -> RuleProblems:
    """The ``[permissions]`` rules that never fire, against the tools loaded (no MCP server
    is connected here: what a configured server might bring is a warning, not an error)."""
    if config.permissions is None:
        return RuleProblems([], [])
    tools = []
    for name in registry.get_all_tool_names():
        entry = registry.get_entry(name)
        if entry is not None:
            owner = registry.get_owner(name)
            tools.append(KnownTool(name, entry.toolset, owner, parameters_of(entry.schema)))
    servers = {name: server.enabled for name, server in config.mcp.servers.items()}
    return rule_problems(config.permissions, tools, (o.id for o in report), servers)


def lock_problems(config: Config) -> tuple[list[str], list[str]]:
    """A lock that cannot be read (an error: every pack would be held back for it), or
    one that is ignored because others may write it (a warning: nothing is locked)."""
    path = config.lock.path
    if path is None:
        return [], []
    from .._policy.lock_file import lock_problems as ignored
    from .._policy.lock_file import read_lock

    try:
        read_lock(path)
    except ConfigError as exc:
        return [f"the lock cannot be read, so no pack would load: {exc}"], []
    return [], [
        f"lock {p['file']} is ignored ({p['reason']}): nothing is held to it"
        for p in ignored()
        if p["file"] == path
    ]


@contextmanager
def _names_unwarned() -> Iterator[None]:
    # The loader warns about names that match nothing; here they are errors, said once.
    logger = logging.getLogger("toolreg.config")
    level = logger.level
    logger.setLevel(logging.ERROR)
    try:
        yield
    finally:
        logger.setLevel(level)


def _load(config: Config, verbose: bool) -> PluginReport:
    # An isolated pack's process lists every tool, but its link registers only
    # those of toolsets the switches keep: with them off here, every toolset a
    # pack has is in the registry to be known, whichever isolation it runs under.
    every_toolset = ToolsetsConfig(aliases=config.toolsets.aliases)
    with stdout_to_stderr(), quiet_loading(verbose), _names_unwarned():
        discover_builtin_tools()
        return load_plugins(config._replace(toolsets=every_toolset))


def effective_settings(config: Config, report: PluginReport, errors: list[str]) -> dict[str, Any]:
    """What ``config check --json`` prints: the settings as they will apply."""
    plugins = config.plugins
    return {
        "source": str(config.source) if config.source is not None else None,
        "ok": not errors,
        "errors": errors,
        "plugins": {
            "enabled": list(plugins.enabled) if plugins.enabled is not None else None,
            "disabled": list(plugins.disabled),
            "paths": [str(path) for path in plugins.paths],
            "isolation": plugins.isolation,
            "hook_timeout": plugins.hook_timeout,
            "import_timeout": plugins.import_timeout,
            "packs": [_pack(config, outcome) for outcome in report],
        },
        "dispatch": {"validate": config.dispatch.validate},
        "toolsets": {
            "enabled": list(config.toolsets.enabled)
            if config.toolsets.enabled is not None
            else None,
            "disabled": list(config.toolsets.disabled),
            "aliases": dict(config.toolsets.aliases),
        },
        "tracing": {"enabled": config.tracing.enabled},
        "mcp_servers": [_mcp_server(server) for server in config.mcp.servers.values()],
    }


def _pack(config: Config, outcome: Any) -> dict[str, Any]:
    entry = config.plugins.entry(outcome.id)
    return {
        "id": outcome.id,
        "version": outcome.version,
        "status": outcome.status,
        "reason": outcome.reason,
        "allow_tool_override": entry.allow_tool_override,
        "isolation": config.plugins.isolation_of(outcome.id),
        "version_pin": str(entry.version) if entry.version is not None else None,
        "tools": list(entry.tools) if entry.tools is not None else None,
        "hooks_allowed": list(entry.hooks) if entry.hooks is not None else None,
        "hooks": list(outcome.hooks),
        "hooks_withheld": list(outcome.hooks_withheld),
        "settings": sorted(entry.settings),
        "env": list(entry.env),
    }


def _mcp_server(server: Any) -> dict[str, Any]:
    """One server; values of ``env`` and ``headers`` may be secrets, so only names show."""
    record: dict[str, Any] = {
        "name": server.name,
        "toolset": f"mcp-{server.name}",
        "enabled": server.enabled,
        "transport": server.transport,
    }
    if server.command is not None:
        record["argv"] = [server.command, *server.args]
        # Run without a shell, found on PATH as the server's process will look it up.
        record["executable"] = shutil.which(server.command)
        record["cwd"] = str(server.cwd) if server.cwd is not None else None
        record["env"] = sorted(server.env)
    else:
        record["url"] = server.url
        record["headers"] = sorted(server.headers)
    return record


def _print_text(
    config: Config, report: PluginReport, errors: list[str], warnings: Sequence[str] = ()
) -> None:
    where = str(config.source) if config.source is not None else "no config file"
    for message in errors:
        print(f"toolreg: error: {where}: {message}", file=sys.stderr)
    for message in warnings:
        print(f"toolreg: warning: {where}: {message}", file=sys.stderr)
    if config.source is None:
        print("No config file found; the defaults apply (every installed pack loads).")
    else:
        verdict = "ok" if not errors else f"{len(errors)} error(s)"
        if warnings:
            verdict += f", {len(warnings)} warning(s)"
        print(f"{config.source}: {verdict}")
    for line in config_summary(config, report):
        print(f"  {line}")


def config_summary(config: Config, report: PluginReport | None = None) -> list[str]:
    """The text summary: what the file sets, security-relevant settings first."""
    lines = _security_lines(config)
    plugins = config.plugins
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
        if entry.hooks is not None:
            details.append(f"hooks={[h.removeprefix('toolreg_') for h in entry.hooks]}")
        if entry.settings:
            details.append(f"settings: {', '.join(sorted(entry.settings))}")
        lines.append(f"plugins.entries.{plugin_id}: {', '.join(details)}")
    if config.toolsets.aliases:
        aliases = ", ".join(f"{a}={t}" for a, t in sorted(config.toolsets.aliases.items()))
        lines.append(f"toolsets.aliases: {aliases}")
    if config.tracing.enabled is not None:
        lines.append(f"tracing.enabled: {str(config.tracing.enabled).lower()}")
    for outcome in report or ():
        if outcome.hooks_withheld:
            withheld = ", ".join(h.removeprefix("toolreg_") for h in outcome.hooks_withheld)
            lines.append(f"{outcome.id}: hooks withheld: {withheld}")
    return lines


def _security_lines(config: Config) -> list[str]:
    """What widens or narrows what tools can do: said first, whatever else the file holds."""
    lines = []
    if not config.dispatch.validate:
        lines.append("dispatch.validate = false: tool arguments are NOT checked against schemas")
    if config.toolsets.enabled is not None:
        lines.append(f"toolsets.enabled: {', '.join(config.toolsets.enabled) or '(none)'}")
    if config.toolsets.disabled:
        lines.append(f"toolsets.disabled: {', '.join(config.toolsets.disabled)}")
    for server in config.mcp.servers.values():
        key = f"mcp.servers.{server.name}"
        if not server.enabled:
            lines.append(f"{key}: disabled")
        elif server.command is not None:
            argv = shlex.join((server.command, *server.args))
            cwd = f" (in {server.cwd})" if server.cwd is not None else ""
            lines.append(f"{key}: runs {argv}{cwd}")
        else:
            lines.append(f"{key}: connects to {server.url}")
    return lines
