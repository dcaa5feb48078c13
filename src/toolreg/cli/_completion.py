"""``toolreg completion SHELL``: a static completion script, generated from the parser.

shtab writes the script from the argparse parser itself, so it always knows
every command and option; the script runs nothing of toolreg when the user
presses TAB. shtab is an optional dependency (the ``completion`` extra).
"""

from __future__ import annotations

import argparse

from ._errors import EXIT_FAILURE, EXIT_OK, CliError

SHELLS = ("bash", "zsh", "fish")
SHTAB_MISSING = "toolreg completion needs shtab: pip install 'toolreg-core[completion]'"

# Arguments that name a file or a directory, by dest: the shell offers paths for them.
_FILE_DESTS = frozenset({"config", "path", "auth_token_file"})
_DIRECTORY_DESTS = frozenset({"dir"})


def cmd_completion(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    """Print the completion script for ``args.shell``; loads no tools."""
    try:
        import shtab
    except ImportError:
        raise CliError(SHTAB_MISSING, EXIT_FAILURE) from None
    _mark_paths(parser, shtab.FILE, shtab.DIRECTORY)
    print(shtab.complete(parser, shell=args.shell))
    return EXIT_OK


def _mark_paths(parser: argparse.ArgumentParser, files: object, directories: object) -> None:
    """Tell shtab which arguments take paths, in every subcommand's parser."""
    for action in parser._actions:
        if action.dest in _FILE_DESTS:
            action.complete = files  # type: ignore[attr-defined]
        elif action.dest in _DIRECTORY_DESTS:
            action.complete = directories  # type: ignore[attr-defined]
        if isinstance(action, argparse._SubParsersAction):
            for sub in set(action.choices.values()):
                _mark_paths(sub, files, directories)
