"""Write-path benchmarks: register, batches, writers among readers, memory per tool.

Run from the repository root::

    .venv/bin/python benchmarks/bench_writes.py [--quick] [--json PATH]

Each row gives its time and, beside it, a direct handler call measured in
the same run (the floor). The reference registry took 2.4 µs for an overwrite,
24 ms for 10,000 tools one by one, 255 B a tool, and let a writer among 8
reading threads make 33,000 writes/s. The targets live in bench_targets.py;
this script reports, and its exit code is always 0.
"""

from __future__ import annotations

import gc
import platform
import sys
import threading
import time
import tracemalloc
from typing import Any

from harness import QUICK, Config, Result, parse_run, report, run_case, time_statements

from toolreg import ToolRegistry

TOOLS = 1_000
BATCH = 10_000


def handler(args: dict[str, Any]) -> str:
    return "ok"


def schema(name: str) -> dict[str, Any]:
    return {
        "name": name,
        "description": f"Tool {name}",
        "parameters": {
            "type": "object",
            "properties": {"path": {"type": "string"}, "limit": {"type": "integer"}},
            "required": ["path"],
        },
    }


def filled(count: int) -> tuple[ToolRegistry, list[str], list[dict[str, Any]]]:
    registry = ToolRegistry()
    names = [f"tool_{i:05d}" for i in range(count)]
    schemas = [schema(name) for name in names]
    for i, name in enumerate(names):
        registry.register(name, f"set{i // 100}", schemas[i], handler)
    return registry, names, schemas


def floor_ns(cfg: Config) -> float:
    args: dict[str, Any] = {}
    return time_statements({"floor": "handler(args)"}, {"handler": handler, "args": args}, cfg)[
        "floor"
    ]


def bench_register(cfg: Config, floor: float) -> list[Result]:
    registry, names, schemas = filled(TOOLS)
    loops = max(200, int(cfg.slice_s * 50_000))
    best = float("inf")
    for _ in range(cfg.repeat):
        gc.disable()
        start = time.perf_counter_ns()
        for i in range(loops):
            k = i % TOOLS
            registry.register(names[k], f"set{k // 100}", schemas[k], handler)
        best = min(best, (time.perf_counter_ns() - start) / loops)
        gc.enable()
    return [
        Result(
            f"register, overwrite @ {TOOLS:,} tools",
            best,
            floor,
            note="per call; reference 2.4 µs",
        )
    ]


def _time_fill(count: int, batched: bool, runs: int) -> float:
    names = [f"tool_{i:05d}" for i in range(count)]
    specs = [
        {"name": n, "toolset": f"set{i // 100}", "schema": schema(n), "handler": handler}
        for i, n in enumerate(names)
    ]
    best = float("inf")
    for _ in range(runs):
        registry = ToolRegistry()
        gc.disable()
        start = time.perf_counter_ns()
        if batched:
            registry.register_many(specs)
        else:
            for spec in specs:
                registry.register(**spec)
        best = min(best, time.perf_counter_ns() - start)
        gc.enable()
        assert len(registry) == count
    return best


def bench_fill(cfg: Config, floor: float) -> list[Result]:
    runs = max(1, cfg.register_runs)
    return [
        Result(
            f"register_many, {BATCH:,} tools",
            _time_fill(BATCH, True, runs),
            floor,
            note="one call, a list of 10,000 specs",
        ),
        Result(
            f"register one by one, {BATCH:,} tools",
            _time_fill(BATCH, False, runs),
            floor,
            note="reference 24 ms",
        ),
    ]


def _readers(registry: ToolRegistry, names: list[str], stop: threading.Event, counts: list[int]):
    def read(slot: int) -> None:
        dispatch, args, done = registry.dispatch, {"path": "x"}, 0
        while not stop.is_set():
            for name in names[:50]:
                dispatch(name, args)
            done += 50
        counts[slot] = done

    return [threading.Thread(target=read, args=(i,)) for i in range(8)]


def _reader_rate(registry: ToolRegistry, names: list[str], seconds: float, write: bool) -> tuple:
    stop, counts = threading.Event(), [0] * 8
    threads = _readers(registry, names, stop, counts)
    for thread in threads:
        thread.start()
    schemas = [schema(n) for n in names]
    writes, start = 0, time.perf_counter()
    if not write:
        time.sleep(seconds)  # the GIL is the readers' alone
    while write and time.perf_counter() - start < seconds:
        k = writes % TOOLS
        registry.register(names[k], f"set{k // 100}", schemas[k], handler)
        writes += 1
    elapsed = time.perf_counter() - start
    stop.set()
    for thread in threads:
        thread.join()
    return sum(counts) / elapsed, writes / elapsed


def bench_contention(cfg: Config, floor: float) -> list[Result]:
    registry, names, _ = filled(TOOLS)
    # The first dispatch makes what dispatch keeps (untimed): both runs then start warm.
    registry.dispatch(names[0], {"path": "x"})
    seconds = 0.5 if cfg is QUICK else 1.0
    # Alone and with the writer take turns, best of each: a busy moment on a
    # shared machine then lowers one sample, not one side of the ratio.
    solo = shared = writes = 0.0
    for _ in range(1 if cfg is QUICK else 3):
        solo = max(solo, _reader_rate(registry, names, seconds, write=False)[0])
        rates = _reader_rate(registry, names, seconds, write=True)
        shared, writes = max(shared, rates[0]), max(writes, rates[1])
    return [
        Result(
            "writer among 8 reading threads (time per write)",
            1e9 / writes,
            floor,
            note=f"{writes:,.0f} writes/s; reference 33k/s",
        ),
        Result(
            "readers' time per call with a writer / alone",
            1e9 / shared,
            1e9 / solo,
            note=f"readers keep {shared / solo:.2f}x of their solo rate",
        ),
    ]


def memory_per_tool(count: int = 10_000) -> float:
    names = [f"tool_{i:05d}" for i in range(count)]
    shared = schema("shared")
    shared.pop("name")
    registry = ToolRegistry()
    gc.collect()
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    for i, name in enumerate(names):
        registry.register(name, f"set{i // 100}", shared, handler)
    gc.collect()
    used = tracemalloc.get_traced_memory()[0] - before
    tracemalloc.stop()
    assert len(registry) == count
    return used / count


def main(argv: list[str] | None = None) -> None:
    started = time.perf_counter()
    args, cfg = parse_run(__doc__.splitlines()[0], argv)
    print(f"Python {sys.version.split()[0]} on {platform.platform()}", file=sys.stderr)
    floor = floor_ns(cfg)
    results: list[Result] = []
    run_case(results, "register", lambda: bench_register(cfg, floor))
    run_case(results, "fill", lambda: bench_fill(cfg, floor))
    run_case(results, "contention", lambda: bench_contention(cfg, floor))
    per_tool = memory_per_tool()
    report(results, args, cfg, started, {"memory_per_tool_bytes": per_tool})
    print(f"memory per registered tool: {per_tool:.0f} B (reference 255 B)")


if __name__ == "__main__":
    main()
