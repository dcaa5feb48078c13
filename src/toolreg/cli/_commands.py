"""The commands that run on loaded tools: ``list``, ``show``, ``call``, ``doctor``, ``plugins``.

``load`` reads the config and loads built-ins, packs and (for some commands)
MCP servers first, keeping what it found in ``state``; each command then takes
the parsed arguments and returns an exit code.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
from typing import TYPE_CHECKING, Any

from toolreg import (
    Config,
    ConfigError,
    ToolEntry,
    ToolRegistry,
    apply_config,
    discover_builtin_tools,
    get_discovery_failures,
    get_mcp_manager,
    is_tool_error,
    load_config,
    load_plugins,
    registry,
    start_mcp,
)

from .._loaders.stdout_guard import stdout_to_stderr
from .._policy.unknown_names import mcp_toolset_names
from . import _render
from ._definition_flags import flags_given
from ._errors import EXIT_FAILURE, EXIT_OK, EXIT_USAGE, CliError
from ._logs import quiet_loading

if TYPE_CHECKING:
    from toolreg import DefinitionFormat, PluginReport

    from ._mcp_cache import KnownTools

log = logging.getLogger(__name__)


class LoadState:
    """What one command's load step produced: its config, plugin report and MCP start."""

    config: Config | None = None
    report: PluginReport | None = None
    #: Whether this command connected the MCP servers (``list`` and ``show`` need ``--mcp``).
    mcp_started: bool = False


state = LoadState()


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
    state.mcp_started = False
    with stdout_to_stderr(), quiet_loading(getattr(args, "verbose", False)):
        loaded = discover_builtin_tools()
        state.report = load_plugins(config)
    apply_config(config, registry)
    if starts_mcp(args):
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


#: Commands that connect the MCP servers; ``list`` and ``show`` do with ``--mcp``.
_STARTS_MCP = frozenset({"call", "doctor", "serve"})


def starts_mcp(args: argparse.Namespace) -> bool:
    """Whether this command connects the config's MCP servers."""
    return args.command in _STARTS_MCP or getattr(args, "mcp", False)


def _start_mcp(config: Config, args: argparse.Namespace) -> None:
    """Connect the config's MCP servers; ``main`` stops them when the command ends."""
    names = [name for name, server in sorted(config.mcp.servers.items()) if server.enabled]
    if not names:
        return
    from . import _mcp_cache, _progress  # only a config with MCP servers needs them

    try:
        with _progress.connecting(names, _mcp_servers):
            manager = start_mcp(config, registry)
    except ImportError as exc:
        print(f"toolreg: warning: {exc}; [mcp.servers] are not loaded", file=sys.stderr)
        return
    state.mcp_started = True
    statuses = manager.status()
    _mcp_cache.remember(config, registry, statuses)
    down = [s["name"] for s in statuses if s["state"] not in ("connected", "disabled")]
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
        # MCP's hints ({} when the tool declares none) and the schema of its structured result.
        "annotations": dict(entry.annotations) if entry else {},
        "output_schema": entry.output_schema if entry else None,
    }


def cmd_list(args: argparse.Namespace) -> int:
    """Print every registered tool (optionally one toolset's) as a table or JSON.

    Without ``--mcp`` the MCP servers are not started: their last known tools
    are listed instead, marked as cached.
    """
    known = _known_mcp_tools()
    cached = _cached_registry(known)
    if getattr(args, "toolsets", False):
        return _print_lines(_toolset_names(cached))
    names = registry.get_all_tool_names()
    cached_names = [n for n in cached.get_all_tool_names() if n not in registry]
    if args.toolset is not None:
        wanted = set(_toolset_tools(args.toolset, cached))
        names = [n for n in names if n in wanted]
        cached_names = [n for n in cached_names if n in wanted]
    if getattr(args, "names", False):
        return _print_lines([*names, *cached_names])
    fmt = getattr(args, "format", None)
    if fmt is not None and not args.json:
        raise CliError("--format needs --json: the table shows no definitions", EXIT_USAGE)
    if fmt is None and flags_given(args):
        flags = " and ".join(flags_given(args))
        raise CliError(f"{flags} shape definitions: add --json --format FORMAT", EXIT_USAGE)
    tools = [_tool_record(n) for n in names]
    tools += [_cached_record(cached, n, known) for n in cached_names]
    tools.sort(key=lambda tool: tool["name"])
    if fmt is not None:
        for tool in tools:
            source = cached if "cached_at" in tool else registry
            tool["definition"] = _list_definition(source, tool["name"], fmt, args)
    if args.json:
        print(_render.to_json(tools))
    else:
        print(_render.tool_table(tools, _render.terminal_width()))
    _note_unlisted_servers(known)
    return EXIT_OK


