"""What a read costs: dispatch with and without argument validation, and get_entry.

Run from the repository root::

    .venv/bin/python benchmarks/bench_validation.py [--quick] [--json PATH]

The floor is the handler called directly, in the same run. The tool has a
5-field schema (string, integer with a minimum, enum, array of strings,
boolean; two required; no extra fields), registered with validation and with
``validate=False``; a 2-field schema and one with a ``pattern`` (which runs
with a time budget) are measured beside them. ``registry.get_entry(name)`` is
timed against a direct call (``dict.get`` of the same entries in its note). The
first dispatch after registering the tool again with the same schema is timed too, with the
schema-validator cache as it is and emptied. The targets live in
bench_targets.py; this script reports. See benchmarks/README.md.
"""

from __future__ import annotations

import json
import sys
import time
from typing import Any

from harness import Config, Result, parse_run, report, time_calls, time_statements

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
# The smallest useful schema: one required string, one optional integer.
SMALL = {
    "type": "object",
    "properties": {"path": {"type": "string"}, "limit": {"type": "integer"}},
    "required": ["path"],
    "additionalProperties": False,
}
SMALL_ARGS = {"path": "notes.txt"}
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


def first_dispatch_after_reregistering(registry: ToolRegistry, cfg: Config, *, cold: bool) -> float:
    """Min ns of the first dispatch after registering the tool again with the same schema.

    ``cold`` also empties the schema-validator cache first: every first call
    then builds its validator, as each one did before validators were cached.
    """

    def reregister() -> None:
        if cold:
            from toolreg._schemas import validation  # private: the cold row only

            validation.clear_cache()
        # A new dict with the same content, as a pack reload or an MCP refresh sends it.
        schema = {"parameters": json.loads(json.dumps(PARAMETERS))}
        registry.register("checked", "bench", schema, handler)

    call = {"first": lambda: registry.dispatch("checked", ARGS)}
    return time_calls(call, reregister, cfg.samples)["first"]


def least_dispatch(table: dict[str, Any]) -> Any:
    """The least a dispatch with toolreg's signature and promises can do, in Python.

    A lookup, the handler call, the result's type check, and the guard that
    keeps a handler's exception from the caller: no checks of the arguments,
    no limits. What it costs over ``handler(args)`` is the interpreter's
    price of one more call frame with ``**kwargs``, the floor of any dispatch
    written in Python.
    """
    get = table.get

    def dispatch(name: str, args: Any, /, **kwargs: Any) -> Any:
        try:
            if kwargs:
                return None
            handler = get(name)
            if handler is None:
                return None
            result = handler(args)
            if type(result) is str:
                return result
            return None
        except BaseException:
            return None

    return dispatch


def main(argv: list[str] | None = None) -> int:
    started = time.perf_counter()
    args, cfg = parse_run(__doc__.splitlines()[0], argv)
    registry = ToolRegistry()
    registry.register("checked", "bench", {"parameters": PARAMETERS}, handler)
    registry.register("unchecked", "bench", {"parameters": PARAMETERS}, handler, validate=False)
    registry.register("patterned", "bench", {"parameters": PATTERNED}, handler)
    registry.register("small", "bench", {"parameters": SMALL}, handler)
    for name in ("checked", "unchecked", "patterned"):
        if registry.dispatch(name, ARGS) != "ok":
            raise SystemExit(f"{name}: dispatch did not reach the handler")
    if registry.dispatch("small", SMALL_ARGS) != "ok":
        raise SystemExit("small: dispatch did not reach the handler")
    times = time_statements(
        {
            "direct": "handler(args)",
            "checked": "registry.dispatch('checked', args)",
            "unchecked": "registry.dispatch('unchecked', args)",
            "patterned": "registry.dispatch('patterned', args)",
            "small": "registry.dispatch('small', small_args)",
            "least": "least('unchecked', args)",
            "get_entry": "registry.get_entry('checked')",
            "dict.get": "entries.get('checked')",
        },
        {
            "registry": registry,
            "args": ARGS,
            "small_args": SMALL_ARGS,
            "handler": handler,
            "least": least_dispatch({"unchecked": handler}),
            "entries": {name: registry.get_entry(name) for name in registry.get_all_tool_names()},
        },
        cfg,
    )
    direct = times["direct"]
    warm = first_dispatch_after_reregistering(registry, cfg, cold=False)
    try:
        cold: float | None = first_dispatch_after_reregistering(registry, cfg, cold=True)
        cold_error = None
    except (ImportError, AttributeError) as exc:  # the private cache moved: skip its row
        cold, cold_error = None, f"{type(exc).__name__}: {exc}"
    added = times["checked"] - times["unchecked"]
    report(
        [
            Result(
                "dispatch, validated (5-field schema)",
                times["checked"],
                direct,
                note=f"{times['checked'] - direct:+.0f} ns over handler(args)",
            ),
            Result(
                "dispatch, validated (2-field schema)",
                times["small"],
                direct,
                note=f"{times['small'] - direct:+.0f} ns over handler(args)",
            ),
            Result(
                "dispatch, validation off",
                times["unchecked"],
                direct,
                note=f"{times['unchecked'] - direct:+.0f} ns over handler(args)",
            ),
            Result(
                "  the least a Python dispatch can cost",
                times["least"],
                direct,
                note="lookup, call, str check, guard; no argument checks (see least_dispatch)",
            ),
            Result(
                "get_entry",
                times["get_entry"],
                direct,
                note=f"a method on the class; dict.get of the same entries: "
                f"{times['dict.get']:.0f} ns",
            ),
            Result(
                "first dispatch after re-registering",
                warm,
                direct,
                note=f"same schema, a new dict; min of {cfg.samples}",
            ),
            Result(
                "  the same, schema-validator cache emptied",
                cold,
                direct,
                note="what every re-registration cost before the cache",
                error=cold_error,
            ),
            Result(
                "validation added per dispatch (5-field schema)",
                added,
                note="ns added to a dispatch with validation off",
            ),
            Result(
                "validation added with a schema pattern",
                times["patterned"] - times["unchecked"],
                note=f"{times['patterned'] - times['checked']:+.0f} ns for the bounded pattern",
            ),
        ],
        args,
        cfg,
        started,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
