"""Every speed target of the registry in one table, from the scripts that measure them.

Run from the repository root::

    .venv/bin/python benchmarks/bench_targets.py [--quick] [--runs N] [--json PATH]

Runs ``bench_writes.py``, ``bench_validation.py``, ``bench_definitions.py``,
``bench_loading.py`` and ``bench_startup.py`` one after another, each in a
fresh interpreter with ``--json``, and prints the rows that carry a target
(and the ones that explain a target), each with its ratio, target and
verdict. Every ratio is against a floor its own script measured in the same
run, so the rows stay comparable on a noisy machine. With ``--runs N`` the
scripts run N times in rounds (each script once per round), and each row
shows its median run, with the range of its N ratios in the note: one busy
moment then moves a row's range, not its verdict. A script that fails gives
an ERROR row naming it; the others still run. The exit code is always 0.
See benchmarks/README.md.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from harness import Result, parse_run, report

HERE = Path(__file__).resolve().parent

#: Each script and the rows of it that this table shows, in this order.
ROWS: list[tuple[str, list[str]]] = [
    (
        "bench_writes.py",
        [
            "register, overwrite @ 1,000 tools",
            "register_many, 10,000 tools",
            "writer among 8 reading threads (time per write)",
            "readers' time per call with a writer / alone",
        ],
    ),
    (
        "bench_validation.py",
        [
            "first dispatch after re-registering",
            "dispatch, validated (5-field schema)",
            "dispatch, validated (2-field schema)",
            "dispatch, validation off",
            "  the least a Python dispatch can cost",
        ],
    ),
    (
        "bench_definitions.py",
        [
            "get_definitions repeat, 1,000 tools",
            "get_definitions first call after one change, 1,000 tools",
        ],
    ),
    (
        "bench_loading.py",
        ["pluggy load_setuptools_entrypoints", "toolreg load_plugins, warm cache"],
    ),
    (
        "bench_startup.py",
        ["import toolreg", "toolreg list --json (built-ins only)"],
    ),
]

#: Bytes per registered tool (``bench_writes.py`` reports it in its JSON meta).
MEMORY_TARGET = 300


def run_script(script: str, quick: bool, out: Path) -> dict | None:
    """The script's JSON report, or None when it failed (its stderr is shown as it runs)."""
    argv = [sys.executable, str(HERE / script), "--json", str(out)] + (["--quick"] if quick else [])
    print(f"== {script}", file=sys.stderr, flush=True)
    done = subprocess.run(argv, cwd=HERE.parent, stdout=subprocess.DEVNULL, check=False)
    if done.returncode != 0 or not out.exists():
        return None
    return json.loads(out.read_text(encoding="utf-8"))


def rows_of(script: str, wanted: list[str], payload: dict | None) -> list[Result]:
    if payload is None:  # one row per case, so that runs line up row for row
        failed = f"{script} failed: see its output above"
        return [Result(case, None, error=failed) for case in wanted]
    found = {row["case"]: row for row in payload["results"]}
    rows = []
    for case in wanted:
        row = found.get(case)
        if row is None:
            rows.append(Result(case, None, error=f"no such row in {script}"))
            continue
        rows.append(
            Result(
                case,
                row["value_ns"],
                row["floor_ns"],
                target=row["target"],
                note=f"{script}: {row['error'] or row['note']}",
                error=row["error"],
            )
        )
    return rows


def _margin(result: Result) -> float:
    ratio = result.ratio or 0.0
    return ratio / result.target if result.target else ratio


def median_rows(runs: list[list[Result]]) -> list[Result]:
    """Per row, the median run, noting the range of the runs' ratios.

    Runs are ordered by ratio over target, so a row whose target is measured in
    each run (loading, against pluggy's own ratio) takes the run of median
    margin, and its verdict is that run's. An errored run counts only when
    every run errored: its row is then the first.
    """
    if len(runs) == 1:
        return runs[0]
    merged = []
    for samples in zip(*runs, strict=True):
        timed = sorted((r for r in samples if r.ratio is not None), key=_margin)
        if not timed:
            merged.append(samples[0])
            continue
        middle = timed[(len(timed) - 1) // 2]  # the lower median: a real run, not an average
        ratios = [r.ratio or 0.0 for r in timed]
        low, high = min(ratios), max(ratios)
        note = f"median of {len(timed)} runs, {low:.2f}x-{high:.2f}x; {middle.note}"
        merged.append(
            Result(middle.case, middle.value_ns, middle.floor_ns, middle.target, note=note)
        )
    return merged


def main(argv: list[str] | None = None) -> int:
    def runs_option(parser: argparse.ArgumentParser) -> None:
        parser.add_argument("--runs", type=int, default=1, help="rounds of every script (median)")

    args, cfg = parse_run(__doc__.splitlines()[0], argv, options=runs_option)
    if args.runs < 1:
        raise SystemExit("--runs must be 1 or more")
    started = time.perf_counter()
    runs: list[list[Result]] = []
    memory: list[float] = []
    with tempfile.TemporaryDirectory(prefix="toolreg-bench-targets-") as tmp:
        for _ in range(args.runs):
            results: list[Result] = []
            for script, wanted in ROWS:
                payload = run_script(script, args.quick, Path(tmp) / f"{script}.json")
                results += rows_of(script, wanted, payload)
                if payload is not None and script == "bench_writes.py":
                    memory.append(payload["meta"].get("memory_per_tool_bytes"))
            runs.append(results)
    memory_bytes = statistics.median(memory) if memory else None
    report(median_rows(runs), args, cfg, started, {"memory_per_tool_bytes": memory_bytes})
    if memory_bytes is None:
        print("memory per registered tool: not measured (bench_writes.py failed)")
    else:
        verdict = "PASS" if memory_bytes <= MEMORY_TARGET else "MISS"
        print(
            f"memory per registered tool: {memory_bytes:.0f} B "
            f"(target <= {MEMORY_TARGET} B) {verdict}"
        )
    return 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    sys.exit(main())