def _print_lines(names: list[str]) -> int:
    """``list --names`` / ``--toolsets``: what completion scripts read, one a line, sorted."""
    print("\n".join(sorted(set(names))))
    return EXIT_OK


def _toolset_names(cached: ToolRegistry) -> list[str]:
    """Every name ``--toolset`` takes: toolsets, aliases, and the MCP servers' own."""
    names = registry.get_toolsets() + list(registry.get_toolset_aliases())
    return names + cached.get_toolsets() + sorted(_unstarted_toolsets())


def _known_mcp_tools() -> dict[str, KnownTools]:
    """The last known tools of the servers this command did not start."""
    if state.mcp_started or state.config is None or not state.config.mcp.servers:
        return {}
    from ._mcp_cache import known_tools

    return known_tools(state.config)


def _cached_registry(known: dict[str, KnownTools]) -> ToolRegistry:
    """The known tools in a registry of their own (an empty one when none are known)."""
    if not known:
        return ToolRegistry()
    from ._mcp_cache import cached_registry

    return cached_registry(known)


def _cached_record(cached: ToolRegistry, name: str, known: dict[str, KnownTools]) -> dict[str, Any]:
    from datetime import datetime, timezone

    entry = cached.get_entry(name)
    assert entry is not None
    listing = known[entry.toolset.removeprefix("mcp-")]
    return {
        "name": name,
        "toolset": entry.toolset,
        "available": False,
        "reason": f"cached, from {listing.when}; --mcp connects the server",
        "owner": cached.get_owner(name),
        "description": entry.description,
        "annotations": dict(entry.annotations),
        "output_schema": entry.output_schema,
        "cached_at": datetime.fromtimestamp(listing.at, timezone.utc).isoformat(),
    }


def _unstarted_toolsets() -> set[str]:
    config = state.config
    return mcp_toolset_names(config) if config is not None else set()


def _note_unlisted_servers(known: dict[str, KnownTools]) -> None:
    config = state.config
    if state.mcp_started or config is None:
        return
    unlisted = [n for n, s in sorted(config.mcp.servers.items()) if s.enabled and n not in known]
    if unlisted:
        print(
            f"toolreg: note: MCP server(s) not started and never listed: {', '.join(unlisted)}; "
            "--mcp connects them",
            file=sys.stderr,
        )


def _list_definition(
    source: ToolRegistry, name: str, fmt: DefinitionFormat, args: argparse.Namespace
) -> dict[str, Any] | None:
    """One tool's definition for ``list --json --format``; null when the format cannot hold it."""
    try:
        return source.get_definition(
            name,
            format=fmt,
            inline_refs=args.inline_refs,
            optional_as_absent=args.optional_as_absent,
        )
    except ValueError as exc:  # e.g. a name the provider does not accept
        print(f"toolreg: warning: {exc}", file=sys.stderr)
        return None


def _toolset_tools(toolset: str, cached: ToolRegistry) -> list[str]:
    """Tool names in ``toolset`` (aliases resolved), cached ones too; unknown is an error."""
    names = registry.get_tool_names_for_toolset(toolset)
    names += cached.get_tool_names_for_toolset(toolset)
    if not names and not state.mcp_started and toolset in _unstarted_toolsets():
        return []  # a configured server's, never listed: the note after the table says so
    if not names:
        # Toolsets exist only while they hold tools, so "empty" means "unknown".
        known = registry.get_toolsets() + cached.get_toolsets()
        raise CliError(f"unknown toolset {toolset!r}{_did_you_mean(toolset, known)}")
    return names


# -- show --------------------------------------------------------------------------------


