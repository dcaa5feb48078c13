"""A command line that starts with a command gets a parser of that subcommand alone.

It must accept, refuse and explain exactly what the whole parser would: each
case is parsed by both, and the results, exit codes and printed text compared.
"""

from __future__ import annotations

import contextlib
import io

import pytest

from toolreg.cli._app import _SUBPARSERS, _parser_for, build_parser

CASES = [
    ["list", "--json"],
    ["list", "--json", "--format", "anthropic", "--toolset", "file", "-v"],
    ["list", "--format", "nope"],
    ["list", "--bogus"],
    ["list", "-h"],
    ["list", "--config", "x.toml", "--mcp"],
    ["list", "--json", "--format", "mcp", "--inline-refs", "--optional-as-absent"],
    ["show"],
    ["show", "read_file", "--format", "mcp", "--json"],
    ["search", "read", "a", "file", "--limit", "3", "--json", "--all"],
    ["search"],
    ["search", "--limit", "x", "q"],
    ["call", "read_file", '{"path": "a"}'],
    ["call", "read_file", "{}", "extra"],
    ["call", "--help"],
    ["call", "--yes", "write_file", "path=a", "content=b"],
    ["permissions", "write_file", '{"path": "a"}', "--json", "--mcp"],
    ["permissions"],
    ["doctor", "--json"],
    ["plugins", "-v"],
    ["config"],
    ["config", "check", "t.toml", "--json"],
    ["lock", "--check", "--json"],
    ["lock", "--update", "toolreg-sqlite", "mcp:docs"],
    ["lock", "--update"],
    ["lock", "--check", "--update"],
    ["serve", "--transport", "http", "--port", "80"],
    ["serve", "--max-calls", "0"],
    ["serve", "-h"],
    ["serve", "--inline-refs"],
    ["install", "-U", "toolreg-sqlite", "-e", "."],
    ["uninstall"],
    ["docs"],
    ["docs", "cli", "-h"],
    ["completion", "tcsh"],
    ["completion", "zsh"],
    ["new", "toolreg-x", "--dir", "d"],
    ["new", "-h"],
]


def _outcome(parser, argv):
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            result = ("parsed", vars(parser.parse_args(argv)))
        except SystemExit as exc:
            result = ("exit", exc.code)
    return result, out.getvalue(), err.getvalue()


@pytest.mark.parametrize("argv", CASES, ids=" ".join)
def test_the_narrowed_parser_answers_as_the_whole_one(argv):
    narrowed = _parser_for(argv)
    choices = next(a for a in narrowed._actions if a.dest == "command").choices
    assert list(choices) == [argv[0]]  # it is narrowed: no other subcommand was built
    assert _outcome(narrowed, argv) == _outcome(build_parser(), argv)


@pytest.mark.parametrize("argv", [[], ["-h"], ["-v", "list"], ["lst"], ["--", "list"]])
def test_anything_else_gets_every_command(argv):
    choices = next(a for a in _parser_for(argv)._actions if a.dest == "command").choices
    assert list(choices) == list(_SUBPARSERS)


def test_every_command_has_a_case():
    assert {argv[0] for argv in CASES} == set(_SUBPARSERS)
