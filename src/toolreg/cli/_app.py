"""Argument parsing and ``main``: every command line to an exit code.

A command line that starts with a command's name gets a parser holding that
subcommand alone, and each command's module is imported when it runs, so
``toolreg list`` pays for nothing of ``serve``. Anything else (``--help``, a
mistyped command) gets the whole parser, so its help and errors list every command.
"""

from __future__ import annotations

import argparse
import os
import sys
import traceback
from collections.abc import Callable, Sequence
from importlib import import_module
from typing import Any, NoReturn

from toolreg import stop_mcp

from . import _resume_collector
from ._errors import EXIT_FAILURE, EXIT_OK, CliError
from ._help import Epilog, HelpFormatter, Parser
from ._logs import cli_logging

# The definition formats of registry.get_definitions (toolreg._schemas.formats.FORMATS).
FORMATS = ("openai", "openai-responses", "anthropic", "gemini", "gemini-json-schema", "mcp")

_EPILOG = Epilog(
    """\
exit codes: 0 success; 1 unknown tool or toolset, a tool_error result, or an
internal error; 2 bad usage, bad JSON arguments or a bad config file.
""",
    "cli",
)


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The ``toolreg`` parser: every subcommand, or only ``command``'s."""
    # -v works before or after the subcommand; SUPPRESS keeps a subcommand that
    # did not see -v from resetting a -v given before it.
    verbose = Parser(add_help=False)
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

    parser = Parser(
        prog="toolreg",
        description="Inspect and call the tools an LLM agent gets from toolreg.",
        epilog=_EPILOG,
        formatter_class=HelpFormatter,
        parents=[verbose],
    )
    parser.add_argument("-V", "--version", action=VersionAction)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name, add in _SUBPARSERS.items():
        if command is None or name == command:
            add(sub, verbose)
    return parser


class VersionAction(argparse.Action):
    """``-V``: like argparse's ``version`` action, but the text is read only when asked for.

    The packs' versions come from their metadata, found as the loader finds
    them; none is imported, so ``-V`` runs no pack's code and works when one is broken.
    """

    def __init__(self, option_strings: list[str], dest: str, **kwargs: Any) -> None:
        kwargs.setdefault(
            "help", "print toolreg's and the installed tool packs' versions, then exit"
        )
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, **kwargs)

    def __call__(self, parser: argparse.ArgumentParser, *_: Any) -> NoReturn:
        print(version_text())
        parser.exit()


def version_text() -> str:
    """``toolreg X.Y.Z (...)`` and one line per installed tool pack."""
    # Only -V pays for these: the parser is built on every command.
    import platform

    from toolreg import __version__

    from .._discovery.dist_info import DISTRIBUTION
    from .._discovery.entrypoints import find_packs

    python = f"{platform.python_implementation()} {platform.python_version()}"
    lines = [f"toolreg {__version__} ({DISTRIBUTION}, {python}, {sys.executable})"]
    packs = find_packs()
    if not packs:
        lines.append("no tool packs installed (entry-point group toolreg.tools)")
        return "\n".join(lines)
    lines.append(f"tool packs ({len(packs)}):")
    width = max(len(pack.plugin_id) for pack in packs)
    lines += [f"  {pack.plugin_id.ljust(width)}  {pack.version or '?'}" for pack in packs]
    return "\n".join(lines)


def _mcp_switch() -> argparse.ArgumentParser:
    mcp = Parser(add_help=False)
    mcp.add_argument(
        "--mcp",
        action="store_true",
        help="connect the MCP servers (without it: their last known tools, marked cached)",
    )
    return mcp


def _add_list(sub: argparse._SubParsersAction, verbose: argparse.ArgumentParser) -> None:
    from ._definition_flags import definition_flags

    p = sub.add_parser(
        "list", parents=[verbose, _mcp_switch(), definition_flags()], help="list registered tools"
    )
    p.add_argument("--toolset", metavar="TS", help="only tools in this toolset (aliases work)")
    p.add_argument("--json", action="store_true", help="print a JSON array")
    p.add_argument(
        "--format",
        choices=FORMATS,
        help="with --json: add each tool's definition in this format, as its 'definition'",
    )
    # What the completion scripts run on TAB: one name a line, nothing else. Not
    # in --help, nor offered by completion itself: a shell's plumbing, not a view.
    names = p.add_mutually_exclusive_group()
    names.add_argument("--names", action="store_true", help=argparse.SUPPRESS)
    names.add_argument("--toolsets", action="store_true", help=argparse.SUPPRESS)


