"""The subcommands. Each takes the parsed arguments and returns an exit code."""

from __future__ import annotations

import argparse
import json
import logging
import sys
from typing import Any

from toolreg import (
    Config,
    ConfigError,
    ToolEntry,
    apply_config,
    discover_builtin_tools,
    get_cache_problems,
    get_discovery_failures,
    get_mcp_manager,
    get_plugin_host,
    is_tool_error,
    load_config,
    load_plugins,
    registry,
    start_mcp,
    worker_stats,
)

from .._loaders.stdout_guard import stdout_to_stderr
from ..workspace import workspace_warning
from . import _render
from ._errors import EXIT_FAILURE, EXIT_OK, EXIT_USAGE, CliError
from ._logs import quiet_loading
from ._plugin_commands import cmd_plugins
from ._state import state

log = logging.getLogger(__name__)


def load(args: argparse.Namespace) -> None:
    """Read the operator config, then load built-ins and tool packs.

    A bad config stops here with exit 2, before any tool loads, so nothing is
    half-applied. Imports run with stdout pointed at stderr: a tool module that
    prints while importing must not corrupt ``list --json`` and friends.
    """
    try:
        config = load_config(args.config)
    except ConfigError as exc:
        raise CliError(str(exc), EXIT_USAGE) from None
    state.config = config
    with stdout_to_stderr(), quiet_loading(getattr(args, "verbose", False)):
        loaded = discover_builtin_tools()
        state.report = load_plugins(config)
    apply_config(config, registry)
    _start_mcp(config, args)  # after packs: names they registered stand first
    log.debug("built-in tool modules loaded: %s", ", ".join(loaded) or "none")
    failures = get_discovery_failures()
    # Broken code warns on every command; a refusal is the operator's policy
    # at work, shown by `toolreg plugins` and `toolreg doctor` instead.
    broken = state.report.with_status("failed")
    if (failures or broken) and args.command not in ("doctor", "plugins"):
        print(
            f"toolreg: warning: {len(failures)} tool module(s) failed to import and "
            f"{len(broken)} plugin(s) failed to load; "
            "see 'toolreg plugins' or 'toolreg doctor' (-v for tracebacks)",
            file=sys.stderr,
        )


def _start_mcp(config: Config, args: argparse.Namespace) -> None:
    """Connect the config's MCP servers; ``main`` stops them when the command ends."""
    if not any(server.enabled for server in config.mcp.servers.values()):
        return
    try:
        manager = start_mcp(config, registry)
    except ImportError as exc:
        print(f"toolreg: warning: {exc}; [mcp.servers] are not loaded", file=sys.stderr)
        return
    down = [s["name"] for s in manager.status() if s["state"] not in ("connected", "disabled")]
    if down and args.command != "doctor":
        print(
            f"toolreg: warning: MCP server(s) not connected: {', '.join(down)}; "
            "see 'toolreg doctor'",
            file=sys.stderr,
        )


# -- list --------------------------------------------------------------------------------


def _tool_record(name: str) -> dict[str, Any]:
    entry = registry.get_entry(name)
    available, reason = registry.availability(name)
    return {
        "name": name,
        "toolset": entry.toolset if entry else "",
        "available": available,
        # null rather than "" so consumers can test `reason is None` for available tools
        "reason": None if available else reason,
        "owner": registry.get_owner(name),
        "description": entry.description if entry else "",
    }


def cmd_list(args: argparse.Namespace) -> int:
    """Print every registered tool (optionally one toolset's) as a table or JSON."""
    names = registry.get_all_tool_names()
    if args.toolset is not None:
        wanted = set(_toolset_tools(args.toolset))
        names = [n for n in names if n in wanted]
    fmt = getattr(args, "format", None)
    if fmt is not None and not args.json:
        raise CliError("--format needs --json: the table shows no definitions", EXIT_USAGE)
    tools = [_tool_record(n) for n in names]
    if fmt is not None:
        for tool in tools:
            tool["definition"] = _list_definition(tool["name"], fmt)
    print(_render.to_json(tools) if args.json else _render.tool_table(tools))
    return EXIT_OK


def _list_definition(name: str, fmt: str) -> dict[str, Any] | None:
    """One tool's definition for ``list --json --format``; null when the format cannot hold it."""
    try:
        return registry.get_definition(name, format=fmt)
    except ValueError as exc:  # e.g. a name the provider does not accept
        print(f"toolreg: warning: {exc}", file=sys.stderr)
        return None


