"""The timing harness every benchmarks/bench_*.py script shares.

Timing (``time_statements``, ``time_calls``, ``versus_floor``), the row they
produce (``Result``, with its ratio against a same-run floor and its verdict)
and the report (``print_table``, ``write_json``, ``run_case``). Run sizes come
in a ``Config``: ``FULL`` for a measurement, ``QUICK`` for a smoke run. See
benchmarks/README.md.
"""

from __future__ import annotations

import argparse
import gc
import json
import math
import platform
import sys
import time
import timeit
import traceback
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any


@dataclass(frozen=True)
class Config:
    repeat: int  # interleaved timeit repeats per statement (min is kept)
    slice_s: float  # target duration of one timeit repeat
    samples: int  # single-shot samples for get_definitions (min is kept)
    subprocess_samples: int  # fresh interpreters per discovery variant (median is kept)
    register_runs: int  # runs of "register 10,000 tools" (min is kept)


FULL = Config(repeat=9, slice_s=0.02, samples=200, subprocess_samples=15, register_runs=3)
QUICK = Config(repeat=3, slice_s=0.005, samples=30, subprocess_samples=4, register_runs=1)


@dataclass
class Result:
    case: str
    value_ns: float | None
    floor_ns: float | None = None
    target: float | None = None  # the ratio must be <= target; None means report only
    added_ns: float | None = None  # value - floor, where an absolute overhead makes sense
    note: str = ""
    error: str | None = None

    @property
    def ratio(self) -> float | None:
        if self.value_ns is None or not self.floor_ns:
            return None
        return self.value_ns / self.floor_ns

    @property
    def verdict(self) -> str:
        if self.error is not None:
            return "ERROR"
        if self.target is None or self.ratio is None:
            return "info"
        return "PASS" if self.ratio <= self.target else "MISS"


# -- shared timing helpers -------------------------------------------------------


def _calibrate(timer: timeit.Timer, slice_s: float) -> int:
    """A loop count for which one ``timer.timeit(number)`` takes about ``slice_s``."""
    number = 1
    while True:
        elapsed = timer.timeit(number)
        if elapsed >= slice_s / 10:
            return max(1, round(number * slice_s / elapsed))
        number *= 10


def time_statements(
    stmts: dict[str, str], namespace: dict[str, Any], cfg: Config
) -> dict[str, float]:
    """Min-of-N nanoseconds per execution of each statement.

    Repeats are interleaved (a, b, a, b, ...) so a noisy moment on the machine
    hits every statement alike instead of skewing one of them. ``timeit`` turns
    the garbage collector off while it times, and its loop overhead (a few ns)
    is included in every figure alike.
    """
    timers = {key: timeit.Timer(stmt, globals=namespace) for key, stmt in stmts.items()}
    numbers = {key: _calibrate(timer, cfg.slice_s) for key, timer in timers.items()}
    best = dict.fromkeys(timers, math.inf)
    for _ in range(cfg.repeat):
        for key, timer in timers.items():
            per_op = timer.timeit(numbers[key]) / numbers[key] * 1e9
            best[key] = min(best[key], per_op)
    return best


def time_calls(
    calls: dict[str, Callable[[], object]], prepare: Callable[[], object], samples: int
) -> dict[str, float]:
    """Min-of-N nanoseconds for single calls, after an untimed ``prepare()`` each sample.

    Within a sample the calls run in the given order, so a later call can
    measure the state an earlier one left behind (e.g. a warm memo).
    """
    best = dict.fromkeys(calls, math.inf)
    gc.collect()
    gc_was_enabled = gc.isenabled()
    gc.disable()
    try:
        for _ in range(samples):
            prepare()
            for key, call in calls.items():
                start = time.perf_counter_ns()
                call()
                best[key] = min(best[key], time.perf_counter_ns() - start)
    finally:
        if gc_was_enabled:
            gc.enable()
    return best


