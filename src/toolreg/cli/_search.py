"""``toolreg search QUERY``: the tools that best answer a question, as a table or JSON."""

from __future__ import annotations

import argparse

from toolreg import registry

from . import _render
from ._errors import EXIT_OK, EXIT_USAGE, CliError


def cmd_search(args: argparse.Namespace) -> int:
    """Print the best ``--limit`` hits for the query; nothing fitting is not an error."""
    if args.limit < 1:
        raise CliError(f"--limit must be at least 1, got {args.limit}", EXIT_USAGE)
    query = " ".join(args.query)
    toolsets = [args.toolset] if args.toolset else None
    hits = registry.search(query, limit=args.limit, toolsets=toolsets, include_unavailable=args.all)
    records = []
    for hit in hits:
        entry = registry.get_entry(hit.name)
        records.append(
            {
                "name": hit.name,
                "toolset": hit.toolset,
                "score": hit.score,
                "available": registry.is_tool_available(hit.name),
                "description": entry.description if entry is not None else "",
            }
        )
    if args.json:
        print(_render.to_json(records))
    elif not records:
        print(f"no tool fits {query!r}")
    else:
        print(_render.search_table(records, _render.terminal_width()))
    return EXIT_OK
