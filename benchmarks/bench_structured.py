"""What annotations and output schemas cost: dispatch, serve's results, and the entries.

Run from the repository root::

    .venv/bin/python benchmarks/bench_structured.py [--quick]

Every pair is timed interleaved in the same run:

- ``dispatch`` of a tool with annotations and an output schema against the
  same handler registered plain: the dispatch path is the same code, so the
  ratio should be 1 (target <= 1.1x);
- ``toolreg serve``'s result for a tool *without* an output schema (the
  registry lookup and the schema check it now makes) against the bare
  ``call_result`` it made before (target <= 1.1x);
- the same for a tool *with* one (reading the object back from the JSON text
  and checking it against the schema): information, no target;
- the bytes of an entry without annotations against one with them (printed
  below the table).
"""

from __future__ import annotations

import argparse
import dataclasses
import sys

from harness import FULL, QUICK, Result, print_table, time_statements

from toolreg import ToolRegistry, tool
from toolreg._mcp_serve.server_results import StructuredResults, call_result

PARAMETERS = {"type": "object", "properties": {"n": {"type": "integer"}}}
ARGS = {"n": 3}


@dataclasses.dataclass
class Count:
    """A count and its items."""

    total: int
    items: list[str]
    done: bool = False


def handler(args: dict) -> str:
    return '{"total": 3, "items": ["a", "b", "c"], "done": false}'


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repeats: a smoke run")
    cfg = QUICK if parser.parse_args(argv).quick else FULL
    registry = ToolRegistry()
    schema = {"parameters": PARAMETERS}
    registry.register("plain", "bench", schema, handler, validate=False)

    @tool(registry=registry, annotations={"readOnlyHint": True}, validate=False)
    def counted(n: int) -> Count:
        """Count."""
        return Count(3, ["a", "b", "c"])

    registry.register(
        "hinted",
        "bench",
        schema,
        handler,
        validate=False,
        annotations={"readOnlyHint": True},
        output_schema=registry.get_entry("counted").output_schema,
    )
    text = registry.dispatch("hinted", ARGS)
    results = StructuredResults()
    checked = results.call_result(registry.get_entry("hinted"), text)
    if checked.is_error or checked.structured_content is None:
        raise SystemExit(f"the structured result was not accepted: {checked}")
    times = time_statements(
        {
            "plain dispatch": "registry.dispatch('plain', args)",
            "hinted dispatch": "registry.dispatch('hinted', args)",
            "bare result": "call_result(text)",
            "unstructured result": "results.call_result(registry.get_entry('plain'), text)",
            "structured result": "results.call_result(registry.get_entry('hinted'), text)",
        },
        {
            "registry": registry,
            "args": ARGS,
            "text": text,
            "results": results,
            "call_result": call_result,
        },
        cfg,
    )
    plain, described = registry.get_entry("plain"), registry.get_entry("hinted")
    plain_size, described_size = sys.getsizeof(plain), sys.getsizeof(described)
    print_table(
        [
            Result(
                "dispatch: annotated, output schema vs plain",
                times["hinted dispatch"],
                times["plain dispatch"],
                target=1.1,
                note=f"{times['hinted dispatch'] - times['plain dispatch']:+.0f} ns",
            ),
            Result(
                "serve result: no output schema vs before",
                times["unstructured result"],
                times["bare result"],
                target=1.1,
                note=f"{times['unstructured result'] - times['bare result']:+.0f} ns "
                "(lookup and check)",
            ),
            Result(
                "serve result: output schema vs before",
                times["structured result"],
                times["bare result"],
                note=f"{times['structured result'] - times['bare result']:+.0f} ns "
                "(parse and validate)",
            ),
        ]
    )
    # Bytes, not time: printed beside the table rather than in it.
    print(
        f"entry size: {type(plain).__name__} {plain_size} B (no annotations, no output "
        f"schema); {type(described).__name__} {described_size} B"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
