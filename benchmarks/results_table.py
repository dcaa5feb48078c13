"""Writes the results table of benchmarks/README.md from the JSON of a bench_targets.py run.

Run from the repository root::

    .venv/bin/python benchmarks/results_table.py [JSON] [--readme PATH] [--check]

JSON defaults to benchmarks/results.json, PATH to benchmarks/README.md. The
table replaces what stands between the README's two marker lines; the same
JSON always gives the same table. ``--check`` writes nothing and exits 1 when
the README's table is not the one the JSON gives.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
START = "<!-- results table: written by results_table.py from results.json; do not edit -->"
END = "<!-- end of results table -->"
COLUMNS = (("what", "label"), ("measured", "measured"), ("target", "target"))
COLUMNS += (("verdict", "verdict"), ("target from", "source"))


def cell(text: Any) -> str:
    return str(text).replace("|", "\\|") or "-"


def _floor(ns: float | None) -> str:
    if ns is None:
        return "-"
    return f"{ns / 1e6:.1f} ms" if ns >= 1e6 else f"{ns:.1f} ns"


def render(payload: dict[str, Any]) -> str:
    """The table (a caption line, then Markdown rows) for a bench_targets.py JSON report."""
    meta = payload["meta"]
    runs, base = meta["runs"], meta["baseline"]
    caption = (
        f"{meta['date']}: {meta['implementation']} {meta['python']}, {meta['cpus']} CPUs, "
        + (f"median of {runs} runs" if runs > 1 else "one run")
        + (" (--quick: a smoke run, not a measurement)" if meta["quick"] else "")
        + f"; load average {', '.join(f'{x:g}' for x in meta['load_average'])}."
    )
    floors = (
        f"A direct call took {_floor(meta['direct_call_ns'])} and `python -c pass` "
        f"{_floor(meta['python_c_pass_ns'])} ({_floor(base['direct_call_ns'])} and "
        f"{_floor(base['python_c_pass_ns'])} on {base['date']}): a busier machine reads higher."
    )
    lines = [caption, floors, ""]
    lines.append("| " + " | ".join(title for title, _ in COLUMNS) + " |")
    lines.append("|" + "---|" * len(COLUMNS))
    for row in payload["rows"]:
        lines.append("| " + " | ".join(cell(row[key]) for _, key in COLUMNS) + " |")
    return "\n".join(lines)


def _bounds(readme: str) -> tuple[int, int]:
    if readme.count(START) != 1 or readme.count(END) != 1:
        raise ValueError("the README needs each results-table marker exactly once")
    start, end = readme.index(START) + len(START), readme.index(END)
    if end < start:
        raise ValueError("the README's results-table markers are out of order")
    return start, end


def table_in(readme: str) -> str:
    """What stands between the markers, without the blank lines around it."""
    start, end = _bounds(readme)
    return readme[start:end].strip("\n")


def replace_table(readme: str, table: str) -> str:
    """``readme`` with ``table`` between its markers, one blank line on each side."""
    start, end = _bounds(readme)
    return readme[:start] + "\n\n" + table + "\n\n" + readme[end:]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("json", nargs="?", default=str(HERE / "results.json"))
    parser.add_argument("--readme", default=str(HERE / "README.md"))
    parser.add_argument("--check", action="store_true", help="compare only; exit 1 on a change")
    args = parser.parse_args(argv)
    table = render(json.loads(Path(args.json).read_text(encoding="utf-8")))
    readme_path = Path(args.readme)
    readme = readme_path.read_text(encoding="utf-8")
    if args.check:
        if table_in(readme) != table:
            print(f"{args.readme}: the results table is not the one {args.json} gives")
            return 1
        return 0
    readme_path.write_text(replace_table(readme, table), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
