"""``toolreg serve``: the registry's available tools, offered to MCP clients.

The MCP SDK is imported only when the command runs, so the rest of the CLI
works without it.
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import os
import sys
from collections.abc import Iterator
from contextlib import redirect_stdout
from typing import TYPE_CHECKING

from toolreg import (
    ConfigError,
    apply_config,
    load_config,
    registry,
    reload_plugins,
)

from .._loaders.stdout_guard import fd1_to_stderr
from .._mcp_serve import (
    DEFAULT_APPROVAL_TIMEOUT,
    DEFAULT_MAX_CALLS,
    DEFAULT_MAX_CALLS_PER_SESSION,
    TOKEN_ENV,
)
from ._commands import _did_you_mean, _start_tracing, load, state, workspace_warnings
from ._definition_flags import definition_flags
from ._errors import EXIT_OK, EXIT_USAGE, CliError
from ._help import Epilog, HelpFormatter
from ._logs import quiet_loading

if TYPE_CHECKING:
    import socket
    from pathlib import Path

log = logging.getLogger("toolreg.serve")

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8765

EPILOG = Epilog(
    """\
MCP client config (stdio; the client starts the server):
  {"mcpServers": {"toolreg": {"command": "toolreg", "args": ["serve"]}}}

streamable HTTP (start `toolreg serve --transport http` yourself):
  {"mcpServers": {"toolreg": {"url": "http://127.0.0.1:8765/mcp"}}}
  with a token: ... {"url": "...", "headers": {"Authorization": "Bearer TOKEN"}}

