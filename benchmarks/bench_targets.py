"""toolreg's speed targets in one table, in user terms, from the scripts that measure them.

Run from the repository root::

    .venv/bin/python benchmarks/bench_targets.py [--quick] [--runs N] [--json PATH]

Runs bench_writes.py, bench_validation.py, bench_definitions.py, bench_loading.py
and bench_startup.py in fresh interpreters, N rounds, and judges each row of
``TARGETS`` on its median run. ``results_table.py`` writes the JSON into
benchmarks/README.md. The exit code is always 0.
"""

from __future__ import annotations

import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness import parse_run

HERE = Path(__file__).resolve().parent

#: The date of the pure-Python figures the "1.5x" targets are drawn from, and
#: that day's floors: a direct handler call, and ``python -c pass``.
BASELINE_DATE = "2026-12-04"
BASELINE_FLOORS = {"direct_call_ns": 20.5, "python_c_pass_ns": 10.5e6}


def two_figures(x: float) -> float:
    """``x`` rounded to two significant figures: a limit a person can read."""
    return float(f"{x:.2g}")


@dataclass(frozen=True)
class Target:
    """One row of the table: a script's row, how it reads, and its limit.

    ``kind`` says what the figure is:

    - ``time``: the row's time, at most ``limit`` ns;
    - ``over``: the time the row adds to its floor, at most ``limit`` ns;
    - ``rate``: calls a second (1 s over the row's time), at least ``limit``;
    - ``keep``: the floor's time over the row's (a share of a solo rate), at least ``limit``;
    - ``ratio``: the row's time over its floor's, at most ``limit``;
    - ``beats``: the row's time, at most the time of the row ``versus`` in the same run;
    - ``bytes``: the script's ``memory_per_tool_bytes``, at most ``limit``.

    No ``limit`` (and no ``versus``) makes the row information only.
    """

    label: str
    script: str
    case: str
    kind: str
    limit: float | None = None
    source: str = ""
    floor: str = ""  # what the floor is, in words, for over/ratio/keep rows
    versus: str = ""  # for "beats": the other row's case
    unit: str = ""  # for "rate": what is counted


def reference(label: str, script: str, case: str, kind: str, limit: float, **kw: Any) -> Target:
    """A target at the reference registry's own figure: toolreg must stay ahead of it."""
    return Target(label, script, case, kind, limit, source="reference registry", **kw)


def today(label: str, script: str, case: str, kind: str, figure: float, **kw: Any) -> Target:
    """A target at 1.5x toolreg's pure-Python figure of BASELINE_DATE, two figures."""
    shown = show(kind, figure, kw.get("unit", ""), limit=kind != "keep")
    if kind == "keep":  # a share kept: at least today's share over 1.5
        limit, source = two_figures(figure / 1.5), f"{shown} ({BASELINE_DATE}) / 1.5"
    else:
        limit, source = two_figures(figure * 1.5), f"1.5x {shown} ({BASELINE_DATE})"
    return Target(label, script, case, kind, limit, source=source, **kw)


def words_ns(ns: float, limit: bool = False) -> str:
    """Nanoseconds in words: 382 ns, 2.00 µs, 39.3 ms; a limit as written (2.4 µs, 100 ms)."""
    for unit, scale in (("ms", 1e6), ("µs", 1e3), ("ns", 1.0)):
        if abs(ns) >= scale or unit == "ns":
            x = ns / scale
            break
    if limit:
        return f"{x:g} {unit}"
    digits = 0 if abs(x) >= 100 else 1 if abs(x) >= 10 else 2
    return f"{x:.{digits}f} {unit}"


def show(kind: str, figure: float, unit: str = "", limit: bool = False) -> str:
    """A figure of ``kind`` in words: 2.00 µs, 33,000 writes/s, 0.67x, +1.5 ms, 234 B."""
    if kind == "rate":
        return f"{figure:,.0f} {unit}/s"
    if kind in ("keep", "ratio"):
        return f"{figure:g}x" if limit else f"{figure:.2f}x"
    if kind == "bytes":
        return f"{figure:.0f} B"
    if kind == "over":
        return ("+" if figure >= 0 else "-") + words_ns(abs(figure), limit)
    return words_ns(figure, limit)


W, V, D = "bench_writes.py", "bench_validation.py", "bench_definitions.py"
L, S = "bench_loading.py", "bench_startup.py"
CASE_10K = "register one by one, 10,000 tools"

