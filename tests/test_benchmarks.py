"""The speed-target table: every row is measured and judged, and the README shows it.

Timings are never asserted here (the machine is shared and noisy). What is
checked: ``benchmarks/bench_targets.py`` still finds each of its rows in the
scripts it runs, ``benchmarks/results_table.py`` turns a run's JSON into the
README's table, and the README holds that one table, the one its JSON gives.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
BENCH = ROOT / "benchmarks"

sys.path.insert(0, str(BENCH))
try:
    import results_table
    from bench_targets import TARGETS, Target, judge, median_run
finally:
    sys.path.remove(str(BENCH))


@pytest.fixture(scope="module")
def quick_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """A real ``bench_targets.py --quick`` run: its JSON file and what it printed."""
    out = tmp_path_factory.mktemp("targets") / "results.json"
    done = subprocess.run(
        [sys.executable, "benchmarks/bench_targets.py", "--quick", "--json", str(out)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return out, done.stdout


def test_every_target_row_is_measured_and_judged(quick_run: tuple[Path, str]) -> None:
    path, stdout = quick_run
    rows = json.loads(path.read_text(encoding="utf-8"))["rows"]
    assert [row["label"] for row in rows] == [t.label for t in TARGETS]
    for row, target in zip(rows, TARGETS, strict=True):
        assert row["verdict"] in {"PASS", "MISS", "info"}, (row["label"], row["note"])
        assert row["measured"] != "-" and row["target"], row["label"]
        assert (row["verdict"] == "info") == (target.limit is None and not target.versus)
        assert row["label"] in stdout
    judged = {row["label"]: row for row in rows}
    # The reads a host makes, as it makes them: the registry's own methods.
    assert judged["get_entry"]["value_ns"] > 0 and judged["get_entry"]["floor_ns"] > 0
    assert judged["dispatch, validation off"]["verdict"] == "info"


def test_the_table_is_written_from_a_runs_json(quick_run: tuple[Path, str], tmp_path: Path) -> None:
    path, _ = quick_run
    payload = json.loads(path.read_text(encoding="utf-8"))
    readme = tmp_path / "README.md"
    readme.write_text(
        f"# Benchmarks\n\n{results_table.START}\nan old table\n{results_table.END}\n\nAfter.\n",
        encoding="utf-8",
    )
    assert results_table.main([str(path), "--readme", str(readme)]) == 0
    written = readme.read_text(encoding="utf-8")
    assert "an old table" not in written and written.endswith("\n\nAfter.\n")
    lines = results_table.table_in(written).splitlines()
    assert lines[0].startswith(payload["meta"]["date"])
    body = [line for line in lines if line.startswith("| ")][1:]  # below the header
    assert len(body) == len(payload["rows"])
    for line, row in zip(body, payload["rows"], strict=True):
        cells = [cell.strip() for cell in line.strip().strip("|").split(" | ")]
        assert cells == [row[key] for _, key in results_table.COLUMNS]
    # The same JSON again: the same README, byte for byte.
    assert results_table.main([str(path), "--readme", str(readme)]) == 0
    assert readme.read_text(encoding="utf-8") == written
    assert results_table.main([str(path), "--readme", str(readme), "--check"]) == 0


def test_the_readme_holds_one_table_the_one_results_json_gives() -> None:
    readme = (BENCH / "README.md").read_text(encoding="utf-8")
    assert readme.count(results_table.START) == 1
    assert readme.count(results_table.END) == 1
    inside = results_table.table_in(readme)
    outside = readme.replace(inside, "")
    assert not [line for line in outside.splitlines() if line.lstrip().startswith("|")]
    payload = json.loads((BENCH / "results.json").read_text(encoding="utf-8"))
    assert inside == results_table.render(payload)
    assert [row["label"] for row in payload["rows"]] == [t.label for t in TARGETS]
    assert len(readme.splitlines()) <= 160


def _runs(target: Target, values: list[float | None], versus: list[float] | None = None) -> Any:
    """One judged row per run, from script rows of the given times (None: the run failed)."""
    judged = []
    for i, value in enumerate(values):
        row = {"value_ns": value, "floor_ns": 10.0, "note": "n", "error": None}
        if value is None:
            row["error"] = "w.py failed"
        rows = {target.case: row}
        if versus is not None:
            rows[target.versus] = {"value_ns": versus[i], "floor_ns": 10.0}
        judged.append(judge(target, rows, {}))
    return median_run(judged)


def test_several_runs_show_each_rows_median_run_and_range() -> None:
    register = Target("register", "w.py", "reg", "time", 75.0)
    # The errored run is left out; of 70, 80 and 90 ns the median run is 80 ns.
    row = _runs(register, [70.0, None, 90.0, 80.0])
    assert (row["figure"], row["verdict"]) == (80.0, "MISS")
    assert row["note"].startswith("median of 3 runs, 70.0 ns to 90.0 ns")
    # Of four, the lower median: a run that happened, not an average of two.
    assert _runs(register, [50.0, 60.0, 70.0, 80.0])["figure"] == 60.0
    assert _runs(register, [None, None])["verdict"] == "ERROR"
    # A rate: at least 1 million writes a second, the median of 0.5, 1 and 2 million.
    writer = Target("writer", "w.py", "wr", "rate", 1e6, unit="writes")
    row = _runs(writer, [2000.0, 500.0, 1000.0])
    assert (row["measured"], row["verdict"]) == ("1,000,000 writes/s", "PASS")
    # A limit measured in each run (loading, against pluggy): the run of median
    # margin (95 against 100) gives the verdict, not the run of median time.
    load = Target("load", "l.py", "toolreg", "beats", versus="pluggy")
    row = _runs(load, [100.0, 95.0, 120.0], versus=[90.0, 100.0, 130.0])
    assert (row["figure"], row["verdict"]) == (95.0, "PASS")
    assert row["measured"].endswith("0.95x pluggy's")


def test_the_search_benchmark_runs_quick_and_judges_every_row() -> None:
    """``bench_search.py --quick``: each target row with its verdict, or what to install."""
    done = subprocess.run(
        [sys.executable, "benchmarks/bench_search.py", "--quick"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    if done.stdout.startswith("skipped:"):
        assert "pip install" in done.stdout
        return
    rows = [line for line in done.stdout.splitlines() if line.endswith(("PASS", "MISS"))]
    labels = [row.split("  ")[0] for row in rows]
    assert labels[:2] == ["recall@5", "recall@1"] and len(rows) == 11
    assert any(line.startswith("curve:") for line in done.stdout.splitlines())