Only available tools are offered; clients are told when the list changes.
On POSIX, SIGHUP re-reads the config and reloads tool packs and local plugins.
HTTP binds 127.0.0.1, where Host and Origin must be loopback names. With a
token (--auth-token-file, or $TOOLREG_SERVE_TOKEN) every request needs
"Authorization: Bearer TOKEN"; any other address refuses to start without one
unless --insecure-no-auth says so. Probes for balancers and orchestrators,
without Host check or token: GET /healthz (200 while the process serves) and
GET /readyz (503 while the tools load, then 200).
Needs the MCP SDK: pip install 'toolreg-core[mcp]'.
""",
    "mcp",
)


def add_serve_parser(sub: argparse._SubParsersAction, parent: argparse.ArgumentParser) -> None:
    """The ``serve`` subcommand's arguments."""
    p = sub.add_parser(
        "serve",
        parents=[parent, definition_flags()],
        help="offer the tools to MCP clients (stdio or streamable HTTP)",
        description="Offer the registry's available tools to MCP clients.",
        epilog=EPILOG,
        formatter_class=HelpFormatter,
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
    p.add_argument(
        "--max-calls",
        metavar="N",
        type=_positive,
        default=DEFAULT_MAX_CALLS,
        help=f"tool calls running at once, over all clients (default: {DEFAULT_MAX_CALLS})",
    )
    p.add_argument(
        "--max-calls-per-session",
        metavar="N",
        type=_positive,
        default=DEFAULT_MAX_CALLS_PER_SESSION,
        help="tool calls one MCP session may run at once; more wait their turn "
        f"(default: {DEFAULT_MAX_CALLS_PER_SESSION})",
    )
    p.add_argument(
        "--page-size",
        metavar="N",
        type=_positive,
        help="tools per tools/list page; clients follow nextCursor for the rest "
        "(default: every tool in one page, since some clients read only the first)",
    )
    p.add_argument(
        "--approval-timeout",
        metavar="SECONDS",
        type=_seconds,
        default=DEFAULT_APPROVAL_TIMEOUT,
        help="how long a call an ask rule stops waits for the client's user to approve "
        f"it (MCP elicitation) before it is denied (default: {DEFAULT_APPROVAL_TIMEOUT:g})",
    )
    p.add_argument(
        "--deferred",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="offer the always-loaded tools and a tool_search tool; what a session's "
        "searches find is added for that session (default: [search] defer in the config)",
    )
    p.add_argument(
        "--always-loaded",
        metavar="NAME",
        action="append",
        help="with --deferred: a tool, or toolset:NAME, always offered in full "
        "(repeatable; default: [search] always_loaded in the config)",
    )
    p.add_argument(
        "--auth-token-file",
        metavar="PATH",
        type=_path,
        help=f"HTTP: require 'Authorization: Bearer <token>', the token read from PATH "
        f"(mode 600); default: ${TOKEN_ENV}",
    )
    p.add_argument(
        "--insecure-no-auth",
        action="store_true",
        help="HTTP: serve a non-loopback address without a token (a proxy in front authenticates)",
    )


def cmd_serve(args: argparse.Namespace) -> int:
    """Load the tools like every command, then serve them until the client or a signal stops us."""
    http_only = (args.host, args.port, args.auth_token_file)
    if args.transport == "stdio" and (
        any(value is not None for value in http_only) or args.stateless or args.insecure_no_auth
    ):
        raise CliError(
            "--host, --port, --stateless, --auth-token-file and --insecure-no-auth "
            "need --transport http",
            EXIT_USAGE,
        )
    if args.port is not None and not 0 <= args.port <= 65535:
        raise CliError(f"--port must be 0-65535, got {args.port}", EXIT_USAGE)
    with _sighup_deferred() as early_sighup:  # once serving, SIGHUP reloads
        try:  # before loading anything: without the SDK there is nothing to serve with
            import toolreg._mcp_serve.server  # noqa: F401
        except ImportError as exc:
            raise CliError(
                f"toolreg serve needs the MCP SDK ({exc}); "
                "install it: pip install 'toolreg-core[mcp]'"
            ) from None
        if args.transport == "stdio":
            with fd1_to_stderr():  # stdout is the protocol stream: nothing else may reach it
                load(args)
            return _serve(args, reload_first=early_sighup)
        from toolreg._mcp_serve.probes import answering_while_loading

        token = _http_token(args)  # refused before the slow load, not after
        with _listen(args, token) as sock:
            # Bound first: probes learn the process is up and not ready yet (503).
            with answering_while_loading(sock):
                load(args)
            return _serve(args, reload_first=early_sighup, token=token, sock=sock)


def _listen(args: argparse.Namespace, token: str | None) -> socket.socket:
    """The HTTP listening socket, bound before the tools load."""
    from toolreg._mcp_serve.http_guard import is_loopback_host
    from toolreg._mcp_serve.probes import READINESS_PATH
    from toolreg._mcp_serve.server import bind

    host = args.host or DEFAULT_HOST
    port = DEFAULT_PORT if args.port is None else args.port
    if token is None and not is_loopback_host(host):
        _say(
            f"warning: binding {host}, which is not a loopback address, with "
            "--insecure-no-auth: anyone who can reach it can call these tools"
        )
    try:
        sock = bind(host, port)
    except OSError as exc:
        raise CliError(f"cannot listen on {host}:{port}: {exc}") from None
    bound_host, bound_port = sock.getsockname()[:2]
    shown = f"[{bound_host}]" if ":" in bound_host else bound_host
    _say(
        f"listening on http://{shown}:{bound_port} (pid {os.getpid()}); loading tools, "
        f"{READINESS_PATH} answers 503 until they are loaded"
    )
    return sock


def _serve(
    args: argparse.Namespace,
    reload_first: list[bool],
    token: str | None = None,
    sock: socket.socket | None = None,
) -> int:
    import anyio

    from toolreg._mcp_serve.server import ToolServer, url_for

    verbose = getattr(args, "verbose", False)
    traced = _start_tracing()
    _check_toolsets(args.toolset)
    for warning in workspace_warnings():  # the file tools' root fell back to / or $HOME
        _say(f"warning: {warning}")
    deferred, always_loaded, min_score = _deferral(args)
    server = ToolServer(
        registry,
        args.toolset,
        stateless=args.stateless,
        reload=lambda: _reload(args),
        max_calls=args.max_calls,
        max_calls_per_session=args.max_calls_per_session,
        inline_refs=args.inline_refs,
        optional_as_absent=args.optional_as_absent,
        page_size=args.page_size,
        deferred=deferred,
        always_loaded=always_loaded,
        min_score=min_score,
        elicit_timeout=args.approval_timeout,
    )
    server.reload_pending = reload_first  # a SIGHUP that came while loading
    count = len(server.definitions())
    offered = f"{count} tool(s)" + (f" from {', '.join(args.toolset)}" if args.toolset else "")
    if deferred:
        offered += ", deferred behind tool_search"

    previous_level = log.level
    log.setLevel(logging.DEBUG if verbose else logging.INFO)  # startup and reload lines
    try:
        if args.transport == "stdio":
            _say(f"serving {offered} over stdio (pid {os.getpid()})")
            anyio.run(server.serve_stdio)
            return EXIT_OK
        assert sock is not None  # HTTP: bound by _listen before loading
        host = args.host or DEFAULT_HOST
        notes = ["stateless"] if args.stateless else []
        notes += ["bearer token required"] if token is not None else []
        mode = f" ({', '.join(notes)})" if notes else ""
        _say(f"serving {offered} at {url_for(sock)}{mode} (pid {os.getpid()})")
        anyio.run(
            lambda: server.serve_http(
                sock, host, stateless=args.stateless, token=token, verbose=verbose
            )
        )
        return EXIT_OK
    except KeyboardInterrupt:  # Ctrl-C is how a foreground server is stopped
        _say("stopped")
        return EXIT_OK
    finally:
        log.setLevel(previous_level)
        if traced:
            from ._tracing import flush_tracing

            flush_tracing()


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


def _deferral(args: argparse.Namespace) -> tuple[bool, tuple[str, ...], float | None]:
    """(deferred, always_loaded, min_score): the flags, else the config's ``[search]``."""
    search = state.config.search if state.config is not None else None
    deferred = args.deferred if args.deferred is not None else bool(search and search.defer)
    if args.always_loaded is not None:
        always_loaded = tuple(args.always_loaded)
    else:
        always_loaded = tuple(search.always_loaded) if search is not None else ()
    if not deferred:
        if args.always_loaded:
            raise CliError(
                "--always-loaded needs --deferred (or [search] defer = true)", EXIT_USAGE
            )
        return False, (), None
    for item in always_loaded:  # it may appear after a reload: a warning, not an error
        name = item.removeprefix("toolset:")
        known = (
            registry.get_tool_names_for_toolset(name)
            if item.startswith("toolset:")
            else registry.get_entry(name)
        )
        if not known:
            _say(f"warning: always-loaded {item!r} names no registered tool")
    return True, always_loaded, search.min_score if search is not None else None


def _check_toolsets(toolsets: list[str] | None) -> None:
    """Warn about a --toolset that names nothing; it may still appear after a reload."""
    for toolset in toolsets or ():
        if not registry.get_tool_names_for_toolset(toolset):
            hint = _did_you_mean(toolset, registry.get_toolsets())
            _say(f"warning: toolset {toolset!r} has no tools{hint}")


def _seconds(text: str) -> float:
    """An argparse type: a number of seconds > 0."""
    try:
        value = float(text)
    except ValueError:
        value = 0.0
    if not 0 < value < float("inf"):
        raise argparse.ArgumentTypeError(f"expected a number of seconds > 0, got {text!r}")
    return value


def _positive(text: str) -> int:
    """An argparse type: a whole number >= 1."""
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number >= 1, got {text!r}")
    return value


def _http_token(args: argparse.Namespace) -> str | None:
    """The bearer token HTTP clients must send (None: none), or a usage error.

    ``--auth-token-file`` wins over ``$TOOLREG_SERVE_TOKEN``. A non-loopback
    address without either needs ``--insecure-no-auth``, said out loud.
    """
    from toolreg._mcp_serve.http_guard import (
        TokenError,
        is_loopback_host,
        read_token_file,
        token_from_env,
    )

    try:
        if args.auth_token_file is not None:
            token = read_token_file(args.auth_token_file)
        else:
            token = token_from_env()
    except TokenError as exc:
        raise CliError(str(exc), EXIT_USAGE) from None
    host = args.host or DEFAULT_HOST
    if token is not None and args.insecure_no_auth:
        raise CliError("--insecure-no-auth contradicts the bearer token that is set", EXIT_USAGE)
    if token is None and not args.insecure_no_auth and not is_loopback_host(host):
        raise CliError(
            f"refusing to serve {host}, which is not a loopback address, without "
            "authentication: anyone who reaches it could run these tools. Require a bearer "
            f"token with --auth-token-file PATH (or ${TOKEN_ENV}), or pass --insecure-no-auth "
            "if a proxy in front authenticates",
            EXIT_USAGE,
        )
    return token


def _path(text: str) -> Path:
    """``--auth-token-file``'s type: pathlib loads when the option is given, not on every run."""
    from pathlib import Path

    return Path(text)


def _say(message: str) -> None:
    print(f"toolreg serve: {message}", file=sys.stderr, flush=True)


@contextlib.contextmanager
def _sighup_deferred() -> Iterator[list[bool]]:
    """Note a SIGHUP that arrives while loading, instead of dying of it.

    The flag tells the server to reload once it runs. A Python handler rather
    than SIG_IGN, because children inherit an ignored signal across exec.
    """
    import signal  # only `serve` handles signals

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
