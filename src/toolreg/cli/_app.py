"""Argument parsing and the ``main`` entry point: turns every outcome into an exit code."""

from __future__ import annotations

import argparse
import os
import sys
import traceback
from collections.abc import Sequence

from toolreg import stop_mcp

from ._commands import cmd_call, cmd_list, cmd_show, load
from ._completion import SHELLS, cmd_completion
from ._doctor import cmd_doctor
from ._errors import EXIT_FAILURE, CliError
from ._help import more_help
from ._logs import cli_logging
from ._pip_commands import add_pip_parsers, cmd_install, cmd_uninstall
from ._plugin_commands import cmd_plugins
from ._serve import add_serve_parser, cmd_serve
from ._version import VersionAction

# The definition formats of registry.get_definitions (toolreg._schemas.formats.FORMATS).
FORMATS = ("openai", "openai-responses", "anthropic", "gemini", "gemini-json-schema", "mcp")

_EPILOG = f"""\
exit codes: 0 success; 1 unknown tool or toolset, a tool_error result, or an
internal error; 2 bad usage, bad JSON arguments or a bad config file.
{more_help("cli")}
"""


def build_parser() -> argparse.ArgumentParser:
    """The ``toolreg`` parser with its four subcommands."""
    # -v works before or after the subcommand; SUPPRESS keeps a subcommand that
    # did not see -v from resetting a -v given before it.
    verbose = argparse.ArgumentParser(add_help=False)
    verbose.add_argument(
        "-v",
        "--verbose",
        action="store_true",
        default=argparse.SUPPRESS,
        help="debug logging on stderr, tracebacks for internal errors",
    )
    verbose.add_argument(
        "--config",
        metavar="PATH",
        default=argparse.SUPPRESS,
        help="operator config file (default: $TOOLREG_CONFIG, ./toolreg.toml, user config dir)",
    )

    parser = argparse.ArgumentParser(
        prog="toolreg",
        description="Inspect and call the tools an LLM agent gets from toolreg.",
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        parents=[verbose],
    )
    parser.add_argument("-V", "--version", action=VersionAction)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    mcp = argparse.ArgumentParser(add_help=False)
    mcp.add_argument(
        "--mcp",
        action="store_true",
        help="connect the MCP servers (without it: their last known tools, marked cached)",
    )

    p = sub.add_parser("list", parents=[verbose, mcp], help="list registered tools")
    p.add_argument("--toolset", metavar="TS", help="only tools in this toolset (aliases work)")
    p.add_argument("--json", action="store_true", help="print a JSON array")
    p.add_argument(
        "--format",
        choices=FORMATS,
        help="with --json: add each tool's definition in this format, as its 'definition'",
    )

    p = sub.add_parser("show", parents=[verbose, mcp], help="show one tool's definition")
    p.add_argument("name", metavar="NAME")
    p.add_argument("--json", action="store_true", help="print only the definition, as JSON")
    p.add_argument(
        "--format", choices=FORMATS, default="openai", help="definition format (default: openai)"
    )

    p = sub.add_parser("call", parents=[verbose], help="call a tool and print its result")
    p.add_argument("name", metavar="NAME")
    p.add_argument(
        "args",
        metavar="JSON_ARGS",
        nargs="?",
        default="{}",
        help="arguments as a JSON object (default: {}); '-' reads them from stdin",
    )

    p = sub.add_parser("doctor", parents=[verbose], help="report problems loading tools")
    p.add_argument("--json", action="store_true", help="print the report as JSON")

    p = sub.add_parser("plugins", parents=[verbose], help="report on every tool pack")
    p.add_argument("--json", action="store_true", help="print a JSON array")

    p = sub.add_parser("config", parents=[verbose], help="operator config tools")
    config_sub = p.add_subparsers(dest="config_command", metavar="ACTION", required=True)
    c = config_sub.add_parser(
        "check",
        parents=[verbose],
        help="validate a config file: its keys, and the names it uses against what is installed",
    )
    c.add_argument("path", metavar="PATH", nargs="?", help="file to check (default: as found)")
    c.add_argument("--json", action="store_true", help="print the effective settings as JSON")

    add_serve_parser(sub, verbose)
    add_pip_parsers(sub, verbose)

    p = sub.add_parser(
        "completion",
        parents=[verbose],
        help="print a shell completion script",
        description="Print a completion script for SHELL, generated from this parser.",
    )
    p.add_argument("shell", metavar="SHELL", choices=SHELLS, help=", ".join(SHELLS))

    p = sub.add_parser("new", parents=[verbose], help="create a tool-pack project to publish")
    p.add_argument("name", metavar="PACK_NAME", help="distribution name, e.g. toolreg-weather")
    p.add_argument(
        "--dir", metavar="D", help="create D/PACK_NAME (default: in the current directory)"
    )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI with ``argv`` (default ``sys.argv[1:]``) and return the exit code."""
    try:
        args = build_parser().parse_args(argv)
    except SystemExit as exc:  # --help, --version, usage errors (argparse exits 2)
        return _exit_code(exc)

    verbose = getattr(args, "verbose", False)
    with cli_logging(verbose):
        try:
            return _run(args)
        except CliError as exc:
            _error(exc.message)
            return exc.code
        except KeyboardInterrupt:
            _error("interrupted")
            return 130
        except BrokenPipeError:
            # `toolreg list --json | head`: the reader left, which is not an error worth
            # a message. Point stdout at devnull so the exit-time flush is quiet too.
            _silence_stdout()
            return EXIT_FAILURE
        except Exception as exc:
            # Not the user's fault: keep it to one line unless they asked for detail.
            if verbose:
                traceback.print_exc(file=sys.stderr)
            _error(f"internal error: {type(exc).__name__}: {exc}" + _hint(verbose))
            return EXIT_FAILURE
        finally:
            stop_mcp()  # MCP sessions and their server processes end with the command


def _run(args: argparse.Namespace) -> int:
    if not hasattr(args, "config"):
        args.config = None
    if args.command == "config":
        from ._config_check import cmd_config_check

        return cmd_config_check(args)  # loads built-ins and packs, starts no MCP server
    if args.command == "serve":
        return cmd_serve(args)  # loads the tools itself, with stdout guarded for stdio
    if args.command in ("install", "uninstall"):
        return cmd_install(args) if args.command == "install" else cmd_uninstall(args)
    if args.command == "completion":
        return cmd_completion(args, build_parser())  # writes the script; loads no tools
    if args.command == "new":
        from ._scaffold import cmd_new  # only `new` needs the templates

        return cmd_new(args)  # writes files; loads no tools
    load(args)
    return COMMANDS[args.command](args)


#: The subcommands that run on loaded tools.
COMMANDS = {
    "plugins": cmd_plugins,
    "list": cmd_list,
    "show": cmd_show,
    "call": cmd_call,
    "doctor": cmd_doctor,
}


def _silence_stdout() -> None:
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):  # stdout is not a real file (tests)
        pass


def _error(message: str) -> None:
    print(f"toolreg: error: {message}", file=sys.stderr)


def _hint(verbose: bool) -> str:
    return "" if verbose else " (run with -v for a traceback)"


def _exit_code(exc: SystemExit) -> int:
    if exc.code is None:
        return 0
    if isinstance(exc.code, int):
        return exc.code
    print(exc.code, file=sys.stderr)  # SystemExit("message") means: print it, exit 1
    return EXIT_FAILURE