def versus_floor(
    case: str,
    stmt: str,
    floor: str,
    namespace: dict[str, Any],
    cfg: Config,
    *,
    target: float | None = None,
    floor_label: str | None = None,
) -> Result:
    """Time ``stmt`` against ``floor``, interleaved; the note gives the ns added per call."""
    times = time_statements({"floor": floor, "value": stmt}, namespace, cfg)
    added = times["value"] - times["floor"]
    return Result(
        case,
        times["value"],
        times["floor"],
        target=target,
        added_ns=added,
        note=f"{added:+.0f} ns per call over {floor_label or floor}",
    )


def format_ns(ns: float | None) -> str:
    if ns is None:
        return "-"
    if ns < 1_000:
        return f"{ns:.1f} ns"
    if ns < 10_000_000:
        return f"{ns / 1e3:.1f} µs"
    return f"{ns / 1e6:.1f} ms"


def print_table(results: list[Result]) -> None:
    rows = [("case", "value", "floor", "ratio", "target", "verdict", "note")]
    for r in results:
        rows.append(
            (
                r.case,
                format_ns(r.value_ns),
                format_ns(r.floor_ns),
                "-" if r.ratio is None else f"{r.ratio:.3f}x",
                "report" if r.target is None else f"<= {r.target:g}x",
                r.verdict,
                r.error or r.note,
            )
        )
    widths = [max(len(row[col]) for row in rows) for col in range(6)]
    for index, row in enumerate(rows):
        cells = [row[0].ljust(widths[0])]
        cells += [cell.rjust(width) for cell, width in zip(row[1:6], widths[1:], strict=True)]
        print("  ".join(cells) + "  " + row[6])
        if index == 0:
            print("-" * (sum(widths) + 2 * 6 + len("note")))


def write_json(path: str, results: list[Result], meta: dict[str, Any]) -> None:
    payload = {
        "meta": meta,
        "results": [
            {**asdict(r), "ratio": r.ratio, "verdict": r.verdict, "unit": "ns"} for r in results
        ],
    }
    with open(path, "w", encoding="utf-8") as f:
        json.dump(payload, f, indent=2, ensure_ascii=False)
        f.write("\n")


def run_case(results: list[Result], name: str, fn: Callable[[], list[Result]]) -> None:
    """Run one case; a crash becomes an ERROR row instead of ending the report."""
    print(f"  {name} ...", file=sys.stderr, flush=True)
    try:
        results.extend(fn())
    except Exception as exc:
        traceback.print_exc(file=sys.stderr)
        results.append(Result(name, None, error=f"{type(exc).__name__}: {exc}"))


def parse_run(
    description: str,
    argv: list[str] | None,
    sizes: tuple[Any, Any] = (FULL, QUICK),
    options: Callable[[argparse.ArgumentParser], None] | None = None,
) -> tuple[argparse.Namespace, Any]:
    """The ``--quick`` and ``--json PATH`` options every script takes, and the run size.

    ``sizes`` is a script's own (full, quick) pair of run sizes, when it has one;
    ``options`` adds the script's own options to the parser.
    """
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--quick", action="store_true", help="fewer repeats: a smoke run")
    parser.add_argument("--json", metavar="PATH", help="also write the figures as JSON")
    if options is not None:
        options(parser)
    args = parser.parse_args(argv)
    full, quick = sizes
    return args, (quick if args.quick else full)


def report(
    results: list[Result],
    args: argparse.Namespace,
    cfg: Any,
    started: float,
    meta: dict[str, Any] | None = None,
) -> None:
    """The table on stdout, the interpreter and run time, and the JSON file when asked.

    ``cfg`` is the run size (a dataclass); ``meta`` adds a script's own facts to the JSON.
    """
    elapsed = time.perf_counter() - started
    print()
    print_table(results)
    print(f"\n{sys.implementation.name} {platform.python_version()}, {elapsed:.1f} s")
    if args.json:
        meta = {
            "python": platform.python_version(),
            "implementation": sys.implementation.name,
            "platform": platform.platform(),
            "quick": args.quick,
            "config": asdict(cfg),
            "elapsed_s": round(elapsed, 2),
            "timestamp": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
            **(meta or {}),
        }
        try:
            write_json(args.json, results, meta)
        except OSError as exc:
            print(f"cannot write {args.json}: {exc}", file=sys.stderr)
