"""Core performance benchmarks for toolreg, reported as ratios against a same-run floor.

Run from the repository root::

    .venv/bin/python benchmarks/bench_core.py [--quick] [--json PATH]

Shared machines are noisy, so every case is measured next to a floor (the
cheapest way to do the same job without toolreg, or the cold path a cache is
meant to avoid) in the same run, and the verdict is on the ratio. The script
reports; it never fails: the exit code is always 0. See benchmarks/README.md.
"""

from __future__ import annotations

import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time
from typing import Any

from harness import (
    Config,
    Result,
    parse_run,
    report,
    run_case,
    time_calls,
    versus_floor,
)

from toolreg import ToolRegistry

# -- fixtures ----------------------------------------------------------------------


def handler(args: dict[str, Any]) -> str:
    return "ok"


def always_available() -> bool:
    return True


def tool_name(i: int) -> str:
    return f"tool_{i:05d}"


def populate(registry: ToolRegistry, count: int) -> None:
    """Register ``count`` trivial tools one by one, 100 per toolset.

    Validation is off here: these rows measure the registry's own dispatch
    machinery; bench_validation.py measures what validation adds.
    """
    schema = {
        "description": "A trivial tool.",
        "parameters": {"type": "object", "properties": {"x": {"type": "string"}}},
    }
    for i in range(count):
        registry.register(tool_name(i), f"set_{i // 100:03d}", schema, handler, validate=False)


def realistic_schema(i: int) -> dict[str, Any]:
    """Five described properties, two of them enums, two required."""
    return {
        "description": (
            f"Tool {i}: reads, filters and summarises records from the workspace "
            "and returns the outcome as a JSON object."
        ),
        "parameters": {
            "type": "object",
            "properties": {
                "path": {
                    "type": "string",
                    "description": "File or directory to work on, relative to the workspace root.",
                },
                "mode": {
                    "type": "string",
                    "enum": ["read", "append", "overwrite"],
                    "description": "How to open the target.",
                },
                "limit": {
                    "type": "integer",
                    "minimum": 1,
                    "maximum": 1000,
                    "description": "Maximum number of records to return.",
                },
                "format": {
                    "type": "string",
                    "enum": ["text", "json", "markdown"],
                    "description": "Shape of the returned summary.",
                },
                "recursive": {
                    "type": "boolean",
                    "default": False,
                    "description": "Whether to descend into subdirectories.",
                },
            },
            "required": ["path", "mode"],
        },
    }


def register_realistic(registry: ToolRegistry, count: int) -> None:
    """``count`` tools with realistic schemas, 10 per toolset; every fourth has a check_fn."""
    for i in range(count):
        check_fn = always_available if i % 4 == 0 else None
        registry.register(
            tool_name(i), f"set_{i // 10:03d}", realistic_schema(i), handler, check_fn
        )


# -- cases -------------------------------------------------------------------------


def bench_register(cfg: Config, count: int = 10_000) -> tuple[Result, ToolRegistry]:
    """Registering ``count`` tools one by one; also returns the populated registry."""
    best = math.inf
    registry = ToolRegistry()
    for _ in range(cfg.register_runs):
        registry = ToolRegistry()
        start = time.perf_counter_ns()
        populate(registry, count)
        best = min(best, time.perf_counter_ns() - start)
    note = f"{best / count / 1e3:.1f} µs/tool on average; min of {cfg.register_runs} run(s)"
    return Result(f"register {count:,} tools one by one", best, note=note), registry