def cmd_show(args: argparse.Namespace) -> int:
    """Print one tool's definition, whether or not it is available right now."""
    source, cached_reason = _where_shown(args.name)
    entry = source.get_entry(args.name) if cached_reason else _require_tool(args.name)
    assert entry is not None
    try:
        definition = source.get_definition(
            args.name,
            format=args.format,
            inline_refs=args.inline_refs,
            optional_as_absent=args.optional_as_absent,
        )
    except ValueError as exc:  # the tool cannot be expressed in this format (e.g. its name)
        raise CliError(str(exc)) from None
    if args.json:
        print(_render.to_json(definition))
        return EXIT_OK
    available, reason = (
        (False, cached_reason) if cached_reason else registry.availability(entry.name)
    )
    owner = source.get_owner(args.name)
    print(_render.tool_summary(entry.name, entry.toolset, owner, available, reason))
    print(_render.tool_hints(entry.annotations, entry.output_schema is not None))
    print(f"definition ({args.format}):")
    print(_render.to_json(definition))
    return EXIT_OK


def _where_shown(name: str) -> tuple[ToolRegistry, str | None]:
    """The registry holding ``name``: the live one, or the MCP cache's with why it is cached."""
    if registry.get_entry(name) is None:
        known = _known_mcp_tools()
        cached = _cached_registry(known)
        if cached.get_entry(name) is not None:
            return cached, _cached_record(cached, name, known)["reason"]
    return registry, None


# -- call --------------------------------------------------------------------------------


def cmd_call(args: argparse.Namespace) -> int:
    """Dispatch one tool call; exit 1 when the tool answers with a tool_error."""
    tool_args = parse_call_args(args.args)
    _require_tool(args.name)
    traced = _start_tracing()
    # A handler that prints (or a child process it starts) would mix its
    # chatter into the result on stdout.
    from ._progress import progress_bar

    bar = progress_bar()  # before stdout goes to stderr: a TTY is judged as it is
    approve, terminal = _approver(getattr(args, "yes", False))
    try:
        with stdout_to_stderr():
            result = registry.dispatch(args.name, tool_args, progress=bar, approve=approve)
    finally:
        if terminal is not None:
            terminal.close()
        if bar is not None:
            bar.close()
        if traced:
            from ._tracing import flush_tracing

            flush_tracing()
    print(result if isinstance(result, str) else _render.to_json(result))
    if is_tool_error(result):
        _note_approval_required(result)
        return EXIT_FAILURE
    return EXIT_OK


def _approver(yes: bool) -> tuple[Any, Any]:
    """What answers this call's ``ask``: ``--yes``, a y/N prompt on the terminal, or nothing
    (no terminal: the call is denied with ``approval_required``); and the terminal to close."""
    if registry.permissions is None:
        return None, None  # no rules: nothing ever asks
    from . import _approval

    if yes:
        return _approval.approve_all, None
    terminal = _approval.open_terminal()
    if terminal is None:
        return None, None
    return _approval.TerminalApprover(terminal), terminal


def _note_approval_required(result: Any) -> None:
    try:
        code = json.loads(result).get("code") if isinstance(result, str) else None
    except (ValueError, AttributeError):
        return
    if code == "approval_required":
        print(
            "toolreg: note: an ask rule needs an answer and there is no terminal to ask on; "
            "run on a terminal to be asked, or pass --yes to approve what the rules ask about",
            file=sys.stderr,
        )


def _start_tracing() -> bool:
    """Trace tool calls if the config or ``OTEL_*`` asks (``_tracing``); whether it is on."""
    if state.config is None:
        return False
    from ._tracing import start_tracing  # imports OpenTelemetry only when asked to

    return start_tracing(state.config)


def parse_call_args(argv: list[str]) -> dict[str, Any]:
    """The dict a handler receives from ``call``'s ARGS.

    One argument that is not a pair is JSON_ARGS (or ``-``); otherwise every
    argument is a pair, as httpie writes them: ``key=value`` gives the string
    ``value``, ``key:=json`` the parsed JSON value.
    """
    if not argv:
        return {}
    if len(argv) == 1 and not _is_pair(argv[0]):
        return parse_tool_args(argv[0])
    result: dict[str, Any] = {}
    for arg in argv:
        if not _is_pair(arg):
            raise CliError(
                f"argument {arg!r} is not a key=value or key:=json pair "
                "(a JSON object must be the only argument)",
                EXIT_USAGE,
            )
        key, value = _pair(arg)
        if key in result:
            raise CliError(f"argument {arg!r}: key {key!r} is given twice", EXIT_USAGE)
        result[key] = value
    return result