#: Every target, in the table's order. Pure-Python figures of BASELINE_DATE
#: (medians of three runs on a shared 2-core VM, Python 3.11) feed ``today``.
TARGETS: list[Target] = [
    reference("register a tool again (1,000 tools)", W, "register, overwrite @ 1,000 tools",
              "time", 2_400.0),
    today("register 10,000 tools one by one", W, CASE_10K, "time", 69.3e6),
    today("register_many of 10,000 tools", W, "register_many, 10,000 tools", "time", 39.3e6),
    reference("a writer among 8 dispatching threads", W,
              "writer among 8 reading threads (time per write)", "rate", 33_000.0, unit="writes"),
    today("the 8 readers' dispatch rate, kept", W, "readers' time per call with a writer / alone",
          "keep", 1.00, floor="their rate alone"),
    today("memory per registered tool", W, "", "bytes", 234.0),
    today("dispatch, 5-field schema validated", V, "dispatch, validated (5-field schema)",
          "time", 382.0),
    today("dispatch, 2-field schema validated", V, "dispatch, validated (2-field schema)",
          "time", 185.0),
    Target("dispatch, validation off", V, "dispatch, validation off", "over",
           source="information: what dispatch adds", floor="handler(args)"),
    Target("get_entry", V, "get_entry", "ratio", 2.0, source="a read may cost 2 direct calls",
           floor="a direct call"),
    today("first dispatch after re-registering", V, "first dispatch after re-registering",
          "time", 6_380.0),
    reference("get_definitions, 1,000 tools, unchanged", D, "get_definitions repeat, 1,000 tools",
              "time", 318e3),
    reference("get_definitions, 1,000 tools, one changed", D,
              "get_definitions first call after one change, 1,000 tools", "time", 308e3),
    Target("load 50 installed packs", L, "toolreg load_plugins, warm cache", "beats",
           source="pluggy, same run", versus="pluggy load_setuptools_entrypoints"),
    Target("import toolreg", S, "import toolreg", "over", 6e6,
           source="1.6x python -c pass (10.5 ms), as before", floor="python -c pass"),
    today("toolreg list --json, a whole process", S, "toolreg list --json (built-ins only)",
          "time", 52.4e6),
]  # fmt: skip


def target_text(t: Target) -> str:
    if t.kind == "beats":
        return f"<= {t.versus.split()[0]}'s time"
    if t.limit is None:
        return "-"
    if t.kind == "over":
        return f"<= {t.floor} + {words_ns(t.limit, limit=True)}"
    if t.kind == "ratio":
        return f"<= {t.limit:g}x {t.floor}"
    if t.kind == "keep":
        return f">= {t.limit:g}x {t.floor}"
    return ("<= " if t.kind != "rate" else ">= ") + show(t.kind, t.limit, t.unit, limit=True)


def judge(t: Target, rows: dict[str, dict[str, Any]], meta: dict[str, Any]) -> dict[str, Any]:
    """One run's row for ``t``: its figure, the words for it, its margin and verdict.

    ``margin`` is the figure over the limit, turned so that <= 1 passes.
    """
    out: dict[str, Any] = {"label": t.label, "script": t.script, "case": t.case, "kind": t.kind}
    out["unit"] = t.unit
    out.update(target=target_text(t), source=t.source or "-", value_ns=None, floor_ns=None)
    out["note"] = ""
    if t.kind == "bytes":
        figure = meta.get("memory_per_tool_bytes")
        if figure is None:
            why = f"no memory figure from {t.script}"
            return {**out, "verdict": "ERROR", "measured": "-", "note": why}
        margin = figure / t.limit if t.limit else None
        return {**out, "figure": figure, "margin": margin, "measured": show("bytes", figure)}
    row = rows.get(t.case)
    if row is None or row.get("value_ns") is None:
        why = row["error"] if row else f"no row {t.case!r} in {t.script}"
        return {**out, "verdict": "ERROR", "measured": "-", "note": why}
    value, floor = row["value_ns"], row.get("floor_ns")
    out.update(value_ns=value, floor_ns=floor, note=row.get("note") or "")
    limit = t.limit
    if t.kind == "time":
        figure, measured = value, words_ns(value)
    elif t.kind == "over":
        figure = value - floor
        measured = f"{words_ns(value)}, {show('over', figure)} over {t.floor}"
    elif t.kind == "rate":
        figure = 1e9 / value
        measured = show("rate", figure, t.unit)
    elif t.kind == "keep":
        figure = floor / value
        measured = f"{figure:.2f}x {t.floor}"
    elif t.kind == "ratio":
        figure = value / floor
        measured = f"{words_ns(value)}, {figure:.2f}x {t.floor}"
    else:  # beats
        other = rows.get(t.versus, {}).get("value_ns")
        if other is None:
            return {**out, "verdict": "ERROR", "measured": "-", "note": f"no row {t.versus!r}"}
        figure, limit = value, other
        measured = f"{words_ns(value)}, {value / other:.2f}x {t.versus.split()[0]}'s"
    if limit is None:
        margin = None
    elif t.kind in ("rate", "keep"):
        margin = limit / figure
    else:
        margin = figure / limit
    return {**out, "figure": figure, "margin": margin, "measured": measured}


