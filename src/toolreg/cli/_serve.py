"""``toolreg serve``: the registry's available tools, offered to MCP clients.

The MCP SDK is imported only when the command runs, so the rest of the CLI
works without it.
"""

from __future__ import annotations

import argparse
import contextlib
import ipaddress
import logging
import os
import signal
import sys
from collections.abc import Iterator
from contextlib import redirect_stdout

from toolreg import (
    ConfigError,
    apply_config,
    load_config,
    registry,
    reload_plugins,
)

from ._commands import _did_you_mean, load, workspace_warnings
from ._errors import EXIT_OK, EXIT_USAGE, CliError
from ._logs import fd1_to_stderr, quiet_loading
from ._state import state

log = logging.getLogger("toolreg.serve")

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8765

EPILOG = """\
MCP client config (stdio; the client starts the server):
  {"mcpServers": {"toolreg": {"command": "toolreg", "args": ["serve"]}}}

streamable HTTP (start `toolreg serve --transport http` yourself):
  {"mcpServers": {"toolreg": {"url": "http://127.0.0.1:8765/mcp"}}}

Only available tools are offered; clients are told when the list changes.
On POSIX, SIGHUP re-reads the config and reloads tool packs and local plugins.
HTTP binds 127.0.0.1 and has no authentication: for remote use put a reverse
proxy with auth in front. GET /healthz answers {"status": "ok", ...}.
Needs the MCP SDK: pip install 'toolreg-core[mcp]'. Details: docs/mcp.md
"""


def add_serve_parser(sub: argparse._SubParsersAction, parent: argparse.ArgumentParser) -> None:
    """The ``serve`` subcommand's arguments."""
    p = sub.add_parser(
        "serve",
        parents=[parent],
        help="offer the tools to MCP clients (stdio or streamable HTTP)",
        description="Offer the registry's available tools to MCP clients.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "--transport",
        choices=("stdio", "http"),
        default="stdio",
        help="stdio (default) or streamable HTTP at /mcp",
    )
    p.add_argument("--host", help=f"HTTP: address to bind (default: {DEFAULT_HOST})")
    p.add_argument(
        "--port", type=int, help=f"HTTP: port (default: {DEFAULT_PORT}; 0 picks a free one)"
    )
    p.add_argument(
        "--toolset",
        metavar="TS",
        action="append",
        help="offer only this toolset's tools (repeatable; aliases work)",
    )
    p.add_argument(
        "--stateless",
        action="store_true",
        help="HTTP: no sessions, so replicas can sit behind any load balancer",
    )


def cmd_serve(args: argparse.Namespace) -> int:
    """Load the tools like every command, then serve them until the client or a signal stops us."""
    if args.transport == "stdio" and (
        args.host is not None or args.port is not None or args.stateless
    ):
        raise CliError("--host, --port and --stateless need --transport http", EXIT_USAGE)
    if args.port is not None and not 0 <= args.port <= 65535:
        raise CliError(f"--port must be 0-65535, got {args.port}", EXIT_USAGE)
    with _sighup_deferred() as early_sighup:  # once serving, SIGHUP reloads
        try:  # before loading anything: without the SDK there is nothing to serve with
            import toolreg._mcp.server  # noqa: F401
        except ImportError as exc:
            raise CliError(
                f"toolreg serve needs the MCP SDK ({exc}); "
                "install it: pip install 'toolreg-core[mcp]'"
            ) from None
        if args.transport == "stdio":
            with fd1_to_stderr():  # stdout is the protocol stream: nothing else may reach it
                load(args)
        else:
            load(args)
        return _serve(args, reload_first=early_sighup)


def _serve(args: argparse.Namespace, reload_first: list[bool]) -> int:
    import anyio

    from toolreg._mcp.server import ToolServer, bind, url_for

    verbose = getattr(args, "verbose", False)
    _check_toolsets(args.toolset)
    for warning in workspace_warnings():  # the file tools' root fell back to / or $HOME
        _say(f"warning: {warning}")
    server = ToolServer(
        registry, args.toolset, stateless=args.stateless, reload=lambda: _reload(args)
    )
    server.reload_pending = reload_first  # a SIGHUP that came while loading
    count = len(server.definitions())
    offered = f"{count} tool(s)" + (f" from {', '.join(args.toolset)}" if args.toolset else "")

    previous_level = log.level
    log.setLevel(logging.DEBUG if verbose else logging.INFO)  # startup and reload lines
    try:
        if args.transport == "stdio":
            _say(f"serving {offered} over stdio (pid {os.getpid()})")
            anyio.run(server.serve_stdio)
            return EXIT_OK
        host = args.host or DEFAULT_HOST
        port = DEFAULT_PORT if args.port is None else args.port
        if not _is_loopback(host):
            _say(
                f"warning: binding {host}, which is not a loopback address: anyone who can "
                "reach it can call these tools, and there is no authentication"
            )
        try:
            sock = bind(host, port)
        except OSError as exc:
            raise CliError(f"cannot listen on {host}:{port}: {exc}") from None
        mode = " (stateless)" if args.stateless else ""
        _say(f"serving {offered} at {url_for(sock)}{mode} (pid {os.getpid()})")
        with sock:
            anyio.run(
                lambda: server.serve_http(sock, host, stateless=args.stateless, verbose=verbose)
            )
        return EXIT_OK
    except KeyboardInterrupt:  # Ctrl-C is how a foreground server is stopped
        _say("stopped")
        return EXIT_OK
    finally:
        log.setLevel(previous_level)


def _reload(args: argparse.Namespace) -> None:
    """SIGHUP: re-read the config, reload packs and local plugins, re-apply the config.

    A config that no longer parses is reported and changes nothing. Built-in tools
    are not re-imported.
    """
    try:
        config = load_config(args.config)
    except ConfigError as exc:
        log.error("config not reloaded, keeping the loaded tools: %s", exc)
        return
    with redirect_stdout(sys.stderr), quiet_loading(getattr(args, "verbose", False)):
        report = reload_plugins(config)
    apply_config(config, registry)
    state.config, state.report = config, report
    broken = report.with_status("failed", "refused")
    log.info(
        "reloaded: %d plugin(s) loaded, %d failed or refused; %d tool(s) registered",
        len(report.with_status("loaded")),
        len(broken),
        len(registry.get_all_tool_names()),
    )
    for outcome in broken:
        log.warning("plugin %s %s: %s", outcome.id, outcome.status, outcome.reason)


def _check_toolsets(toolsets: list[str] | None) -> None:
    """Warn about a --toolset that names nothing; it may still appear after a reload."""
    for toolset in toolsets or ():
        if not registry.get_tool_names_for_toolset(toolset):
            hint = _did_you_mean(toolset, registry.get_toolsets())
            _say(f"warning: toolset {toolset!r} has no tools{hint}")


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _say(message: str) -> None:
    print(f"toolreg serve: {message}", file=sys.stderr, flush=True)


@contextlib.contextmanager
def _sighup_deferred() -> Iterator[list[bool]]:
    """Note a SIGHUP that arrives while loading, instead of dying of it.

    The flag tells the server to reload once it runs. A Python handler rather
    than SIG_IGN, because children inherit an ignored signal across exec.
    """
    seen = [False]
    if not hasattr(signal, "SIGHUP"):
        yield seen
        return
    try:
        previous = signal.signal(signal.SIGHUP, lambda *_: seen.__setitem__(0, True))
    except ValueError:  # not the main thread: leave signals alone
        yield seen
        return
    try:
        yield seen
    finally:
        signal.signal(signal.SIGHUP, previous)