def _add_show(sub: argparse._SubParsersAction, verbose: argparse.ArgumentParser) -> None:
    from ._definition_flags import definition_flags

    p = sub.add_parser(
        "show",
        parents=[verbose, _mcp_switch(), definition_flags()],
        help="show one tool's definition",
    )
    p.add_argument("name", metavar="NAME")
    p.add_argument("--json", action="store_true", help="print only the definition, as JSON")
    p.add_argument(
        "--format", choices=FORMATS, default="openai", help="definition format (default: openai)"
    )


def _add_search(sub: argparse._SubParsersAction, verbose: argparse.ArgumentParser) -> None:
    p = sub.add_parser(
        "search",
        parents=[verbose, _mcp_switch()],
        help="find the tools that fit a question",
    )
    p.add_argument("query", metavar="QUERY", nargs="+", help="keywords or a whole question")
    p.add_argument("--limit", type=int, default=5, metavar="N", help="at most N tools (default: 5)")
    p.add_argument("--toolset", metavar="TS", help="only tools in this toolset (aliases work)")
    p.add_argument("--all", action="store_true", help="unavailable tools too")
    p.add_argument("--json", action="store_true", help="print a JSON array")


def _add_call(sub: argparse._SubParsersAction, verbose: argparse.ArgumentParser) -> None:
    p = sub.add_parser("call", parents=[verbose], help="call a tool and print its result")
    p.add_argument("name", metavar="NAME")
    p.add_argument(
        "args",
        metavar="ARGS",
        nargs="*",
        help="arguments: one JSON object (default: {}), '-' to read it from stdin, "
        "or key=value (a string) and key:=json (any JSON value) pairs",
    )
    p.add_argument(
        "-y",
        "--yes",
        action="store_true",
        help="approve a call the operator's [permissions] ask about (never one they deny); "
        "without it, an ask is put to you on the terminal, or denied when there is none",
    )


def _add_permissions(sub: argparse._SubParsersAction, verbose: argparse.ArgumentParser) -> None:
    p = sub.add_parser(
        "permissions",
        parents=[verbose, _mcp_switch()],
        help="say which of the operator's [permissions] rules decides a call, and why",
        description="Say which rule of the config's [permissions] decides a call of NAME "
        "with ARGS (deny, ask, allow or the default), and why. Runs nothing.",
    )
    p.add_argument("name", metavar="NAME")
    p.add_argument(
        "args",
        metavar="ARGS",
        nargs="*",
        help="the call's arguments, as call takes them: one JSON object (default: {}), '-' "
        "for stdin, or key=value and key:=json pairs",
    )
    p.add_argument("--json", action="store_true", help="print the verdict and its reasons as JSON")


def _add_doctor(sub: argparse._SubParsersAction, verbose: argparse.ArgumentParser) -> None:
    p = sub.add_parser("doctor", parents=[verbose], help="report problems loading tools")
    p.add_argument("--json", action="store_true", help="print the report as JSON")


def _add_plugins(sub: argparse._SubParsersAction, verbose: argparse.ArgumentParser) -> None:
    p = sub.add_parser("plugins", parents=[verbose], help="report on every tool pack")
    p.add_argument("--json", action="store_true", help="print a JSON array")


def _add_config(sub: argparse._SubParsersAction, verbose: argparse.ArgumentParser) -> None:
    p = sub.add_parser("config", parents=[verbose], help="operator config tools")
    config_sub = p.add_subparsers(dest="config_command", metavar="ACTION", required=True)
    c = config_sub.add_parser(
        "check",
        parents=[verbose],
        help="validate a config file: its keys, and the names it uses against what is installed",
    )
    c.add_argument("path", metavar="PATH", nargs="?", help="file to check (default: as found)")
    c.add_argument("--json", action="store_true", help="print the effective settings as JSON")


def _add_serve(sub: argparse._SubParsersAction, verbose: argparse.ArgumentParser) -> None:
    from ._serve import add_serve_parser

    add_serve_parser(sub, verbose)