def median_run(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """Of one row's runs, the run of median margin (the lower middle one), with the range.

    An errored run counts only when every run errored. The verdict is that run's.
    """
    timed = [r for r in runs if "figure" in r]
    if not timed:
        return runs[0]
    timed.sort(key=lambda r: r["margin"] if r["margin"] is not None else r["figure"])
    middle = dict(timed[(len(timed) - 1) // 2])
    if middle["margin"] is None:
        middle["verdict"] = "info"
    else:
        middle["verdict"] = "PASS" if middle["margin"] <= 1.0 else "MISS"
    if len(runs) > 1:
        figures = sorted(r["figure"] for r in timed)
        low, high = (show(middle["kind"], f, middle["unit"]) for f in (figures[0], figures[-1]))
        spread = f"median of {len(timed)} runs, {low} to {high}"
        middle["note"] = "; ".join(filter(None, (spread, middle["note"])))
    return middle


def run_script(script: str, quick: bool, out: Path) -> dict[str, Any] | None:
    """The script's JSON report, or None when it failed (its stderr is shown as it runs)."""
    argv = [sys.executable, str(HERE / script), "--json", str(out)] + (["--quick"] if quick else [])
    print(f"== {script}", file=sys.stderr, flush=True)
    out.unlink(missing_ok=True)  # an earlier round's report is not this one's
    done = subprocess.run(argv, cwd=HERE.parent, stdout=subprocess.DEVNULL, check=False)
    if done.returncode != 0 or not out.exists():
        return None
    return json.loads(out.read_text(encoding="utf-8"))


def one_round(quick: bool, tmp: Path) -> list[dict[str, Any]]:
    judged = []
    for script in dict.fromkeys(t.script for t in TARGETS):
        payload = run_script(script, quick, tmp / f"{script}.json")
        if payload is None:
            payload = {"meta": {}, "results": []}
            failed = {"value_ns": None, "error": f"{script} failed: see its output above"}
            rows = {t.case: failed for t in TARGETS if t.script == script}
        else:
            rows = {row["case"]: row for row in payload["results"]}
        judged += [judge(t, rows, payload["meta"]) for t in TARGETS if t.script == script]
    order = {t.label: i for i, t in enumerate(TARGETS)}
    return sorted(judged, key=lambda row: order[row["label"]])


def print_table(rows: list[dict[str, Any]]) -> None:
    cells = [("row", "measured", "target", "verdict", "target from", "note")]
    cells += [(r["label"], r["measured"], r["target"], r["verdict"], r["source"], r["note"])
              for r in rows]  # fmt: skip
    widths = [max(len(row[col]) for row in cells) for col in range(5)]
    for index, row in enumerate(cells):
        print("  ".join(c.ljust(w) for c, w in zip(row[:5], widths, strict=True)) + "  " + row[5])
        if index == 0:
            print("-" * (sum(widths) + 2 * 5 + len("note")))


def main(argv: list[str] | None = None) -> int:
    def runs_option(parser: Any) -> None:
        parser.add_argument("--runs", type=int, default=1, help="rounds of every script (median)")

    args, _cfg = parse_run(__doc__.splitlines()[0], argv, options=runs_option)
    if args.runs < 1:
        raise SystemExit("--runs must be 1 or more")
    started = time.perf_counter()
    runs, loads = [], []
    with tempfile.TemporaryDirectory(prefix="toolreg-bench-targets-") as tmp:
        for _ in range(args.runs):
            loads.append(round(os.getloadavg()[0], 1))
            runs.append(one_round(args.quick, Path(tmp)))
    rows = [median_run(list(samples)) for samples in zip(*runs, strict=True)]
    floors = {row["label"]: row["floor_ns"] for row in rows}
    elapsed = time.perf_counter() - started
    print()
    print_table(rows)
    print(f"\n{sys.implementation.name} {platform.python_version()}, {elapsed:.1f} s")
    if args.json:
        meta = {
            "python": platform.python_version(),
            "implementation": sys.implementation.name,
            "platform": f"{platform.system()} {platform.machine()}",
            "cpus": os.cpu_count(),
            "runs": args.runs,
            "quick": args.quick,
            "date": time.strftime("%Y-%m-%d", time.gmtime()),
            "elapsed_s": round(elapsed, 1),
            "load_average": loads,  # 1-minute, at the start of each round
            # This run's floors (their median runs) beside the baseline's: how busy it was.
            "direct_call_ns": floors["dispatch, validation off"],
            "python_c_pass_ns": floors["import toolreg"],
            "baseline": {"date": BASELINE_DATE, **BASELINE_FLOORS},
        }
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump({"meta": meta, "rows": rows}, f, indent=2, ensure_ascii=False)
            f.write("\n")
    return 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    sys.exit(main())
