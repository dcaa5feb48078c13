"""What the built-in file tools cost, as ratios against plain Python doing the same job.

Run from the repository root::

    .venv/bin/python benchmarks/bench_file_tools.py [--quick]

The tools are called through ``registry.dispatch`` (arguments validated), in a
temp workspace of 2,000 files (40 directories of 50 Python-like files of 61
lines). Each floor is the same work without the tools' confinement, bounds or
JSON: ``os.walk`` plus ``re`` line by line for the searches, ``open`` and a
line loop for the read. To compare two checkouts, run the script in each (for
another checkout, put it first on the path: ``PYTHONPATH=../other:../other/src``)
and compare the ratios, not the times. Reports; always exits 0.
"""

from __future__ import annotations

import argparse
import os
import random
import re
import shutil
import sys
import tempfile

from harness import FULL, QUICK, Result, print_table, time_calls, time_statements

import toolreg
import toolreg.builtin_tools.file_tools  # noqa: F401  (registers the file tools)
from toolreg import registry

WORDS = ["self", "request", "response", "value", "result", "config"] + [
    "path",
    "name",
    "index",
    "data",
    "items",
    "error",
]
RARE = "FIXME-TOKEN"  # one line in every 50th file
COMMON = r"def \w+_config"  # about one line in 14 of a file, in most files


def make_tree(root: str) -> str:
    """2,000 files under ``root``; returns the path of one of them, relative to root."""
    rng = random.Random(1)
    for d in range(40):
        sub = os.path.join(root, f"pkg{d:02d}", "mod")
        os.makedirs(sub)
        for f in range(50):
            lines = []
            for i in range(60):
                w = rng.sample(WORDS, 4)
                if i % 7:
                    lines.append(f"    {w[0]} = {w[1]}.{w[2]}({w[3]}, {i})  # note {i}\n")
                else:
                    lines.append(f"def {w[0]}_{w[1]}_{i}({w[2]}):\n")
            if f == 7:
                lines.append(f"    # {RARE} here\n")
            with open(os.path.join(sub, f"file{f:03d}.py"), "w") as fh:
                fh.write("".join(lines))
    return "pkg03/mod/file007.py"


def plain_search(root: str, pattern: str) -> list[str]:
    """The floor: walk, skip hidden dirs, grep each line with re; no confinement or bounds."""
    regex = re.compile(pattern)
    found = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        for name in sorted(filenames):
            with open(os.path.join(dirpath, name), encoding="utf-8", errors="replace") as fh:
                for number, line in enumerate(fh, start=1):
                    if regex.search(line):
                        found.append(f"{name}:{number}:{line.rstrip()}")
    return found


def plain_read(path: str) -> str:
    """The floor for read_file: open, number the lines, join them."""
    with open(path, encoding="utf-8", errors="replace") as fh:
        return "\n".join(f"{n:6d}\t{line.rstrip()}" for n, line in enumerate(fh, start=1))


def bench_search(cfg_samples: int, root: str) -> list[Result]:
    results = []
    for label, pattern in (("one match in 40 files", RARE), ("many matches", COMMON)):
        args = {"pattern": pattern, "max_results": 1000}
        if toolreg.is_tool_error(registry.dispatch("search_files", args)):
            raise SystemExit(f"search_files failed: {registry.dispatch('search_files', args)}")
        times = time_calls(
            {
                "floor": lambda p=pattern: plain_search(root, p),
                "value": lambda a=args: registry.dispatch("search_files", a),
            },
            lambda: None,
            cfg_samples,
        )
        results.append(
            Result(
                f"search_files, 2,000 files, {label}",
                times["value"],
                times["floor"],
                note=f"floor: os.walk + re per line; min of {cfg_samples}",
            )
        )
    return results


def bench_read(cfg, root: str, rel: str) -> Result:
    args = {"path": rel}
    if toolreg.is_tool_error(registry.dispatch("read_file", args)):
        raise SystemExit(f"read_file failed: {registry.dispatch('read_file', args)}")
    times = time_statements(
        {
            "floor": "plain_read(path)",
            "value": "registry.dispatch('read_file', args)",
        },
        {
            "plain_read": plain_read,
            "path": os.path.join(root, rel),
            "registry": registry,
            "args": args,
        },
        cfg,
    )
    return Result(
        "read_file, one 61-line file",
        times["value"],
        times["floor"],
        note=f"{times['value'] - times['floor']:+.0f} ns over open + line loop",
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repeats: a smoke run")
    quick = parser.parse_args(argv).quick
    cfg = QUICK if quick else FULL
    root = tempfile.mkdtemp(prefix="toolreg-bench-ws-")
    previous = os.environ.get("TOOLREG_WORKSPACE")
    try:
        rel = make_tree(root)
        os.environ["TOOLREG_WORKSPACE"] = root
        results = bench_search(5 if quick else 15, root)
        results.append(bench_read(cfg, root, rel))
    finally:
        if previous is None:
            os.environ.pop("TOOLREG_WORKSPACE", None)
        else:
            os.environ["TOOLREG_WORKSPACE"] = previous
        shutil.rmtree(root, ignore_errors=True)
    print(f"toolreg from {os.path.dirname(toolreg.__file__)}", file=sys.stderr)
    print_table(results)
    return 0


if __name__ == "__main__":
    sys.exit(main())
