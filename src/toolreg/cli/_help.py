"""Where ``--help`` sends a reader for more: only places a pip install really has.

That is the ``Documentation`` Project-URL of the installed distribution when
its publisher set one, else the pages shipped inside it (``toolreg docs``).
The metadata is read only when help is printed: no other command pays for it.
"""

from __future__ import annotations

import argparse
import functools
import os
import sys
from typing import Any

#: The distribution whose metadata names the documentation.
DISTRIBUTION = "toolreg-core"
#: Project-URL labels that mean the documentation (PEP 753's normalised forms).
_DOCUMENTATION_LABELS = frozenset({"documentation", "docs"})


@functools.cache
def documentation_url() -> str | None:
    """The installed distribution's ``Documentation`` Project-URL, or None."""
    from importlib.metadata import PackageNotFoundError, metadata

    try:
        entries = metadata(DISTRIBUTION).get_all("Project-URL") or []
    except PackageNotFoundError:  # running from a source tree that is not installed
        return None
    for entry in entries:
        label, _, url = entry.partition(",")
        normalised = "".join(c for c in label.lower() if c.isalnum())
        if normalised in _DOCUMENTATION_LABELS and url.strip():
            return url.strip()
    return None


def more_help(page: str) -> str:
    """The epilog's last line: the published page if there is one, else the shipped page.

    ``page`` is the documentation page's name without ``.md`` (``cli``, ``mcp``).
    """
    url = documentation_url()
    if url:
        return f"Documentation: {url.rstrip('/')}/{page}"
    return (
        f"More: toolreg docs {page} (toolreg docs lists every page);\n"
        "the library's reference: python -m pydoc toolreg"
    )


def did_you_mean(name: str, known: list[str]) -> str:
    """``; did you mean 'x'?`` for the closest of ``known``, or ``""``."""
    import difflib  # only a mistyped name gets here

    close = difflib.get_close_matches(name, known, n=1)
    return f"; did you mean {close[0]!r}?" if close else ""


class Epilog(str):
    """An epilog's text, and the documentation page its last line points to when printed."""

    page: str

    def __new__(cls, text: str, page: str) -> Epilog:
        epilog = super().__new__(cls, text)
        epilog.page = page
        return epilog


def terminal_columns() -> int:
    """``shutil.get_terminal_size().columns``: $COLUMNS, else stdout's terminal, else 80.

    Asked here with os alone: shutil imports zlib, bz2 and lzma, and argparse
    makes a formatter (which asks the width) for every argument it is given,
    so every command would pay for them.
    """
    try:
        columns = int(os.environ["COLUMNS"])
    except (KeyError, ValueError):
        columns = 0
    if columns > 0:
        return columns
    try:
        return os.get_terminal_size(sys.__stdout__.fileno()).columns or 80
    except (AttributeError, ValueError, OSError):
        return 80


class _TerminalWidth(argparse.HelpFormatter):
    """argparse's default width (the terminal's, less 2), from :func:`terminal_columns`."""

    def __init__(
        self,
        prog: str,
        indent_increment: int = 2,
        max_help_position: int = 24,
        width: int | None = None,
    ) -> None:
        if width is None:
            width = terminal_columns() - 2
        super().__init__(prog, indent_increment, max_help_position, width)


class StandardHelpFormatter(_TerminalWidth):
    """argparse's own layout: what every parser but the top one uses."""


class Parser(argparse.ArgumentParser):
    """An ArgumentParser whose formatters ask the terminal's width without shutil.

    Its subcommands' parsers are Parsers too (``add_subparsers`` makes parsers
    of its own class).
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", StandardHelpFormatter)
        super().__init__(*args, **kwargs)

    def _check_value(self, action: argparse.Action, value: Any) -> None:
        """argparse's check, with the closest choice for a mistyped command or value."""
        try:
            super()._check_value(action, value)
        except argparse.ArgumentError as exc:
            if isinstance(value, str) and action.choices is not None:
                hint = did_you_mean(value, [str(choice) for choice in action.choices])
                if hint:
                    raise argparse.ArgumentError(action, f"{exc.message}{hint}") from None
            raise


class HelpFormatter(_TerminalWidth, argparse.RawDescriptionHelpFormatter):
    """Keeps the text's own line breaks, and ends an :class:`Epilog` with :func:`more_help`."""

    def add_text(self, text: str | None) -> None:
        if isinstance(text, Epilog):
            text = f"{text}{more_help(text.page)}\n"
        super().add_text(text)
