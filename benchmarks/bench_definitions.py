"""What a host pays for tool definitions every turn, at 1,000 tools, against a direct call.

Run from the repository root::

    .venv/bin/python benchmarks/bench_definitions.py [--quick] [--json PATH]

Two rows, each beside the same-run floor ``handler(args)`` (a direct call of
a trivial handler):

- ``get_definitions repeat``: the call a host makes every turn when nothing
  changed in between;
- ``get_definitions first call after one change``: the first call after one
  tool was registered again (a new entry under the same name), as when a pack
  reloads a tool or an MCP server refreshes one.

The reference registry took 318 µs and 308 µs for these (the targets, in
bench_targets.py). Further rows add the JSON twins and a build from nothing.
The script reports; it never fails. See benchmarks/README.md.
"""

from __future__ import annotations

import sys
import time

from bench_core import always_available, handler, realistic_schema, register_realistic, tool_name
from harness import (
    Config,
    Result,
    parse_run,
    report,
    run_case,
    time_calls,
    time_statements,
)

from toolreg import ToolRegistry

TOOLS = 1_000
CHANGED = tool_name(TOOLS // 2)


def populated() -> ToolRegistry:
    """1,000 tools with realistic schemas, no definition built yet; every fourth has a check_fn.

    A frozen clock keeps the check_fn verdicts cached, so no row re-probes.
    """
    registry = ToolRegistry(clock=lambda: 0.0)
    register_realistic(registry, TOOLS)
    return registry


def bench_repeat(cfg: Config, registry: ToolRegistry, floors: list[float]) -> list[Result]:
    """A call with no change since the last one, in a timeit loop beside the floor."""
    if len(registry.get_definitions()) != TOOLS:
        raise RuntimeError(f"expected {TOOLS} definitions")
    times = time_statements(
        {
            "floor": "handler(args)",
            "list": "registry.get_definitions()",
            "json": "registry.get_definitions_json()",
        },
        {"registry": registry, "handler": handler, "args": {}},
        cfg,
    )
    floors.append(times["floor"])
    floor = times["floor"]
    return [
        Result(
            f"get_definitions repeat, {TOOLS:,} tools",
            times["list"],
            floor,
            note="floor: handler(args), a direct call",
        ),
        Result(
            f"get_definitions_json repeat, {TOOLS:,} tools",
            times["json"],
            floor,
            note="the same, as JSON text",
        ),
    ]


def bench_after_change(cfg: Config, registry: ToolRegistry, floor: float) -> list[Result]:
    """The first call after one tool was registered again, single calls, min kept."""
    schema = realistic_schema(TOOLS // 2)

    def change_one() -> None:
        # A new entry under the same name (and check_fn): one changed tool, a new
        # generation. Untimed.
        registry.register(CHANGED, f"set_{TOOLS // 20:03d}", schema, handler, always_available)

    rows = []
    for label, call in (
        ("get_definitions", registry.get_definitions),
        ("get_definitions_json", registry.get_definitions_json),
    ):
        times = time_calls({"first": call}, change_one, cfg.samples)
        rows.append(
            Result(
                f"{label} first call after one change, {TOOLS:,} tools",
                times["first"],
                floor,
                note=f"min of {cfg.samples} single calls",
            )
        )
    return rows


def bench_from_nothing(cfg: Config, floor: float) -> list[Result]:
    """The first call on a registry that has never built a definition (report only)."""
    registries: list[ToolRegistry] = []
    samples = max(3, cfg.samples // 20)
    fresh = [populated() for _ in range(samples)]

    def prepare() -> None:
        registries.append(fresh.pop())

    times = time_calls({"first": lambda: registries[-1].get_definitions()}, prepare, samples)
    return [
        Result(
            f"get_definitions first call ever, {TOOLS:,} tools",
            times["first"],
            floor,
            note=f"builds every tool; min of {samples} registries",
        )
    ]


def main(argv: list[str] | None = None) -> int:
    args, cfg = parse_run(__doc__.splitlines()[0], argv)
    started = time.perf_counter()
    print(
        f"toolreg definitions benchmark ({'quick' if args.quick else 'full'} run)", file=sys.stderr
    )

    results: list[Result] = []
    registry = populated()
    floors: list[float] = []  # the direct call, timed beside the repeat calls
    run_case(results, "repeat", lambda: bench_repeat(cfg, registry, floors))
    if floors:
        run_case(results, "after one change", lambda: bench_after_change(cfg, registry, floors[0]))
        run_case(results, "from nothing", lambda: bench_from_nothing(cfg, floors[0]))

    report(results, args, cfg, started)
    return 0


if __name__ == "__main__":
    sys.exit(main())
