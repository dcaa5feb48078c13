"""The speed-target table runs and shows every target row with a verdict.

Timings are never asserted here (the machine is shared and noisy); what is
checked is that ``benchmarks/bench_targets.py`` still finds each of its rows
in the scripts it runs, so a renamed row or a broken script shows up in the
suite instead of in the next closing note.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_bench_targets_prints_every_row_with_a_verdict(tmp_path: Path) -> None:
    out = tmp_path / "targets.json"
    done = subprocess.run(
        [sys.executable, "benchmarks/bench_targets.py", "--quick", "--json", str(out)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    payload = json.loads(out.read_text(encoding="utf-8"))
    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        from bench_targets import ROWS
    finally:
        sys.path.remove(str(ROOT / "benchmarks"))
    wanted = [case for _script, cases in ROWS for case in cases]
    got = {row["case"]: row for row in payload["results"]}
    assert list(got) == wanted
    for case, row in got.items():
        assert row["verdict"] in {"PASS", "MISS", "info"}, (case, row["error"])
        assert row["value_ns"] > 0 and row["floor_ns"] > 0, case
    # Every row that had a target in its own script keeps it here.
    assert {case for case, row in got.items() if row["target"] is None} == {
        "  the least a Python dispatch can cost",
        "pluggy load_setuptools_entrypoints",
    }
    assert payload["meta"]["memory_per_tool_bytes"] > 0
    assert "memory per registered tool:" in done.stdout


def test_several_runs_show_each_rows_median_run_and_range() -> None:
    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        from bench_targets import median_rows
        from harness import Result
    finally:
        sys.path.remove(str(ROOT / "benchmarks"))

    def run(register: float | None, dispatch: float) -> list[Result]:
        failed = "bench_writes.py failed" if register is None else None
        return [
            Result("register", register, 10.0, target=75.0, note="w", error=failed),
            Result("dispatch", dispatch, 10.0, target=3.0, note="v"),
        ]

    merged = median_rows([run(700.0, 50.0), run(None, 20.0), run(900.0, 40.0), run(800.0, 10.0)])
    register, dispatch = merged
    # The errored run is left out; of 70x, 80x and 90x the median run is 80x.
    assert (register.ratio, register.verdict) == (80.0, "MISS")
    assert register.note.startswith("median of 3 runs, 70.00x-90.00x")
    # Of four, the lower median: a run that happened, not an average of two.
    assert (dispatch.ratio, dispatch.verdict) == (2.0, "PASS")
    assert dispatch.note.startswith("median of 4 runs, 1.00x-5.00x")
    only_errors = median_rows([run(None, 1.0), run(None, 1.0)])
    assert only_errors[0].verdict == "ERROR"
    # A target measured in each run (loading, against pluggy's ratio): the run
    # of median margin (9.5x of 10x), not of median ratio (10x of 9x), gives the verdict.
    runs = [
        [Result("load", value, 10.0, target=target, note="l")]
        for value, target in ((100.0, 9.0), (95.0, 10.0), (120.0, 13.0))
    ]
    (load,) = median_rows(runs)
    assert (load.ratio, load.target, load.verdict) == (9.5, 10.0, "PASS")
    assert load.note.startswith("median of 3 runs, 9.50x-12.00x")