def _add_install(sub: argparse._SubParsersAction, verbose: argparse.ArgumentParser) -> None:
    from ._pip_commands import add_install_parser

    add_install_parser(sub, verbose)


def _add_uninstall(sub: argparse._SubParsersAction, verbose: argparse.ArgumentParser) -> None:
    from ._pip_commands import add_uninstall_parser

    add_uninstall_parser(sub, verbose)


def _add_lock(sub: argparse._SubParsersAction, verbose: argparse.ArgumentParser) -> None:
    from ._lock import add_lock_parser

    add_lock_parser(sub, verbose)


def _add_completion(sub: argparse._SubParsersAction, verbose: argparse.ArgumentParser) -> None:
    p = sub.add_parser(
        "completion",
        parents=[verbose],
        help="print a shell completion script",
        description="Print a completion script for SHELL, generated from this parser.",
    )
    p.add_argument("shell", metavar="SHELL", choices=SHELLS, help=", ".join(SHELLS))


def _add_docs(sub: argparse._SubParsersAction, verbose: argparse.ArgumentParser) -> None:
    from ._docs import add_docs_parser

    add_docs_parser(sub, verbose)


def _add_new(sub: argparse._SubParsersAction, verbose: argparse.ArgumentParser) -> None:
    p = sub.add_parser("new", parents=[verbose], help="create a tool-pack project to publish")
    p.add_argument("name", metavar="PACK_NAME", help="distribution name, e.g. toolreg-weather")
    p.add_argument(
        "--dir", metavar="D", help="create D/PACK_NAME (default: in the current directory)"
    )


#: Each subcommand and the function that adds its parser, in the order --help lists them.
_SUBPARSERS: dict[str, Callable[[argparse._SubParsersAction, argparse.ArgumentParser], None]] = {
    "list": _add_list,
    "show": _add_show,
    "search": _add_search,
    "call": _add_call,
    "permissions": _add_permissions,
    "doctor": _add_doctor,
    "plugins": _add_plugins,
    "config": _add_config,
    "lock": _add_lock,
    "serve": _add_serve,
    "install": _add_install,
    "uninstall": _add_uninstall,
    "docs": _add_docs,
    "completion": _add_completion,
    "new": _add_new,
}


def _parser_for(argv: Sequence[str]) -> argparse.ArgumentParser:
    """Only the subcommand a command line starts with; the whole parser otherwise."""
    # A first word that is no option is the subcommand to argparse too, so the
    # narrowed parser accepts, refuses and explains exactly what the whole one would.
    first = argv[0] if argv else None
    return build_parser(first if first in _SUBPARSERS else None)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI with ``argv`` (default ``sys.argv[1:]``) and return the exit code."""
    argv = sys.argv[1:] if argv is None else list(argv)
    try:
        args = _parser_for(argv).parse_args(argv)
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
    if args.command == "completion":
        return cmd_completion(args, build_parser())  # writes the script; loads no tools
    module, function = COMMANDS[args.command]
    run = getattr(import_module(module, __package__), function)
    if args.command in _LOADS_TOOLS:
        from ._commands import load

        load(args)
    _resume_collector()  # start-up is over: the command collects its own garbage
    return run(args)  # type: ignore[no-any-return]


#: Each subcommand's module and function, imported when it runs.
COMMANDS: dict[str, tuple[str, str]] = {
    "list": ("._commands", "cmd_list"),
    "show": ("._commands", "cmd_show"),
    "search": ("._search", "cmd_search"),
    "call": ("._commands", "cmd_call"),
    "permissions": ("._permissions", "cmd_permissions"),
    "doctor": ("._commands", "cmd_doctor"),
    "plugins": ("._commands", "cmd_plugins"),
    # loads built-ins and packs, starts no MCP server
    "config": ("._config_check", "cmd_config_check"),
    # loads the tools itself, with stdout guarded for stdio
    "serve": ("._serve", "cmd_serve"),
    # loads packs and connects MCP servers itself, with the lock's enforcement off
    "lock": ("._lock", "cmd_lock"),
    "install": ("._pip_commands", "cmd_install"),
    "uninstall": ("._pip_commands", "cmd_uninstall"),
    "docs": ("._docs", "cmd_docs"),  # prints a shipped page; loads no tools
    "new": ("._scaffold", "cmd_new"),  # writes files; loads no tools
}

#: The subcommands that run on loaded tools: ``load`` runs first.
_LOADS_TOOLS = frozenset({"list", "show", "search", "call", "permissions", "doctor", "plugins"})


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


# -- completion: a script generated from the parser by shtab. Commands, options and
# paths complete in the shell alone; tool names and toolsets are asked of toolreg
# itself (`toolreg list --names` / `--toolsets`), which loads what the line would.

SHELLS = ("bash", "zsh", "fish")

# Arguments that name a file or a directory, by dest: the shell offers paths for them.
_FILE_DESTS = frozenset({"config", "path", "auth_token_file"})
_DIRECTORY_DESTS = frozenset({"dir"})
# Arguments that name a tool, by (subcommand, dest): `new`'s NAME is a pack to create.
_TOOL_ARGUMENTS = frozenset({("show", "name"), ("call", "name"), ("permissions", "name")})
_TOOLSET_DESTS = frozenset({"toolset"})

# The shell functions that ask toolreg: the command the line runs (what the user
# typed), with the line's --config if it has one, stderr and stdin shut so a broken
# config or pack completes nothing rather than writing over the prompt.
_ASK_TOOLREG = {
    "bash": """\
