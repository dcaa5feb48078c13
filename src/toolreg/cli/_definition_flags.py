"""``--inline-refs`` and ``--optional-as-absent``: definitions for clients that need them.

Shared by ``list``, ``show`` and ``serve``; each maps to the keyword of the
same name on ``registry.get_definitions`` (docs/formats.md, "Schemas every
consumer reads").
"""

from __future__ import annotations

import argparse

from ._help import Parser


def definition_flags() -> argparse.ArgumentParser:
    """A parent parser holding the two flags."""
    flags = Parser(add_help=False)
    flags.add_argument(
        "--inline-refs",
        action="store_true",
        help="write each local $ref out in full (for clients that cannot follow $ref/$defs)",
    )
    flags.add_argument(
        "--optional-as-absent",
        action="store_true",
        help="write an optional nullable property as its plain type "
        "(for clients that show anyOf-with-null as 'unknown')",
    )
    return flags


def flags_given(args: argparse.Namespace) -> list[str]:
    """The flags on the command line, as typed (for an error that names them)."""
    given = [("--inline-refs", "inline_refs"), ("--optional-as-absent", "optional_as_absent")]
    return [flag for flag, dest in given if getattr(args, dest, False)]
