"""What a dispatch costs with and without argument validation, in direct-call units.

Run from the repository root::

    .venv/bin/python benchmarks/bench_validation.py [--quick]

The floor is the handler called directly, in the same run. The tool has a
5-field schema (string, integer with a minimum, enum, array of strings,
boolean; two required; no extra fields), registered with validation and with
``validate=False``; a 2-field schema and one with a ``pattern`` (which runs
with a time budget) are measured beside them. The first dispatch after
registering the tool again with the same schema is timed too, with the
compiled-schema cache as it is and emptied. See benchmarks/README.md.
"""

from __future__ import annotations

import json
import sys
import time
from typing import Any

from harness import Config, Result, parse_run, report, time_calls, time_statements

from toolreg import ToolRegistry
from toolreg._schemas import validation

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


#: Targets in floor units (a direct ``handler(args)`` call measured in the same run).
VALIDATED_TARGET = 8.0
UNVALIDATED_TARGET = 3.0
#: Three times the reference registry's 5.3 µs for its first call after a reload.
REREGISTERED_TARGET = 500.0


def first_dispatch_after_reregistering(registry: ToolRegistry, cfg: Config, *, cold: bool) -> float:
    """Min ns of the first dispatch after registering the tool again with the same schema.

    ``cold`` also empties the compiled-schema cache first: every first call
    then compiles, as each one did before validators were cached.
    """

    def reregister() -> None:
        if cold:
            validation.clear_cache()
        # A new dict with the same content, as a pack reload or an MCP refresh sends it.
        schema = {"parameters": json.loads(json.dumps(PARAMETERS))}
        registry.register("checked", "bench", schema, handler)

    call = {"first": lambda: registry.dispatch("checked", ARGS)}
    return time_calls(call, reregister, cfg.samples)["first"]


def python_dispatch(registry: ToolRegistry) -> Any:
    """The Python dispatch: ``registry.dispatch`` itself, or the one the compiled one defers to."""
    return getattr(registry.dispatch, "slow", registry.dispatch)


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
            "python": "python('unchecked', args)",
        },
        {
            "registry": registry,
            "args": ARGS,
            "small_args": SMALL_ARGS,
            "handler": handler,
            "least": least_dispatch({"unchecked": handler}),
            "python": python_dispatch(registry),
        },
        cfg,
    )
    direct = times["direct"]
    kind = "compiled" if python_dispatch(registry) is not registry.dispatch else "Python"
    warm = first_dispatch_after_reregistering(registry, cfg, cold=False)
    cold = first_dispatch_after_reregistering(registry, cfg, cold=True)
    added = times["checked"] - times["unchecked"]
    report(
        [
            Result(
                "dispatch, validated (5-field schema)",
                times["checked"],
                direct,
                target=VALIDATED_TARGET,
                note=f"{times['checked'] - direct:+.0f} ns over handler(args)",
            ),
            Result(
                "dispatch, validated (2-field schema)",
                times["small"],
                direct,
                target=VALIDATED_TARGET,
                note=f"{times['small'] - direct:+.0f} ns over handler(args)",
            ),
            Result(
                "dispatch, validation off",
                times["unchecked"],
                direct,
                target=UNVALIDATED_TARGET,
                note=f"{times['unchecked'] - direct:+.0f} ns over handler(args); {kind} dispatch",
            ),
            Result(
                "  the same, the Python dispatch",
                times["python"],
                direct,
                note="registry.dispatch.slow: what runs without toolreg-speedups",
            ),
            Result(
                "  the least a Python dispatch can cost",
                times["least"],
                direct,
                note="lookup, call, str check, guard; no argument checks (see least_dispatch)",
            ),
            Result(
                "first dispatch after re-registering",
                warm,
                direct,
                target=REREGISTERED_TARGET,
                note=f"same schema, a new dict; min of {cfg.samples}",
            ),
            Result(
                "  the same, compiled-schema cache emptied",
                cold,
                direct,
                note="what every re-registration cost before the cache",
            ),
            Result(
                "validation added per dispatch (5-field schema)",
                added,
                3000.0,
                target=1.0,
                note="value: ns added; floor column: the 3 µs budget",
            ),
            Result(
                "validation added with a schema pattern",
                times["patterned"] - times["unchecked"],
                3000.0,
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