# $1=the word being completed, $2=--names or --toolsets
_toolreg_names() {
  local config=() i
  for ((i = 1; i < COMP_CWORD; i++)); do
    [[ ${COMP_WORDS[i]} == --config ]] && config=(--config "${COMP_WORDS[i+1]}")
  done
  compgen -W "$("${COMP_WORDS[0]}" list "$2" "${config[@]}" 2>/dev/null </dev/null)" -- "$1"
}
_toolreg_tools() { _toolreg_names "$1" --names; }
_toolreg_toolsets() { _toolreg_names "$1" --toolsets; }
""",
    "zsh": """\
# $1=--names or --toolsets, then what _arguments passes on to compadd
_toolreg_names() {
  local what=$1; shift
  local -a names config
  local i=${words[(I)--config]}
  (( i > 0 && i < CURRENT - 1 )) && config=(--config "${words[i+1]}")
  names=(${(f)"$(toolreg list "$what" "${config[@]}" 2>/dev/null </dev/null)"})
  compadd "$@" -a names
}
_toolreg_tools() { _toolreg_names --names "$@" }
_toolreg_toolsets() { _toolreg_names --toolsets "$@" }
""",
    "fish": """\
# $argv=--names or --toolsets
function _toolreg_names
  set -l tokens (commandline -opc)
  set -l from_line
  set -l i (contains -i -- --config $tokens)
  and set from_line --config $tokens[(math $i + 1)]
  $tokens[1] list $argv $from_line 2>/dev/null </dev/null
end
function _toolreg_tools
  _toolreg_names --names
end
function _toolreg_toolsets
  _toolreg_names --toolsets
end
""",
}


def cmd_completion(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    """Print the completion script for ``args.shell``; loads no tools."""
    import shtab  # a core dependency, imported by this command alone

    # fish reads a command substitution; bash and zsh call the function by name.
    completers: dict[str, object] = {
        "file": shtab.FILE,
        "directory": shtab.DIRECTORY,
        "tool": {"bash": "_toolreg_tools", "zsh": "_toolreg_tools", "fish": "(_toolreg_tools)"},
        "toolset": {
            "bash": "_toolreg_toolsets",
            "zsh": "_toolreg_toolsets",
            "fish": "(_toolreg_toolsets)",
        },
    }
    _mark(parser, "", completers)
    print(shtab.complete(parser, shell=args.shell, preamble=_ASK_TOOLREG[args.shell]))
    return EXIT_OK


def _mark(parser: argparse.ArgumentParser, command: str, completers: dict[str, object]) -> None:
    """Tell shtab what each argument takes (paths, tools, toolsets), in every subcommand."""
    for action in parser._actions:
        kind = None
        if action.dest in _FILE_DESTS:
            kind = "file"
        elif action.dest in _DIRECTORY_DESTS:
            kind = "directory"
        elif (command, action.dest) in _TOOL_ARGUMENTS:
            kind = "tool"
        elif action.dest in _TOOLSET_DESTS:
            kind = "toolset"
        if kind is not None:
            action.complete = completers[kind]  # type: ignore[attr-defined]
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                _mark(sub, name, completers)