def _toolset_tools(toolset: str) -> list[str]:
    """Tool names in ``toolset`` (aliases resolved); an unknown toolset is an error."""
    names = registry.get_tool_names_for_toolset(toolset)
    if not names:
        # Toolsets exist only while they hold tools, so "empty" means "unknown".
        known = registry.get_toolsets()
        raise CliError(f"unknown toolset {toolset!r}{_did_you_mean(toolset, known)}")
    return names


# -- show --------------------------------------------------------------------------------


def cmd_show(args: argparse.Namespace) -> int:
    """Print one tool's definition, whether or not it is available right now."""
    entry = _require_tool(args.name)
    try:
        definition = registry.get_definition(args.name, format=args.format)
    except ValueError as exc:  # the tool cannot be expressed in this format (e.g. its name)
        raise CliError(str(exc)) from None
    if args.json:
        print(_render.to_json(definition))
        return EXIT_OK
    available, reason = registry.availability(args.name)
    owner = registry.get_owner(args.name)
    print(_render.tool_summary(entry.name, entry.toolset, owner, available, reason))
    print(f"definition ({args.format}):")
    print(_render.to_json(definition))
    return EXIT_OK


# -- call --------------------------------------------------------------------------------


def cmd_call(args: argparse.Namespace) -> int:
    """Dispatch one tool call; exit 1 when the tool answers with a tool_error."""
    tool_args = parse_tool_args(args.args)
    _require_tool(args.name)
    # A handler that prints (or a child process it starts) would mix its
    # chatter into the result on stdout.
    from ._progress import progress_bar

    bar = progress_bar()  # before stdout goes to stderr: a TTY is judged as it is
    try:
        with stdout_to_stderr():
            result = registry.dispatch(args.name, tool_args, progress=bar)
    finally:
        if bar is not None:
            bar.close()
    print(result if isinstance(result, str) else _render.to_json(result))
    return EXIT_FAILURE if is_tool_error(result) else EXIT_OK


def parse_tool_args(text: str) -> dict[str, Any]:
    """Parse JSON_ARGS (``-`` reads stdin) into the dict a handler receives."""
    source = "stdin" if text == "-" else "JSON_ARGS"
    if text == "-":
        text = sys.stdin.read()
    try:
        value = json.loads(text)
    except ValueError as exc:
        raise CliError(f"{source} is not valid JSON: {exc}", EXIT_USAGE) from None
    except RecursionError:
        raise CliError(f"{source} is nested too deeply to parse", EXIT_USAGE) from None
    if not isinstance(value, dict):
        raise CliError(
            f'{source} must be a JSON object such as {{"path": "a.txt"}}, got {_json_kind(value)}',
            EXIT_USAGE,
        )
    return value


def _json_kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):  # before int: bool is an int subclass
        return "a boolean"
    kinds = {list: "an array", str: "a string", int: "a number", float: "a number"}
    return kinds.get(type(value), type(value).__name__)


# -- doctor ------------------------------------------------------------------------------


def cmd_doctor(args: argparse.Namespace) -> int:
    """Report import failures, unavailable tools, rejections, distrusted caches. Always exits 0."""
    report = doctor_report()
    print(_render.to_json(report) if args.json else _render.doctor_report(report))
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


def _mcp_servers() -> list[dict[str, Any]]:
    manager = get_mcp_manager(registry)
    return manager.status() if manager is not None else []


def _hook_failures() -> list[Any]:
    host = get_plugin_host()
    return host.hook_failures() if host is not None else []


# -- helpers -----------------------------------------------------------------------------


def _require_tool(name: str) -> ToolEntry:
    entry = registry.get_entry(name)
    if entry is None:
        known = registry.get_all_tool_names()
        raise CliError(f"unknown tool {name!r}{_did_you_mean(name, known)}")
    return entry


def _did_you_mean(name: str, known: list[str]) -> str:
    import difflib  # only a mistyped name gets here

    close = difflib.get_close_matches(name, known, n=3)
    return f" (did you mean: {', '.join(close)}?)" if close else ""


COMMANDS = {
    "plugins": cmd_plugins,
    "list": cmd_list,
    "show": cmd_show,
    "call": cmd_call,
    "doctor": cmd_doctor,
}