def _is_pair(arg: str) -> bool:
    # '{"a": "b=c"}' and ' {...}' stay JSON: a key starts with none of these.
    return arg.find("=") > 0 and arg[0] not in '{["' and not arg[0].isspace()


def _pair(arg: str) -> tuple[str, Any]:
    key, _, text = arg.partition("=")
    if not key.endswith(":"):
        return key, text
    key = key[:-1]
    if not key:
        raise CliError(f"argument {arg!r} has an empty key", EXIT_USAGE)
    try:
        return key, json.loads(text)
    except ValueError as exc:
        raise CliError(
            f"argument {arg!r}: the value after ':=' is not valid JSON ({exc}); "
            f"write {key}={text} for a string",
            EXIT_USAGE,
        ) from None
    except RecursionError:
        raise CliError(
            f"argument {arg!r}: the value is nested too deeply to parse", EXIT_USAGE
        ) from None


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


def _mcp_servers() -> list[dict[str, Any]]:
    manager = get_mcp_manager(registry)
    return manager.status() if manager is not None else []


# -- doctor ------------------------------------------------------------------------------


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
    # Only doctor reads these; worker_stats would load the dispatch layer for every command.
    from toolreg import get_cache_problems, worker_stats

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
            if o.status in ("failed", "refused", "incompatible", "changed", "tampered", "new")
        ],
        "hook_failures": [f.to_dict() for f in _hook_failures()],
        "mcp_servers": _mcp_servers(),
        "caches": get_cache_problems(),
        "lock": lock_status(),
        "warnings": workspace_warnings(),
        # Calls abandoned at their deadline and still running, per worker pool.
        "stuck_calls": worker_stats(),
        # The operator's rules and the calls each decided in this process.
        "permissions": registry.permission_counts(),
    }


def lock_status() -> dict[str, Any]:
    """The lock file this config points at; whether it is in use, and lock files ignored."""
    from .._policy.lock_file import lock_problems, read_lock

    path = state.config.lock.path if state.config is not None else None
    status: dict[str, Any] = {"file": path, "in_use": False, "error": ""}
    if path is not None:
        try:
            status["in_use"] = read_lock(path) is not None
        except ConfigError as exc:  # every pack was held back for it: say why
            status["error"] = str(exc)
    status["problems"] = lock_problems()
    return status


def workspace_warnings() -> list[str]:
    """The built-in file and terminal tools' warning about a root nobody chose, if loaded."""
    if not any(registry.get_tool_names_for_toolset(ts) for ts in ("file", "terminal")):
        return []
    from ..workspace import workspace_warning

    warning = workspace_warning()
    return [warning] if warning else []


def _hook_failures() -> list[Any]:
    from toolreg import get_plugin_host

    host = get_plugin_host()
    return host.hook_failures() if host is not None else []


# -- plugins -----------------------------------------------------------------------------


def cmd_plugins(args: argparse.Namespace) -> int:
    """Print the plugin report; it is a report, so it exits 0 whatever the statuses."""
    from toolreg import PluginReport

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
    drifted = [(o.id, r) for o in report for r in o.drifted]
    if drifted:
        text += "\n\nTools withheld, drifted from the lock:\n"
        text += "\n".join(f"  {pid}: {r['tool']}: {r['reason']}" for pid, r in drifted)
    return text


# -- helpers -----------------------------------------------------------------------------


def _require_tool(name: str) -> ToolEntry:
    entry = registry.get_entry(name)
    if entry is None:
        known = registry.get_all_tool_names()
        hint = _did_you_mean(name, known)
        servers = state.config.mcp.servers.values() if state.config is not None else ()
        if not hint and not state.mcp_started and any(s.enabled for s in servers):
            hint = " (the MCP servers were not started; --mcp connects them)"
        raise CliError(f"unknown tool {name!r}{hint}")
    return entry


def _did_you_mean(name: str, known: list[str]) -> str:
    import difflib  # only a mistyped name gets here

    close = difflib.get_close_matches(name, known, n=3)
    return f" (did you mean: {', '.join(close)}?)" if close else ""