def bench_dispatch(cfg: Config, registries: dict[int, ToolRegistry]) -> list[Result]:
    """``registry.dispatch(name, args)`` against calling the handler directly."""
    results = []
    for size, registry in registries.items():
        namespace = {
            "registry": registry,
            "handler": handler,
            "name": tool_name(size // 2),
            "args": {"path": "notes.txt"},
        }
        if registry.dispatch(namespace["name"], namespace["args"]) != "ok":
            raise RuntimeError("dispatch did not return the handler's result")
        results.append(
            versus_floor(
                f"dispatch @ {size:,} tools",
                "registry.dispatch(name, args)",
                "handler(args)",
                namespace,
                cfg,
            )
        )
    return results


def bench_get_entry(cfg: Config, registries: dict[int, ToolRegistry]) -> list[Result]:
    """``registry.get_entry(name)`` against ``dict.get`` on a dict of the same size."""
    results = []
    for size, registry in registries.items():
        plain = {tool_name(i): registry.get_entry(tool_name(i)) for i in range(size)}
        namespace = {"registry": registry, "plain": plain, "name": tool_name(size // 2)}
        results.append(
            versus_floor(
                f"get_entry @ {size:,} tools",
                "registry.get_entry(name)",
                "plain.get(name)",
                namespace,
                cfg,
                target=2.0,
                floor_label="dict.get",
            )
        )
    return results


def bench_definitions(cfg: Config, count: int = 100) -> list[Result]:
    """Memoised get_definitions / get_definitions_json against a cold build."""
    # A frozen clock keeps check_fn verdicts cached for the whole run, so neither
    # path re-probes: the comparison is about building definitions only.
    registry = ToolRegistry(clock=lambda: 0.0)
    register_realistic(registry, count)
    if len(registry.get_definitions()) != count:
        raise RuntimeError(f"expected {count} definitions")

    def bump_generation() -> None:
        # Every tool registered again, unchanged: new entries, so the next read
        # builds every definition (one tool's change rebuilds that tool only:
        # bench_definitions.py measures that). Untimed.
        register_realistic(registry, count)

    results = []
    for label, call in (
        ("get_definitions", registry.get_definitions),
        ("get_definitions_json", registry.get_definitions_json),
    ):
        times = time_calls({"cold": call, "memoised": call}, bump_generation, cfg.samples)
        results.append(
            Result(
                f"{label} memoised vs cold ({count} tools)",
                times["memoised"],
                times["cold"],
                target=0.05,
                note=f"floor column = cold build; min of {cfg.samples} single calls",
            )
        )
    return results


# Runs in a fresh interpreter per sample. argv[1] is a JSON spec; prints JSON with
# the timed seconds and the stdlib modules first imported during the timed call.
_CHILD = r"""
import importlib, json, sys, time
spec = json.loads(sys.argv[1])
import toolreg
for name in spec["preimport"]:
    try:
        importlib.import_module(name)
    except Exception:
        pass
before = set(sys.modules)
start = time.perf_counter()
if spec["mode"] == "import":
    for name in spec["modules"]:
        importlib.import_module(name)
    imported = spec["modules"]
else:
    imported = toolreg.discover_builtin_tools()
elapsed = time.perf_counter() - start
new = [m for m in sys.modules if m not in before]
stdlib = [m for m in new if m.partition(".")[0] in sys.stdlib_module_names]
print(json.dumps({"seconds": elapsed, "modules": imported, "stdlib": stdlib,
                  "tools": len(toolreg.registry)}))
"""


def _run_child(spec: dict[str, Any], cache_dir: str, pycache: str) -> dict[str, Any]:
    env = dict(os.environ, TOOLREG_CACHE_DIR=cache_dir, PYTHONPYCACHEPREFIX=pycache)
    # Bytecode goes to a private prefix (not the source tree) and is reused by
    # every later child, so imports load .pyc files as an installed package would.
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    proc = subprocess.run(
        [sys.executable, "-c", _CHILD, json.dumps(spec)],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    if proc.returncode != 0:
        raise RuntimeError(f"child ({spec['mode']}) failed:\n{proc.stderr.strip()}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def bench_discovery(cfg: Config) -> list[Result]:
    """discover_builtin_tools() cold and warm against importing the same modules."""
    with tempfile.TemporaryDirectory(prefix="toolreg-bench-") as tmp:
        pycache = os.path.join(tmp, "pycache")
        warm_cache = os.path.join(tmp, "warm-cache")
        # Two probes. The first learns which modules discovery imports, fills the
        # warm cache and compiles bytecode for every later child; the second
        # learns which stdlib modules those modules pull in (by plain import, so
        # discovery's own cold-path imports are not counted).
        modules = _run_child({"mode": "discover", "preimport": []}, warm_cache, pycache)["modules"]
        if not modules:
            raise RuntimeError("discover_builtin_tools() imported no modules")
        stdlib = _run_child(
            {"mode": "import", "modules": modules, "preimport": []}, warm_cache, pycache
        )["stdlib"]
        base = {"modules": modules, "preimport": stdlib}

        def run(mode: str, cache_dir: str) -> dict[str, Any]:
            return _run_child({**base, "mode": mode}, cache_dir, pycache)

        def cold_cache() -> str:
            return tempfile.mkdtemp(prefix="cold-", dir=tmp)

        samples: dict[str, list[float]] = {"import": [], "warm": [], "cold": []}
        mismatches: set[str] = set()
        extra_stdlib: dict[str, set[str]] = {"import": set(), "warm": set(), "cold": set()}
        tools = 0
        for i in range(cfg.subprocess_samples + 1):  # the first round is a warm-up
            # Interleaved, so drift on the machine affects all three alike.
            for variant, cache_dir in (
                ("import", warm_cache),  # plain imports never read the cache
                ("warm", warm_cache),
                ("cold", cold_cache()),
            ):
                out = run(variant if variant == "import" else "discover", cache_dir)
                if out["modules"] != modules:
                    mismatches.add(variant)
                extra_stdlib[variant].update(out["stdlib"])
                if i:
                    samples[variant].append(out["seconds"] * 1e9)
                tools = out["tools"]

    floor = statistics.median(samples["import"])
    warm = statistics.median(samples["warm"])
    cold = statistics.median(samples["cold"])
    note = (
        f"{len(modules)} modules, {tools} tools; {len(stdlib)} stdlib modules "
        f"pre-imported; median of {cfg.subprocess_samples} fresh interpreters"
    )
    if mismatches:
        note += f"; WARNING module list changed during run ({', '.join(sorted(mismatches))})"

    def imports_note(variant: str) -> str:
        extra = sorted(extra_stdlib[variant])
        return f"; also imported stdlib {', '.join(extra)}" if extra else ""

    return [
        Result(
            "discovery warm vs plain import",
            warm,
            floor,
            target=1.1,
            added_ns=warm - floor,
            note=f"{(warm - floor) / 1e3:+.0f} µs; {note}{imports_note('warm')}",
        ),
        Result(
            "discovery cold vs plain import",
            cold,
            floor,
            added_ns=cold - floor,
            note=f"{(cold - floor) / 1e3:+.0f} µs; AST scan + cache write{imports_note('cold')}",
        ),
    ]


# -- reporting ---------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    args, cfg = parse_run(__doc__.splitlines()[0], argv)
    started = time.perf_counter()
    print(f"toolreg core benchmarks ({'quick' if args.quick else 'full'} run)", file=sys.stderr)

    results: list[Result] = []
    registries: dict[int, ToolRegistry] = {}

    def register_and_build() -> list[Result]:
        small = ToolRegistry()
        populate(small, 100)
        registries[100] = small
        result, registries[10_000] = bench_register(cfg)
        return [result]

    run_case(results, "register", register_and_build)
    run_case(results, "dispatch", lambda: bench_dispatch(cfg, registries))
    run_case(results, "get_entry", lambda: bench_get_entry(cfg, registries))
    run_case(results, "definitions", lambda: bench_definitions(cfg))
    run_case(results, "discovery", lambda: bench_discovery(cfg))
    results.append(results.pop(0))  # the report-only registration row goes last

    report(results, args, cfg, started)
    return 0


if __name__ == "__main__":
    sys.exit(main())
