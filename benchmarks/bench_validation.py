"""What argument validation adds to a dispatch, against the same dispatch unvalidated.

Run from the repository root::

    .venv/bin/python benchmarks/bench_validation.py [--quick]

The tool has a 5-field schema (string, integer with a minimum, enum, array of
strings, boolean; two required; no extra fields). The same handler is
registered twice, once with ``validate=False``, and both are dispatched with
the same valid arguments in the same run. Target: at most 3 µs added. A third
registration adds a ``pattern`` to the path field, to show what a schema's
regular expression costs when it runs with a time budget.
"""

from __future__ import annotations

import argparse
import sys

from harness import FULL, QUICK, Result, print_table, time_statements

from toolreg import ToolRegistry

PARAMETERS = {
    "type": "object",
    "properties": {
        "path": {"type": "string", "description": "File to read."},
        "limit": {"type": "integer", "minimum": 1, "description": "Most lines."},
        "mode": {"type": "string", "enum": ["text", "bytes"], "description": "How."},
        "tags": {"type": "array", "items": {"type": "string"}, "description": "Labels."},
        "follow": {"type": "boolean", "description": "Follow links."},
    },
    "required": ["path", "limit"],
    "additionalProperties": False,
}
ARGS = {"path": "notes.txt", "limit": 40, "mode": "text", "tags": ["a", "b"], "follow": False}
# The same schema, with a regular expression on the path: a schema pattern runs with a time budget.
PATTERNED = {
    **PARAMETERS,
    "properties": {
        **PARAMETERS["properties"],
        "path": {"type": "string", "pattern": r"^[\w./-]+$", "description": "File to read."},
    },
}


def handler(args: dict) -> str:
    return "ok"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repeats: a smoke run")
    cfg = QUICK if parser.parse_args(argv).quick else FULL
    registry = ToolRegistry()
    registry.register("checked", "bench", {"parameters": PARAMETERS}, handler)
    registry.register("unchecked", "bench", {"parameters": PARAMETERS}, handler, validate=False)
    registry.register("patterned", "bench", {"parameters": PATTERNED}, handler)
    for name in ("checked", "unchecked", "patterned"):
        if registry.dispatch(name, ARGS) != "ok":
            raise SystemExit(f"{name}: dispatch did not reach the handler")
    times = time_statements(
        {
            "checked": "registry.dispatch('checked', args)",
            "unchecked": "registry.dispatch('unchecked', args)",
            "patterned": "registry.dispatch('patterned', args)",
        },
        {"registry": registry, "args": ARGS},
        cfg,
    )
    added = times["checked"] - times["unchecked"]
    print_table(
        [
            Result(
                "validation added per dispatch (5-field schema)",
                added,
                3000.0,
                target=1.0,
                note="value: ns added; floor column: the 3 µs budget",
            ),
            Result(
                "validated vs unvalidated dispatch",
                times["checked"],
                times["unchecked"],
                note=f"{added:+.0f} ns",
            ),
            Result(
                "validation added with a schema pattern",
                times["patterned"] - times["unchecked"],
                3000.0,
                note=f"{times['patterned'] - times['checked']:+.0f} ns for the bounded pattern",
            ),
        ]
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
